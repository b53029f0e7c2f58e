"""The recipe end to end on the tiny model (sft -> teacher-sft -> kto), then its checkpoint served
in-process and evaluated through the real sandboxed episode runner, and rft's sampling path."""

from __future__ import annotations

import asyncio
import json

import pytest

pytest.importorskip("trl")

import httpx  # noqa: E402
import yaml  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from arena.commands.distill import app  # noqa: E402
from arena.problems.official import parse_row  # noqa: E402
from arena.runner.proxy import Upstream, UpstreamRegistry  # noqa: E402
from arena.runner.record import EpisodeLimits  # noqa: E402
from arena.runner.sandbox import bubblewrap_path  # noqa: E402
from distill.serve import parse_completion  # noqa: E402
from tests.test_train_support import kto_rows, tiny_checkpoint, train_rows, write_jsonl  # noqa: E402

FAST = {"max_length": 1400, "per_device_train_batch_size": 2, "use_cpu": True, "save_strategy": "no", "max_steps": 2}


@pytest.fixture(scope="module")
def recipe_run(tmp_path_factory, catalog, catalog_dir):
    root = tmp_path_factory.mktemp("recipe")
    tiny = tiny_checkpoint(root, catalog_dir)
    data = root / "data"
    data.mkdir()
    rows = train_rows(catalog)
    write_jsonl(data / "train.jsonl", rows)
    write_jsonl(data / "kto.jsonl", kto_rows(rows))
    config = root / "recipe.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "model": str(tiny),
                "data": str(data),
                "output": str(root / "run"),
                **FAST,
                "stages": {
                    "sft": {"learning_rate": 3e-3},
                    "teacher-sft": {"learning_rate": 1e-3},
                    "kto": {"learning_rate": 1e-4},
                },
            }  # fmt: skip
        )
    )
    result = CliRunner().invoke(app, ["recipe", "--config", str(config)])
    assert result.exit_code == 0, result.output
    return root, json.loads(result.stdout)


def test_recipe_chains_stages_and_reports(recipe_run):
    root, result = recipe_run
    stages = result["stages"]
    assert [s["stage"] for s in stages] == ["sft", "teacher-sft", "kto"]
    # Each stage starts from the previous one's final checkpoint.
    for before, after in zip(stages, stages[1:], strict=False):
        assert after["model_in"] == before["model_out"]
    assert result["final_model"] == stages[-1]["model_out"]
    report = (root / "run" / "report.md").read_text()
    assert "| sft | 8 | 2 |" in report and "| teacher-sft | 4 | 2 |" in report and "loss.png" in report
    assert (root / "run" / "loss.png").read_bytes()[:4] == b"\x89PNG"


def test_parse_completion_reads_hermes_tool_calls_and_think():
    text = '<think>\nthe red one\n</think>\n\nok <tool_call>\n{"name": "terminate", "arguments": {"status": "success"}}\n</tool_call><tool_call>oops</tool_call>'
    content, reasoning, calls = parse_completion(text)
    assert reasoning == "the red one"
    assert [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls] == [
        ("terminate", {"status": "success"})
    ]
    assert content == "ok <tool_call>oops</tool_call>"  # a malformed call stays visible


@pytest.mark.skipif(bubblewrap_path() is None, reason="bubblewrap is not installed")
def test_trained_checkpoint_is_evaluated_end_to_end(recipe_run, catalog, tmp_path):
    from transformers import AutoModelForCausalLM

    from distill.evaluate import EvalSettings, evaluate
    from distill.serve import create_model_app
    from distill.train.model import load_tokenizer

    _, result = recipe_run
    final = result["final_model"]
    model = AutoModelForCausalLM.from_pretrained(final).eval()
    app = create_model_app(model, load_tokenizer(final), "tiny", max_new_tokens=24)
    registry = UpstreamRegistry(
        [Upstream(name="tiny", base_url="http://tiny/v1", models=["tiny"])],
        transports={"tiny": httpx.ASGITransport(app=app)},
    )
    problems = [
        parse_row({"query": "a red widget gadget", "reward": {"product_id": "1001"}, "id": "w1"}),
        parse_row({"query": "blue denim jeans", "reward": {"product_id": "3000"}, "id": "w2"}),
    ]

    async def go():
        try:
            return await evaluate(
                catalog, problems, registry, EvalSettings(model="tiny", samples=1), tmp_path,
                limits=EpisodeLimits(wall_s=120),
            )  # fmt: skip
        finally:
            await registry.aclose()

    metrics = asyncio.run(go())
    assert metrics.n_problems == 2 and 0.0 <= metrics.asr <= 1.0
    rows = [json.loads(line) for line in (tmp_path / "records.jsonl").read_text().splitlines()]
    assert len(rows) == 4
    # The checkpoint answered through the proxy: real completions with token usage, no crash.
    for row in rows:
        calls = row["record"]["llm_calls"]
        assert calls and calls[0]["status_code"] == 200 and calls[0]["usage"]["completion_tokens"] > 0
        assert row["record"]["termination"] in ("returned", "terminated")
