"""What the front page's history costs as cycles pile up: ``/`` (the leaderboard with its history, charts and
all-time table) against ``/v1/leaderboard`` (one cycle's standings: what the page read before the history),
interleaved in one process on one store, medians over rounds.

    .venv/bin/python benchmarks/dashboard_history.py                       # 50, 200, 1000 cycles, SQLite
    .venv/bin/python benchmarks/dashboard_history.py --cycles 200 --entrants 8 --backend postgresql

Each cycle ranks ``--entrants`` fresh submissions and the champion (it defends every cycle), and sends weights.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from fastapi.testclient import TestClient  # noqa: E402

from arena.api import create_app  # noqa: E402
from arena.chain.local import LocalChain  # noqa: E402
from arena.store import cycles as cycle_rows  # noqa: E402
from arena.store import standings as standing_rows  # noqa: E402
from arena.store import submissions as submission_rows  # noqa: E402
from arena.store import suites as suite_rows  # noqa: E402
from arena.store.models import SubmissionStatus  # noqa: E402
from arena.store.models_race import CycleStage  # noqa: E402
from arena.store.standings import StandingIn  # noqa: E402
from arena.store.submissions import NewSubmission  # noqa: E402
from tests.arena.intake.test_api_submissions import app_settings  # noqa: E402
from tests.arena.store.test_store import make_suite, migrated_store  # noqa: E402


def populate(store, suite_path: Path, cycles: int, entrants: int) -> None:
    with store.transaction() as s:
        suite = suite_rows.import_suite(s, suite_path).suite_id
        champion = None
        for number in range(1, cycles + 1):
            cycle_rows.start_cycle(s, number, suite, {})
            ids = []
            for e in range(entrants):
                hotkey = f"hk-{number}-{e}"
                submission_rows.ensure_miner(s, hotkey, e + 1)
                code = f"def agent_main(problem):\n    return {number * 1000 + e}\n".encode()
                ids.append(submission_rows.add_submission(s, NewSubmission(
                    hotkey=hotkey, agent_name=f"agent-{number}-{e}.py", code=code,
                    ast_hash=hashlib.sha256(code).hexdigest())).id)  # fmt: skip
            racers = ids + ([champion] if champion is not None else [])
            scores = {sid: ((sid * 7919) % 1000) / 1000 for sid in racers}
            best = max(racers, key=lambda sid: scores[sid])
            champion = best if champion is None or scores[best] > scores[champion] + 0.05 else champion
            for rank, sid in enumerate(sorted(racers, key=lambda sid: -scores[sid]), start=1):
                standing_rows.record_standing(s, StandingIn(
                    cycle=number, submission_id=sid, qualifying_score=scores[sid], race_score=scores[sid],
                    success_rate=scores[sid], rank=rank, is_champion=sid == champion))  # fmt: skip
            for sid in ids:
                if sid != champion:
                    submission_rows.set_status(s, sid, SubmissionStatus.retired)
            submission_rows.set_status(s, champion, SubmissionStatus.champion)
            cycle_rows.begin_stage(s, number, CycleStage.done)
            standing_rows.record_weights(s, number, [1, 2], [0.2, 0.8], ok=True, block=number)


def bench(cycles: int, entrants: int, backend: str, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as folder, migrated_store(backend, Path(folder)) as store:
        suite = make_suite(Path(folder) / "suite", "bench")
        populate(store, suite.path, cycles, entrants)
        app = create_app(app_settings(access_log=False), store=store, chain=LocalChain(store.sessions))
        timings: dict[str, list[float]] = {"/v1/leaderboard": [], "/": [], "/v1/history": []}
        with TestClient(app) as client:
            for path in timings:
                client.get(path)  # warm: templates compiled, caches filled
            for _ in range(rounds):
                for path, samples in timings.items():
                    started = time.perf_counter()
                    answer = client.get(path)
                    samples.append((time.perf_counter() - started) * 1000)
                    assert answer.status_code == 200, answer.text[:300]
            size = len(client.get("/").content)
        load = Path("/proc/loadavg").read_text().split()[:3]
        medians = ", ".join(f"{path} {statistics.median(s):.1f} ms" for path, s in timings.items())
        print(f"{backend} {cycles} cycles x {entrants + 1} racers: {medians}; page {size / 1024:.0f} KiB; "
              f"load {' '.join(load)}", flush=True)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, nargs="*", default=[50, 200, 1000])
    parser.add_argument("--entrants", type=int, default=4)
    parser.add_argument("--backend", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    for cycles in args.cycles:
        bench(cycles, args.entrants, args.backend, args.rounds)


if __name__ == "__main__":
    main()
