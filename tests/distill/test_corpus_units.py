"""Corpus pieces that need no sandbox: the outside-format importers, the format gate, the split's rules."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from distill.export import run_export
from distill.export_model import ExportConfig, GateConfig
from distill.gates import TokenCounter, format_verdict, render
from distill.importers import shoppingbench_items, subnet_items
from distill.schema import AgentInfo, Trajectory, TrajectoryMetadata
from distill.split import Selection, SplitError, eval_clusters, leak_failures, share_cap
from distill.structure import structural_verdicts

SYSTEM = "<tool descriptions> find_product view_product_information recommend_product terminate"


def step(number: int, think: str, calls: list[dict], obs: list[dict] | None, history: str) -> dict:
    message = {"think": think, "tool_call": calls}
    if obs is not None:
        message["obs"] = obs
    content = f"<think>{think}</think>\n<tool_call>{json.dumps([{k: c[k] for k in ('name', 'parameters')} for c in calls])}</tool_call>"
    return {
        "prompt": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": f"# Dialogue Records History\n{history}"}],
        "completion": {"reasoning_content": "", "content": content, "message": message},
        "extra_info": {"step": number, "query": "red shoes under 100", "timestamp": 1750000000000},
    }  # fmt: skip


def rollout() -> list[dict]:
    search = {"name": "find_product", "parameters": {"q": "red shoes", "page": 1}, "tool_call_id": "a1B2c3D4"}
    pick = {"name": "recommend_product", "parameters": {"product_ids": "7"}, "tool_call_id": "r9"}
    stop = {"name": "terminate", "parameters": {"status": "success"}, "tool_call_id": "t1"}
    hits = [{"product_id": "7", "title": "red shoes", "price": 80.0}]
    first = step(
        1, "I should search.", [search], [{"tool_call_id": "a1B2c3D4", "results": hits}], "<user>red shoes</user>"
    )
    history = "<user>red shoes</user><think>I should search.</think><tool_call>find_product</tool_call>"
    second = step(2, "Product 7 at 80 fits.", [pick, stop], [{"tool_call_id": "r9", "results": "ok"}], history)
    return [first, second]


def test_shoppingbench_rollouts_import_with_their_tool_results(tmp_path):
    path = tmp_path / "rollouts.jsonl"
    path.write_text(json.dumps(rollout()) + "\n[]\n{broken\n")
    items = list(shoppingbench_items(path))
    trajectory, trace = items[0]
    assert [m["role"] for m in trajectory.messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "tool",
    ]
    assert trajectory.messages[2]["reasoning_content"] == "I should search."
    assert json.loads(trajectory.messages[3]["content"])[0]["product_id"] == "7"
    assert trajectory.metadata.provenance == "validator-recorded" and trajectory.metadata.agent.name == "rollouts"
    found = structural_verdicts(trace)
    assert all(v.passed for v in found.values()), found
    assert format_verdict(trajectory, GateConfig(), TokenCounter()).passed
    assert [str(u) for u in items[1:]] == [
        f"{path}:2: not a shoppingbench rollout: a rollout must be a non-empty JSON list of steps",
        f"{path}:3: not valid JSON (Expecting property name enclosed in double quotes: line 1 column 2 (char 1))",
    ]


def test_subnet_steps_are_agent_reported_and_never_agentic(tmp_path):
    path = tmp_path / "subnet.jsonl"
    steps = [{k: v for k, v in s.items() if k != "prompt"} for s in rollout()]
    for s in steps:
        s["completion"]["message"].pop("obs")
    path.write_text(json.dumps(steps) + "\n")
    [(trajectory, trace)] = list(subnet_items(path))
    assert trajectory.metadata.provenance == "agent-reported"
    found = structural_verdicts(trace)
    assert not found["attribution"].passed and "agent-reported" in found["attribution"].reason
    assert not found["final_recommendation"].passed


def test_imports_export_end_to_end(tmp_path):
    path = tmp_path / "rollouts.jsonl"
    path.write_text(json.dumps(rollout()) + "\n")
    subnet = tmp_path / "subnet.jsonl"
    subnet.write_text(json.dumps([{k: v for k, v in s.items() if k != "prompt"} for s in rollout()]) + "\n")
    config = ExportConfig(out=tmp_path / "out", gates=GateConfig(min_coefficient=0), max_agent_share=1, eval_fraction=0)
    summary = run_export([*shoppingbench_items(path), *subnet_items(subnet)], config)
    assert summary.funnel.train == 1 and summary.funnel.subtask == 1


def trajectory(messages: list[dict], tools: list[dict] | None = None) -> Trajectory:
    from arena.shop.tools import openai_tool_schemas

    meta = TrajectoryMetadata(episode_id="e", problem_id="p", intent="product", agent=AgentInfo(name="a", sha256="0"),
                              source="test")  # fmt: skip
    return Trajectory(messages=messages, tools=openai_tool_schemas() if tools is None else tools, metadata=meta)


def call(call_id: str, name: str, arguments: str) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def test_format_gate_names_what_is_wrong():
    counter, config = TokenCounter(), GateConfig()
    good = [
        {"role": "user", "content": "shoes"},
        {"role": "assistant", "content": "", "tool_calls": [call("c1", "find_product", '{"q": "shoes", "page": 1}')]},
        {"role": "tool", "tool_call_id": "c1", "content": "[]"},
        {"role": "assistant", "content": "Nothing found."},
    ]
    assert format_verdict(trajectory(good), config, counter).passed
    cases = {
        "not a JSON object": call("c1", "find_product", "{q: shoes"),
        "unexpected argument 'colour'": call("c1", "find_product", '{"q": "x", "page": 1, "colour": "red"}'),
        "missing required argument 'q'": call("c1", "find_product", '{"page": 1}'),
        "should be integer": call("c1", "find_product", '{"q": "x", "page": "two"}'),
        "no such tool": call("c1", "buy_now", "{}"),
    }
    for expected, bad_call in cases.items():
        messages = [good[0], {**good[1], "tool_calls": [bad_call]}, *good[2:]]
        verdict = format_verdict(trajectory(messages), config, counter)
        assert not verdict.passed and expected in verdict.reason, (expected, verdict.reason)
    unpaired = [good[0], good[1], {"role": "tool", "tool_call_id": "zz", "content": "[]"}, good[3]]
    assert "unknown or answered call 'zz'" in format_verdict(trajectory(unpaired), config, counter).reason
    assert "assistant after nothing" in format_verdict(trajectory(good[1:]), config, counter).reason
    long = format_verdict(trajectory(good), GateConfig(max_tokens=10), counter)
    assert not long.passed and "> 10 (approximation" in long.reason
    text = render(good, trajectory(good).tools)
    assert text.startswith("<|im_start|>system\n# Tools") and '<tool_call>\n{"name": "find_product"' in text


def test_share_cap_keeps_every_agent_under_the_share():
    counts = Counter({"a": 100, "b": 10, "c": 10})
    cap = share_cap(counts, 0.5)
    kept = {k: min(n, cap) for k, n in counts.items()}
    assert max(kept.values()) <= 0.5 * sum(kept.values()) and cap == 20
    assert share_cap(counts, 1.0) is None and share_cap(Counter({"a": 5}), 0.5) == 0


def test_eval_clusters_are_seeded_and_disjoint():
    clusters = [f"c{i}" for i in range(50)]
    first = eval_clusters(clusters, seed=1, fraction=0.2)
    assert first == eval_clusters(reversed(clusters), seed=1, fraction=0.2) and len(first) == 10
    assert first != eval_clusters(clusters, seed=2, fraction=0.2)
    a = trajectory([{"role": "user", "content": "x"}])
    a.metadata.cluster_id = "c1"
    assert leak_failures([a], [a]) == ["cluster c1 is in train and eval"]
    a.metadata.partition = "heldout"
    assert "held-out partition" in leak_failures([a], [])[0]


def test_selection_parses_and_excludes():
    assert Selection.parse_cycles("3:5") == (3, 5) and Selection.parse_cycles(":5") == (0, 5)
    with pytest.raises(SplitError, match="A <= B"):
        Selection.parse_cycles("5:3")
    row = trajectory([{"role": "user", "content": "x"}])
    assert Selection(cycles=(1, 2)).excludes(row) == "no cycle (a --cycles range was given)"
    row.metadata.cycle = 2
    assert Selection(cycles=(1, 2)).excludes(row) is None


def test_missing_export_extra_is_said(tmp_path, monkeypatch):
    import distill.card as card

    monkeypatch.setattr(card, "_have", lambda module: False)
    config = ExportConfig(out=tmp_path / "o", formats=["jsonl", "parquet", "hf"])
    summary = run_export([], config)
    assert any("parquet skipped: pyarrow is missing" in e for e in summary.extras)
    assert "plots skipped: matplotlib is missing" in Path(tmp_path / "o" / "README.md").read_text()


def test_the_share_cap_binds_at_one_over_k_when_it_cannot_hold():
    from collections import Counter

    from distill.split import cap_agents, effective_share

    assert effective_share(Counter(a=5), 0.5) == 1.0
    assert effective_share(Counter(a=5, b=1, c=1), 0.2) == 1 / 3
    assert effective_share(Counter(a=5, b=1, c=1, d=1, e=1, f=1), 0.2) == 0.2
    one = [(i, f"e{i}", "a") for i in range(5)]
    assert cap_agents(one, seed=0, max_share=0.5) == {}  # one agent keeps everything
    two = [(i, f"e{i}", "a") for i in range(10)] + [(10 + i, f"f{i}", "b") for i in range(2)]
    cut = cap_agents(two, seed=0, max_share=0.5)
    assert len(cut) == 8 and all(position < 10 for position in cut)  # a cut to b's 2: equal halves
