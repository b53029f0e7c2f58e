"""A validator that cannot measure does not decide, and never charges a miner for its own failure.

Real sandboxes and real stores: a broken bubblewrap (a fake `bwrap` first on PATH that fails before any
agent starts), a model server that is not there and a judge that is not there each halt the cycle: no
promotion, no new weights (the last good vector is re-sent), the halt and its fix in the store, and the
miners' episodes given up on as the validator's fault, never scored. An agent that breaks its own runs
is charged (it scores 0) and halts nothing; an all-zero race crowns nobody and pays only the burn uid.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from arena.chain.local import LocalChain
from arena.problems.ledger import EventKind
from arena.problems.suites import Suite
from arena.race.validator_service import Validator
from arena.runner.proxy import Upstream
from arena.settings import ArenaSettings
from arena.store import Store
from arena.store import cycles as cycle_rows
from arena.store import episodes as episode_rows
from arena.store import judgments as judgment_rows
from arena.store import standings as standing_rows
from arena.store import submissions as submission_rows
from arena.store import suites as suite_rows
from arena.store.models import SubmissionStatus
from arena.store.models_race import CycleStage, EpisodeStatus
from judge.settings import JudgeSettings
from tests.support.race_support import (
    _free_port,
    agent_code,
    race_toml,
    race_world,  # noqa: F401  (fixture)
    seed_store,
    small_race,
    subprocess_env,
    suite_copy,
)

AGENTS = [("miner-dialogue", agent_code("dialogue")), ("miner-first-hit", agent_code("first_hit"))]
VALIDATOR = "validator-faults"
GOOD = ([1, 2], [0.75, 0.25])  # the vector of the last good cycle, seeded as cycle 1

FAKE_BWRAP = """#!/bin/sh
# A bubblewrap that cannot set up the sandbox: it fails before any agent process starts.
echo "bwrap: setting up uid map: Permission denied" >&2
exit 1
"""


def seed_good_cycle(store: Store, suite_dir: Path) -> None:
    """Cycle 1, finished, whose accepted weights are the last good vector (as a decided cycle leaves)."""
    chain = LocalChain(store.sessions)
    chain.register(VALIDATOR, validator_permit=True)
    receipt = chain.set_weights(VALIDATOR, *GOOD)
    with store.transaction() as s:
        suite_id = suite_rows.import_suite(s, suite_dir).suite_id
        cycle_rows.start_cycle(s, 1, suite_id, {})
        standing_rows.record_weights(s, 1, *GOOD, ok=receipt.ok, block=receipt.block)
        for stage in CycleStage:
            cycle_rows.begin_stage(s, 1, stage)
            cycle_rows.finish_stage(s, 1, stage, {})


def halted_world(tmp_path: Path, template: Path, agents=AGENTS):
    suite_dir = suite_copy(template, tmp_path)
    store = seed_store(f"sqlite:///{tmp_path / 'arena.db'}", agents, owner="owner")
    seed_good_cycle(store, suite_dir)
    return store, suite_dir


def assert_decided_nothing(store: Store, suite_dir: Path, cycle: int) -> None:
    """No promotion, no standings, no new vector (only the last good one re-sent), no miner charged."""
    with store.transaction() as s:
        assert standing_rows.list_standings(s, cycle) == [] and standing_rows.champion(s) is None
        sent = standing_rows.weights_sent(s, cycle=cycle)
        assert [(w.uids, w.weights) for w in sent] == [GOOD] and "re-sent from cycle 1" in sent[0].message
        statuses = {x.status for x in submission_rows.list_submissions(s)}
    assert statuses == {SubmissionStatus.qualifying}  # they race in the next cycle
    held = LocalChain(store.sessions).weights(VALIDATOR)
    assert held is not None and (held.uids, held.weights) == GOOD
    assert not [e for e in Suite(suite_dir).read_ledger().events if e.cycle == cycle]  # no bank cluster spent


def test_a_broken_sandbox_halts_the_cycle_and_the_command_exits_with_the_fix(race_world, tmp_path):  # noqa: F811
    catalog, template = race_world
    store, suite_dir = halted_world(tmp_path, template)
    fake = tmp_path / "fakebin"
    fake.mkdir()
    (fake / "bwrap").write_text(FAKE_BWRAP)
    (fake / "bwrap").chmod(0o755)
    race = small_race(suite_dir, qualifying_size=1, draw_size=1, episode_attempts=2, validator_hotkey=VALIDATOR)
    command = [
        sys.executable, "-m", "arena.commands.validator", "run", "--once", "--local", "--json",
        "--database-url", f"sqlite:///{tmp_path / 'arena.db'}", "--catalog", str(catalog),
        "--race-config", str(race_toml(race, tmp_path / "race.toml")),
    ]  # fmt: skip
    env = subprocess_env(PATH=f"{fake}{os.pathsep}{os.environ['PATH']}", ARENA_LOG_LEVEL="WARNING")
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 3, done.stderr[-3000:]
    report = json.loads(done.stdout)
    halt = report["halt"]
    assert report["cycle"] == 2 and halt["kind"] == "sandbox" and halt["stage"] == "qualifying"
    assert halt["canary_failed"] and "apt-get install bubblewrap" in halt["fix"]
    halted_lines = [line for line in done.stderr.splitlines() if "cycle 2 halted at qualifying" in line]
    assert len(halted_lines) == 1 and "Traceback" not in done.stderr
    assert "fix: install bubblewrap" in done.stderr
    with store.transaction() as s:
        assert cycle_rows.get_cycle(s, 2).halt["kind"] == "sandbox"
        episodes = episode_rows.list_episodes(s, cycle=2)
        assert len(episodes) == 2  # two entrants, one qualifying problem each
        for episode in episodes:  # tried twice, given up on as the validator's fault, never the miner's
            assert episode.status is EpisodeStatus.failed and episode.claims == 2
            assert (episode.fault_kind, episode.fault_charged) == ("sandbox", False)
            assert "before the agent started" in episode.error and "canary" in episode.error
        stages = {st.stage: st.detail for st in cycle_rows.stages(s, 2)}
    assert stages[CycleStage.qualifying]["halted"]["kind"] == "sandbox"
    assert CycleStage.promotion not in stages and CycleStage.weights not in stages
    assert_decided_nothing(store, suite_dir, 2)
    assert_shown(store, "sandbox", episodes[0].id)
    store.dispose()


def assert_shown(store: Store, kind: str, episode_id: int) -> None:
    """The dashboard explains the halt and the fault; /metrics counts both."""
    from fastapi.testclient import TestClient

    from arena.api.app import create_app
    from tests.arena.intake.test_api_submissions import app_settings

    with TestClient(create_app(app_settings(), store=store, chain=LocalChain(store.sessions))) as client:
        cycle = client.get("/cycles/2").text
        assert 'id="halt"' in cycle and f"({kind} fault)" in cycle and "Fix:" in cycle
        assert f"halted: {kind}" in client.get("/cycles").text
        assert 'id="halted"' in client.get("/").text
        assert client.get("/v1/cycles/2").json()["halt"]["kind"] == kind
        episode = client.get(f"/episodes/{episode_id}").text
        assert 'id="fault"' in episode and "never scored against the" in episode
        metrics = client.get("/metrics").text
    assert f'arena_validator_faults{{charged="false",kind="{kind}",outcome="given_up"}} 2.0' in metrics
    assert f'arena_cycles_halted_total{{kind="{kind}"}} 1.0' in metrics


def test_a_dead_model_server_halts_the_cycle_and_charges_no_miner(race_world, tmp_path):  # noqa: F811
    catalog, template = race_world
    store, suite_dir = halted_world(tmp_path, template)
    dead = Upstream(name="vllm", base_url=f"http://127.0.0.1:{_free_port()}/v1", models=["heuristic-policy"])
    race = small_race(suite_dir, qualifying_size=1, draw_size=1, episode_attempts=1, upstreams=[dead])
    validator = Validator(ArenaSettings(), race=race, store=store, catalog_path=catalog, hotkey=VALIDATOR)
    report = validator.run_once()
    assert report.halt is not None and report.halt.kind == "upstream" and report.halt.canary_failed
    with store.transaction() as s:
        by_submission = {e.submission_id: e for e in episode_rows.list_episodes(s, cycle=2)}
    asked = by_submission[1]  # the dialogue agent asks the model on every turn
    assert asked.status is EpisodeStatus.failed and (asked.fault_kind, asked.fault_charged) == ("upstream", False)
    assert "HTTP 502" in asked.error
    assert by_submission[2].status is EpisodeStatus.done  # first_hit never needs the model: measured fine
    assert_decided_nothing(store, suite_dir, 2)
    # Every weights_interval the validator re-sends that same vector while it cannot decide.
    assert (validator.resend_weights().uids, validator.resend_weights().weights) == GOOD
    validator.close()


def test_a_dead_judge_halts_the_cycle(race_world, tmp_path):  # noqa: F811
    catalog, template = race_world
    store, suite_dir = halted_world(tmp_path, template)
    dead = f"http://127.0.0.1:{_free_port()}/v1"  # nothing listens here
    settings = ArenaSettings(
        judge=JudgeSettings(base_url=dead, attempts_per_model=1, backoff_s=0.0, timeout_s=2.0, pending_rounds=0)
    )
    race = small_race(suite_dir, qualifying_size=1, draw_size=1, judge_kind="openai", judge_timeout_s=2.0)
    validator = Validator(settings, race=race, store=store, catalog_path=catalog, hotkey=VALIDATOR)
    report = validator.run_once()
    assert report.halt is not None and report.halt.kind == "judge" and report.halt.stage == "judging: qualifying"
    assert report.halt.submissions == [1]  # the dialogue agent's episode needed the judge's server
    with store.transaction() as s:
        episodes = episode_rows.list_episodes(s, cycle=2)
        assert all(e.status is EpisodeStatus.done for e in episodes)  # the episodes ran; the judge did not
        pending = judgment_rows.versions(s, next(e.id for e in episodes if e.submission_id == 1))
    assert pending and "judge unavailable" in (pending[-1].reason or "")
    assert_decided_nothing(store, suite_dir, 2)
    validator.close()


def test_an_agent_that_breaks_its_runs_is_charged_and_an_all_zero_race_crowns_nobody(race_world, tmp_path):  # noqa: F811
    catalog, template = race_world
    agents = [("miner-breaker", agent_code("breaker")), ("miner-gives-up", agent_code("gives_up"))]
    store = seed_store(f"sqlite:///{tmp_path / 'arena.db'}", agents, owner="owner")
    race = small_race(suite_copy(template, tmp_path), qualifying_size=1, draw_size=4)
    validator = Validator(ArenaSettings(), race=race, store=store, catalog_path=catalog, hotkey=VALIDATOR)
    report = validator.run_once()
    assert report.halt is None and list(report.stages) == [s.value for s in CycleStage]
    with store.transaction() as s:
        broken = episode_rows.list_episodes(s, cycle=1, submission_id=1)
        assert broken and all(e.status is EpisodeStatus.done and e.fault_kind is None for e in broken)
        record = episode_rows.get_episode(s, broken[0].id, with_record=True).record
        assert record["termination"] == "crash" and record["validator_fault"] is None  # its own doing
    scores = report.stages["scoring"]["scores"]
    assert scores["1"]["score"] == 0.0 and scores["1"]["counted"] == 4  # charged: every episode counts 0
    assert scores["2"]["score"] == 0.0
    decision = report.stages["promotion"]
    assert report.champion_id is None and decision["verdict"] == "nobody" and not decision["promoted"]
    assert (report.weights.uids, report.weights.weights) == ([0], [1.0])  # all to the burn uid, the owner's
    assert [n.hotkey for n in validator.chain.neurons() if n.uid == 0] == ["owner"]
    assert [e.event for e in Suite(race.suite_dir).read_ledger().events] == [EventKind.revealed, EventKind.retired]
    from fastapi.testclient import TestClient

    from arena.api.app import create_app
    from tests.arena.intake.test_api_submissions import app_settings

    with TestClient(create_app(app_settings(), store=store, chain=validator.chain)) as client:
        page = client.get("/cycles/1").text
    assert 'id="promotion"' in page and "a race score of 0 crowns nobody" in page and 'id="halt"' not in page
    validator.close()


def test_the_canary_runs_clean_on_a_working_sandbox_and_fails_on_a_dead_model_server(race_world, tmp_path):  # noqa: F811
    import asyncio

    from arena.problems.partitions import PartitionName
    from arena.race.settings import RaceSettings
    from arena.race.validator_service import open_catalog, upstream_registry
    from arena.runner.episode import AgentSource, EpisodeRunner, RunnerConfig
    from arena.runner.faults import CANARY_NAME, CANARY_SOURCE, canary_verdict
    from arena.runner.proxy import UpstreamRegistry

    catalog_dir, template = race_world
    catalog, _ = open_catalog(catalog_dir)
    problem = Suite(template).problems(PartitionName.public)[0]
    canary = AgentSource(name=CANARY_NAME, code=CANARY_SOURCE)
    dead = Upstream(name="vllm", base_url=f"http://127.0.0.1:{_free_port()}/v1", models=["heuristic-policy"])

    async def run(registry) -> tuple[bool, str]:
        runner = EpisodeRunner(catalog, registry, RunnerConfig(allowlist=["heuristic-policy"]))
        try:
            verdict = canary_verdict(await runner.run(canary, problem, "heuristic-policy"))
        finally:
            await registry.aclose()
        return verdict.ok, verdict.detail

    assert asyncio.run(run(upstream_registry(RaceSettings()))) == (True, "the canary ran clean on the same sandbox "
                                                                        "and model server")  # fmt: skip
    ok, detail = asyncio.run(run(UpstreamRegistry([dead])))
    assert not ok and detail.startswith("upstream:") and "HTTP 502" in detail
