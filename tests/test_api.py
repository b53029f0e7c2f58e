"""The validator API's read side on PostgreSQL and SQLite: leaderboard, cycles, a submission's results per intent,
episodes with their redaction, the embargo, health, metrics, the OpenAPI schema, the HTML page and `arena serve`.

The world: a real suite (public, race bank, held-out) whose ledger revealed
and retired clusters in cycle 1 and revealed more in cycle 2; cycles 1 and 2
finished, cycle 3 still racing; episodes with real EpisodeRecords scored by
the real strict scorer on the shared test catalog, and versioned judgments.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from arena.api import create_app
from arena.chain.local import LocalChain
from arena.problems.draw import record_draw, retire
from arena.problems.model import Difficulty, Intent, Problem, ProductReward
from arena.problems.partitions import PartitionName, PartitionPlan
from arena.problems.suites import write_suite
from arena.runner.record import EpisodeRecord, LLMCallRecord, ProblemRef, AgentRef, Termination
from arena.scoring import ScoreMode, score_problem
from arena.store import Store
from arena.store import repositories as repo
from arena.store.migrate import head_revision
from arena.store.models import utcnow
from arena.store.models_race import CycleStage, EpisodeStage
from arena.wallets import ensure_hotkeys, hotkey_address
from tests.test_api_submissions import BACKENDS, app_settings, make_agent, migrated, signed_headers

REPO = Path(__file__).resolve().parents[1]


# --- the world -----------------------------------------------------------------------------------


def suite_problems() -> list[Problem]:
    """16 clusters of 2 variants; odd clusters are two-item shop problems so results split by intent."""
    problems = []
    for c in range(16):
        for v in range(2):
            shop = c % 2 == 1
            problems.append(
                Problem(
                    id=f"api-p{c:02d}{v}",
                    intent=Intent.shop if shop else Intent.product,
                    query=f"secretquery{c:02d}{v} widget wanted",
                    difficulty=Difficulty.easy,
                    rewards=[ProductReward(product_id="1000", title=["widget"])]
                    + ([ProductReward(product_id="1001", title=["widget"])] if shop else []),
                    cluster_id=f"api-c{c:02d}",
                )
            )
    return problems


@pytest.fixture(scope="module")
def suite_dir(tmp_path_factory):
    problems = suite_problems()
    groups = {
        PartitionName.public: problems[:6],
        PartitionName.race_bank: problems[6:-6],
        PartitionName.train_pool: [],
        PartitionName.heldout: problems[-6:],
    }
    suite = write_suite(
        groups,
        tmp_path_factory.mktemp("suite") / "api",
        seed="secret",
        plan=PartitionPlan(public=6, heldout_fraction=0.2),
        clustering=None,
        version="api-v1",
    )
    revealed_1 = record_draw(suite, 1, "ab" * 32, 2)
    retire(suite, 1)
    revealed_2 = record_draw(suite, 2, "cd" * 32, 2)
    return suite.path, revealed_1, revealed_2


@dataclass
class World:
    store: Store
    client: TestClient
    problems: dict[str, Problem]
    submissions: dict[str, int]  # name -> id
    episodes: dict[str, int]  # what it shows -> episode id
    heldout: list[Problem]


def record_for(problem: Problem, attempt: int = 0) -> EpisodeRecord:
    """A real record: it carries the problem row (gold included) and the query in the LLM request."""
    return EpisodeRecord(
        episode_id=f"{problem.id}-{attempt}",
        problem=ProblemRef(id=problem.id, intent=problem.intent.value, query=problem.query, row=problem.to_row()),
        agent=AgentRef(name="agent", sha256="0" * 64),
        sandbox="bubblewrap",
        model="offline",
        started_at=utcnow().isoformat(),
        llm_calls=[
            LLMCallRecord(
                index=0, model="offline", request={"messages": [{"role": "user", "content": problem.query}]},
                at_s=0.1, latency_ms=3.0,
            )
        ],  # fmt: skip
        final_recommendation=["1000"],
        termination=Termination.terminated,
    )


def run_episode(session, catalog, key: repo.EpisodeKey, problem: Problem, coefficient: float | None) -> int:
    episode = repo.ensure_episode(session, key)
    outcome = score_problem(problem, ["1000"], catalog, mode=ScoreMode.strict)
    repo.complete(session, episode.id, record_for(problem, key.attempt), outcome)
    if coefficient is not None:
        result = repo.JudgmentResult(level=0.9, coefficient=coefficient, explanation=f"it searched for {problem.query}")
        repo.add_version(session, episode.id, "rules", "v1", result)
    return episode.id


def build_world(store: Store, catalog, suite_dir) -> tuple[dict, dict, list[Problem]]:
    path, revealed_1, revealed_2 = suite_dir
    problems = {p.id: p for p in suite_problems()}
    public = [p for p in suite_problems()[:6]]
    heldout = suite_problems()[-6:]
    with store.transaction() as s:
        suite = repo.import_suite(s, path).suite_id
        repo.ensure_miner(s, "hk-alpha", 1)
        repo.ensure_miner(s, "hk-beta", 2)
        alpha = repo.add_submission(s, new("hk-alpha", b"def agent_main(problem):\n    return 1\n")).id
        beta = repo.add_submission(s, new("hk-beta", b"def agent_main(problem):\n    return 2\n")).id
        for number in (1, 2, 3):
            repo.start_cycle(s, number, suite, {"draw_size": 2})
            repo.begin_stage(s, number, CycleStage.qualifying)
            repo.finish_stage(s, number, CycleStage.qualifying, {"drawn": revealed_1 if number == 1 else revealed_2})
            repo.begin_stage(s, number, CycleStage.race)
        for number in (1, 2):
            repo.begin_stage(s, number, CycleStage.done)

        def key(cycle, stage, sub, problem, attempt=0):
            return repo.EpisodeKey(
                cycle=cycle, stage=stage, submission_id=sub, suite_id=suite, problem_id=problem.id, attempt=attempt
            )

        episodes = {
            "public": run_episode(s, catalog, key(1, EpisodeStage.qualifying, alpha, public[0]), public[0], 1.0),
            "public_shop": run_episode(s, catalog, key(1, EpisodeStage.qualifying, alpha, public[2]), public[2], 0.5),
            "retired": run_episode(
                s, catalog, key(1, EpisodeStage.race, alpha, problems[revealed_1[0]]), problems[revealed_1[0]], 0.8
            ),
            "unretired": run_episode(
                s, catalog, key(2, EpisodeStage.race, alpha, problems[revealed_2[0]]), problems[revealed_2[0]], 0.7
            ),
            "running": run_episode(s, catalog, key(3, EpisodeStage.qualifying, alpha, public[1]), public[1], None),
            "heldout": run_episode(s, catalog, key(1, EpisodeStage.race, alpha, heldout[0]), heldout[0], 0.9),
        }
        pending = repo.ensure_episode(s, key(3, EpisodeStage.qualifying, alpha, public[3]))
        episodes["pending"] = pending.id
        for cycle, champion, other in ((1, alpha, beta), (2, beta, alpha)):
            for submission, rank in ((champion, 1), (other, 2)):
                repo.record_standing(
                    s,
                    repo.StandingIn(
                        cycle=cycle, submission_id=submission, qualifying_score=0.5 + 0.1 * (rank == 1),
                        race_score=1.0 / rank, success_rate=1.0 / rank, mean_coefficient=0.9, rank=rank,
                        is_champion=submission == champion,
                    ),
                )  # fmt: skip
        repo.record_weights(s, 2, [1, 2], [0.25, 0.75], ok=True, block=7)
    return problems, {"alpha": alpha, "beta": beta}, heldout


def new(hotkey: str, code: bytes, **fields) -> repo.NewSubmission:
    return repo.NewSubmission(
        hotkey=hotkey, agent_name=f"{hotkey}.py", code=code, ast_hash=hashlib.sha256(code).hexdigest(), **fields
    )


@pytest.fixture(scope="module", params=BACKENDS)
def world(request, tmp_path_factory, catalog, suite_dir) -> Iterator[World]:
    with migrated(request.param, tmp_path_factory.mktemp("db")) as store:
        problems, submissions, heldout = build_world(store, catalog, suite_dir)
        with store.transaction() as s:
            episodes = {name: e.id for name, e in []}  # filled below from the store, by problem
        del episodes
        app = create_app(app_settings(), store=store, chain=LocalChain(store.sessions))
        with TestClient(app) as client:
            ids = {}
            with store.transaction() as s:
                for info in repo.list_episodes(s):
                    ids.setdefault((info.cycle, info.stage.value, info.problem_id), info.id)
            yield World(store, client, problems, submissions, episode_ids(store, suite_dir), heldout)


def episode_ids(store: Store, suite_dir) -> dict[str, int]:
    _, revealed_1, revealed_2 = suite_dir
    public = suite_problems()[:6]
    heldout = suite_problems()[-6:]
    wanted = {
        "public": (1, public[0].id),
        "public_shop": (1, public[2].id),
        "retired": (1, revealed_1[0]),
        "unretired": (2, revealed_2[0]),
        "running": (3, public[1].id),
        "pending": (3, public[3].id),
        "heldout": (1, heldout[0].id),
    }
    with store.transaction() as s:
        found = {(e.cycle, e.problem_id): e.id for e in repo.list_episodes(s)}
    return {name: found[where] for name, where in wanted.items()}
