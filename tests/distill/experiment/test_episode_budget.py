"""The evaluated episode's token budget: every row generates at most what the longest trained episode
did (plus a margin), so a student that never stops (the format control, trained on failures, wrote
every turn to the turn budget and packed ~14 tool calls a turn) costs what an honest one may, and an
episode that spent it is the student's failure, scored, never a loss of the infrastructure."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from arena.runner.sandbox import bubblewrap_path
from distill.experiment.steps import StepResult
from tests.distill.experiment.test_experiment import CI_CONFIG


def _turn(text: str) -> dict:
    return {"role": "assistant", "content": text}


def _row(*turns: str) -> dict:
    messages: list[dict] = [{"role": "system", "content": "You shop."}]
    for number, text in enumerate(turns):
        messages += [{"role": "user", "content": f"request {number}"}, _turn(text)]
    return {"messages": messages, "tools": [], "metadata": {}}


def _experiment(tmp_path: Path, rows: list[dict], student: dict | None = None):
    from distill.experiment.config import load_config
    from distill.experiment.pipeline import Experiment

    base = load_config(CI_CONFIG)
    config = base.model_validate(base.model_dump() | ({"student": student} if student else {}))
    run = Experiment(config, tmp_path / "run", log=lambda _: None)
    run.corpus_dir.mkdir(parents=True)
    (run.corpus_dir / "train.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return run, StepResult(name="export", key="corpus", seconds=0.0, result={})


def test_the_episode_budget_is_the_longest_trained_episode_not_the_longest_turn(student_checkpoint, tmp_path):
    from transformers import AutoTokenizer

    # Row one: two turns of 60 words; row two: one turn of 90. The longest turn is row two's, the
    # longest episode row one's (120 words in all).
    short, long = " ".join(["shirt"] * 60), " ".join(["kettle"] * 90)
    run, export = _experiment(tmp_path, [_row(short, short), _row(long)])
    run.budget(export, student_checkpoint)

    # What the student is trained on for a plain-text turn: its words and the end of the turn.
    tokenizer = AutoTokenizer.from_pretrained(student_checkpoint)

    def turn(text: str) -> int:
        return len(tokenizer(text + "<end_of_turn>\n", add_special_tokens=False)["input_ids"])

    assert turn(long) > turn(short) and 2 * turn(short) > turn(long)
    assert run.turn_tokens == turn(long) + 16
    assert run.episode_tokens == 2 * turn(short) + 16


def test_a_configured_episode_budget_wins_but_never_falls_below_one_turn(student_checkpoint, tmp_path):
    rows = [_row(" ".join(["mug"] * 40))]
    run, export = _experiment(tmp_path / "set", rows, {"episode_tokens": 5000})
    run.budget(export, student_checkpoint)
    assert run.episode_tokens == 5000

    run, export = _experiment(tmp_path / "small", rows, {"max_new_tokens": 300, "episode_tokens": 100})
    run.budget(export, student_checkpoint)
    assert (run.turn_tokens, run.episode_tokens) == (300, 300)


def _calling(*counts: int) -> dict:
    """A row whose assistant turns make ``counts`` tool calls, each answered."""
    messages: list[dict] = [{"role": "system", "content": "You shop."}, {"role": "user", "content": "a kettle"}]
    for turn, count in enumerate(counts):
        calls = [
            {"id": f"c{turn}_{n}", "type": "function",
             "function": {"name": "find_product", "arguments": json.dumps({"q": f"kettle {n}"})}}
            for n in range(count)
        ]  # fmt: skip
        messages.append({"role": "assistant", "content": "", **({"tool_calls": calls} if calls else {})})
        messages += [{"role": "tool", "tool_call_id": call["id"], "content": "[]"} for call in calls]
    return {"messages": messages, "tools": [], "metadata": {}}


def test_a_turn_may_make_the_most_calls_one_trained_turn_makes_unless_the_config_says(student_checkpoint, tmp_path):
    # Four calls in one turn of the second row: the most; the first row's three turns make five in all.
    rows = [_calling(2, 2, 1), _calling(4, 0)]
    run, export = _experiment(tmp_path / "derived", rows)
    run.budget(export, student_checkpoint)
    assert run.turn_calls == 4

    run, export = _experiment(tmp_path / "set", rows, {"turn_calls": 2})
    run.budget(export, student_checkpoint)
    assert run.turn_calls == 2

    # A corpus whose turns call nothing gives no bound to derive: no bound, never a bound of zero.
    run, export = _experiment(tmp_path / "none", [_row("just text")])
    run.budget(export, student_checkpoint)
    assert run.turn_calls is None


def test_the_evaluated_episode_limits_carry_the_budget():
    from distill.experiment.pipeline import eval_limits

    limits = eval_limits(llm_calls=6, wall_s=1800.0, call_timeout_s=900.0, episode_tokens=2206)
    assert (limits.completion_tokens, limits.llm_calls, limits.wall_s) == (2206, 6, 1800.0)
    # No budget given: the runner's own default stands.
    assert eval_limits(llm_calls=6, wall_s=60.0, call_timeout_s=30.0, episode_tokens=None).completion_tokens == 64_000


def _looping_model(asked: list[int | None]) -> FastAPI:
    """A student that never stops: every answer is a search call of 300 tokens (fewer when capped)."""
    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> JSONResponse:
        body = await request.json()
        asked.append(body.get("max_tokens"))
        spent = min(body.get("max_tokens") or 10_000, 300)
        call = {
            "id": f"call_{len(asked)}",
            "type": "function",
            "function": {"name": "find_product", "arguments": json.dumps({"q": "electric kettle", "page": 1})},
        }
        message = {"role": "assistant", "content": "", "tool_calls": [call]}
        return JSONResponse(
            {
                "id": f"chatcmpl-{len(asked)}",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
                "usage": {"prompt_tokens": 120, "completion_tokens": spent, "total_tokens": 120 + spent},
            }
        )

    return app


@pytest.mark.skipif(bubblewrap_path() is None, reason="bubblewrap is not installed")
def test_a_student_that_never_stops_spends_the_episode_budget_and_fails_as_itself(catalog_dir, tmp_path):
    import httpx

    from arena.generator.generate import GeneratorConfig, generate
    from arena.runner.record import EpisodeRecord
    from arena.runner.upstreams import Upstream, UpstreamRegistry
    from arena.shop.index import CatalogIndex
    from distill.evaluate import LOST_FILE, EvalSettings, evaluate, infrastructure_loss
    from distill.experiment.pipeline import episode_stats, eval_limits

    problem = generate(CatalogIndex(catalog_dir), GeneratorConfig(n=1, seed=5, intents=["product"])).problems[0]
    asked: list[int | None] = []
    registry = UpstreamRegistry(
        [Upstream(name="served", base_url="http://served/v1", models=["looper"])],
        transports={"served": httpx.ASGITransport(app=_looping_model(asked))},
    )
    limits = eval_limits(llm_calls=8, wall_s=120.0, call_timeout_s=60.0, episode_tokens=700)

    async def go():
        try:
            settings = EvalSettings(model="looper", samples=0, concurrency=1)
            return await evaluate(CatalogIndex(catalog_dir), [problem], registry, settings, tmp_path, limits=limits)
        finally:
            await registry.aclose()

    metrics = asyncio.run(go())
    # Each call may take what is left: 700, then 400, then 100; the fourth finds nothing left and is
    # refused before it reaches the model (8 turns were allowed).
    assert asked == [700, 400, 100]
    rows = [json.loads(line) for line in (tmp_path / "records.jsonl").read_text().splitlines()]
    assert len(rows) == 1 and (tmp_path / LOST_FILE).read_text() == ""
    record = EpisodeRecord.model_validate(rows[0]["record"])
    assert [call.status_code for call in record.llm_calls] == [200, 200, 200, 429]
    assert sum(call.usage.completion_tokens for call in record.llm_calls if call.usage) == 700
    assert "completion_tokens" in {hit.limit for hit in record.limits_hit}
    # The student's own doing: scored (a failure), not re-run as the infrastructure's.
    assert infrastructure_loss(record) is None and metrics.infra_reruns == 0
    assert metrics.n_problems == 1 and metrics.asr == 0.0
    assert episode_stats([rows[0]["record"]])["episode_budget_spent"] == 1
