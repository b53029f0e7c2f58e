"""`arena export` from PostgreSQL: 20k stored episodes through the whole corpus pipeline.

Fills a throwaway PostgreSQL database (created on the server at
ARENA_TEST_POSTGRES_URL, dropped afterwards) with N done and judged episodes,
cloned from real episode records (the shipped labelled set's runner-captured
records, or --records FILE), then runs the export in a child process and
reports its wall time and peak RSS. Target: 20k episodes in < 60 s, memory
flat (batches of --batch-size records).

Run: ``.venv/bin/python benchmarks/export.py [--episodes 20000] [--batch-size 500] [--records FILE]``
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import resource
import secrets
import sys
import tempfile
import time
from pathlib import Path
from queue import Empty

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sqlalchemy import create_engine, insert  # noqa: E402

from arena.problems.model import Difficulty, Intent, Problem, ProductReward  # noqa: E402
from arena.problems.partitions import PartitionName, PartitionPlan  # noqa: E402
from arena.problems.suites import write_suite  # noqa: E402
from arena.runner.record import EpisodeRecord  # noqa: E402
from arena.store import cycles as cycle_rows  # noqa: E402
from arena.store import open_store, resolve_url  # noqa: E402
from arena.store import submissions as submission_rows  # noqa: E402
from arena.store import suites as suite_rows  # noqa: E402
from arena.store.migrate import upgrade_database  # noqa: E402
from arena.store.models import utcnow  # noqa: E402
from arena.store.models_race import Episode, EpisodeStage, EpisodeStatus, Judgment, JudgmentStatus  # noqa: E402
from arena.store.submissions import NewSubmission  # noqa: E402

ADMIN_URL = "postgresql://postgres@127.0.0.1:5432/test"


def templates(path: Path | None) -> list[EpisodeRecord]:
    if path is not None:
        from judge.records import load_records

        return load_records(path)
    from judge.calibration.labelset import LABELLED
    from judge.records import load_labels

    records = [label.record for label in load_labels(LABELLED) if label.record.llm_calls]
    if not records:
        raise SystemExit("no template records with inference calls; pass --records FILE")
    return records


def fill(url: str, n: int, records: list[EpisodeRecord], folder: Path) -> None:
    clusters = 200
    problems = [
        Problem(id=f"b-p{c:03d}{v}", intent=Intent.product, query=f"bench widget {c} {v}", difficulty=Difficulty.easy,
                rewards=[ProductReward(product_id="1000")], cluster_id=f"b-c{c:03d}")
        for c in range(clusters) for v in range(2)
    ]  # fmt: skip
    groups = {PartitionName.public: problems[:20], PartitionName.race_bank: problems[20:-40],
              PartitionName.train_pool: [], PartitionName.heldout: problems[-40:]}  # fmt: skip
    suite = write_suite(groups, folder / "suite", seed="bench", plan=PartitionPlan(public=20), clustering=None,
                        version="bench-v1")  # fmt: skip
    store = open_store(url)
    with store.transaction() as s:
        imported = suite_rows.import_suite(s, suite.path)
        submissions = [
            submission_rows.add_submission(s, NewSubmission(hotkey=f"bench-{i}", agent_name=f"agent{i}.py",
                                code=f"# {i}\n".encode(), ast_hash=f"ast-{i}"))
            for i in range(8)
        ]  # fmt: skip
        cycle_rows.start_cycle(s, 1, imported.suite_id, {})
    bank = problems[20:-40]
    now = utcnow()
    payloads = [r.model_dump(mode="json") for r in records]
    with store.engine.begin() as connection:
        for start in range(0, n, 1000):
            rows = []
            for i in range(start, min(n, start + 1000)):
                record = dict(payloads[i % len(payloads)])
                record["episode_id"] = f"bench-{i}"
                rows.append({
                    "cycle": 1, "stage": EpisodeStage.race, "submission_id": submissions[i % 8].id,
                    "suite_id": imported.suite_id, "problem_id": bank[i % len(bank)].id, "attempt": i // len(bank),
                    "status": EpisodeStatus.done, "claims": 1, "record": record,
                    "outcome": {"success": i % 3 == 0, "rule": (i % 3 == 0) * 1.0}, "success": i % 3 == 0,
                    "rule": (i % 3 == 0) * 1.0, "created_at": now, "finished_at": now,
                })  # fmt: skip
            ids = connection.execute(insert(Episode).returning(Episode.id), rows).scalars().all()
            connection.execute(insert(Judgment), [
                {"episode_id": e, "version": 1, "judge": "rules", "rubric_version": "gates-1",
                 "status": JudgmentStatus.done, "level": 0.9, "coefficient": 1.0, "attempts": 1, "created_at": now}
                for e in ids
            ])  # fmt: skip
    store.dispose()


def export_child(url: str, out: str, batch_size: int, queue) -> None:
    from distill.export import run_export
    from distill.export_model import ExportConfig
    from distill.importers import store_items

    store = open_store(url)
    started = time.perf_counter()
    summary = run_export(store_items(store, batch_size=batch_size), ExportConfig(out=Path(out), formats=["jsonl"]))
    elapsed = time.perf_counter() - started
    store.dispose()
    queue.put((elapsed, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, summary.funnel.model_dump()))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--episodes", type=int, default=20_000)
    parser.add_argument("--batch-size", type=int, default=500)
    parser.add_argument("--records", type=Path)
    parser.add_argument("--admin-url", default=ADMIN_URL)
    args = parser.parse_args()
    admin = create_engine(resolve_url(args.admin_url), isolation_level="AUTOCOMMIT")
    name = f"arena_bench_{secrets.token_hex(4)}"
    with admin.connect() as connection:
        connection.exec_driver_sql(f'CREATE DATABASE "{name}"')
    url = resolve_url(args.admin_url).set(database=name).render_as_string(hide_password=False)
    try:
        with tempfile.TemporaryDirectory() as folder:
            upgrade_database(url)
            records = templates(args.records)
            started = time.perf_counter()
            fill(url, args.episodes, records, Path(folder))
            print(f"filled {args.episodes} episodes ({len(records)} template records) in "
                  f"{time.perf_counter() - started:.1f}s", file=sys.stderr)  # fmt: skip
            queue = multiprocessing.get_context("spawn").Queue()
            child = multiprocessing.get_context("spawn").Process(
                target=export_child, args=(url, str(Path(folder) / "out"), args.batch_size, queue)
            )
            child.start()
            while True:
                try:
                    elapsed, peak_kib, funnel = queue.get(timeout=5)
                    break
                except Empty:
                    if not child.is_alive():
                        raise SystemExit("the export child process failed (its traceback is above)") from None
            child.join()
            sizes = {p.name: p.stat().st_size for p in (Path(folder) / "out").glob("*.jsonl")}
    finally:
        with admin.connect() as connection:
            connection.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.dispose()
    rate = args.episodes / elapsed
    print(json.dumps({"episodes": args.episodes, "export_s": round(elapsed, 2), "episodes_per_s": round(rate, 1),
                      "peak_rss_mib": round(peak_kib / 1024, 1), "batch_size": args.batch_size, "funnel": funnel,
                      "file_bytes": sizes, "target_s": 60, "met": elapsed < 60}, indent=2))  # fmt: skip


if __name__ == "__main__":
    main()
