"""The race cycle, embedded (SQLite, in-process procrastinate queue), in real bubblewrap sandboxes.

Two validators with separate databases race the same three submissions with the offline policy
and must agree on the weights; the cycle's every stage, episode, judgment, standing, ledger event
and weight is checked in the store; a second cycle without challengers keeps the champion and the
last decided weights; a validator killed mid-cycle resumes without redoing or losing an episode.
(A judge that cannot be reached halts the cycle: tests/arena/race/test_race_faults.py.)
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections import Counter

import pytest
from sqlalchemy import func, select

from arena.chain.local import LocalChain
from arena.problems.ledger import EventKind
from arena.problems.suites import Suite
from arena.race.cycle import CycleReport
from arena.race.validator_service import Validator
from arena.settings import ArenaSettings
from arena.store import cycles as cycle_rows
from arena.store import episodes as episode_rows
from arena.store import judgments as judgment_rows
from arena.store import open_store
from arena.store import standings as standing_rows
from arena.store import submissions as submission_rows
from arena.store import suites as suite_rows
from arena.store.models import SubmissionStatus
from arena.store.models_race import CycleStage, Episode, EpisodeStage, EpisodeStatus, JudgmentStatus
from judge.rubric import RUBRIC_VERSION
from tests.support.race_support import (
    agent_code,
    race_toml,
    race_world,  # noqa: F401  (fixture)
    seed_store,
    small_race,
    subprocess_env,
    suite_copy,
    wait_until,
)

AGENTS = [
    ("miner-dialogue", agent_code("dialogue")),
    ("miner-first-hit", agent_code("first_hit")),
    ("miner-cheapest", agent_code("cheapest_of_three")),
]
STAGE_ORDER = [s.value for s in CycleStage]


@pytest.fixture(scope="module")
def two_validators(race_world, tmp_path_factory):  # noqa: F811
    """Validators 'a' and 'b', each with its own SQLite file, suite copy and local chain, after one cycle."""
    catalog, template = race_world
    ran: dict[str, tuple[Validator, CycleReport, Suite]] = {}
    for name in ("a", "b"):
        folder = tmp_path_factory.mktemp(f"validator-{name}")
        suite_dir = suite_copy(template, folder)
        store = seed_store(f"sqlite:///{folder / 'arena.db'}", AGENTS)
        # The whole bank (8 clusters): two problems could never crown anyone confidently above zero.
        validator = Validator(
            ArenaSettings(), race=small_race(suite_dir, draw_size=8), store=store, catalog_path=catalog,
            hotkey=f"validator-{name}",
        )  # fmt: skip
        ran[name] = (validator, validator.run_once(), Suite(suite_dir))
    yield ran
    for validator, _, _ in ran.values():
        validator.close()


def test_two_validators_with_separate_databases_send_identical_weights(two_validators):
    (va, a, _), (vb, b, _) = two_validators["a"], two_validators["b"]
    assert a.weights is not None and b.weights is not None
    assert (a.weights.uids, a.weights.weights) == (b.weights.uids, b.weights.weights)
    assert a.stages["race"]["problems"] == b.stages["race"]["problems"]  # same seed, same draw
    assert a.draw_block_hash == b.draw_block_hash
    assert a.stages["promotion"] == b.stages["promotion"]  # the paired decision, interval and all, to the bit
    assert a.stages["qualifying"]["comparisons"] == b.stages["qualifying"]["comparisons"]
    table = lambda r: [(s.submission_id, s.race_score, s.rank, s.is_champion) for s in r.standings]  # noqa: E731
    assert table(a) == table(b)
    # What each chain now holds for its validator is that same vector.
    held_a = LocalChain(va.store.sessions).weights("validator-a")
    held_b = LocalChain(vb.store.sessions).weights("validator-b")
    assert held_a is not None and held_b is not None
    assert (held_a.uids, held_a.weights) == (held_b.uids, held_b.weights) == (a.weights.uids, a.weights.weights)


def test_a_cycle_stores_every_stage_episode_judgment_and_standing(two_validators):
    validator, report, suite = two_validators["a"]
    assert list(report.stages) == STAGE_ORDER
    racers = report.stages["race"]["racers"]
    assert sorted(racers) == [1, 2, 3]  # qualification_fraction 0: every entrant races
    with validator.store.transaction() as s:
        assert all(stage.finished_at is not None for stage in cycle_rows.stages(s, 1))
        qualifying = episode_rows.list_episodes(s, cycle=1, stage=EpisodeStage.qualifying)
        race = episode_rows.list_episodes(s, cycle=1, stage=EpisodeStage.race)
        assert len(qualifying) == 3 * 2 and len(race) == 3 * 8 * 1
        for episode in qualifying + race:
            full = episode_rows.get_episode(s, episode.id, with_record=True)
            assert full.status is EpisodeStatus.done and full.record is not None and full.outcome is not None
            assert full.record["problem"]["id"] == episode.problem_id
            assert full.record["sandbox"] == "bubblewrap"
            assert full.outcome["mode"] == "strict" and full.success == full.outcome["success"]
            judgments = judgment_rows.versions(s, episode.id)
            assert [(j.version, j.status, j.judge, j.rubric_version) for j in judgments] == [
                (1, JudgmentStatus.done, "rules", RUBRIC_VERSION)
            ]
        # The race score is the mean of success x coefficient, recomputed here from the stored rows.
        for standing in standing_rows.list_standings(s, 1):
            mine = [e for e in race if e.submission_id == standing.submission_id]
            values = [(judgment_rows.latest(s, e.id).coefficient if e.success else 0.0) for e in mine]
            assert standing.race_score == pytest.approx(sum(values) / len(values))
        ranks = sorted(st.rank for st in standing_rows.list_standings(s, 1))
        assert ranks == [1, 2, 3]
        champion = standing_rows.champion(s)
        assert champion is not None and champion.cycle == 1 and champion.submission_id == report.champion_id
        # Crowned only because its score is confidently above zero: the interval and the sign test say so.
        decision = report.stages["promotion"]
        assert decision["verdict"] == "crowned" and decision["champion_id"] == report.champion_id
        assert decision["interval"]["lower"] > 0 and decision["interval"]["p_positive"] < 0.05
        statuses = {x.id: x.status for x in submission_rows.list_submissions(s)}
        assert statuses[report.champion_id] is SubmissionStatus.champion
        assert all(statuses[i] is SubmissionStatus.retired for i in racers if i != report.champion_id)
        # The draw was revealed and retired in the suite's ledger, and the store holds the same events.
        stored = suite_rows.ledger_events(s, suite.manifest.version)
    events = suite.read_ledger().events
    assert [e.hash for e in stored] == [e.hash for e in events]
    assert [(e.event, e.cycle) for e in events] == [(EventKind.revealed, 1), (EventKind.retired, 1)]
    assert sorted(events[0].cluster_ids) == sorted(report.stages["race"]["clusters"])
    assert sorted(events[1].cluster_ids) == sorted(report.stages["judging"]["retired_clusters"])
    # Weights: 0.8 to the champion's uid, the rest tapered over the other two finishers (0.5 ratio): all
    # three scored above 0 (a 0 would earn nothing).
    assert all(st.race_score > 0 for st in repo_standings(validator, 1))
    uid_of = {n.hotkey: n.uid for n in validator.chain.neurons()}
    hotkey_of = {x.id: x.hotkey for x in repo_submissions(validator)}
    weights = dict(zip(report.weights.uids, report.weights.weights, strict=True))
    assert weights[uid_of[hotkey_of[report.champion_id]]] == pytest.approx(0.8)
    others = sorted((w for u, w in weights.items() if u != uid_of[hotkey_of[report.champion_id]]), reverse=True)
    assert others == pytest.approx([0.2 * 2 / 3, 0.2 / 3])


def repo_standings(validator, cycle):
    with validator.store.transaction() as s:
        return standing_rows.list_standings(s, cycle)


def repo_submissions(validator):
    with validator.store.transaction() as s:
        return submission_rows.list_submissions(s)


def test_a_cycle_without_challengers_keeps_the_champion_unraced(two_validators):
    validator, first, suite = two_validators["a"]
    second = validator.run_once()
    assert second.cycle == 2
    assert second.stages["qualifying"]["entrants"] == []
    assert "skipped" in second.stages["race"]
    assert second.champion_id == first.champion_id
    with validator.store.transaction() as s:
        assert episode_rows.list_episodes(s, cycle=2) == []  # nothing raced, no bank cluster spent
    assert [e.cycle for e in suite.read_ledger().events] == [1, 1]
    # Nobody new came: the last decided weights stand, runners-up included (re-sent, not recomputed).
    assert second.weights.cycle == 2 and "re-sent from cycle 1" in second.weights.message
    assert (second.weights.uids, second.weights.weights) == (first.weights.uids, first.weights.weights)
    assert second.stages["weights"]["decided"] is False


def test_forever_mode_reports_each_finished_cycle(two_validators):
    import threading

    validator, first, _ = two_validators["b"]
    stop, reports = threading.Event(), []

    def on_cycle(report) -> None:
        reports.append(report)
        stop.set()  # one cycle is enough: the loop waits for the next one on this event

    validator.run_forever(stop, on_cycle=on_cycle)
    assert [r.cycle for r in reports] == [first.cycle + 1]


def test_a_validator_killed_mid_cycle_resumes_without_redoing_or_losing_episodes(race_world, tmp_path):  # noqa: F811
    catalog, template = race_world
    agents = [(hotkey, agent_code(name, pause_s=2.0)) for hotkey, name in
              [("miner-dialogue", "dialogue"), ("miner-first-hit", "first_hit")]]  # fmt: skip
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    seed_store(url, agents).dispose()
    race = small_race(suite_copy(template, tmp_path), lease_s=3.0)
    command = [
        sys.executable, "-m", "arena.commands.validator", "run", "--once", "--local", "--json",
        "--database-url", url, "--catalog", str(catalog), "--race-config", str(race_toml(race, tmp_path / "race.toml")),
    ]  # fmt: skip
    env = subprocess_env(ARENA_LOG_LEVEL="WARNING")
    store = open_store(url)

    def statuses() -> Counter:
        with store.transaction() as s:
            return Counter(e.status for e in episode_rows.list_episodes(s))

    first = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             start_new_session=True)  # fmt: skip
    try:
        wait_until(lambda: (c := statuses())[EpisodeStatus.done] >= 1 and c[EpisodeStatus.running] >= 1, 120,
                   "an episode done while another runs")  # fmt: skip
    finally:
        os.killpg(first.pid, signal.SIGKILL)  # the validator and its sandboxes, as a power cut would
        first.wait(30)
    with store.transaction() as s:
        before = {e.id: episode_rows.get_episode(s, e.id, with_record=True) for e in episode_rows.list_episodes(s)}
    finished_before = {i: e for i, e in before.items() if e.status is EpisodeStatus.done}
    assert finished_before and any(e.status is EpisodeStatus.running for e in before.values())

    second = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert second.returncode == 0, second.stderr[-3000:]
    report = json.loads(second.stdout)
    assert report["cycle"] == 1 and list(report["stages"]) == STAGE_ORDER
    with store.transaction() as s:
        after = {e.id: episode_rows.get_episode(s, e.id, with_record=True) for e in episode_rows.list_episodes(s)}
        keys = s.execute(
            select(Episode.stage, Episode.submission_id, Episode.problem_id, Episode.attempt, func.count()).group_by(
                Episode.stage, Episode.submission_id, Episode.problem_id, Episode.attempt
            )
        ).all()
        stage_rows = cycle_rows.stages(s, 1)
        weights = standing_rows.weights_sent(s, cycle=1)
    # Every episode finished exactly once: nothing redone, nothing lost, nothing doubled.
    assert all(e.status is EpisodeStatus.done for e in after.values())
    assert len(after) == 2 * 2 + 2 * 2 and all(row[-1] == 1 for row in keys)
    for episode_id, done in finished_before.items():
        assert after[episode_id].record["episode_id"] == done.record["episode_id"]  # the same run, not a rerun
        assert after[episode_id].finished_at == done.finished_at and after[episode_id].claims == done.claims
    interrupted = [i for i, e in before.items() if e.status is EpisodeStatus.running]
    assert all(after[i].claims >= 2 for i in interrupted)  # handed out again after the lease lapsed
    assert [r.stage.value for r in stage_rows] == STAGE_ORDER
    assert len([w for w in weights if w.ok]) == 1
    store.dispose()
