"""Candidates seen in a transcript, and how well each one fits an item of the request.

The fit is what a careful shopper checks: are the item's words in the
title (the scorer compares titles), are they among the product's attribute
and SKU values, is the price in range, are the services there. Hard misses
(price, services) cost more than a missing word, because the scorer counts
each of them as a failed constraint.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from arena.policy.conversation import Transcript, result_list
from arena.policy.parsing import ItemRequest, stem, words


@dataclass
class Candidate:
    """One product as the search and inspection results describe it."""

    product_id: str
    shop_id: str = ""
    title: str = ""
    price: float | None = None
    service: list[str] = field(default_factory=list)
    sold_count: int = 0
    rank: int = 99  # best position in any search that returned it
    info: dict | None = None  # view_product_information's record, once inspected

    def values(self) -> list[str]:
        """Attribute and SKU values (lower-cased in the catalog)."""
        if not self.info:
            return []
        out: list[str] = []
        for values in (self.info.get("attributes") or {}).values():
            out.extend(str(v) for v in (values if isinstance(values, list) else [values]))
        for option in (self.info.get("sku_options") or {}).values():
            if isinstance(option, dict):
                out.extend(str(v) for v in option.values())
        return out

    def describe(self) -> str:
        name = self.product_id if self.product_id not in ("", "?") else "the product"
        return name if self.price is None else f"{name} at {self.price:g}"


@dataclass
class Assessment:
    candidate: Candidate
    score: float
    matched: list[str]
    missing: list[str]
    values: list[str]  # attribute/SKU values the request mentions
    problems: list[str]  # hard constraint misses, in words
    fact: bool = False

    def explain(self) -> str:
        """ "1234 at 150 has red; matches widget, red; lacks cotton; no COD" """
        details = []
        if self.values:
            details.append("has " + ", ".join(self.values[:3]))
        if self.matched:
            details.append("matches " + ", ".join(self.matched[:5]))
        if self.missing:
            details.append("lacks " + ", ".join(self.missing[:3]))
        if self.fact:
            details.append("mentions the fact")
        details.extend(self.problems)
        return f"{self.candidate.describe()} " + "; ".join(details) if details else self.candidate.describe()


def _stems(text: str) -> set[str]:
    out: set[str] = set()
    for word in words(text):
        out.add(stem(word))
        out.update(stem(piece) for piece in word.replace(":", "-").replace("/", "-").split("-") if piece)
    return out


def _stemmed(text: str) -> str:
    """Stemmed words between single spaces, for phrase tests: "bags" contains the value "bag"."""
    return " " + " ".join(stem(w) for w in words(text.replace("-", " "))) + " "


def _has(keyword: str, stems: set[str]) -> bool:
    if stem(keyword) in stems:
        return True
    pieces = [p for p in keyword.replace(":", "-").replace("/", "-").replace("'", "-").split("-") if p]
    return len(pieces) > 1 and all(stem(p) in stems for p in pieces)


def assess(item: ItemRequest, candidate: Candidate, facts: list[str] | None = None) -> Assessment:
    """Score a candidate for an item in [about -1, 1.5]; higher is better."""
    title_stems = _stems(candidate.title)
    values = candidate.values()
    all_stems = title_stems | _stems(" ".join(values))
    if candidate.info:
        all_stems |= _stems(str(candidate.info.get("short_description") or ""))
    keywords = item.keywords or words(item.text)
    matched = [k for k in keywords if _has(k, all_stems)]
    missing = [k for k in keywords if k not in matched]
    in_title = sum(1 for k in keywords if _has(k, title_stems))
    coverage = len(matched) / len(keywords) if keywords else 0.0
    title_coverage = in_title / len(keywords) if keywords else 0.0
    request_text = _stemmed(item.text)
    # A value the shopper named ("eu:30", "baggy fit") is strong evidence: the scorer checks these pairs.
    value_hits = sorted({v for v in values if len(v) > 1 and _stemmed(v) in request_text}, key=len, reverse=True)
    score = 0.55 * coverage + 0.35 * title_coverage + 0.06 * min(6, len(value_hits)) + 0.15 / (1 + candidate.rank)
    problems: list[str] = []
    if item.price is not None:
        if candidate.price is None:
            problems.append("price unknown")
            score -= 0.1
        elif not item.price.contains(candidate.price):
            problems.append(f"price {candidate.price:g} outside {item.price.describe()}")
            score -= 0.6
    for service in item.services:
        if service not in candidate.service:
            problems.append(f"no {service}")
            score -= 0.35
    fact_hit = False
    if facts:
        # The scorer wants the fact in the title or description; a likelier guess earns more.
        haystack = _stemmed(f"{candidate.title} {(candidate.info or {}).get('description', '')}")
        for rank, fact in enumerate(facts):
            if _stemmed(fact).strip() and _stemmed(fact) in haystack:
                fact_hit = rank == 0
                score += 0.9 if rank == 0 else 0.45 / rank
                break
    return Assessment(candidate, score, matched, missing, value_hits, problems, fact_hit)


def attribute_call(item_queries: list[list[str]], q: str) -> int:
    """Which item a ``find_product`` query was for: the one sharing most words with it."""
    query = {stem(w) for w in words(q)}
    best, best_overlap = 0, -1
    for index, keywords in enumerate(item_queries):
        overlap = len(query & {stem(k) for k in keywords})
        if overlap > best_overlap:
            best, best_overlap = index, overlap
    return best


@dataclass
class SearchLog:
    """Per item: the candidates found, and the searches made (with their arguments)."""

    candidates: list[dict[str, Candidate]]
    searches: list[list[dict]]  # per item: arguments of each find_product call, with "hits": n
    info: dict[str, dict]


def collect(transcript: Transcript, items: list[ItemRequest]) -> SearchLog:
    log = SearchLog([{} for _ in items], [[] for _ in items], {})
    queries = [item.keywords for item in items]
    for call in transcript.calls:
        if call.name == "view_product_information":
            for record in result_list(call):
                if record.get("product_id") is not None:
                    log.info[str(record["product_id"])] = record
            continue
        if call.name != "find_product":
            continue
        index = attribute_call(queries, str(call.arguments.get("q", "")))
        hits = result_list(call)
        log.searches[index].append({**call.arguments, "hits": len(hits), "ok": call.ok})
        page = _int(call.arguments.get("page"), 1)
        for rank, hit in enumerate(hits):
            pid = hit.get("product_id")
            if pid is None:
                continue
            pid = str(pid)
            position = (page - 1) * 10 + rank
            existing = log.candidates[index].get(pid)
            if existing is None:
                log.candidates[index][pid] = Candidate(
                    product_id=pid,
                    shop_id=str(hit.get("shop_id") or ""),
                    title=str(hit.get("title") or ""),
                    price=_float(hit.get("price")),
                    service=[str(s) for s in hit.get("service") or []],
                    sold_count=_int(hit.get("sold_count"), 0),
                    rank=position,
                )
            else:
                existing.rank = min(existing.rank, position)
    for per_item in log.candidates:
        for pid, candidate in per_item.items():
            candidate.info = log.info.get(pid)
    return log


def _float(value: object) -> float | None:
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


def _int(value: object, default: int) -> int:
    try:
        return int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return default
