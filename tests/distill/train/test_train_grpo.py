"""GRPO with tool rollouts in the real shop environment.

A random tiny model never emits a parseable tool call, so its generation is
*scripted*: ``generate`` is wrapped to emit, token by token through the real
tokenizer, a fixed Hermes tool call per turn (chosen by how many tool responses
the prompt already holds). Everything after is trl's and ours: parsing, the
environment executing the calls on the real catalog, the two rewards, a Dr.
GRPO optimizer step."""

from __future__ import annotations

import json
import math

import pytest

pytest.importorskip("trl")

import torch  # noqa: E402
from trl.chat_template_utils import parse_response  # noqa: E402

from arena.problems.official import parse_row  # noqa: E402
from distill.train.checkpoints import load_model, load_tokenizer  # noqa: E402
from distill.train.config import load_stage_config  # noqa: E402
from distill.train.grpo import build_grpo_trainer, grpo_rows  # noqa: E402
from distill.train.grpo_env import step_match, trajectory_match  # noqa: E402
from tests.support.train_support import tiny_checkpoint, train_rows, write_jsonl  # noqa: E402


@pytest.fixture(scope="module")
def setup(tmp_path_factory, catalog, catalog_dir):
    root = tmp_path_factory.mktemp("grpo")
    tiny = tiny_checkpoint(root, catalog_dir)
    rows = train_rows(catalog, n=2)
    data = root / "data"
    data.mkdir()
    write_jsonl(data / "train.jsonl", rows)
    # The problems the trajectories solved: the recommended product is the gold one.
    problems = []
    for row in rows:
        gold = json.loads(row["messages"][4]["tool_calls"][0]["function"]["arguments"])["product_ids"]
        problem = parse_row({"query": row["messages"][1]["content"], "reward": {"product_id": gold}, "id": row["metadata"]["problem_id"]})  # fmt: skip
        problems.append(problem.to_row())
    write_jsonl(data / "problems.jsonl", problems)
    return tiny, data, rows


def test_step_match_scores_name_keys_and_values():
    teacher = {"name": "find_product", "arguments": {"q": "Widget Gadget", "page": 1}}
    assert step_match(teacher, teacher) == pytest.approx(1.0)
    assert step_match(
        {"name": "find_product", "arguments": {"q": "widget  gadget", "page": 1}}, teacher
    ) == pytest.approx(1.0)
    assert step_match({"name": "find_product", "arguments": {"q": "jeans", "page": 1}}, teacher) == pytest.approx(0.85)
    assert step_match({"name": "terminate", "arguments": {"status": "success"}}, teacher) == 0.0
    # A missing step costs: two of the teacher's three steps matched exactly -> 2/3.
    steps = [teacher, {"name": "terminate", "arguments": {"status": "success"}}]
    assert trajectory_match(steps[:1] + steps[1:], [teacher, teacher, steps[1]]) == pytest.approx((1 + 0) / 3)


def test_grpo_shows_the_tools_as_the_arena_does():
    # trl renders a GRPO prompt's tool listing from the environment's methods; the corpus rows were
    # rendered from the arena's schemas. Any drift is a prompt the model never trained on.
    from transformers.utils import get_json_schema

    from arena.shop.tools import openai_tool_schemas
    from distill.train.grpo_env import ShopToolEnv

    env = ShopToolEnv()
    for arena in openai_tool_schemas():
        name = arena["function"]["name"]
        shown = get_json_schema(getattr(env, name))["function"]
        assert (shown["name"], shown["description"]) == (name, arena["function"]["description"])
        expected, got = arena["function"]["parameters"], shown["parameters"]
        assert got["required"] == expected["required"]
        assert list(got["properties"]) == list(expected["properties"])
        for arg, spec in expected["properties"].items():
            assert got["properties"][arg]["type"] == spec["type"]
            assert got["properties"][arg].get("enum") == spec.get("enum")
            assert got["properties"][arg]["description"] == " ".join(spec["description"].split())


def scripted(model, tokenizer, turns: list[str]):
    """Wrap ``model.generate``: each row's continuation is the scripted turn for its dialogue position."""
    original = model.generate

    def generate(input_ids=None, attention_mask=None, generation_config=None, **kwargs):
        rows = []
        for ids, mask in zip(input_ids, attention_mask, strict=True):
            text = tokenizer.decode(ids[mask.bool()])
            turn = turns[min(text.count("<tool_response>"), len(turns) - 1)]
            rows.append(
                ids.tolist() + tokenizer(turn, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
            )
        width = max(len(r) for r in rows)
        padded = [r + [tokenizer.pad_token_id] * (width - len(r)) for r in rows]
        return torch.tensor(padded, dtype=input_ids.dtype, device=input_ids.device)

    model.generate = generate
    return original


def one_step_config(model, data, catalog_dir, tmp_path, **settings):
    """One Dr. GRPO step: two rollouts of one prompt, up to three tool rounds each."""
    return load_stage_config(
        None,
        "grpo",
        {"model": str(model), "data": data, "output": tmp_path / "grpo", "catalog": catalog_dir,
         "problems_file": "problems.jsonl", "max_steps": 1, "num_generations": 2, "per_device_train_batch_size": 2,
         "max_tool_calling_iterations": 3, "use_cpu": True, "save_strategy": "no", **settings},
    )  # fmt: skip


def test_grpo_scripted_tool_calls_run_in_the_shop_and_earn_rewards(setup, catalog_dir, tmp_path):
    tiny, data, rows = setup
    config = one_step_config(tiny, data, catalog_dir, tmp_path, max_completion_length=1024, learning_rate=1e-3)
    train = grpo_rows(config)
    assert len(train) == 2 and json.loads(train[0]["teacher_steps"])[0]["name"] == "find_product"
    # Both scripted rollouts follow the first trajectory's teacher exactly.
    teacher = json.loads(train[0]["teacher_steps"])
    turns = [
        "<think>\nlook\n</think>\n\n<tool_call>\n"
        + json.dumps({"name": s["name"], "arguments": s["arguments"]})
        + "\n</tool_call>"
        for s in teacher
    ]
    tokenizer = load_tokenizer(str(tiny))
    model = load_model(config)
    scripted(model, tokenizer, turns)
    trainer, _, step_log, outcome_log = build_grpo_trainer(config, train[:1], model=model, tokenizer=tokenizer)
    trainer.train()

    assert step_log.batches and outcome_log.batches
    # The environment executed the scripted calls: the teacher's path, reproduced, and the gold product recommended.
    envs = trainer.environments
    assert [c["name"] for c in envs[0].calls] == ["find_product", "recommend_product", "terminate"]
    assert envs[0].env.state.terminated and envs[0].env.state.recommended
    assert step_log.batches[0] == pytest.approx([1.0, 1.0])
    assert outcome_log.batches[0] == [1.0, 1.0]
    logged = trainer.state.log_history[0]
    assert logged["reward"] == pytest.approx(config.reward.step_weight * 1.0 + config.reward.outcome_weight * 1.0)


def test_grpo_reads_the_students_tool_calls_and_runs_them_in_the_shop(setup, catalog_dir, student_checkpoint, tmp_path):
    """The student (Gemma 3 270M, real weights, LoRA) under Dr. GRPO: its turns are written in the student
    template's syntax, which trl can only read through the response template distill.student gives it."""
    _, data, _ = setup
    config = one_step_config(
        student_checkpoint, data, catalog_dir, tmp_path, max_completion_length=512, learning_rate=1e-4,
        dtype="float32", lora={"r": 4, "alpha": 8, "dropout": 0.0},
    )  # fmt: skip
    train = grpo_rows(config)
    teacher = json.loads(train[0]["teacher_steps"])
    # A plain-text preamble before the call, as a base model writes one: it stays the turn's content.
    turns = [
        "Let me look.\n<tool_call>" + json.dumps({"name": s["name"], "arguments": s["arguments"]}) + "</tool_call>"
        for s in teacher
    ]
    tokenizer = load_tokenizer(str(student_checkpoint))
    assert getattr(tokenizer, "response_template", None) is None  # without it trl reads every turn as plain text
    model = load_model(config)
    scripted(model, tokenizer, turns)
    trainer, tokenizer, step_log, outcome_log = build_grpo_trainer(config, train[:1], model=model, tokenizer=tokenizer)
    # What trl's rollout does with a generated turn: parse it after the rendered prompt.
    prompt = tokenizer.apply_chat_template(train[0]["prompt"], add_generation_prompt=True, return_dict=False)
    turn = tokenizer(turns[0] + "<end_of_turn>", add_special_tokens=False)["input_ids"]
    parsed = parse_response(tokenizer, turn, prefix=prompt)
    assert parsed["content"].strip() == "Let me look."
    assert parsed["tool_calls"] == [{"type": "function", "function": teacher[0]}]
    trainer.train()

    envs = trainer.environments
    assert [c["name"] for c in envs[0].calls] == ["find_product", "recommend_product", "terminate"]
    assert envs[0].env.state.terminated and envs[0].env.state.recommended
    assert step_log.batches[0] == pytest.approx([1.0, 1.0])
    assert outcome_log.batches[0] == [1.0, 1.0]
    assert math.isfinite(trainer.state.log_history[0]["loss"])
