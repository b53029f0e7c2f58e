"""Race metrics read from the store at scrape time: episodes (started, finished by termination, duration),
tool calls, inference calls, tokens and latency, judge calls and failures, queue depth, submissions by
status, weights set, validator faults (by kind, and whether the canary charged them to the submission)
and halted cycles by kind.

The store is the truth every API process shares, so these are read from its state at scrape time. What only
grows there (episodes started and finished, tool and inference calls, tokens, weight-setting attempts, halted
cycles) is a counter, named ``..._total``, so ``rate()`` works on it; what goes up and down (queue depth,
submissions and judgments by status) is a gauge. So is the race's state (``RaceState``): the current cycle and
its stage, the champion, the last weights sent and their age. Counts come from SQL; what lives only inside episode records (terminations, tool and inference
calls, tokens, latencies) is aggregated in Python incrementally: a done episode is immutable (a trigger
refuses any change), so each is read once and its contribution kept, and a scrape reads only the records
finished since the last one.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector
from pydantic import BaseModel

from arena.runner.record import EpisodeRecord
from arena.store import standings as standing_rows
from arena.store import submission_listing, tallies
from arena.store.cycles import latest_cycle
from arena.store.db import Store
from arena.store.models_race import EpisodeStatus
from arena.store.standings import StandingInfo, WeightsInfo

DURATION_BUCKETS = (1.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0)
LATENCY_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)
BATCH = 200  # records loaded per query: a record can be megabytes


class Histogram:
    """Bucket counts and a sum, in Prometheus' cumulative form when exported."""

    def __init__(self, buckets: tuple[float, ...]) -> None:
        self.buckets = buckets
        self.counts = [0] * len(buckets)
        self.total = 0
        self.sum = 0.0

    def observe(self, value: float) -> None:
        self.total += 1
        self.sum += value
        for i, bound in enumerate(self.buckets):
            if value <= bound:
                self.counts[i] += 1

    def family(self, name: str, documentation: str) -> HistogramMetricFamily:
        pairs = [(str(bound), n) for bound, n in zip(self.buckets, self.counts, strict=True)]
        return HistogramMetricFamily(name, documentation, buckets=[*pairs, ("+Inf", self.total)], sum_value=self.sum)


class RecordTotals:
    """What the done episodes' records add up to; grows as episodes finish, never shrinks."""

    def __init__(self) -> None:
        self.seen: set[int] = set()
        self.terminations: Counter[str] = Counter()
        self.tool_calls: Counter[tuple[str, str]] = Counter()
        self.llm_calls: Counter[tuple[str, str]] = Counter()
        self.tokens: Counter[str] = Counter()
        self.duration = Histogram(DURATION_BUCKETS)
        self.latency = Histogram(LATENCY_BUCKETS)

    def add(self, record: EpisodeRecord) -> None:
        self.terminations[record.termination.value] += 1
        self.duration.observe(record.usage.wall_s)
        for call in record.tool_calls:
            self.tool_calls[(call.name, "ok" if call.ok else "error")] += 1
        for llm_call in record.llm_calls:
            self.llm_calls[(llm_call.model, "ok" if llm_call.error is None else "error")] += 1
            self.tokens["prompt"] += llm_call.usage.prompt_tokens
            self.tokens["completion"] += llm_call.usage.completion_tokens
            self.latency.observe(llm_call.latency_ms / 1000)


class StoreCollector(Collector):
    def __init__(self, store: Store) -> None:
        self.store = store
        self.totals = RecordTotals()
        self.lock = threading.Lock()  # two concurrent scrapes must not count a record twice

    def _catch_up(self, session) -> None:
        new = sorted(tallies.done_episode_ids(session) - self.totals.seen)
        for start in range(0, len(new), BATCH):
            ids = new[start : start + BATCH]
            for episode_id, record in tallies.episode_records(session, ids):
                self.totals.add(EpisodeRecord.model_validate(record))
                self.totals.seen.add(episode_id)

    def collect(self) -> Iterator[GaugeMetricFamily | CounterMetricFamily | HistogramMetricFamily]:
        with self.lock, self.store.transaction() as session:
            state = race_state(session)
            self._catch_up(session)
            started = tallies.started_by_stage(session)
            pending = tallies.pending_by_stage(session)
            judgments = tallies.judgments_by_status(session)
            submissions = tallies.submissions_by_status(session)
            weights = tallies.weights_by_result(session)
            faults = tallies.validator_faults(session)
            halts = tallies.halt_kinds(session)
        yield from state.families()
        yield _counter("arena_episodes_started", "Episodes a worker started, by stage.", "stage", started)
        yield _gauge("arena_queue_depth", "Episodes waiting for a worker, by stage.", "stage", pending)
        yield _gauge("arena_judgments", "Judge calls by status (failed: the judge gave up).", "status", judgments)
        yield _gauge("arena_submissions_by_status", "Stored submissions by status.", "status", submissions)
        yield _counter(
            "arena_weights_set", "Weight-setting attempts by result.", "result",
            {"ok": weights.get(True, 0), "failed": weights.get(False, 0)},
        )  # fmt: skip
        validator_faults = GaugeMetricFamily(
            "arena_validator_faults",
            "Episodes that hit a validator-side failure, by kind; charged: the canary ran clean (the failure followed "
            "the submission); outcome: given_up (failed), record_stood (done, charged), retrying.",
            labels=["kind", "charged", "outcome"],
        )
        outcomes = {EpisodeStatus.failed: "given_up", EpisodeStatus.done: "record_stood"}
        for fault in sorted(faults, key=lambda f: (f.kind, str(f.charged), f.status.value)):
            charged = str(bool(fault.charged)).lower()
            validator_faults.add_metric([fault.kind, charged, outcomes.get(fault.status, "retrying")], fault.episodes)
        yield validator_faults
        yield _counter("arena_cycles_halted", "Cycles halted undecided (the validator could not measure), by kind.",
                     "kind", halts)  # fmt: skip
        totals = self.totals
        yield _counter(
            "arena_episodes_finished", "Done episodes by how the agent ended.", "termination", totals.terminations
        )
        yield totals.duration.family("arena_episode_duration_seconds", "Wall time of done episodes.")
        tools = CounterMetricFamily("arena_tool_calls", "Tool calls in done episodes.", labels=["tool", "result"])
        for (tool, result), n in sorted(totals.tool_calls.items()):
            tools.add_metric([tool, result], n)
        yield tools
        llm = CounterMetricFamily(
            "arena_inference_calls", "Inference calls in done episodes.", labels=["model", "result"]
        )
        for (model, result), n in sorted(totals.llm_calls.items()):
            llm.add_metric([model, result], n)
        yield llm
        yield _counter(
            "arena_inference_tokens", "Inference tokens in done episodes.", "kind",
            {"prompt": totals.tokens["prompt"], "completion": totals.tokens["completion"]},
        )  # fmt: skip
        yield totals.latency.family("arena_inference_latency_seconds", "Latency of inference calls in done episodes.")


def _gauge(name: str, documentation: str, label: str, values: dict) -> GaugeMetricFamily:
    family = GaugeMetricFamily(name, documentation, labels=[label])
    for key, n in sorted(values.items(), key=lambda item: str(item[0])):
        family.add_metric([getattr(key, "value", str(key))], n)
    return family


def _counter(name: str, documentation: str, label: str, values: dict) -> CounterMetricFamily:
    family = CounterMetricFamily(name, documentation, labels=[label])  # exposed as NAME_total
    for key, n in sorted(values.items(), key=lambda item: str(item[0])):
        family.add_metric([getattr(key, "value", str(key))], n)
    return family


def _seconds(moment: datetime) -> float:
    """Unix time of a stored moment (SQLite gives it back without a zone: it was written in UTC)."""
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


class RaceState(BaseModel):
    """What an operator's alert reads first: is a cycle moving, who reigns, and when weights last went out."""

    cycle: int | None = None
    stage: str | None = None
    champion: StandingInfo | None = None
    champion_hotkey: str = ""
    champion_uid: int | None = None
    weights: WeightsInfo | None = None  # the last successful weight setting
    last_attempt_ok: bool | None = None

    def families(self) -> Iterator[GaugeMetricFamily]:
        cycle = GaugeMetricFamily("arena_current_cycle", "The latest cycle's number (running or finished).")
        stage = GaugeMetricFamily(
            "arena_current_cycle_stage", "1 for the stage the latest cycle is in.", labels=["stage"]
        )
        if self.cycle is not None and self.stage is not None:
            cycle.add_metric([], self.cycle)
            stage.add_metric([self.stage], 1)
        yield cycle
        yield stage
        champion = GaugeMetricFamily(
            "arena_champion_submission", "The reigning champion's submission id.", labels=["hotkey", "uid"]
        )
        score = GaugeMetricFamily(
            "arena_champion_race_score", "The champion's race score in the cycle that last crowned it."
        )
        since = GaugeMetricFamily("arena_champion_cycle", "The latest cycle that crowned the champion.")
        if self.champion is not None:
            uid = "" if self.champion_uid is None else str(self.champion_uid)
            champion.add_metric([self.champion_hotkey, uid], self.champion.submission_id)
            since.add_metric([], self.champion.cycle)
            if self.champion.race_score is not None:
                score.add_metric([], self.champion.race_score)
        yield champion
        yield score
        yield since
        sent = GaugeMetricFamily(
            "arena_weights_last_sent_timestamp_seconds", "When the last successful weight setting was sent (Unix time)."
        )
        age = GaugeMetricFamily(
            "arena_weights_last_sent_age_seconds", "Seconds since the last successful weight setting."
        )
        sent_cycle = GaugeMetricFamily(
            "arena_weights_last_sent_cycle", "The cycle of the last successful weight setting."
        )
        vector = GaugeMetricFamily(
            "arena_weights_last_sent", "The last successful weight vector, by uid.", labels=["uid"]
        )
        last_ok = GaugeMetricFamily(
            "arena_weights_last_attempt_ok", "1 when the latest weight-setting attempt succeeded, 0 when it failed."
        )
        if self.weights is not None:
            moment = _seconds(self.weights.sent_at)
            sent.add_metric([], moment)
            age.add_metric([], max(0.0, time.time() - moment))
            sent_cycle.add_metric([], self.weights.cycle)
            for number, weight in zip(self.weights.uids, self.weights.weights, strict=True):
                vector.add_metric([str(number)], weight)
        if self.last_attempt_ok is not None:
            last_ok.add_metric([], 1 if self.last_attempt_ok else 0)
        yield from (sent, age, sent_cycle, vector, last_ok)


def race_state(session) -> RaceState:
    current = latest_cycle(session)
    champion = standing_rows.champion(session)
    who = submission_listing.submitters(session, {champion.submission_id}) if champion is not None else {}
    attempt = standing_rows.latest_weights(session)
    found = who.get(champion.submission_id) if champion is not None else None
    return RaceState(
        cycle=current.number if current else None,
        stage=current.stage.value if current else None,
        champion=champion,
        champion_hotkey=found.hotkey if found else "",
        champion_uid=found.uid if found else None,
        weights=standing_rows.latest_weights(session, ok=True),
        last_attempt_ok=attempt.ok if attempt is not None else None,
    )
