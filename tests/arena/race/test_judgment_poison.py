"""Issue 30, class 1 variant: the record is storable, but the verdict an agent steers the LLM judge into was not.

The LLM judge reads agent-written text (the messages it sent the model, its tool arguments) and its reply
is parsed as JSON, so an agent can steer it into writing a ``\\u0000`` or a lone-surrogate escape in its
explanation. On main that verdict was refused by the store (PostgreSQL: "text fields cannot contain NUL";
the surrogate on SQLite too): the judge job failed on every retry, re-asking the judge model each time, and
the stage left the episode out of the score at its judging deadline. Here, on the real store (SQLite and
PostgreSQL) and a real OpenAI-compatible judge server: the verdict is stored, the replaced characters named.
"""

from __future__ import annotations

import asyncio

import pytest

from arena.store import episodes as episode_rows
from arena.store import judgments as judgment_rows
from arena.store.models_race import JudgmentStatus
from judge.calibration.scripted_server import ScriptedJudgeServer, raw, reply, serve_in_thread
from judge.llm import OpenAIJudge
from judge.stored_episodes import judge_stored_episode
from tests.arena.store.test_store import schedule, store, suite_dir, world  # noqa: F401  (fixtures)
from tests.judge.test_judge_llm import record, settings

# What a steered judge model writes: escapes that JSON decodes to a NUL and a lone surrogate.
STEERED = {
    "nul": '{"level": 0.9, "explanation": "compares 501 and 507 \\u0000 by price"}',
    "surrogate": '{"level": 0.9, "explanation": "compares 501 and 507 \\ud800 by price"}',
}


@pytest.fixture(scope="module")
def judge_server():
    scripted = ScriptedJudgeServer(default=reply(0.9, "default"))
    with serve_in_thread(scripted) as url:
        scripted.url = url  # type: ignore[attr-defined]
        yield scripted


@pytest.mark.parametrize("poison", sorted(STEERED))
def test_a_verdict_steered_into_unstorable_text_is_stored(store, world, judge_server, poison):  # noqa: F811
    _, (episode,) = schedule(store, world, 1)
    rec = record(f"steered-{poison}-{episode.id}")
    judge_server.script[f"steered-{poison}-{episode.id}"] = [raw(STEERED[poison])]
    with store.transaction() as s:
        episode_rows.complete(s, episode.id, rec, {"success": True, "rule": 1.0})

    async def go():
        async with OpenAIJudge(settings(judge_server, models=["judge-a"])) as judge:
            return await judge_stored_episode(store, judge, episode.id)

    outcome = asyncio.run(go())
    assert outcome is not None and outcome.level == 0.9
    with store.transaction() as s:
        stored = judgment_rows.latest(s, episode.id)
    assert stored is not None and stored.status is JudgmentStatus.done
    assert stored.explanation == "compares 501 and 507 \ufffd by price"
    assert stored.detail is not None and "record_text" in stored.detail["storable"]
    assert "\ufffd" in stored.detail["explanation"]


def test_a_failure_reason_is_stored_whatever_it_quotes(store, world):  # noqa: F811
    _, (episode,) = schedule(store, world, 1)
    with store.transaction() as s:
        episode_rows.complete(s, episode.id, {"trace": []}, {"success": True, "rule": 1.0})
        pending = judgment_rows.add_version(s, episode.id, "judge-a", "r1")
    with store.transaction() as s:
        failed = judgment_rows.record_failure(s, pending.id, "upstream said: a\x00b \ud800 " + "x" * 10_000)
    assert failed.reason is not None and "\x00" not in failed.reason and len(failed.reason) <= 4000
