"""The shop tools with the official ShoppingBench semantics, and their
OpenAI function schemas (one source for both).

Every call goes through ``ShopEnvironment.call``, which never raises: a bad
call (unknown tool, wrong type, missing argument, too many ids) comes back as
a ``ToolResult`` with ``ok=False`` and the reason, and the episode records it.
"""

from __future__ import annotations

import logging
import math
from typing import Any

from pydantic import BaseModel, Field

from arena.shop.index import CatalogIndex, SearchFilters
from arena.shop.knowledge import KnowledgeBackend
from arena.shop.product import SERVICES

PAGE_SIZE = 10
MAX_PAGE = 5
SURVIVORS = PAGE_SIZE * MAX_PAGE  # the official server keeps 50 filtered hits, then sorts
SORTS = ("order", "priceasc", "pricedesc")
MAX_WEB_RESULTS = 20
MAX_IDS = 50  # product ids per view/recommend call (EpisodeLimits.tool_ids sets it per episode)

logger = logging.getLogger(__name__)

_SERVICE_HELP = (
    'Choose one or more from the options listed below and join them with a comma (","):\n'
    "- official: only products offered with LazMall service (100% authenticity guarantee, "
    "15-day unconditional returns, 7-day delivery).\n"
    "- freeShipping: only products offered with free shipping.\n"
    "- COD: only products offered with cash on delivery.\n"
    "- flashsale: only products offered with LazFlash (limited-time promotions).\n"
    "- default: no selection."
)

TOOL_SCHEMAS: dict[str, dict] = {
    "find_product": {
        "description": "Search for products and return up to 10 products, with each product including a "
        "product_id, shop_id, title, price, service, and sold_count.",
        "parameters": {
            "type": "object",
            "properties": {
                "q": {"type": "string", "description": 'The query used to search for products. e.g. "nike shoes".'},
                "page": {
                    "type": "integer",
                    "description": "Modify the parameter, ranging from 1 to 5, to get additional products.",
                },
                "shop_id": {
                    "type": "string",
                    "description": "Specify a shop using the shop_id, then search for products within that shop.",
                },
                "price": {
                    "type": "string",
                    "description": 'The price range for the products. e.g. "0-100", "100-1000", "1000-".',
                },
                "sort": {
                    "type": "string",
                    "enum": ["priceasc", "pricedesc", "order", "default"],
                    "description": "priceasc / pricedesc: sort by price; order: by sales volume, descending; "
                    "default: by relevance to the query.",
                },
                "service": {"type": "string", "description": _SERVICE_HELP},
            },
            "required": ["q", "page"],
        },
    },
    "view_product_information": {
        "description": "View the detailed information of products: short_description, description, "
        "sku_options and attributes.",
        "parameters": {
            "type": "object",
            "properties": {
                "product_ids": {"type": "string", "description": 'Product ids joined with a comma, e.g. "123,456".'}
            },
            "required": ["product_ids"],
        },
    },
    "recommend_product": {
        "description": "Recommend products to the user. Only the last recommendation counts; for several "
        "items give the ids in the order the user asked for them.",
        "parameters": {
            "type": "object",
            "properties": {
                "product_ids": {"type": "string", "description": 'Product ids joined with a comma, e.g. "123,456".'}
            },
            "required": ["product_ids"],
        },
    },
    "terminate": {
        "description": "End the task when it is done or cannot be done.",
        "parameters": {
            "type": "object",
            "properties": {
                "status": {"type": "string", "enum": ["success", "failure"], "description": "How the task ended."}
            },
            "required": ["status"],
        },
    },
    "web_search": {
        "description": "Search for information using the web search engine and return the search results.",
        "parameters": {
            "type": "object",
            "properties": {
                "q": {
                    "type": "string",
                    "description": 'The query used to search for information. e.g. "PopMart latest news".',
                },
                "max_results": {
                    "type": "integer",
                    "description": "The maximum number of results to return, from 1 to 20. Default is 10.",
                },
            },
            "required": ["q"],
        },
    },
}

SHOP_TOOLS = ("find_product", "view_product_information", "recommend_product", "terminate")
KNOWLEDGE_TOOLS = (*SHOP_TOOLS, "web_search")


def openai_tool_schemas(names: tuple[str, ...] | list[str] = SHOP_TOOLS) -> list[dict]:
    return [{"type": "function", "function": {"name": n, **TOOL_SCHEMAS[n]}} for n in names]


class ToolResult(BaseModel):
    """One executed call as the episode records it."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    ok: bool
    result: Any = None
    error: str | None = None
    notice: str | None = None  # a non-fatal oddity (e.g. a page outside 1-5, answered with [])
    refused: str | None = None  # the rule that refused the call unexecuted: "terminated", "tool_ids"


class BadToolCall(ValueError):
    def __init__(self, message: str, refused: str | None = None) -> None:
        super().__init__(message)
        self.refused = refused


class EpisodeState(BaseModel):
    recommended: list[str] | None = None
    recommendations: int = 0
    terminated: bool = False
    status: str | None = None


class ShopEnvironment:
    """The tools of one episode over a catalog (and a knowledge backend for
    the knowledge intent). ``allowed`` limits which tools the problem exposes."""

    def __init__(
        self,
        catalog: CatalogIndex,
        knowledge: KnowledgeBackend | None = None,
        allowed: tuple[str, ...] | list[str] | None = None,
        max_ids: int = MAX_IDS,
    ) -> None:
        self.catalog = catalog
        self.knowledge = knowledge
        self.allowed = tuple(allowed) if allowed is not None else (KNOWLEDGE_TOOLS if knowledge else SHOP_TOOLS)
        self.max_ids = max_ids
        self.state = EpisodeState()

    def schemas(self) -> list[dict]:
        return openai_tool_schemas(self.allowed)

    def call(self, name: str, arguments: Any = None) -> ToolResult:
        args = arguments if isinstance(arguments, dict) else {}
        record = {"name": str(name), "arguments": args}
        if arguments is not None and not isinstance(arguments, dict):
            return ToolResult(**record, ok=False, error="arguments must be a JSON object")
        if name not in TOOL_SCHEMAS or name not in self.allowed:
            return ToolResult(**record, ok=False, error=f"unknown tool {name!r}; available: {', '.join(self.allowed)}")
        if self.state.terminated:
            return ToolResult(**record, ok=False, error="the episode has terminated", refused="terminated")
        try:
            _check_arguments(name, args)
            result, notice = getattr(self, f"_{name}")(**args)
        except BadToolCall as exc:
            return ToolResult(**record, ok=False, error=str(exc), refused=exc.refused)
        except Exception as exc:  # a bug here must not become the agent's 500, nor lose the call's record
            logger.exception("tool %s failed", name)
            return ToolResult(**record, ok=False, error=f"{name} failed: {type(exc).__name__}")
        return ToolResult(**record, ok=True, result=result, notice=notice)

    def _ids(self, product_ids: str | list) -> list[str]:
        ids = split_ids(product_ids)
        if len(ids) > self.max_ids:
            raise BadToolCall(f"at most {self.max_ids} product ids per call, got {len(ids)}", refused="tool_ids")
        return ids

    # -- the tools -----------------------------------------------------------------

    def _find_product(
        self,
        q: str,
        page: int | str,
        shop_id: str | None = None,
        price: str | None = None,
        sort: str | None = None,
        service: str | None = None,
    ) -> tuple[list[dict], str | None]:
        page_number = _page(page)
        if page_number is None:
            return [], f"page {page!r} is outside 1-{MAX_PAGE}; no results"
        low, high = parse_price(price)
        filters = SearchFilters(
            shop_id=shop_id or None, price_low=low, price_high=high, services=parse_services(service)
        )
        hits = self.catalog.bm25_addresses(q, filters, limit=SURVIVORS)
        # Sort keys come from the index's columns, so only the page's ten records are decoded.
        # Python's sort is stable, as in the official server: ties keep BM25 order.
        if sort == "order":
            hits = _sorted_by(hits, self.catalog.sold_counts(hits), descending=True)
        elif sort == "priceasc":
            hits = _sorted_by(hits, self.catalog.prices(hits), descending=False)
        elif sort == "pricedesc":
            hits = _sorted_by(hits, self.catalog.prices(hits), descending=True)
        window = hits[(page_number - 1) * PAGE_SIZE : page_number * PAGE_SIZE]
        notice = None
        if sort not in (None, "default", *SORTS):
            notice = f"sort {sort!r} is not one of {', '.join(SORTS)}: results in relevance order"
        return self.catalog.search_views(window), notice

    def _view_product_information(self, product_ids: str | list) -> tuple[list[dict], str | None]:
        ids = self._ids(product_ids)
        found = [p for p in (self.catalog.get(i) for i in ids) if p is not None]
        missing = len(ids) - len(found)
        return [p.information_view() for p in found], (f"{missing} unknown product id(s)" if missing else None)

    def _recommend_product(self, product_ids: str | list) -> tuple[dict, str | None]:
        ids = self._ids(product_ids)
        self.state.recommended = ids
        self.state.recommendations += 1
        return {"recommended": ids}, None

    def _terminate(self, status: str) -> tuple[dict, str | None]:
        if status not in ("success", "failure"):
            raise BadToolCall("status must be 'success' or 'failure'")
        self.state.terminated = True
        self.state.status = status
        return {"status": status}, None

    def _web_search(self, q: str, max_results: int = 10) -> tuple[list[dict], str | None]:
        if self.knowledge is None:
            raise BadToolCall("web_search is not available for this problem")
        if not 1 <= max_results <= MAX_WEB_RESULTS:
            raise BadToolCall(f"max_results must be between 1 and {MAX_WEB_RESULTS}")
        return self.knowledge.search(q, max_results), None


_TYPES = {"string": (str,), "integer": (int,)}


def _check_arguments(name: str, args: dict) -> None:
    spec = TOOL_SCHEMAS[name]["parameters"]
    properties: dict = spec["properties"]
    unknown = sorted(set(args) - set(properties))
    if unknown:
        raise BadToolCall(f"{name}: unexpected argument(s) {', '.join(unknown)}")
    for required in spec["required"]:
        if args.get(required) is None:
            raise BadToolCall(f"{name}: missing required argument {required!r}")
    for key, value in args.items():
        if value is None:
            continue
        expected = properties[key]["type"]
        if name in ("view_product_information", "recommend_product") and key == "product_ids":
            # Agents often pass a JSON list of ids; the official server only took a comma string.
            if isinstance(value, list) and all(isinstance(v, str | int) and not isinstance(v, bool) for v in value):
                continue
        if expected == "integer" and key == "page" and isinstance(value, str) and _ascii_digits(value):
            continue  # the official server took page as a query-string digit string
        if isinstance(value, bool) or not isinstance(value, _TYPES[expected]):
            raise BadToolCall(f"{name}: argument {key!r} must be a {expected}, got {type(value).__name__}")
        if (name, key) == ("find_product", "sort"):
            continue  # the official server reads any other sort as BM25 order (a notice says so)
        if "enum" in properties[key] and value not in properties[key]["enum"]:
            raise BadToolCall(f"{name}: argument {key!r} must be one of {properties[key]['enum']}")


def _sorted_by(hits: list, keys: list, *, descending: bool) -> list:
    order = sorted(range(len(hits)), key=keys.__getitem__, reverse=descending)
    return [hits[i] for i in order]


def _ascii_digits(text: str) -> bool:
    # str.isdigit() also accepts "²" and other digits int() refuses.
    return text.isascii() and text.isdigit()


def _page(page: int | str) -> int | None:
    if isinstance(page, str):
        # A digit string longer than any page is outside 1-5 (and int() refuses over 4300 digits).
        page = int(page) if len(page) <= 6 else 0
    return page if 1 <= page <= MAX_PAGE else None


def parse_price(price: str | None) -> tuple[float | None, float | None]:
    """ "lo-hi", "lo-" or "-hi" as the official server reads them: anything
    else (no dash, more than one dash) means no price filter; an unreadable
    side is unbounded, and so is "nan" (the official server compares with it,
    and every comparison with NaN is false: it filters nothing)."""
    if not price or "-" not in price:
        return None, None
    parts = price.split("-")
    if len(parts) != 2:
        return None, None
    return _float_or_none(parts[0]), _float_or_none(parts[1])


def _float_or_none(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return None if math.isnan(value) else value


def parse_services(service: str | None) -> tuple[str, ...]:
    """A comma list, split as the official server splits it, without trimming: " COD" is
    no service name. Unknown names and "default" are ignored, duplicates once."""
    if not service:
        return ()
    out: list[str] = []
    for name in service.split(","):
        if name in SERVICES and name not in out:
            out.append(name)
    return tuple(out)


def split_ids(product_ids: str | list) -> list[str]:
    if isinstance(product_ids, list):
        return [str(i).strip() for i in product_ids if str(i).strip()]
    return [i.strip() for i in product_ids.split(",") if i.strip()]
