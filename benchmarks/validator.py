"""Validator throughput: signed submissions per second, episode records stored per second.

    .venv/bin/python benchmarks/validator.py                     # every benchmark defined here
    .venv/bin/python benchmarks/validator.py --only submissions --n 300 --backend sqlite

- ``bench_submissions``: the real API under uvicorn on loopback, real
  sr25519 keys (one registered hotkey per submission, so the rate limit
  never refuses), each file distinct; W client threads sign and POST. Every
  request runs the full intake: signature, registration, rate limit,
  fingerprint and copy detection against every earlier submission, the
  locked insert. Prints accepted/s and latency percentiles.
- ``bench_store``: ``complete`` of N episodes, each with a realistic record
  (16 tool calls, 8 LLM calls with growing dialogues, ~40 KB of JSON) and
  its outcome, from W threads, one transaction per episode, into a
  throwaway PostgreSQL database. Prints records/s and MB/s.

PostgreSQL is the server at ARENA_BENCH_POSTGRES_URL (default
postgresql://postgres@127.0.0.1:5432/test), used only to create and drop a
throwaway ``arena_bench_*`` database.
"""

from __future__ import annotations

import argparse
import os
import secrets
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import bittensor as bt  # noqa: E402
import httpx  # noqa: E402
import orjson  # noqa: E402
from bittensor.sp_core import Keypair  # noqa: E402
from sqlalchemy import create_engine  # noqa: E402

from arena.store import Store, open_store, resolve_url  # noqa: E402
from arena.store.migrate import upgrade_database  # noqa: E402

ADMIN_URL = os.environ.get("ARENA_BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")


@contextmanager
def throwaway_store(backend: str) -> Iterator[Store]:
    """A migrated store on a fresh database, removed afterwards."""
    if backend == "sqlite":
        with tempfile.TemporaryDirectory() as folder:
            url = f"sqlite:///{Path(folder) / 'bench.db'}"
            upgrade_database(url)
            store = open_store(url)
            try:
                yield store
            finally:
                store.dispose()
        return
    admin = create_engine(resolve_url(ADMIN_URL), isolation_level="AUTOCOMMIT")
    name = f"arena_bench_{secrets.token_hex(5)}"
    with admin.connect() as connection:
        connection.exec_driver_sql(f'CREATE DATABASE "{name}"')
    url = resolve_url(ADMIN_URL).set(database=name)
    try:
        upgrade_database(url)
        store = open_store(url)
        try:
            yield store
        finally:
            store.dispose()
    finally:
        with admin.connect() as connection:
            connection.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.dispose()


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def bench_submissions(n: int = 200, workers: int = 8, backend: str = "postgresql") -> dict:
    from arena.api import create_app
    from arena.api.settings import ApiSettings
    from arena.chain.local import LocalChain
    from arena.settings import ArenaSettings
    from tests.arena.intake.test_api_submissions import live_server, make_agent

    keys = [Keypair.create_from_seed(secrets.token_bytes(32)) for _ in range(n + 1)]
    validator, miners = keys[0], keys[1:]
    bodies = [make_agent(10_000 + i) for i in range(n)]
    with throwaway_store(backend) as store:
        chain = LocalChain(store.sessions)
        chain.register(validator.ss58_address, validator_permit=True)
        for miner in miners:
            chain.register(miner.ss58_address)
        settings = ArenaSettings(api=ApiSettings(validator_hotkey=validator.ss58_address))
        app = create_app(settings, store=store, chain=chain)
        local = threading.local()
        latencies: list[float] = []
        statuses: list[int] = []
        with live_server(app) as url:

            def post(i: int) -> None:
                if not hasattr(local, "client"):
                    local.client = httpx.Client(base_url=url, timeout=60)
                body = bodies[i]
                headers = bt.http_auth.sign(
                    miners[i], method="POST", path="/v1/submissions", body=body, receiver_ss58=validator.ss58_address
                )
                started = time.perf_counter()
                response = local.client.post("/v1/submissions", content=body, headers=headers)
                latencies.append(time.perf_counter() - started)
                statuses.append(response.status_code)

            started = time.perf_counter()
            with ThreadPoolExecutor(max_workers=workers) as pool:
                list(pool.map(post, range(n)))
            wall = time.perf_counter() - started
    accepted = statuses.count(201)
    figures = {
        "benchmark": "submissions",
        "backend": backend,
        "n": n,
        "workers": workers,
        "accepted": accepted,
        "other_statuses": sorted({s for s in statuses if s != 201}),
        "wall_s": round(wall, 2),
        "accepted_per_s": round(accepted / wall, 1),
        "latency_p50_ms": round(1000 * statistics.median(latencies), 1),
        "latency_p99_ms": round(1000 * _percentile(latencies, 0.99), 1),
    }
    print(orjson.dumps(figures).decode(), flush=True)
    return figures


def _record(problem, i: int) -> dict:
    from arena.runner.record import AgentRef, EpisodeRecord, LLMCallRecord, ProblemRef, Termination, ToolCallRecord

    messages = [
        {"role": "system", "content": "You are a shopping agent. " * 20},
        {"role": "user", "content": problem.query},
    ]
    tool_calls, llm_calls = [], []
    for step in range(16):
        result = [
            {"product_id": f"{1000 + k}", "title": f"widget number {k} " * 4, "price": 10.0 + k} for k in range(10)
        ]
        tool_calls.append(
            ToolCallRecord(
                index=step,
                name="find_product",
                arguments={"q": f"widget {step}"},
                ok=True,
                result=result,
                at_s=step * 0.5,
                duration_ms=3.0,
            )  # fmt: skip
        )
        if step % 2 == 0:
            messages = [*messages, {"role": "tool", "content": orjson.dumps(result).decode()}]
            llm_calls.append(
                LLMCallRecord(
                    index=step // 2,
                    model="offline",
                    request={"messages": messages},
                    response={"content": "thinking about widgets " * 10},
                    at_s=step * 0.5,
                    latency_ms=40.0,
                )  # fmt: skip
            )
    return EpisodeRecord(
        episode_id=f"bench-{i}",
        problem=ProblemRef(id=problem.id, intent=problem.intent.value, query=problem.query, row=problem.to_row()),
        agent=AgentRef(name="bench", sha256="0" * 64),
        sandbox="bubblewrap",
        model="offline",
        started_at="2025-01-01T00:00:00+00:00",
        tool_calls=tool_calls,
        llm_calls=llm_calls,
        final_recommendation=["1000"],
        termination=Termination.terminated,
    ).model_dump(mode="json")


def bench_store(n: int = 500, workers: int = 4, backend: str = "postgresql") -> dict:
    from arena.problems.model import Difficulty, Intent, Problem, ProductReward
    from arena.problems.partitions import PartitionName, PartitionPlan
    from arena.problems.suites import write_suite
    from arena.scoring.outcome import OutcomeScore, ScoreMode
    from arena.store import cycles as cycle_rows
    from arena.store import episodes as episode_rows
    from arena.store import submissions as submission_rows
    from arena.store import suites as suite_rows
    from arena.store.episodes import EpisodeKey
    from arena.store.models_race import EpisodeStage
    from arena.store.submissions import NewSubmission

    problems = [
        Problem(
            id=f"bench-p{c:02d}{v}",
            intent=Intent.product,
            query=f"bench widget {c} variant {v}",
            difficulty=Difficulty.easy,
            rewards=[ProductReward(product_id="1000", title=["widget"])],
            cluster_id=f"bench-c{c:02d}",
        )  # fmt: skip
        for c in range(16)
        for v in range(2)
    ]
    groups = {
        PartitionName.public: problems[:6],
        PartitionName.race_bank: problems[6:-6],
        PartitionName.train_pool: [],
        PartitionName.heldout: problems[-6:],
    }
    with tempfile.TemporaryDirectory() as folder, throwaway_store(backend) as store:
        suite = write_suite(
            groups, Path(folder) / "suite", seed="bench", plan=PartitionPlan(public=6, heldout_fraction=0.2),
            clustering=None, version="bench-v1",
        )  # fmt: skip
        bank = problems[6:-6]
        with store.transaction() as s:
            suite_id = suite_rows.import_suite(s, suite.path).suite_id
            submission = submission_rows.add_submission(
                s, NewSubmission(hotkey="bench", agent_name="bench.py", code=b"x = 1\n", ast_hash="bench")
            ).id
            cycle_rows.start_cycle(s, 1, suite_id)
            keys = [
                EpisodeKey(
                    cycle=1,
                    stage=EpisodeStage.race,
                    submission_id=submission,
                    suite_id=suite_id,
                    problem_id=bank[i % len(bank)].id,
                    attempt=i // len(bank),
                )  # fmt: skip
                for i in range(n)
            ]
            episodes = episode_rows.ensure_episodes(s, keys)
        records = [_record(bank[i % len(bank)], i) for i in range(n)]
        size = sum(len(orjson.dumps(r)) for r in records)
        outcome = OutcomeScore(
            problem_id=bank[0].id, intent=Intent.product, mode=ScoreMode.strict, answered=True, success=True, rule=1.0
        )

        def complete(i: int) -> bool:
            with store.transaction() as s:
                return episode_rows.complete(s, episodes[i].id, records[i], outcome)

        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=workers) as pool:
            stored = sum(pool.map(complete, range(n)))
        wall = time.perf_counter() - started
        with store.transaction() as s:
            done = episode_rows.status_counts(s, cycle=1)["done"]
    figures = {
        "benchmark": "store",
        "backend": backend,
        "n": n,
        "workers": workers,
        "stored": stored,
        "done_in_store": done,
        "record_kb": round(size / n / 1024, 1),
        "wall_s": round(wall, 2),
        "records_per_s": round(n / wall, 1),
        "mb_per_s": round(size / wall / 1e6, 2),
    }
    print(orjson.dumps(figures).decode(), flush=True)
    return figures


def bench_cycle(n: int = 50, workers: int = 2, agents: int = 10) -> dict:
    """Wall time of one whole race cycle: ``agents`` submissions x ``n`` race problems (K = 1) with the offline
    policy, ``workers`` in-process episode workers, embedded SQLite, real bubblewrap sandboxes.

    Qualifying runs one public problem per agent (everyone qualifies), so the cycle holds
    agents x (n + 1) episodes. The agents are the race tests' three standard-library agents
    (tests/support/race_agents: a model-driven tool-calling dialogue, first hit, cheapest of three), cycled.
    """
    from datetime import timedelta

    from arena.generator.generate import GeneratorConfig, generate
    from arena.problems.model import Intent
    from arena.problems.partitions import PartitionPlan
    from arena.problems.suites import build_suite
    from arena.race.settings import RaceSettings
    from arena.race.validator_service import Validator
    from arena.settings import ArenaSettings
    from arena.shop.index import CatalogIndex
    from arena.store import cycles as cycle_rows
    from arena.store import episodes as episode_rows
    from arena.taskpack.build import build_catalog
    from tests.support.race_support import agent_code, seed_store

    names = ("dialogue", "first_hit", "cheapest_of_three")
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        build_catalog(root / "catalog", synthetic=2000, seed=11)
        generated = generate(
            CatalogIndex(root / "catalog"), GeneratorConfig(n=n + 12, seed=5, intents=[Intent.product])
        )
        suite = build_suite(
            generated.problems, root / "suite", seed="bench", plan=PartitionPlan(public=1, heldout_fraction=0.0)
        )
        bank = len(suite.manifest.clusters["race_bank"])
        if bank < n:
            raise SystemExit(f"the generated bank has {bank} clusters, fewer than --n {n}")
        store = seed_store(
            f"sqlite:///{root / 'arena.db'}", [(f"miner-{i}", agent_code(names[i % 3])) for i in range(agents)]
        )
        race = RaceSettings(
            suite_dir=suite.path, cycle_length=timedelta(minutes=5), qualifying_size=1, qualification_fraction=0.0,
            draw_size=n, attempts=1, workers=workers, poll_s=0.5,
        )  # fmt: skip
        validator = Validator(ArenaSettings(), race=race, store=store, catalog_path=root / "catalog")
        started = time.perf_counter()
        report = validator.run_once()
        wall = time.perf_counter() - started
        with store.transaction() as s:
            episodes = episode_rows.status_counts(s, cycle=report.cycle)
            stages = {
                x.stage.value: round((x.finished_at - x.started_at).total_seconds(), 1) for x in cycle_rows.stages(s, 1)
            }
        validator.close()
    total = sum(episodes.values())
    figures = {
        "benchmark": "cycle",
        "backend": "sqlite (embedded, in-process queue)",
        "agents": agents,
        "race_problems": n,
        "workers": workers,
        "episodes": total,
        "episodes_done": episodes["done"],
        "wall_s": round(wall, 1),
        "episodes_per_s": round(total / wall, 2),
        "stage_s": stages,
        "champion": report.champion_id,
    }
    print(orjson.dumps(figures).decode(), flush=True)
    return figures


BENCHMARKS = ("submissions", "store", "cycle")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", choices=BENCHMARKS, action="append", help="Run only these (repeatable).")
    parser.add_argument("--n", type=int, help="Submissions / episodes per benchmark (each has its default).")
    parser.add_argument("--workers", type=int, help="Client threads.")
    parser.add_argument("--backend", choices=["postgresql", "sqlite"], default="postgresql")
    args = parser.parse_args()
    given = {k: v for k, v in {"n": args.n, "workers": args.workers}.items() if v is not None}
    for name in args.only or BENCHMARKS:
        bench = globals().get(f"bench_{name}")
        if bench is None:
            print(f"bench_{name}: not defined yet", file=sys.stderr)
            continue
        if name == "cycle":
            bench(**given)
        else:
            bench(backend=args.backend, **given)


if __name__ == "__main__":
    main()
