"""The LLM judge against a real OpenAI-compatible test server (FastAPI + uvicorn on
loopback) that answers from a script: valid judgments, malformed JSON,
schema-violating values, HTTP 500s and 404s, and hangs past the timeout. Each
is handled (retried, fallen back, capped, or left explicitly pending) and no
episode is lost."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from typer.testing import CliRunner

from arena.commands.judge import app
from judge.batch import judge_batch
from judge.calibration.agreement import calibrate
from judge.calibration.builder import EpisodeBuilder
from judge.calibration.labelset import LABELLED
from judge.calibration.scripted_server import ScriptedJudgeServer, hang, raw, reply, serve_in_thread, status
from judge.llm import OpenAIJudge, parse_reply
from judge.prompt import DATA_LINE
from judge.records import load_labels
from judge.rubric import LLM_LEVELS, RUBRIC_VERSION
from judge.settings import JudgeSettings
from judge.verdict import JudgmentPending, ReasoningJudgment

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def server():
    scripted = ScriptedJudgeServer(default=reply(0.9, "default scripted judgment"))
    with serve_in_thread(scripted) as url:
        scripted.url = url  # type: ignore[attr-defined]
        yield scripted


def settings(server, **changes) -> JudgeSettings:
    base = {
        "kind": "openai",
        "base_url": server.url,
        "models": ["judge-a", "judge-b"],
        # Long enough that a loaded machine never times a call out: tests of time-outs set their own.
        "timeout_s": 30.0,
        "attempts_per_model": 2,
        "backoff_s": 0.01,
        "backoff_max_s": 0.02,
        "concurrency": 8,
        "pending_rounds": 0,
        "pending_pause_s": 0.0,
    }
    return JudgeSettings(**{**base, **changes})


def record(episode_id: str, level: str = "compares"):
    """A record whose evidence supports ``level``: compares (0.9), cites (0.7) or narrates (0.3)."""
    b = EpisodeBuilder(episode_id, "crash cymbal", reward_row={"rewards": [{"product_id": "ANSWER-KEY-9"}]})
    hits = [
        {"product_id": "501", "shop_id": "s-1", "title": "Tonewood Crash Cymbal", "price": 3039.0, "sold_count": 3},
        {"product_id": "507", "shop_id": "s-2", "title": "Splash Crash Pack", "price": 410.0, "sold_count": 9},
    ]
    b.tool("find_product", {"q": "crash cymbal", "page": 1}, hits)
    text = {
        "compares": "501 costs 3039.0 while 507 costs 410.0; 507 is cheaper, though 501 is the real crash cymbal.",
        "cites": "501 is listed at 3039.0 and it is the crash cymbal the person asked for, so I will recommend it.",
        "narrates": "I will weigh value, quality and how well each option suits the person before deciding on one.",
    }[level]
    b.think(text, completion_tokens=60)
    b.recommend(["501"])
    return b.build()


def judge_one(server, rec, **changes):
    async def go():
        async with OpenAIJudge(settings(server, **changes)) as judge:
            return await judge.judge(rec)

    return asyncio.run(go())


# --- the reply ---------------------------------------------------------------------------------------------


def test_strict_reply_validation():
    assert parse_reply('{"level": 0.7, "explanation": "cites 501"}', 800).level == 0.7
    for content, reason in [
        (None, "empty reply"),
        ('{"level": 0.7, "explanation": "x"', "malformed JSON"),
        ("[0.7]", "schema: the reply is a JSON list"),
        ('{"level": 0.4, "explanation": "x"}', "level must be one of"),
        ('{"level": "0.7", "explanation": "x"}', "schema: level"),
        ('{"level": 0.7}', "schema: explanation"),
        ('{"level": 0.7, "explanation": "x", "bonus": 1}', "schema: bonus"),
        ('{"level": 0.0, "explanation": "x"}', "level must be one of"),  # 0 is mechanical, never the LLM's
        ('{"level": 0.7, "explanation": "' + "x" * 801 + '"}', "explanation must be 1-800"),
    ]:
        with pytest.raises(ValueError, match=reason):
            parse_reply(content, 800)


# --- one episode ------------------------------------------------------------------------------------------


def test_scripted_judgment_and_what_the_server_is_sent(server):
    server.script["judge-a/llm-ok"] = [reply(0.9, "compares 501 and 507 by price")]
    outcome = judge_one(server, record("llm-ok"))
    assert isinstance(outcome, ReasoningJudgment)
    assert (outcome.level, outcome.coefficient, outcome.judge) == (0.9, 1.0, "openai:judge-a")
    assert outcome.explanation == "compares 501 and 507 by price" and outcome.rubric_version == RUBRIC_VERSION
    assert outcome.cost.requests == 1 and outcome.cost.prompt_tokens > 0
    (body,) = server.calls_for("llm-ok")
    assert body["temperature"] == 0 and body["model"] == "judge-a"
    schema = body["response_format"]["json_schema"]["schema"]
    assert body["response_format"]["type"] == "json_schema"
    assert schema["properties"]["level"]["enum"] == list(LLM_LEVELS) and schema["required"] == ["level", "explanation"]
    assert body["chat_template_kwargs"] == {"enable_thinking": False}
    system, user = body["messages"][0]["content"], body["messages"][1]["content"]
    assert "untrusted" in system and "ANSWER-KEY-9" not in system + user
    assert "501 costs 3039.0" in user
    check = user.split("validator check: data from earlier tool results in this output>>>\n")[1].split("\n")[0]
    assert check == DATA_LINE + "501, 507, 3039.0, 410.0"  # verified against the full results, fenced like all data


def test_rules_cap_the_llm(server):
    server.script["judge-a/llm-cap"] = [reply(0.9, "excellent comparison")]
    outcome = judge_one(server, record("llm-cap", "narrates"))
    assert (outcome.level, outcome.proposed_level, outcome.cap) == (0.3, 0.9, 0.3)
    assert "[capped from 0.9 to 0.3 by the rules judge" in outcome.explanation
    server.script["judge-a/llm-lower"] = [reply(0.5, "the comparison is shallow")]
    lower = judge_one(server, record("llm-lower", "compares"))
    assert (lower.level, lower.cap) == (0.5, 0.9)  # the cap is a ceiling, not a floor


def test_malformed_and_schema_violating_replies_are_retried(server):
    server.script["judge-a/llm-bad"] = [raw("{not json"), raw('{"level": 0.4, "explanation": "x"}')]
    server.script["judge-b/llm-bad"] = [raw('{"level": "0.7", "explanation": "x"}'), reply(0.7, "cites 501")]
    outcome = judge_one(server, record("llm-bad"))
    assert (outcome.level, outcome.judge) == (0.7, "openai:judge-b")
    errors = [a.error for a in outcome.attempts]
    assert errors[0].startswith("malformed JSON") and "level must be one of" in errors[1]
    assert errors[2].startswith("schema: level") and errors[3] is None
    assert [a.model for a in outcome.attempts] == ["judge-a", "judge-a", "judge-b", "judge-b"]


def test_500_is_retried_and_404_falls_back_at_once(server):
    server.script["judge-a/llm-500"] = [status(500), reply(0.7, "after a 500")]
    outcome = judge_one(server, record("llm-500"))
    assert outcome.level == 0.7 and [a.error for a in outcome.attempts] == ["http 500: scripted status 500", None]
    server.script["judge-a/llm-404"] = [status(404)]
    server.script["judge-b/llm-404"] = [reply(0.9, "fallback")]
    fallback = judge_one(server, record("llm-404"))
    assert fallback.judge == "openai:judge-b" and len(server.calls_for("llm-404")) == 2  # no retry on a 404


def test_a_hang_times_out_and_is_retried(server):
    server.script["judge-a/llm-hang"] = [hang(5.0), reply(0.9, "after a timeout")]
    started = time.perf_counter()
    outcome = judge_one(server, record("llm-hang"), timeout_s=0.3)
    assert time.perf_counter() - started < 3.0
    assert outcome.level == 0.9 and outcome.attempts[0].error == "timeout after 0.3s"


def test_total_failure_is_pending_never_level_0(server):
    server.script["judge-a/llm-down"] = [status(503)]
    server.script["judge-b/llm-down"] = [raw("not json at all")]
    outcome = judge_one(server, record("llm-down"))
    assert isinstance(outcome, JudgmentPending)
    assert outcome.attempts == 4 and len(outcome.errors) == 4
    assert "judge-a: http 503" in outcome.reason and "judge-b: malformed JSON" in outcome.reason
    line = outcome.line()
    assert line["level"] is None and line["status"] == "pending" and line["attempts"] == 4


def test_no_inference_is_level_0_without_asking(server):
    b = EpisodeBuilder("llm-none", "crash cymbal")
    b.refused()
    b.recommend(["501"])
    outcome = judge_one(server, b.build())
    assert (outcome.level, outcome.judge) == (0.0, "rules") and server.calls_for("llm-none") == []


def test_panel_median_and_disagreement(server):
    models = ["panel-a", "panel-b", "panel-c"]
    server.script["panel-a/llm-panel"] = [reply(0.5, "a")]
    server.script["panel-b/llm-panel"] = [reply(0.9, "b")]
    server.script["panel-c/llm-panel"] = [reply(0.7, "c says it cites and compares")]
    outcome = judge_one(server, record("llm-panel"), models=models, panel=True)
    assert (outcome.level, outcome.disagreement) == (0.7, 0.4)
    assert outcome.judge == "openai-panel:panel-a,panel-b,panel-c"
    assert [v.level for v in outcome.panel] == [0.5, 0.9, 0.7]
    assert "panel median 0.7" in outcome.explanation and "c says" in outcome.explanation
    assert outcome.line()["disagreement"] == 0.4

    server.script["panel-a/llm-panel-2"] = [reply(0.9, "a")]
    server.script["panel-b/llm-panel-2"] = [status(500)]
    server.script["panel-c/llm-panel-2"] = [reply(0.5, "c")]
    two = judge_one(server, record("llm-panel-2"), models=models, panel=True)
    assert two.level == 0.5  # an even count takes the lower middle
    assert [v.level for v in two.panel] == [0.9, None, 0.5] and two.panel[1].error.startswith("http 500")

    server.script["panel-a/llm-panel-3"] = [status(500)]
    server.script["panel-b/llm-panel-3"] = [status(500)]
    server.script["panel-c/llm-panel-3"] = [reply(0.9, "c")]
    short = judge_one(server, record("llm-panel-3"), models=models, panel=True)
    assert isinstance(short, JudgmentPending) and "panel quorum not met: 1 of 3 answered, 2 needed" in short.reason


# --- batches ------------------------------------------------------------------------------------------------


def test_batch_retries_pending_episodes_and_loses_nothing(server):
    ids = [f"llm-batch-{i}" for i in range(12)]
    server.script["judge-a/llm-batch-3"] = [status(500), status(500), reply(0.7, "second round")]
    server.script["judge-b/llm-batch-3"] = [status(500)]
    server.script["judge-a/llm-batch-7"] = [hang(5.0)]
    server.script["judge-b/llm-batch-7"] = [raw("{")]
    server.script["judge-a/llm-batch-9"] = [raw('{"level": 0.95, "explanation": "x"}'), reply(0.9, "ok")]
    finals = []

    async def go():
        async with OpenAIJudge(settings(server, timeout_s=0.3, models=["judge-a", "judge-b"])) as judge:
            return await judge_batch(
                judge, [record(i) for i in ids], concurrency=4, pending_rounds=1, on_final=finals.append
            )

    outcomes = asyncio.run(go())
    assert [o.episode_id for o in outcomes] == ids and sorted(o.episode_id for o in finals) == sorted(ids)
    by_id = {o.episode_id: o for o in outcomes}
    assert by_id["llm-batch-3"].level == 0.7
    assert [a.error is None for a in by_id["llm-batch-3"].attempts] == [False] * 4 + [True]  # round 1 kept
    stuck = by_id["llm-batch-7"]
    assert isinstance(stuck, JudgmentPending) and stuck.rounds == 2 and stuck.attempts == 8
    assert by_id["llm-batch-9"].level == 0.9
    assert sum(isinstance(o, ReasoningJudgment) for o in outcomes) == 11


def test_batch_respects_the_concurrency_limit(server):
    limited = ScriptedJudgeServer(default=reply(0.9), latency_s=0.1)
    with serve_in_thread(limited) as url:

        async def go():
            async with OpenAIJudge(settings(server, base_url=url, concurrency=3)) as judge:
                return await judge_batch(judge, [record(f"conc-{i}") for i in range(12)], concurrency=3)

        started = time.perf_counter()
        outcomes = asyncio.run(go())
        elapsed = time.perf_counter() - started
    assert all(o.level == 0.9 for o in outcomes) and len(limited.requests) == 12
    assert limited.max_in_flight == 3 and elapsed >= 0.4  # 12 calls of 0.1 s, 3 at a time


def test_calibration_reports_cost_latency_and_agreement(server):
    labels = load_labels(LABELLED)
    for label in labels:
        server.script[f"judge-a/{label.record.episode_id}"] = [reply(0.9, "always 0.9")]
    server.script[f"judge-a/{labels[8].record.episode_id}"] = [status(500)]
    server.script[f"judge-b/{labels[8].record.episode_id}"] = [status(500)]

    async def go():
        async with OpenAIJudge(settings(server)) as judge:
            return await calibrate(judge, labels, concurrency=8)

    report = asyncio.run(go())
    assert report.n == len(labels) and report.pending == 1 and report.pending_cases == [labels[8].case]
    assert report.judged == len(labels) - 1 and report.accuracy == 1.0  # always-0.9 capped down to the evidence
    asked = [label for label in labels if label.gold > 0]
    assert report.cost.requests == len(asked) - 1 + 4 and report.cost.prompt_tokens > 0
    usage = {u.model: u for u in report.by_model}
    assert usage["judge-a"].failures == 2 and usage["judge-b"].failures == 2
    assert report.latency.max_ms > 0


# --- `arena judge` with --judge openai --------------------------------------------------------------------------


def test_cli_run_and_calibrate_against_the_server(server, tmp_path):
    recs = [record("cli-1"), record("cli-2", "narrates"), record("cli-3")]
    server.script["judge-a/cli-3"] = [status(500)]
    path = tmp_path / "records.jsonl"
    path.write_text("".join(r.model_dump_json() + "\n" for r in recs))
    common = ["--judge", "openai", "--base-url", server.url, "--model", "judge-a", "--pending-rounds", "0"]
    result = CliRunner().invoke(app, ["run", "--records", str(path), *common, "--timeout", "2"])
    assert result.exit_code == 1, result.stderr  # one episode is pending
    rows = {row["episode_id"]: row for row in map(json.loads, result.stdout.splitlines())}
    assert set(rows) == {"cli-1", "cli-2", "cli-3"}
    assert (rows["cli-1"]["level"], rows["cli-1"]["judge"]) == (0.9, "openai:judge-a")
    assert rows["cli-2"]["level"] == 0.3 and rows["cli-3"]["status"] == "pending" and rows["cli-3"]["level"] is None
    assert "1 of 3 episode(s) are judgment pending" in result.stderr

    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(line for line in LABELLED.read_text().splitlines(keepends=True)[:6]))
    result = CliRunner().invoke(app, ["calibrate", "--labels", str(labels), *common])
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["judge"] == "openai:judge-a" and report["n"] == 6 and report["by_model"][0]["model"] == "judge-a"
