"""A finished result the store refuses is final after a bounded number of tries, and every wait of a stage
has a deadline (issue 30, class 1, independently of the runner's storable boundary).

On the real store, SQLite and PostgreSQL: a held result whose record the store refuses for its content
(bypassing ``arena.runner.storable``, as a bug there would) is given up at once and charged to the
submission; a refusal that is the validator's own (here: a malformed outcome, a validator bug) is
retried up to ``store_refusals`` times and then given up, not charged; a stage whose episode never
finishes (no worker at all) ends at ``episodes_timeout_s`` with the episode failed.
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest
from procrastinate import App
from procrastinate.testing import InMemoryConnector
from sqlalchemy import text

from arena.race.dispatch import Dispatcher
from arena.race.episode_jobs import Stored, StoreRefusal, store_held, store_held_results
from arena.race.held_results import HeldResult, HeldResults
from arena.race.queues import EPISODES_QUEUE, JUDGMENTS_QUEUE
from arena.race.settings import RaceSettings
from arena.runner.record import FaultKind
from arena.store import Store
from arena.store import episodes as episode_rows
from arena.store.db import StoreError, UnstorableValue, jsonable
from arena.store.models_race import EpisodeStatus
from arena.store.resilience import is_data_error, is_transient
from tests.arena.store.test_store import (  # noqa: F401  (fixtures)
    schedule,
    store,
    suite_dir,
    world,
)

OUTCOME = {"success": True, "rule": 1.0}


def deep(levels: int) -> object:
    value: object = "bottom"
    for _ in range(levels):
        value = {"d": value}
    return value


def claimed_result(store: Store, world, record: dict, outcome: dict) -> HeldResult:  # noqa: F811
    _, [episode] = schedule(store, world, 1)
    with store.transaction() as s:
        assert episode_rows.claim(s, episode.id, "host:1", 600.0, job_id=1) is not None
    return HeldResult(episode_id=episode.id, key=episode.key, record=record, outcome=outcome, held_at=datetime.now(UTC))


def poisons(store: Store) -> list[dict]:  # noqa: F811
    records = [{"tool_calls": [{"arguments": {"filters": deep(251)}}]}]  # both backends: the encoder's limit
    if store.engine.dialect.name == "postgresql":
        records.append({"tool_calls": [{"arguments": {"q": "shoe\x00"}}]})  # JSONB: 22P05
    return records


def test_a_result_refused_for_its_content_is_failed_at_once_and_charged(store, world, tmp_path):  # noqa: F811
    held_results = HeldResults(tmp_path / "held")
    for record in poisons(store):
        result = claimed_result(store, world, record, OUTCOME)
        held_results.keep(result)
        assert asyncio.run(store_held(store, held_results, result)) is Stored.refused
        with store.transaction() as s:
            failed = episode_rows.get_episode(s, result.episode_id)
        assert failed is not None and failed.status is EpisodeStatus.failed
        assert (failed.fault_kind, failed.fault_charged) == (FaultKind.store.value, True)
        assert "the submission's" in (failed.error or "")
        # Nothing is lost: the result is set aside on disk for a person, never tried again.
        assert held_results.waiting() == []
        assert (held_results.folder / f"episode-{result.episode_id}.json.rejected").exists()
    assert asyncio.run(store_held_results(store, held_results)) == []


def test_a_refusal_that_is_the_validators_is_tried_a_bounded_number_of_times(store, world, tmp_path):  # noqa: F811
    held_results = HeldResults(tmp_path / "held")
    result = claimed_result(store, world, {"episode_id": "e-1"}, {"rule": 1.0})  # no "success": a validator bug
    held_results.keep(result)
    for _ in range(2):
        with pytest.raises(StoreRefusal, match="the validator's"):
            asyncio.run(store_held(store, held_results, held_results.get(result.episode_id), refusals_allowed=3))
    assert held_results.get(result.episode_id).refusals == 2  # counted on disk too: a restart cannot reset it
    assert HeldResults(held_results.folder).get(result.episode_id).refusals == 2
    assert asyncio.run(store_held_results(store, held_results)) == []  # the third refusal: final
    with store.transaction() as s:
        failed = episode_rows.get_episode(s, result.episode_id)
    assert failed.status is EpisodeStatus.failed and (failed.fault_kind, failed.fault_charged) == ("store", False)
    assert held_results.waiting() == []


def test_data_errors_are_told_from_the_validators_on_real_errors(store):  # noqa: F811
    dialect = store.engine.dialect.name
    with pytest.raises(UnstorableValue) as unstorable:
        jsonable({"a": deep(300)})
    assert is_data_error(unstorable.value) and not is_transient(unstorable.value)
    with pytest.raises(StoreError) as bug:  # a type JSON has no form for: the caller's bug, not the data's
        jsonable({"a": object()})
    assert not isinstance(bug.value, UnstorableValue) and not is_data_error(bug.value)
    with store.engine.connect() as connection:
        with pytest.raises(Exception) as missing:
            connection.execute(text("SELECT * FROM no_such_table"))
        assert not is_data_error(missing.value) and not is_transient(missing.value)
    if dialect == "postgresql":
        with store.engine.connect() as connection:
            with pytest.raises(Exception) as nul:
                connection.execute(text("SELECT CAST(:v AS jsonb)"), {"v": '{"q": "a\\u0000b"}'})
        assert isinstance(nul.value.orig, psycopg.Error) and nul.value.orig.sqlstate == "22P05"
        assert is_data_error(nul.value) and not is_transient(nul.value)


def test_a_stage_whose_episode_never_finishes_ends_at_its_deadline(store, world, tmp_path: Path):  # noqa: F811
    app = App(connector=InMemoryConnector())  # a real queue nobody works: the episode never runs

    @app.task(name="run_episode", queue=EPISODES_QUEUE)
    def run_episode(episode_id: int) -> None:  # pragma: no cover - never run
        raise AssertionError("no worker")

    @app.task(name="judge_episode", queue=JUDGMENTS_QUEUE)
    def judge_episode(episode_id: int) -> None:  # pragma: no cover - never run
        raise AssertionError("no worker")

    started = time.monotonic()
    cycle, [episode] = schedule(store, world, 1)
    race = RaceSettings(episodes_timeout_s=1.0, poll_s=0.05)
    asyncio.run(asyncio.wait_for(Dispatcher(store, app, race).run_episodes([episode.key], cycle, episode.stage), 120))
    assert time.monotonic() - started >= 1.0  # not before its deadline (wait_for's bound: nor long after it)
    with store.transaction() as s:
        failed = episode_rows.get_episode(s, episode.id)
    assert failed.status is EpisodeStatus.failed and "deadline" in (failed.error or "")
    # Nothing of the stage finished: the validator ran nothing, its own failure (not charged; the stage halts).
    assert (failed.fault_kind, failed.fault_charged) == (FaultKind.runner.value, False)

    # One episode done, one never: the one left over follows its submission, charged.
    cycle, [done, stuck] = schedule(store, world, 2)
    with store.transaction() as s:
        episode_rows.claim(s, done.id, "host:1", 600.0, job_id=1)
        assert episode_rows.complete(s, done.id, {"episode_id": "e-done"}, OUTCOME)
    asyncio.run(asyncio.wait_for(Dispatcher(store, app, race).run_episodes([stuck.key], cycle, stuck.stage), 120))
    with store.transaction() as s:
        left = episode_rows.get_episode(s, stuck.id)
    assert left.status is EpisodeStatus.failed and (left.fault_kind, left.fault_charged) == ("runner", True)
