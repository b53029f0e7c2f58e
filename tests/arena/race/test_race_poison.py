"""One poisoned record cannot freeze the race (issue 30, class 1).

A submission whose record the store would refuse (a U+0000 in a tool argument: PostgreSQL's JSONB
refuses it with 22P05; an argument nested 300 levels: both backends' JSON encoder stops at its
recursion limit) races beside an honest one, in real bubblewrap sandboxes, on SQLite and on
PostgreSQL. The cycle finishes, the honest entrant is stored and ranked, and weights are set.
"""

from __future__ import annotations

import pytest

from arena.race.validator_service import Validator
from arena.settings import ArenaSettings
from arena.store import episodes as episode_rows
from arena.store import standings as standing_rows
from arena.store import submissions as submission_rows
from arena.store.models_race import EpisodeStatus
from tests.arena.store.test_store import temporary_database
from tests.support.race_support import (
    InBackground,
    agent_code,
    race_world,  # noqa: F401  (fixture)
    seed_store,
    small_race,
    suite_copy,
)

AGENTS = [("miner-honest", agent_code("first_hit")), ("miner-poisoner", agent_code("poisoner"))]
# Generous: a cycle of this size takes well under a minute here; a frozen one never ends.
CYCLE_BOUND_S = 300


@pytest.mark.parametrize("boundary", ["storable", "bypassed"])
@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_poisoned_record_does_not_freeze_the_cycle(backend, boundary, race_world, tmp_path, monkeypatch):  # noqa: F811
    """``storable``: the runner makes the poisoner's records storable, and they are stored (done, the
    changes named). ``bypassed``: with that boundary off (as a bug in it would leave things), the store's
    refusal alone is final: the poisoner's episodes fail, charged to it, and the cycle still finishes."""
    if boundary == "bypassed":
        monkeypatch.setattr("arena.runner.episode.make_storable", lambda record: record)
    catalog, template = race_world
    race = small_race(suite_copy(template, tmp_path), workers=2)
    with temporary_database(backend, tmp_path) as url:
        store = seed_store(url, AGENTS)
        validator = Validator(ArenaSettings(), race=race, store=store, catalog_path=catalog)
        try:
            report = InBackground(validator).result(CYCLE_BOUND_S)
            assert report.halt is None and list(report.stages)[-1] == "done"
            assert report.weights is not None and report.weights.ok
            with store.transaction() as s:
                ids = {sub.hotkey: sub.id for sub in submission_rows.list_submissions(s)}
                ranked = {st.submission_id: st for st in standing_rows.list_standings(s, report.cycle)}
                honest = episode_rows.list_episodes(s, submission_id=ids["miner-honest"])
                poisoned = [
                    episode_rows.get_episode(s, e.id, with_record=True)
                    for e in episode_rows.list_episodes(s, submission_id=ids["miner-poisoner"])
                ]
            assert honest and all(e.status is EpisodeStatus.done for e in honest)
            assert ids["miner-honest"] in ranked and ranked[ids["miner-honest"]].rank is not None
            assert poisoned
            for episode in poisoned:
                assert episode is not None
                if boundary == "bypassed":  # refused for its content: given up at once, the submission's
                    assert episode.status is EpisodeStatus.failed and episode.fault_charged is True
                    assert "the submission's" in (episode.error or "")
                    continue
                assert episode.status is EpisodeStatus.done and episode.record is not None
                named = {hit["limit"] for hit in episode.record["limits_hit"]}
                assert {"record_text", "record_depth"} <= named, named
                assert "\u0000" not in str(episode.record)
                # Where the proxy records the agent's request, and in its output: the same boundary.
                assert any("\ufffd" in str(call["request"]) for call in episode.record["llm_calls"])
                assert "out\ufffdput" in episode.record["stdout_tail"]
        finally:
            validator.close()
