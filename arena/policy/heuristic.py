"""The heuristic shopping policy: the "model" behind the offline policy server.

It is a hand-written planner, not a neural model, and says so everywhere.
Each request it reads the whole dialogue (no hidden state, as a real model),
works out where the episode stands, and answers with the next tool call(s)
and a short reasoning text that cites the data it used:

1. knowledge riddles: ``web_search`` the question first, take the likeliest
   fact from the results into the product search;
2. ``find_product`` once per requested item (in parallel), with the item's
   words, price range and services; a search that found nothing is relaxed;
3. shop tasks: rank the shops seen by how many items they cover, then search
   the missing items *inside* the best shops (``shop_id``);
4. voucher tasks: if no basket fits the budget, search again cheapest-first;
5. ``view_product_information`` on the leading candidates to check
   attributes and SKU values;
6. ``recommend_product`` (ids in the user's order), then ``terminate``.

``temperature`` > 0 varies query wording and the choice among near-tied
candidates, deterministically given the random generator it is handed.
"""

from __future__ import annotations

import math
import random
from itertools import product as cartesian

from pydantic import BaseModel, Field

from arena.policy.candidates import Assessment, SearchLog, assess, collect
from arena.policy.conversation import Transcript, result_list
from arena.policy.parsing import ItemRequest, ShoppingRequest, parse_request
from arena.policy.riddle_answers import extract_facts

MAX_TURNS = 14  # assistant turns before the policy recommends whatever it has
VIEW_PER_ITEM = 3
SHOP_PROBES_PER_ROUND = 3
SHOP_PROBE_ROUNDS = 2
GOOD_FIT = 0.5  # an assessment at least this high counts as "the shop has this item"


class PlannedCall(BaseModel):
    name: str
    arguments: dict = Field(default_factory=dict)


class Decision(BaseModel):
    """One assistant turn: reasoning text and the tool calls to make (none: a plain answer)."""

    content: str
    tool_calls: list[PlannedCall] = Field(default_factory=list)


class Episode:
    """Where one shopping dialogue stands, and what to do next."""

    def __init__(self, transcript: Transcript, tools: list[str], rng: random.Random, temperature: float) -> None:
        self.transcript = transcript
        self.tools = tools
        self.rng = rng
        self.temperature = temperature
        self.request: ShoppingRequest = parse_request(transcript.task)
        self.items: list[ItemRequest] = self.request.items
        web = [r for c in transcript.named("web_search") for r in result_list(c)]
        self.facts = extract_facts(self.request.question or "", web) if web else []
        self.log: SearchLog = collect(transcript, self.items)
        self._table: list | None = None

    # -- the plan --------------------------------------------------------------------------

    def next(self) -> Decision:
        t = self.transcript
        if t.terminated:
            return Decision(content="The episode has ended; there is nothing more to do.")
        last = t.last
        if last is not None and last.name == "recommend_product" and last.ok:
            return self._call("terminate", {"status": "success"}, "The recommendation is recorded; ending the task.")
        if t.assistant_turns < MAX_TURNS:
            for step in (self._web_search, self._search, self._shop_probe, self._budget_search, self._inspect):
                decision = step()
                if decision is not None:
                    return decision
        return self.recommend()

    def _call(self, name: str, arguments: dict, content: str) -> Decision:
        return Decision(content=content, tool_calls=[PlannedCall(name=name, arguments=arguments)])

    def _web_search(self) -> Decision | None:
        if self.request.intent != "knowledge" or "web_search" not in self.tools or self.transcript.named("web_search"):
            return None
        question = " ".join(self.request.question.split()[:40]) if self.request.question else self.request.text
        return self._call(
            "web_search",
            {"q": question, "max_results": 5},
            f"This request hinges on a fact: {question!r}. I look it up with web_search first, then search for "
            f"{self.items[0].label()!r} using the answer.",
        )

    def search_arguments(self, index: int, relax: int = 0) -> dict:
        item = self.items[index]
        words = list(item.keywords) or item.text.split()[:8]
        if self.temperature > 0 and len(words) > 2 and self.rng.random() < min(0.9, self.temperature / 1.5):
            head, tail = words[:1], words[1:]
            self.rng.shuffle(tail)
            words = head + tail
            if len(words) > 5 and self.rng.random() < self.temperature / 4:
                words.pop(self.rng.randrange(1, len(words)))
        if relax >= 2:
            words = words[:4]
        if self.facts and self.request.intent == "knowledge":
            words = [self.facts[min(relax, len(self.facts) - 1)], *words]
        arguments: dict = {"q": " ".join(words), "page": 1}
        if item.price is not None and relax < 2:
            arguments["price"] = item.price.as_filter()
        if item.services and relax < 1:
            arguments["service"] = ",".join(item.services)
        return arguments

    def _search(self) -> Decision | None:
        calls: list[PlannedCall] = []
        notes: list[str] = []
        for index, item in enumerate(self.items):
            searches = [s for s in self.log.searches[index] if not s.get("shop_id")]
            if searches and (any(s["hits"] for s in searches) or len(searches) >= 3):
                continue
            arguments = self.search_arguments(index, relax=len(searches))
            calls.append(PlannedCall(name="find_product", arguments=arguments))
            if self.facts and not searches:
                # The fact is a guess: also search without it, and let the fact check pick among both.
                plain = {**arguments, "q": " ".join(arguments["q"].split()[len(self.facts[0].split()) :])}
                calls.append(PlannedCall(name="find_product", arguments=plain))
            constraints = [f"price {item.price.describe()}"] if item.price else []
            constraints += [f"service {s}" for s in item.services]
            why = f" ({', '.join(constraints)})" if constraints else ""
            if searches:
                notes.append(f"the search for item {index + 1} found nothing, so I relax it to {arguments['q']!r}")
            else:
                notes.append(f"item {index + 1}: {item.label()!r}{why}")
        if not calls or "find_product" not in self.tools:
            return None
        if len(self.items) == 1:
            notes = [n.removeprefix("item 1: ") for n in notes]
        fact = f"The web results suggest the answer is {self.facts[0]!r}. " if self.facts else ""
        return Decision(content=f"{fact}Searching for {'; '.join(notes)}.", tool_calls=calls)

    # -- shops ------------------------------------------------------------------------------

    def ranked(self, index: int, shop: str | None = None) -> list[Assessment]:
        facts = self.facts if self.request.intent == "knowledge" else None
        pool = self.log.candidates[index].values()
        out = [assess(self.items[index], c, facts) for c in pool if shop is None or c.shop_id == shop]
        return sorted(out, key=lambda a: (-a.score, a.candidate.rank, a.candidate.product_id))

    def shop_table(self) -> list[tuple[str, int, float, list[Assessment | None]]]:
        """Shops by how many items they have a good fit for, then by total fit. Each item gets its own
        product where the shop has one: a single listing cannot stand in for two different items."""
        if self._table is not None:
            return self._table
        shops = {c.shop_id for per_item in self.log.candidates for c in per_item.values() if c.shop_id}
        # "Covers an item" is relative to the best fit found for it anywhere: long requests score lower overall.
        bars = [max(GOOD_FIT / 2, 0.6 * (r[0].score if r else 0.0)) for r in map(self.ranked, range(len(self.items)))]
        table = []
        for shop in shops:
            bests: list[Assessment | None] = []
            used: set[str] = set()
            for i in range(len(self.items)):
                ranked = self.ranked(i, shop)
                pick = next((a for a in ranked if a.candidate.product_id not in used), ranked[0] if ranked else None)
                bests.append(pick)
                if pick is not None:
                    used.add(pick.candidate.product_id)
            covered = sum(1 for b, bar in zip(bests, bars, strict=True) if b is not None and b.score >= bar)
            total = sum(b.score for b in bests if b is not None)
            table.append((shop, covered, total, bests))
        self._table = sorted(table, key=lambda row: (-row[1], -row[2], row[0]))
        return self._table

    def chosen_shop(self) -> str | None:
        """The shop a one-shop basket comes from: the one covering most items best (None: no such basket)."""
        if not self.request.same_shop or len(self.items) < 2:
            return None
        table = self.shop_table()
        return table[0][0] if table else None

    def _shop_probe(self) -> Decision | None:
        if not self.request.same_shop or len(self.items) < 2 or "find_product" not in self.tools:
            return None
        probed = {s["shop_id"] for searches in self.log.searches for s in searches if s.get("shop_id")}
        table = self.shop_table()
        if not table or any(row[1] == len(self.items) and row[0] in probed for row in table):
            return None
        if len(probed) >= SHOP_PROBES_PER_ROUND * SHOP_PROBE_ROUNDS:
            return None
        fresh = [row for row in table if row[0] not in probed][:SHOP_PROBES_PER_ROUND]
        calls, notes = [], []
        for shop, covered, _, bests in fresh:
            have = [f"{b.candidate.product_id} for item {i + 1}" for i, b in enumerate(bests) if b is not None]
            notes.append(f"shop {shop} covers {covered}/{len(self.items)} ({', '.join(have[:3]) or 'nothing yet'})")
            for i, best in enumerate(bests):
                if best is None or best.score < GOOD_FIT + 0.3:
                    calls.append(
                        PlannedCall(name="find_product", arguments={**self.search_arguments(i), "shop_id": shop})
                    )
        if not calls:
            return None
        return Decision(
            content="All items must come from one shop. "
            + "; ".join(notes)
            + ". I search the missing items inside these shops.",
            tool_calls=calls,
        )

    # -- vouchers ---------------------------------------------------------------------------

    def basket(self) -> tuple[list[Assessment | None], float | None, bool]:
        """The best-fitting basket that fits the budget (fits=False: none fits; best fit returned)."""
        shop = self.chosen_shop()
        lists = [(self.ranked(i, shop) if shop else []) or self.ranked(i) for i in range(len(self.items))]
        firsts = [lst[0] if lst else None for lst in lists]
        voucher = self.request.voucher
        if voucher is None or any(f is None for f in firsts):
            return firsts, None, False
        options = [[a for a in lst if a.score >= lst[0].score - 0.3][:4] for lst in lists]
        best: tuple[int, float, float] | None = None
        chosen: list[Assessment | None] = firsts
        for combo in cartesian(*options):
            prices = [a.candidate.price or 0.0 for a in combo]
            total = sum(prices)
            same_shop = len({a.candidate.shop_id for a in combo}) == 1
            if not voucher.fits(total, same_shop):
                continue
            distinct = len({a.candidate.product_id for a in combo})
            key = (distinct, sum(a.score for a in combo), -total)
            if best is None or key > best:
                best, chosen = key, list(combo)
        total = sum(a.candidate.price or 0.0 for a in chosen if a is not None)
        return chosen, total, best is not None

    def _budget_search(self) -> Decision | None:
        voucher = self.request.voucher
        if voucher is None or "find_product" not in self.tools:
            return None
        _, total, fits = self.basket()
        if fits or any(s.get("sort") == "priceasc" for searches in self.log.searches for s in searches):
            return None
        calls = [
            PlannedCall(name="find_product", arguments={**self.search_arguments(i), "sort": "priceasc"})
            for i in range(len(self.items))
        ]
        return Decision(
            content=f"The budget is {voucher.budget:g}; the best matches so far total {total or 0:g}, which no voucher "
            "rule brings under budget. I look for cheaper matches (price ascending).",
            tool_calls=calls,
        )

    # -- inspection and the answer --------------------------------------------------------------

    def picks(self) -> list[Assessment | None]:
        """One pick per item, in the user's order; an item nothing was found for borrows the best fit
        among everything seen, so the other items keep their positions."""
        shop = self.chosen_shop()
        if self.request.intent == "voucher":
            chosen = self.basket()[0]
        else:
            chosen, used = [], set()
            for i in range(len(self.items)):
                ranked = (self.ranked(i, shop) if shop else []) or self.ranked(i)
                # Two items are two products, unless nothing else fits.
                pick = self._choose([a for a in ranked if a.candidate.product_id not in used] or ranked)
                chosen.append(pick)
                if pick is not None:
                    used.add(pick.candidate.product_id)
        return [pick or self._fallback(i, shop) for i, pick in enumerate(chosen)]

    def _fallback(self, index: int, shop: str | None) -> Assessment | None:
        seen = {c.product_id: c for per_item in self.log.candidates for c in per_item.values()}
        pool = [c for c in seen.values() if shop is None or c.shop_id == shop] or list(seen.values())
        ranked = sorted((assess(self.items[index], c) for c in pool), key=lambda a: (-a.score, a.candidate.product_id))
        return ranked[0] if ranked else None

    def _choose(self, ranked: list[Assessment]) -> Assessment | None:
        """The top candidate; with temperature, one of the near-ties, drawn by softmax."""
        if not ranked:
            return None
        if self.temperature <= 0:
            return ranked[0]
        top = ranked[0].score
        close = [a for a in ranked if a.score >= top - 0.12 * self.temperature]
        weights = [math.exp((a.score - top) / (0.05 * self.temperature)) for a in close]
        return self.rng.choices(close, weights=weights, k=1)[0]

    def _inspect(self) -> Decision | None:
        if "view_product_information" not in self.tools or len(self.transcript.named("view_product_information")) >= 2:
            return None
        wanted: list[str] = []
        notes: list[str] = []
        # One-shop baskets: the two leading shops are inspected, so attributes can still change the choice.
        shops = [row[0] for row in self.shop_table()[:2]] if self.chosen_shop() else [None]
        for index in range(len(self.items)):
            top: list[Assessment] = []
            for shop in shops:
                ranked = self.ranked(index, shop) or self.ranked(index)
                top += [a for a in ranked[: VIEW_PER_ITEM + (2 if len(self.items) == 1 else 0)] if a not in top]
            fresh = [a.candidate.product_id for a in top if a.candidate.info is None]
            if fresh:
                wanted.extend(pid for pid in fresh if pid not in wanted)
                notes.append(f"item {index + 1}: " + "; ".join(a.explain() for a in top[:2]))
        if not wanted:
            return None
        return self._call(
            "view_product_information",
            {"product_ids": ",".join(wanted)},
            "Leading candidates — " + " | ".join(notes) + ". Checking their attributes and SKU options.",
        )

    def recommend(self) -> Decision:
        picks = self.picks()
        ids = [p.candidate.product_id for p in picks if p is not None]
        if not ids or "recommend_product" not in self.tools:
            if "terminate" in self.tools:
                return self._call("terminate", {"status": "failure"}, "No product fits the request; giving up.")
            return Decision(content="I could not find a product that fits the request.")
        notes = []
        for index, pick in enumerate(picks):
            if pick is None:
                notes.append(f"item {index + 1}: nothing found")
                continue
            ranked = self.ranked(index, pick.candidate.shop_id if self.request.same_shop else None)
            runner = next((a for a in ranked if a.candidate.product_id != pick.candidate.product_id), None)
            versus = f"; {runner.explain()}" if runner is not None else ""
            notes.append(f"item {index + 1}: {pick.explain()}{versus}")
        extra = ""
        if self.request.intent == "voucher" and self.request.voucher is not None:
            chosen = [p for p in picks if p is not None]
            total = sum(p.candidate.price or 0.0 for p in chosen)
            same = len({p.candidate.shop_id for p in chosen}) == 1
            after = self.request.voucher.total_after(total, same)
            extra = f" Basket total {total:g}, {after:g} after the voucher, budget {self.request.voucher.budget:g}."
        if self.request.same_shop and len(ids) > 1:
            extra += f" All from shop {picks[0].candidate.shop_id if picks[0] else '?'}."
        return self._call(
            "recommend_product",
            {"product_ids": ",".join(ids)},
            "I recommend " + ", ".join(ids) + ". " + " | ".join(notes) + "." + extra,
        )
