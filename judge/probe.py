"""Was a comparison derived from the tool results, or handed to the model in some encoding?

Two checks the rules judge applies to the responses it would credit, both from the record alone:

- **provenance** (every response): a model has no memory between calls, so every product id and price
  it names was in its request. If the request does not hold it in plain form (as a tool result wrote
  it, or as the model wrote it before), the model decoded it from text the agent wrote: a cipher,
  reversed text, numbers spelled as words and spread over turns, an acrostic. The response is dictated.
- **the counterfactual probe** (``arena.runner.probe``, the calls ``plan`` picks): the same request was
  re-asked with the product data changed (ids renamed, the compared items' prices reversed). A
  derived response follows the change; a response that still names original ids or prices (an echo
  of decoded text), or states a price comparison the changed prices contradict when the original's
  held (a template, filled by position or keyed on a title) was written by the agent, whatever form
  it came in.

A dictated finding on any response forfeits the episode's reasoning credit (level 0.1 at most): the
agent that hands the model its comparison once is not credited for the others the probe did not reach.
A probe that failed, or found no product data to change, is ``unavailable``: the judgment then stands
on the other rules and says so.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import BaseModel

from arena.runner.price_claims import ID, price_claims
from arena.runner.probe import MAX_PROBES, product_records, response_text
from arena.runner.record import ProbeRecord
from judge.dictation import numbers_in
from judge.tool_facts import StepFindings

PROBE_RULE = "probe"
PROVENANCE_RULE = "provenance"
MIN_PRICE = 10.0  # smaller numbers are counts and scores as often as prices
_DIGIT_RUN = re.compile(r"\d(?:[\d\s\-.,']*\d)?")


class ProbeVerdict(BaseModel):
    call_index: int
    outcome: Literal["dictated", "follows", "inconclusive", "unavailable"]
    reason: str


def named_ids(text: str) -> set[str]:
    """Ids ``text`` names: tokens, and digit runs with their separators taken out ("3 619 891 064")."""
    found = {token.lower() for token in ID.findall(text)}
    found |= {re.sub(r"\D", "", run) for run in _DIGIT_RUN.findall(text)}
    return found


def plain_tokens(request: dict[str, Any]) -> tuple[set[str], set[float]]:
    """The id-like tokens and numbers a request holds in plain form (for provenance)."""
    text = json.dumps(request, ensure_ascii=False, default=str)
    return {token.lower() for token in ID.findall(text)}, numbers_in(text)


def choose(steps: list[StepFindings], gates: list[bool], min_tokens: int) -> list[int]:
    """The calls worth a probe: the first response passing the top gate the episode reached (2: analysis
    and up), and the one carrying gate 1 if that response does not. Only responses that cite data: a
    probe changes data, so it has nothing to say about prose alone."""
    passed = 0
    while passed < len(gates) and gates[passed]:
        passed += 1
    tests = {4: lambda s: s.compares, 3: lambda s: bool(s.cited), 2: lambda s: s.analyses}
    chosen: list[int] = []
    for gate in (4, 3, 2):
        if passed >= gate:
            top = next((s for s in steps if tests[gate](s) and s.cited), None)
            if top is not None:
                chosen.append(top.call_index)
                if top.own_tokens < min_tokens:
                    longest = max(steps, key=lambda s: s.own_tokens)
                    if longest.cited and longest.call_index != top.call_index:
                        chosen.append(longest.call_index)
            break
    return chosen[:MAX_PROBES]


def read_probe(probe: ProbeRecord, original: str, query: str, compares: bool = False) -> ProbeVerdict:
    """What the probe's answer says about the response ``original`` (see the module's rules); ``compares``: the
    response compares items (the judge's gate 4), the only kind a move of the items can show was filled in."""
    index = probe.call_index
    if probe.status == "unchanged":
        return ProbeVerdict(call_index=index, outcome="inconclusive", reason="no product data in its request to change")
    if probe.status != "answered":
        return ProbeVerdict(call_index=index, outcome="unavailable", reason=f"probe unavailable ({probe.error})")
    change = probe.perturbation
    answer = response_text(probe.response)
    said = named_ids(answer)
    stale = sorted(pid for pid in change.renamed if pid.lower() in said)
    if stale:
        return ProbeVerdict(
            call_index=index,
            outcome="dictated",
            reason=f"with the ids renamed, its answer still names {', '.join(stale[:3])}: not from the results",
        )
    held = {round(price, 2) for price in probe.held_prices} | numbers_in(query)
    old_prices = {round(change.original_prices[pid], 2) for pid in change.compared if pid in change.original_prices}
    stale_prices = sorted(p for p in numbers_in(answer) & old_prices if p >= MIN_PRICE and p not in held)
    if stale_prices:
        return ProbeVerdict(
            call_index=index,
            outcome="dictated",
            reason=f"with the prices changed, its answer still states {', '.join(map(str, stale_prices[:3]))}",
        )
    named_before = {pid for pid in change.compared if pid.lower() in named_ids(original)}
    items = {change.renamed[pid] for pid in named_before}
    now = {pid for pid in change.renamed.values() if pid.lower() in said}
    # Items named by title: before, the title is its own item's; in the probe, the item's whose content it is.
    titles_before = {title.lower(): pid.lower() for pid, title in change.titles.items()}
    titles_now = {
        title.lower(): change.renamed[change.moved.get(pid, pid)].lower()
        for pid, title in change.titles.items()
        if change.moved.get(pid, pid) in change.renamed
    }
    false_now = [c for c in price_claims(answer, change.prices, titles_now) if not c[2]]
    before = price_claims(original, change.original_prices, titles_before)
    false_before = [c for c in before if not c[2]]
    # The same claim about the same two items (renamed), true before and false now, is a template whatever else the
    # answer says: a decoy claim that was false before too does not switch the check off.
    renamed = {pid.lower(): new.lower() for pid, new in change.renamed.items()}
    held_claims = {(renamed.get(low), renamed.get(high)) for low, high, agrees in before if agrees}
    broken = [c for c in false_now if (c[0], c[1]) in held_claims]
    if broken or (false_now and not false_before):
        false_now = broken or false_now
        low, high, _ = false_now[0]
        return ProbeVerdict(
            call_index=index,
            outcome="dictated",
            reason=f"with the prices reversed, its answer still calls {low} cheaper than {high}: "
            "the comparison does not follow the prices",
        )
    records = product_records(probe.request or {}) if compares and change.moved else {}
    before_move = by_places(probe, original, records) if records else None
    if before_move is not None and before_move == by_places(probe, answer, records, probed=True):
        return ProbeVerdict(
            call_index=index,
            outcome="dictated",
            reason="with the compared items moved to each other's places, its answer is the same, item for item "
            "by place: it follows the places, not the items",
        )
    if now & items or (now and not false_now):
        return ProbeVerdict(call_index=index, outcome="follows", reason="its answer follows the changed results")
    return ProbeVerdict(call_index=index, outcome="inconclusive", reason="its answer names none of the items")


def _content(record: dict[str, Any]) -> dict[str, Any]:
    return {key: field for key, field in record.items() if key not in ("product_id", "shop_id", "price")}


def by_places(probe: ProbeRecord, text: str, records: dict[str, dict[str, Any]], probed: bool = False) -> str | None:
    """``text`` with every item it names read as its place: ids, the moved items' own field values (a title, a
    colour) and every number written as the place they stand for. A template filled by place reads the same
    before and after the move; a comparison made by reading the items names the other place (the model's own
    earlier turns were changed to follow the items, so an answer restating them does too). None when the
    answer names no moved item, or the move changed nothing the model reads. ``records``: the probe request's product records
    (``arena.runner.probe.product_records``)."""
    change = probe.perturbation
    moved = {pid: other for pid, other in change.moved.items() if change.renamed.get(pid) in records}
    if not moved or any(
        _content(records[change.renamed[a]]) == _content(records[change.renamed[b]]) for a, b in moved.items()
    ):
        return None
    # Each place as a token with no digit in it (numbers are read as "<n>" after).
    mark = {pid: "<place " + "".join(chr(97 + int(d)) for d in str(i)) for i, pid in enumerate(sorted(change.renamed))}
    places: dict[str, str] = {}
    for pid, new in change.renamed.items():
        places[(new if probed else pid).lower()] = mark[pid] + ">"
    for pid, other in moved.items():
        # In the probe, a place holds the other's content; before, its own (which the probe shows in the other's place).
        content = records[change.renamed[pid] if probed else change.renamed[other]]
        for key, field in _content(content).items():
            if isinstance(field, str) and len(field) >= 3:
                places.setdefault(field.lower(), f"{mark[pid]} {re.sub(r'[^a-z]', '', key.lower())}>")
    lowered = text.lower()
    if not any(places.get(token) == mark[pid] + ">" for token in named_ids(lowered) for pid in moved):
        return None
    # One pass, longest first: a title is read before the words inside it.
    pattern = "|".join(re.escape(key) for key in sorted(places, key=len, reverse=True))
    lowered = re.sub(rf"(?<![a-z0-9])(?:{pattern})(?![a-z0-9])", lambda m: places[m.group()], lowered)
    lowered = re.sub(r"\d+(?:[.,]\d+)*", "<n>", lowered)
    return " ".join(lowered.split())
