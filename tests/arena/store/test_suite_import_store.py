"""`arena suite import DIR`: a suite directory goes into the store; importing again is a no-op."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.arena.store.test_store import BACKENDS, make_suite, migrated_store

ARENA = str(Path(sys.executable).parent / "arena")


def test_suite_directory_is_imported_into_the_store_once(tmp_path):
    suite = make_suite(tmp_path / "suite", "cli", clusters=8)
    url = f"sqlite:///{tmp_path / 'arena.db'}"

    def run() -> subprocess.CompletedProcess:
        return subprocess.run([ARENA, "suite", "import", str(suite.path), "--database-url", url],
                              capture_output=True, text=True, timeout=120)  # fmt: skip

    first = run()
    assert first.returncode == 0, first.stderr
    imported = json.loads(first.stdout)
    assert imported["new_suite"] is True and imported["problems_added"] > 0
    again = json.loads(run().stdout)
    assert again["new_suite"] is False and again["problems_added"] == 0
    missing = subprocess.run([ARENA, "suite", "import", str(tmp_path / "nope.tar.gz")], capture_output=True, text=True)
    assert missing.returncode == 2 and "--sha256" in missing.stderr


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_public_file_rebuilt_from_the_store_is_the_suites_own(backend, tmp_path):
    """Objects inside a row keep their key order in the store (PostgreSQL's JSONB would sort them), so the
    public qualifying file the API serves from the store has the manifest's sha256."""
    from arena.problems.model import Difficulty, Intent, Problem, ProductReward
    from arena.problems.partitions import PartitionName, PartitionPlan, problem_file_bytes
    from arena.problems.suites import write_suite
    from arena.store.suites import import_suite, suite_problems

    problems = [
        Problem(
            id=f"k-p{c:02d}",
            intent=Intent.product,
            query=f"widget {c}",
            difficulty=Difficulty.easy,
            rewards=[ProductReward(product_id="1000", title=["widget"])],
            cluster_id=f"k-c{c:02d}",
            extra={"zeta": {"storage_type": ["chilled"], "brand": ["x"]}, "alpha": 1},
        )  # fmt: skip
        for c in range(12)
    ]
    groups = {PartitionName.public: problems[:6], PartitionName.race_bank: problems[6:10],
              PartitionName.train_pool: [], PartitionName.heldout: problems[10:]}  # fmt: skip
    suite = write_suite(groups, tmp_path / "suite", seed="s", plan=PartitionPlan(public=6, heldout_fraction=0.2),
                        clustering=None, version="k-v1")  # fmt: skip
    with migrated_store(backend, tmp_path) as store:
        with store.transaction() as session:
            suite_id = import_suite(session, suite.path).suite_id
        with store.transaction() as session:
            rebuilt = problem_file_bytes(suite_problems(session, suite_id, PartitionName.public))
    assert rebuilt == (suite.path / "public" / "qualifying.jsonl").read_bytes()
