"""The counterfactual probe: the agent's own request re-asked with the validator's data changed.

A response can state a comparison the model never made: the agent decoded nothing itself, yet its
request carries the answer in a form no text match sees (a cipher, reversed text, numbers as words
spread over turns, an acrostic), or a template ("{1.product_id} is cheaper than {2.product_id}")
that the model fills from results the agent ordered. What tells such a response from a derived one
is what it depends on: a derived comparison follows the tool results, a dictated one follows the
agent's text. So after the episode, for the few calls whose responses the judge would credit
(chosen by the judge, ``ProbePlan``), the validator sends the same request to the same upstream
with the product data inside it changed (``plan_perturbation``, ``apply_perturbation``):

- every product and shop id renamed (fresh ids of the same shape): a response naming an original
  id got it from text the perturbation did not reach, the agent's own;
- every price moved to a fresh value (3 more, the order kept), and then, by what the response claims
  (``arena.runner.price_claims``):
  - a price claim: the compared items' prices swapped under items that keep everything else (titles,
    attributes, shop, their place in a list): a comparison that still says the once-cheaper item is
    cheaper was not read off the prices, whether it was filled in by position ("{1.product_id}") or by
    anything else the items keep (a title);
  - any other claim (fit, rating, the best match): the compared items moved, each one's content (every
    field but the ids and the price, which takes the rank of the content's own price) in the other's
    place, ids renamed by place. A comparison made by reading the items follows them; one filled in by
    place names the same places (``judge.probe.by_places``). Only the compared items move: a result
    list's order is its relevance ranking, which an honest answer may rightly follow for the rest.

Every field the model reads is changed, JSON
wherever it stands and results cut short as text; prices in the model's own earlier turns follow
(its words must agree with the changed results), the agent's own turns stay as written. The changed
request is as long as the agent's (ids of the same length, prices 3 more), and a completion cap that
no longer fits is retried with the room left, so an agent cannot pad its way to a failed probe.

The agent never sees probe traffic: it is sent after the agent's process has ended, from the
validator's side, charged to no budget of the episode. Its request and answer are kept in the record
(``ProbeRecord``) and the judge reads them later with no upstream (``judge.probe``). A probe that
fails is the validator's: recorded as such, never the miner's.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import re
import time
from collections.abc import Callable, Iterator
from typing import Any

from arena.jsonl import string_values
from arena.runner.price_claims import MIN_TITLE, price_claims
from arena.runner.record import EpisodeRecord, LLMCallRecord, Perturbation, ProbeRecord
from arena.runner.upstream_answers import completion_record, parse_usage
from arena.runner.upstreams import CallFailure, UpstreamRegistry, context_overflow, fetch_chat

# The judge's choice of calls to probe, given the record (the runner cannot import the judge).
ProbePlan = Callable[[EpisodeRecord], list[int]]

MAX_TITLES = 64  # titles a perturbation keeps (a claim may name items by title)
MAX_PROBES = 2  # per episode: the calls that carry the judge's top gates (judge.rules.probe_plan)
# All of an episode's probes together, at most (and no more than one inference call's timeout): the worker
# waits this long at worst after the agent has exited, however slow the upstream.
PROBE_WALL_S = 60.0
PROBE_HEADROOM_S = 5.0  # a probe's time past twice its original call's upstream time, whatever PROBE_WALL_S left
ID_KEYS = ("product_id", "shop_id")
PRICE_KEY = "price"
_OPEN = re.compile(r"[\[{]")
_MAX_JSON_SPANS = 64  # JSON values looked for in one string
# A price in the model's own prose ("3,039.00", "831.38"); small numbers are counts more often than prices.
# Whole numbers too ("3039" for 3039.0), from 100 up: below, a count is likelier than a price.
_PLAIN_NUMBER = re.compile(r"(?<![\w.,])(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+\.\d+|\d{3,})(?![\w,]|\.\d)")
_MIN_PLAIN_PRICE = 10.0
_MIN_WHOLE_PRICE = 100.0
# Request fields that are no text the model reads: the proxy's own note, and the model's name.
_NOT_READ = frozenset({"proxy", "model"})
_PRICE_FIELD = re.compile(r'("price"\s*:\s*)(\d+(?:\.\d+)?)')
_ID_TOKEN = re.compile(r"(?<![A-Za-z0-9])[A-Za-z0-9][A-Za-z0-9_\-]*(?![A-Za-z0-9])")


# --- the perturbation -------------------------------------------------------------------------------------


def _json_values(text: str) -> Iterator[tuple[int, int, Any]]:
    """The JSON arrays and objects inside ``text`` (start, end, value), the whole text first."""
    stripped = text.strip()
    if stripped[:1] in ("[", "{"):
        try:
            yield 0, len(text), json.loads(text)
            return
        except (ValueError, RecursionError):
            pass
    decoder = json.JSONDecoder()
    position, tries = 0, 0
    while tries < _MAX_JSON_SPANS and (found := _OPEN.search(text, position)) is not None:
        tries += 1
        try:
            value, end = decoder.raw_decode(text, found.start())
        except (ValueError, RecursionError):
            position = found.start() + 1
            continue
        if isinstance(value, dict | list):
            yield found.start(), end, value
        position = end


def _products(value: Any, found: dict[str, float | None], depth: int = 0) -> None:
    """Product ids inside ``value``, with the first price given for each."""
    if depth > 32:
        return
    if isinstance(value, dict):
        pid = value.get("product_id")
        if isinstance(pid, str | int) and not isinstance(pid, bool):
            number = _price(value.get(PRICE_KEY))
            if found.get(str(pid)) is None:
                found[str(pid)] = number
        for child in value.values():
            _products(child, found, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _products(item, found, depth + 1)


MAX_PRICE = 1e9  # a price past it (1e17, an infinity, NaN: an agent can write any in the records it shows) is none


def _price(value: Any) -> float | None:
    """A record's price as the probe may change it: a finite positive number below ``MAX_PRICE``, else None. The
    agent writes the records it shows the model, so a price may be anything JSON allows: one the probe cannot step
    by cents (1e17) or store (NaN) is left as it is, not planned on."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if 0.0 < number < MAX_PRICE else None  # NaN fails both comparisons


def _other_ids(value: Any, found: set[str], depth: int = 0) -> None:
    if depth > 32:
        return
    if isinstance(value, dict):
        for key, child in value.items():
            if key in ID_KEYS and isinstance(child, str | int) and not isinstance(child, bool):
                found.add(str(child))
            else:
                _other_ids(child, found, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _other_ids(item, found, depth + 1)


def _fresh_id(original: str, rng: random.Random, taken: set[str]) -> str:
    """An id of the same shape (digits for digits, letters kept), none the episode has."""
    for _ in range(100):
        chars = list(original)
        for i, c in enumerate(chars):
            if c.isdigit():
                chars[i] = str(rng.randrange(1 if i == 0 else 0, 10))
        candidate = "".join(chars)
        if candidate not in taken:
            taken.add(candidate)
            return candidate
    candidate = f"{original}{rng.randrange(10**6)}"  # ids too short to vary: longer, still unseen
    taken.add(candidate)
    return candidate


def _fresh_prices(prices: set[float], taken: set[float]) -> dict[float, float]:
    """For each price, a new one that no item of the episode has (``taken``: so a stated original price is stale),
    in the same order (a strictly increasing map), written in as many characters where a nearby value allows
    (3 more, else 3 less, then smaller steps): the changed request is as long as the agent's, so an agent cannot
    pad its request to the context's edge with prices that gain a digit and make the probe fail."""
    mapping: dict[float, float] = {}
    last = float("-inf")
    for price in sorted(prices):
        width = len(repr(price))
        for step in (3.0, -3.0, 2.0, -2.0, 4.0, -4.0, 1.0, -1.0, 5.0, -5.0, 0.5, -0.5, 0.01, -0.01):
            value = round(price + step, 2)
            if value > max(last, 0.0) and value not in taken and len(repr(value)) == width:
                break
        else:
            value = round(max(price, last) + 3.0, 2)
            for _ in range(10_000):  # bounded: prices are below MAX_PRICE, where a cent always moves the value
                if value not in taken and value > last:
                    break
                value = round(value + 0.01, 2)
        mapping[price] = last = value
    return mapping


def known_data(record: EpisodeRecord) -> tuple[dict[str, float | None], set[str]]:
    """Every product id (with its price) and shop id the episode's tool results showed."""
    products: dict[str, float | None] = {}
    others: set[str] = set()
    for call in record.tool_calls:
        if call.ok and call.result is not None:
            _products(call.result, products)
            _other_ids(call.result, others)
    return products, others


def plan_perturbation(
    request: dict[str, Any],
    response_text: str,
    seed: str,
    known: tuple[dict[str, float | None], set[str]] | None = None,
) -> Perturbation:
    """Decides the changes for one request: the product and shop ids in it (as JSON, and as ``known`` ids of
    the episode's tool results wherever they appear, such as a result cut short that no longer parses) and
    the ids ``response_text`` names."""
    found: dict[str, float | None] = {}
    others: set[str] = set()
    strings = list(string_values({key: item for key, item in request.items() if key not in _NOT_READ}))
    for text in strings:
        for _, _, value in _json_values(text):
            _products(value, found)
            _other_ids(value, others)
    if known is not None:
        present = {t for text in strings for t in _ID_TOKEN.findall(text)}
        for pid, price in known[0].items():
            if pid in present and found.get(pid) is None:
                found[pid] = price
        others |= known[1] & present
    if not found:
        return Perturbation()
    rng = random.Random(hashlib.sha256(seed.encode()).digest())
    taken = set(found) | others | (set(known[0]) | known[1] if known is not None else set())
    renamed = {original: _fresh_id(original, rng, taken) for original in sorted(found)}
    renamed |= {original: _fresh_id(original, rng, taken) for original in sorted(others - set(found))}
    named = {t.lower() for t in _ID_TOKEN.findall(response_text)}
    titles = {
        pid: record["title"]
        for pid, record in list(product_records(request).items())[:MAX_TITLES]
        if pid in found and isinstance(record.get("title"), str) and len(record["title"]) >= MIN_TITLE
    }
    said = response_text.lower()
    compared = [pid for pid in found if pid.lower() in named or (pid in titles and titles[pid].lower() in said)]
    originals = {pid: price for pid, price in found.items() if price is not None}
    # The compared items' prices in reversed order (the cheapest gets the dearest's), made fresh; the other items'
    # prices stay as they were: only the compared items' prices are read against the answer, and an item the
    # agent adds by the hundred cannot lengthen the probe.
    ranked = sorted((pid for pid in compared if pid in originals), key=lambda pid: originals[pid])
    source = dict(zip(ranked, reversed(ranked), strict=True))
    fresh = _fresh_prices({originals[pid] for pid in ranked}, set(originals.values()))
    prices = {
        renamed[pid]: fresh[originals[source[pid]]] if pid in source else originals[pid] for pid in sorted(originals)
    }
    # A response that states no price claim is tested on what it does claim (fit, rating, the best match): the
    # compared items' content moves with its price to the other's place, so a comparison made by reading the
    # items follows them, and one filled in by place stays. A price claim keeps the content in place and
    # reverses the prices under it, so a claim filled in by title does not follow either.
    by_title = {title.lower(): pid.lower() for pid, title in titles.items()}
    claims = price_claims(response_text, {pid.lower(): originals[pid] for pid in ranked}, by_title)
    moved = {} if claims else {pid: other for pid, other in source.items() if pid != other}
    return Perturbation(
        renamed=renamed, prices=prices, original_prices=originals, compared=compared, moved=moved, titles=titles
    )


def product_records(request: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each product's fullest record in the request's JSON, by id (the content a move carries)."""
    found: dict[str, dict[str, Any]] = {}

    def walk(value: Any, depth: int = 0) -> None:
        if depth > 32:
            return
        if isinstance(value, dict):
            pid = value.get("product_id")
            if isinstance(pid, str | int) and not isinstance(pid, bool) and len(value) > len(found.get(str(pid), {})):
                found[str(pid)] = value
            for child in value.values():
                walk(child, depth + 1)
        elif isinstance(value, list):
            for item in value:
                walk(item, depth + 1)

    for text in string_values({key: item for key, item in request.items() if key not in _NOT_READ}):
        for _, _, value in _json_values(text):
            walk(value)
    return found


MAX_LISTS = 8  # product lists read from one request, in order (judge.pointed resolves "the first listed" in them)


def product_lists(request: dict[str, Any]) -> list[list[str]]:
    """The request's lists of product records, in reading order, as their ids: what "the first listed item"
    can point at. Lists nested in an object (``{"results": [...]}``) count; at most ``MAX_LISTS``."""
    found: list[list[str]] = []

    def walk(value: Any, depth: int = 0) -> None:
        if depth > 32 or len(found) >= MAX_LISTS:
            return
        if isinstance(value, list):
            ids = [
                str(item["product_id"]) for item in value if isinstance(item, dict) and _is_id(item.get("product_id"))
            ]
            if ids and len(ids) == len(value):
                found.append(ids)
            for item in value:
                walk(item, depth + 1)
        elif isinstance(value, dict):
            for child in value.values():
                walk(child, depth + 1)

    for text in string_values({key: item for key, item in request.items() if key not in _NOT_READ}):
        for _, _, value in _json_values(text):
            walk(value)
    return found


def _is_id(value: Any) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool)


def apply_perturbation(request: dict[str, Any], change: Perturbation) -> dict[str, Any]:
    """The request with every JSON value in its text (messages, tools, any field) rewritten by ``change``, and
    ids in plain text renamed."""
    if not change.renamed:
        return request
    ids_pattern = re.compile(
        r"(?<![A-Za-z0-9])("
        + "|".join(re.escape(i) for i in sorted(change.renamed, key=len, reverse=True))
        + r")(?![A-Za-z0-9])"
    )

    records = product_records(request) if change.moved else {}

    # The model's own earlier words follow the items they were about: where the items moved, an id (and a
    # price) the model wrote names the place that item's content now holds, so its turns agree with the
    # changed results and an answer that restates them follows the items too.
    by_content = {pid: change.renamed[change.moved.get(pid, pid)] for pid in change.renamed}

    def rename(pid: str, model: bool) -> str:
        return (by_content if model else change.renamed).get(pid, pid)

    def value(item: Any, depth: int = 0, own: bool = False, model: bool = False) -> Any:
        """``own``: inside an assistant turn (the model's own words) or a tool message, where a plain number
        that is an item's price is that item's price in the probe too (the agent's turns are left as written);
        ``model``: inside an assistant turn."""
        if depth > 32:
            return item
        if isinstance(item, dict):
            own = own or item.get("role") in ("assistant", "tool")
            model = model or item.get("role") == "assistant"
            out: dict[str, Any] = {}
            moved_from = records.get(change.moved.get(str(item.get("product_id", "")), ""))
            if moved_from is not None:
                # The other compared item's content in this place: its fields but the id and the price (the
                # place's renamed id, and the price of the content's rank, below).
                kept = {k: v for k, v in item.items() if k in ID_KEYS or k == PRICE_KEY}
                item = {k: kept.get(k, moved_from.get(k)) for k in item if k in kept or k in moved_from} | {
                    k: v for k, v in moved_from.items() if k not in ID_KEYS and k != PRICE_KEY
                }
            for key, child in item.items():
                if key in ID_KEYS and isinstance(child, str | int) and not isinstance(child, bool):
                    new = rename(str(child), model)
                    out[key] = int(new) if isinstance(child, int) and new.isdigit() else new
                elif key == PRICE_KEY and isinstance(child, int | float) and not isinstance(child, bool):
                    pid = str(item.get("product_id", ""))
                    out[key] = change.prices.get(rename(pid, model) if pid in change.renamed else "", child)
                else:
                    out[key] = value(child, depth + 1, own, model)
            return out
        if isinstance(item, list):
            return [value(child, depth + 1, own, model) for child in item]
        if isinstance(item, str):
            return text(item, own, model)
        return item

    # Outside parsed JSON (a result cut short, say): a "price" field whose value is an item's is that item's
    # price in the probe (by value: two items at one price keep one new price, their order unchanged).
    by_value: dict[bool, dict[float, float]] = {False: {}, True: {}}  # by place, and (the model's words) by item
    for pid, amount in sorted(change.original_prices.items()):
        for model in (False, True):
            by_value[model].setdefault(round(amount, 2), change.prices[rename(pid, model)])

    def plain(piece: str, own: bool, model: bool) -> str:
        values = by_value[model]

        def price_field(match: re.Match[str]) -> str:
            new = values.get(round(float(match.group(2)), 2))
            return match.group(0) if new is None else f"{match.group(1)}{new}"

        def number(match: re.Match[str]) -> str:
            written = match.group().replace(",", "")
            old = round(float(written), 2)
            new = values.get(old)
            least = _MIN_PLAIN_PRICE if "." in written else _MIN_WHOLE_PRICE
            return match.group() if new is None or old < least else f"{new:.2f}"

        piece = ids_pattern.sub(lambda m: rename(m.group(1), model), piece)
        piece = _PRICE_FIELD.sub(price_field, piece)
        return _PLAIN_NUMBER.sub(number, piece) if own else piece

    def text(string: str, own: bool = False, model: bool = False) -> str:
        pieces, cursor = [], 0
        for start, end, found in _json_values(string):
            pieces.append(plain(string[cursor:start], own, model))
            pieces.append(json.dumps(value(found, 0, own, model), ensure_ascii=False))
            cursor = end
        pieces.append(plain(string[cursor:], own, model))
        return "".join(pieces)

    probed = dict(request)
    for key, item in request.items():
        if key not in _NOT_READ:  # messages, and any other field the model reads (a tool's description)
            probed[key] = value(item)
    return probed


_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def unheld(request: dict[str, Any], text: str) -> list[str]:
    """Id-like tokens (with a digit) and numbers of ``text`` that the request does not hold as such."""
    held_text = json.dumps(request, ensure_ascii=False, default=str)
    held = {token.lower() for token in _ID_TOKEN.findall(held_text)}
    numbers = {float(n) for n in _NUMBER.findall(held_text.replace(",", ""))}
    missing = {t.lower() for t in _ID_TOKEN.findall(text) if any(c.isdigit() for c in t) and t.lower() not in held}
    missing |= {n for n in _NUMBER.findall(text.replace(",", "")) if float(n) not in numbers and n.lower() not in held}
    return sorted(missing)[:64]


# --- sending it ----------------------------------------------------------------------------------------------


def response_text(response: dict[str, Any] | None) -> str:
    if not isinstance(response, dict):
        return ""
    parts = [response.get(key) for key in ("reasoning_content", "content")]
    return "\n".join(part for part in parts if isinstance(part, str) and part.strip())


async def probe_call(
    registry: UpstreamRegistry,
    call: LLMCallRecord,
    seed: str,
    timeout_s: float,
    known: tuple[dict[str, float | None], set[str]] | None = None,
) -> ProbeRecord:
    """Re-asks ``call``'s request, perturbed, of the upstream that answered it. Never raises: a failure is
    recorded as ``unavailable`` (the validator's), and a request with no product data in it as ``unchanged``."""
    started = time.perf_counter()
    record = ProbeRecord(call_index=call.index, upstream=call.upstream, model=call.model, status="unavailable")
    change = plan_perturbation(call.request, response_text(call.response), seed, known)
    record.perturbation = change
    record.unheld = unheld(call.request, response_text(call.response))
    if not change.renamed:
        record.status = "unchanged"  # nothing of the validator's to change: the judge reads the ids alone
        return record
    # No stop strings: an agent that knows the probe's new prices could set them as stops and cut the probe's
    # answer short before its claim.
    payload = {k: v for k, v in apply_perturbation(call.request, change).items() if k not in ("proxy", "stop")}
    payload["model"] = call.model
    record.request = payload
    stated = {float(n) for n in _NUMBER.findall(json.dumps(payload, ensure_ascii=False).replace(",", ""))}
    record.held_prices = sorted(
        {price for pid, price in change.original_prices.items() if pid in change.compared and price in stated}
    )
    try:
        if call.upstream is None:
            raise CallFailure(502, "probe_unavailable", "the call reached no upstream")
        link = registry.link(call.upstream)
        deadline = time.perf_counter() + timeout_s
        try:
            _, answer = await fetch_chat(link, payload, call.upstream, deadline, timeout_s)
        except CallFailure as failure:
            # The changed request a few tokens longer than a prompt at the context's edge: the completion's
            # cap gives way, as the proxy's own retry does (arena.runner.proxy).
            overflow = context_overflow(failure.message) if failure.status == 400 else None
            if overflow is None or overflow[0] - overflow[1] < 1:
                raise
            payload["max_tokens"] = overflow[0] - overflow[1]
            payload.pop("max_completion_tokens", None)
            _, answer = await fetch_chat(link, payload, call.upstream, deadline, timeout_s)
    except (CallFailure, KeyError) as exc:
        record.error = str(exc)[:500]
    except Exception as exc:  # the probe is the validator's: whatever fails, the episode stands
        record.error = f"{type(exc).__name__}: {exc}"[:500]
    else:
        record.response = completion_record(answer)
        usage = parse_usage(answer.get("usage"))
        if usage is not None:
            record.completion_tokens, record.prompt_tokens = usage.completion_tokens, usage.prompt_tokens
        record.status = "answered"
    record.latency_ms = round((time.perf_counter() - started) * 1000.0, 2)
    return record


async def run_probes(
    registry: UpstreamRegistry, record: EpisodeRecord, plan: ProbePlan, timeout_s: float
) -> list[ProbeRecord]:
    """The probes the judge's ``plan`` asks for (at most ``MAX_PROBES``), one after another, within
    ``PROBE_WALL_S`` (or ``timeout_s``, the episode's inference-call timeout, if shorter) in all, except that
    each probe may take twice what its original call took upstream plus ``PROBE_HEADROOM_S`` (never more
    than ``timeout_s``)."""
    try:
        # In a thread: the plan reads the whole record (the rules judge), and the loop serves other episodes.
        chosen = (await asyncio.to_thread(plan, record))[:MAX_PROBES]
    except Exception as exc:  # the validator's own planner failing: recorded, the episode stands
        return [ProbeRecord(call_index=-1, status="unavailable", error=f"probe plan failed: {exc}"[:500])]
    by_index = {call.index: call for call in record.llm_calls}
    known = known_data(record)
    probes = []
    deadline = time.perf_counter() + min(timeout_s, PROBE_WALL_S)
    for index in chosen:
        call = by_index.get(index)
        if call is None or call.response is None:
            continue
        # A probe re-asks a request the upstream already took ``took`` seconds to answer: it gets that long again
        # (with headroom), even past the shared time, or an agent that asks for a long, slow answer (a real
        # model writing 4,000 words for 61-120 s) would leave every probe "unavailable" and keep its credit. Bounded
        # by the call timeout; the extra is at most twice time the agent's own episode already spent waiting.
        took = (call.upstream_ms if call.upstream_ms is not None else call.latency_ms) / 1000.0
        left = max(deadline - time.perf_counter(), min(timeout_s, 2.0 * took + PROBE_HEADROOM_S))
        if left <= 0:
            probes.append(ProbeRecord(call_index=index, status="unavailable", error="the probes' time was spent"))
            continue
        try:
            probes.append(await probe_call(registry, call, f"{record.episode_id}:{index}", left, known))
        except Exception as exc:  # a bug of the probe's own: the validator's, and the episode stands
            probes.append(ProbeRecord(call_index=index, status="unavailable", error=f"probe failed: {exc!r}"[:500]))
    return probes
