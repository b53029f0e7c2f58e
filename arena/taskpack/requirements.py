"""What a task pack's gold products must be, merged over every task that names them.

A gold id can be the answer of several tasks (31 of the 1,818 official gold ids
are: a product task and a voucher task, or a shop task and a voucher task, share
products). Each task adds requirements: a title, price ranges, attribute and SKU
pairs, services, "sold by the same shop as ...", or a full record (knowledge
rewards). They are merged one task at a time and *transactionally*: a task whose
requirements contradict what earlier tasks fixed (disjoint price ranges, two
different pinned shops, a title that the gold title does not match, a full record
that fails a reward) is rejected whole and reported with its file and line, never
half-applied and never silently reconciled.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from pydantic import BaseModel

from arena.problems.model import Intent, Problem, ProductReward
from arena.scoring.outcome import ScoreMode, rule_score
from arena.scoring.similarity import STRICT_TITLE_THRESHOLD, TitleSimilarity, default_similarity
from arena.shop.product import Product

INF = math.inf


@dataclass(frozen=True)
class TaskRef:
    """One task as read from its file: where it came from, for every report about it."""

    file: str
    line: int
    problem: Problem

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"

    @property
    def same_shop(self) -> bool:
        """Every gold product of the task must be sold by one shop."""
        p = self.problem
        if p.intent is Intent.shop:
            return True
        return p.intent is Intent.voucher and p.voucher is not None and p.voucher.voucher_type == "shop"


class TaskConflict(BaseModel):
    """A task the pack cannot make solvable, and why."""

    where: str
    task_id: str
    reason: str

    def __str__(self) -> str:
        return f"{self.where}: task {self.task_id}: {self.reason}"


def reward_interval(reward: ProductReward) -> tuple[float, float]:
    """The prices that satisfy every range of one reward (bounds inclusive, as the scorer reads them)."""
    low, high = 0.0, INF
    for price_range in reward.price:
        for mode, bounds in price_range.items():
            lo, hi = (list(bounds) + [None, None])[:2]
            if mode in ("between", "greater than") and lo is not None:
                low = max(low, float(lo))
            if mode in ("between", "less than") and hi is not None:
                high = min(high, float(hi))
    return low, high


def sku_pairs(reward: ProductReward) -> list[tuple[str, str]]:
    return [(k, v) for option in reward.sku_options for k, v in option.items()]


def attribute_pairs(reward: ProductReward) -> list[tuple[str, str]]:
    return [(k, v) for attr in reward.attributes for k, values in attr.items() for v in values]


def fmt_range(low: float, high: float) -> str:
    return f"[{low:g}, {'inf' if high == INF else f'{high:g}'}]"


@dataclass
class GoldRequirement:
    """Everything the tasks ask of one gold product."""

    product_id: str
    title: str
    order: int  # first appearance; fixes the build order (determinism)
    rewards: list[ProductReward] = field(default_factory=list)
    tasks: list[TaskRef] = field(default_factory=list)
    low: float = 0.0
    high: float = INF
    attributes: dict[str, list[str]] = field(default_factory=dict)
    options: list[dict[str, str]] = field(default_factory=list)  # one wanted SKU option per reward that asks
    services: list[str] = field(default_factory=list)
    record: Product | None = None  # a knowledge reward's full record, kept as it is
    pinned_shop: str | None = None

    def clone(self) -> GoldRequirement:
        return replace(
            self,
            rewards=list(self.rewards),
            tasks=list(self.tasks),
            attributes={k: list(v) for k, v in self.attributes.items()},
            options=[dict(o) for o in self.options],
            services=list(self.services),
        )

    def set_by(self) -> str:
        return ", ".join(t.where for t in self.tasks[:3]) + (" ..." if len(self.tasks) > 3 else "")


class ShopGroups:
    """Union-find over gold ids that must share a shop, with at most one pinned shop id per group."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}
        self.pin: dict[str, str] = {}  # root -> shop id

    def copy(self) -> ShopGroups:
        other = ShopGroups()
        other.parent, other.pin = dict(self.parent), dict(self.pin)
        return other

    def find(self, pid: str) -> str:
        self.parent.setdefault(pid, pid)
        root = pid
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[pid] != root:  # path compression
            self.parent[pid], pid = root, self.parent[pid]
        return root

    def pin_shop(self, pid: str, shop_id: str) -> str | None:
        root = self.find(pid)
        held = self.pin.get(root)
        if held is not None and held != shop_id:
            return f"product {pid} must be sold by shop {shop_id}, but its shop group is pinned to shop {held}"
        self.pin[root] = shop_id
        return None

    def union(self, a: str, b: str) -> str | None:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return None
        pa, pb = self.pin.get(ra), self.pin.get(rb)
        if pa is not None and pb is not None and pa != pb:
            return f"products {a} and {b} must share a shop, but they are pinned to shops {pa} and {pb}"
        self.parent[rb] = ra
        if pb is not None:
            self.pin[ra] = pb
        self.pin.pop(rb, None)
        return None


class RequirementBook:
    """Gold requirements merged over the tasks accepted so far."""

    def __init__(self, similarity: TitleSimilarity | None = None) -> None:
        self.specs: dict[str, GoldRequirement] = {}
        self.shops = ShopGroups()
        self.accepted: list[TaskRef] = []
        self._sim = similarity or default_similarity()

    def add(self, task: TaskRef) -> TaskConflict | None:
        """Merge one task, or reject it whole and say why."""
        draft: dict[str, GoldRequirement] = {}
        shops = self.shops.copy()

        def spec_for(pid: str, title: str) -> GoldRequirement:
            if pid not in draft:
                held = self.specs.get(pid)
                draft[pid] = held.clone() if held else GoldRequirement(pid, title, order=len(self.specs) + len(draft))
            return draft[pid]

        problem = task.problem
        reason: str | None = None
        if problem.knowledge is not None:
            record = problem.knowledge.product
            reason = self._merge_record(spec_for(record.product_id, record.title), record, shops)
        for reward in problem.rewards:
            if reason is None:
                reason = self._merge_reward(spec_for(reward.product_id, reward.title[0]), reward, shops)
        if reason is None and task.same_shop:
            ids = problem.gold_product_ids()
            for other in ids[1:]:
                reason = reason or shops.union(ids[0], other)
        if reason is not None:
            return TaskConflict(where=task.where, task_id=problem.id, reason=reason)
        for pid, spec in draft.items():
            if not any(t is task for t in spec.tasks):  # identity: comparing whole problems is slow
                spec.tasks.append(task)
            self.specs[pid] = spec
        self.shops = shops
        self.accepted.append(task)
        return None

    def _merge_record(self, spec: GoldRequirement, record: Product, shops: ShopGroups) -> str | None:
        pid = record.product_id
        if spec.record is not None and spec.record.model_dump() != record.model_dump():
            return f"product {pid} has two different full records (this one and the one from {spec.set_by()})"
        spec.record = record
        spec.title = record.title
        if not (spec.low <= record.price <= spec.high):
            span = fmt_range(spec.low, spec.high)
            return f"product {pid}'s record price {record.price:g} is outside {span} required by {spec.set_by()}"
        for reward in spec.rewards:
            if (why := self._record_misses(record, reward)) is not None:
                return why
        return shops.pin_shop(pid, record.shop_id) if record.shop_id else None

    def _record_misses(self, record: Product, reward: ProductReward) -> str | None:
        probe = record.model_copy(update={"product_id": f"{record.product_id}~probe"})
        result = rule_score(probe, reward, mode=ScoreMode.strict, similarity=self._sim)
        if result.rule < 1:
            return f"product {record.product_id}'s full record does not satisfy a reward on it (rule {result.rule:.2f})"
        return None

    def _merge_reward(self, spec: GoldRequirement, reward: ProductReward, shops: ShopGroups) -> str | None:
        pid = reward.product_id
        for title in reward.title:
            if self._sim(spec.title, title) < STRICT_TITLE_THRESHOLD:
                where = spec.set_by() or "this task"
                return f"product {pid}: title {title!r} does not match the gold title {spec.title!r} (from {where})"
        low, high = reward_interval(reward)
        if low > high:
            return f"product {pid}: the reward's own price ranges do not overlap ({fmt_range(low, high)})"
        new_low, new_high = max(spec.low, low), min(spec.high, high)
        if new_low > new_high:
            return (
                f"product {pid}: price {fmt_range(low, high)} is disjoint from "
                f"{fmt_range(spec.low, spec.high)} required by {spec.set_by()}"
            )
        spec.low, spec.high = new_low, new_high
        option: dict[str, str] = {}
        for key, value in sku_pairs(reward):
            if option.setdefault(key, value) != value:
                return f"product {pid}: one reward asks SKU {key!r} to be both {option[key]!r} and {value!r}"
        if option and option not in spec.options:
            spec.options.append(option)
        for key, value in attribute_pairs(reward):
            values = spec.attributes.setdefault(key, [])
            if value not in values:
                values.append(value)
        for service in reward.service:
            if service not in spec.services:
                spec.services.append(service)
        spec.rewards.append(reward)
        pinned = (reward.model_extra or {}).get("shop_id")
        if pinned is not None and (why := shops.pin_shop(pid, str(pinned))) is not None:
            return why
        if spec.record is not None:
            return self._record_misses(spec.record, reward)
        return None
