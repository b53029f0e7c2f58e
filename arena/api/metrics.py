"""The API's Prometheus metrics: submissions accepted and rejected (by reason), episodes by status, request
latency, and the race's own figures read from the store (``arena.api.metrics_store``); ``routes/metrics.py``
serves them.

Each app has its own registry, so several apps in one process (tests, a
benchmark) never share or double-register counters. Episode counts are read
from the store at scrape time: they are the store's state, not this
process's, and every API process reports the same numbers.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from arena.api.metrics_store import StoreCollector
from arena.store import tallies
from arena.store.db import Store
from arena.store.models_race import EpisodeStage, EpisodeStatus


class EpisodeCollector(Collector):
    def __init__(self, store: Store) -> None:
        self.store = store

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily(
            "arena_episodes", "Episodes in the store by stage and status.", labels=["stage", "status"]
        )
        counts = {(stage, status): 0 for stage in EpisodeStage for status in EpisodeStatus}
        with self.store.transaction() as session:
            counts.update(tallies.episodes_by_stage_and_status(session))
        for (stage, status), n in counts.items():
            family.add_metric([stage.value, status.value], n)
        yield family


class ApiMetrics:
    def __init__(self, store: Store) -> None:
        self.registry = CollectorRegistry()
        self.submissions = Counter(
            "arena_submissions",
            "Submissions answered, by outcome and reason (the error code; 'accepted' when accepted).",
            ["outcome", "reason"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "arena_http_request_duration_seconds",
            "Request latency by method, route template and status code.",
            ["method", "route", "status"],
            registry=self.registry,
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
        )
        self.registry.register(EpisodeCollector(store))
        self.registry.register(StoreCollector(store))  # episodes, tools, tokens, judge, queue, weights

    def accepted(self) -> None:
        self.submissions.labels(outcome="accepted", reason="accepted").inc()

    def rejected(self, reason: str) -> None:
        self.submissions.labels(outcome="rejected", reason=reason).inc()

    def render(self) -> bytes:
        return generate_latest(self.registry)


class LatencyMiddleware:
    """Times every HTTP request under its route template (``/v1/episodes/{episode_id}``, not the raw path,
    so the label set stays small); requests that matched no route count as ``unmatched``. With ``access_log``
    it also logs one line per request on ``arena.api.access``: method, path, status, milliseconds (uvicorn's
    own access log has no duration, and ``arena.logs`` quiets it with the other chatty libraries)."""

    def __init__(self, app: ASGIApp, metrics: ApiMetrics, access_log: bool = False) -> None:
        self.app = app
        self.metrics = metrics
        self.access_log = access_log

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def send_wrapper(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_wrapper)
        finally:
            elapsed = time.perf_counter() - started
            route = scope.get("route")
            template = getattr(route, "path", None) or "unmatched"
            self.metrics.latency.labels(scope["method"], template, str(status)).observe(elapsed)
            if self.access_log:
                access(scope["method"], scope["path"], status, elapsed * 1000)


ACCESS = logging.getLogger("arena.api.access")


def access(method: str, path: str, status: int, ms: float) -> None:
    # The path as requested, cut: it is the client's text, and one line must stay one line.
    shown = path[:300].encode("unicode_escape").decode("ascii")
    ACCESS.info("%s %s %d %.1f ms", method, shown, status, ms,
                extra={"http": {"method": method, "path": shown, "status": status, "ms": round(ms, 1)}})  # fmt: skip
