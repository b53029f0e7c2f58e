"""`arena judge run --database-url`: judges the store's unjudged episodes and stores each judgment."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import orjson

from arena.problems.partitions import PartitionName
from arena.runner.record import EpisodeRecord
from arena.store import cycles as cycle_rows
from arena.store import episodes as episode_rows
from arena.store import judgments as judgment_rows
from arena.store import submissions as submission_rows
from arena.store import suites as suite_rows
from arena.store.episodes import EpisodeKey
from arena.store.models_race import EpisodeStage
from tests.arena.store.test_store import make_suite, migrated_store, new_submission
from tests.conftest import REPO

ARENA = str(Path(sys.executable).parent / "arena")
LABELS = REPO / "judge" / "calibration" / "labels" / "labelled.jsonl"


def test_judge_run_on_the_store_judges_each_episode_once(tmp_path):
    labelled = [orjson.loads(line) for line in LABELS.read_bytes().splitlines()][:4]
    records = [EpisodeRecord.model_validate(row["record"]) for row in labelled]
    suite = make_suite(tmp_path / "suite", "judge", clusters=8)
    with migrated_store("sqlite", tmp_path) as store:
        with store.transaction() as s:
            imported = suite_rows.import_suite(s, suite.path)
            submission = submission_rows.add_submission(s, new_submission("judge-miner", b"print('agent')\n"))
            cycle_rows.start_cycle(s, 1, imported.suite_id, {})
            bank = suite_rows.suite_problems(s, imported.suite_id, PartitionName.race_bank)[: len(records)]
            keys = [
                EpisodeKey(cycle=1, stage=EpisodeStage.race, submission_id=submission.id,
                                suite_id=imported.suite_id, problem_id=p.id)
                for p in bank
            ]  # fmt: skip
            infos = episode_rows.ensure_episodes(s, keys)
            for info, record in zip(infos, records, strict=True):
                episode_rows.complete(s, info.id, record, {"success": False, "rule": 0.0})
        url = store.url

        def judge_run() -> subprocess.CompletedProcess:
            return subprocess.run(
                [ARENA, "judge", "run", "--database-url", url, "--judge", "rules"],
                capture_output=True, text=True, timeout=300,
            )  # fmt: skip

        first = judge_run()
        assert first.returncode == 0, first.stderr
        lines = [json.loads(line) for line in first.stdout.splitlines()]
        assert sorted(line["store_episode_id"] for line in lines) == sorted(i.id for i in infos)
        assert {line["episode_id"] for line in lines} == {r.episode_id for r in records}
        gold = {row["record"]["episode_id"]: row["gold"] for row in labelled}
        assert all(line["level"] == gold[line["episode_id"]] for line in lines)
        with store.transaction() as s:
            stored = {i.id: judgment_rows.latest(s, i.id) for i in infos}
        assert all(j is not None and j.judge == "rules" for j in stored.values())
        again = judge_run()
        assert again.returncode == 0 and again.stdout == ""  # judged episodes are not judged twice
