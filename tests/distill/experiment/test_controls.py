"""The experiment's controls and extra evaluations at test size: the format control's rows and token
match, the leak-cluster mates, the official tasks through the task pack, and the report's new entries."""

from __future__ import annotations

import json

import pytest

from arena.problems.official import parse_row
from distill.experiment.controls import (
    ControlError,
    failed_or_rejected,
    format_control_rows,
    leak_mates,
    official_problems,
)
from distill.experiment.report import Heldout, Report, leak_inflation, make_row, official_row, with_control_gain
from tests.conftest import official_dir


def _row(i: int, *, success: bool, judged: bool, formatted: bool = True, words: int = 10) -> dict:
    return {
        "messages": [{"role": "user", "content": f"q{i} " + "w " * words}, {"role": "assistant", "content": "a"}],
        "tools": [],
        "metadata": {
            "problem_id": f"p{i}",
            "success": success,
            "gates": {"format": {"passed": formatted, "reason": ""}, "reasoning": {"passed": judged, "reason": ""}},
        },
    }


def _tokens(row: dict) -> int:
    return len(row["messages"][0]["content"].split())


def test_the_format_control_takes_failed_or_judge_rejected_rows_of_the_format_up_to_the_token_target():
    rows = [
        _row(1, success=False, judged=False),  # failed and rejected
        _row(2, success=True, judged=False),  # the judge rejected it
        _row(3, success=False, judged=True),  # failed, judged well
        _row(4, success=True, judged=True),  # a duplicate or over the agent cap: a success, not a control
        _row(5, success=False, judged=False, formatted=False),  # not the format
    ]
    assert [failed_or_rejected(r) for r in rows] == [True, True, True, False, False]
    chosen, tokens = format_control_rows(rows, _tokens, target=25, seed=0)
    assert {r["metadata"]["problem_id"] for r in chosen} <= {"p1", "p2", "p3"}
    assert tokens == sum(map(_tokens, chosen)) and 25 <= tokens < 25 + 11  # reaches it, by less than a row
    # Few failures: they repeat (as epochs repeat SFT's rows) until the tokens match.
    many, total = format_control_rows(rows, _tokens, target=100, seed=0)
    assert len(many) == 10 and total == 110 and len({json.dumps(r) for r in many}) == 3
    # The order is the seed's, not the file's.
    assert format_control_rows(list(reversed(rows)), _tokens, 25, seed=0) == (chosen, tokens)
    with pytest.raises(ControlError, match="no failed or judge-rejected"):
        format_control_rows([rows[3], rows[4]], _tokens, 25, seed=0)


def _problem(pid: str, cluster: str, intent_row: dict | None = None):
    problem = parse_row({"id": pid, "query": f"query {pid}", "reward": {"product_id": "1001"}, **(intent_row or {})})
    return problem.model_copy(update={"cluster_id": cluster})


def test_leak_mates_share_a_cluster_with_a_trained_problem_and_are_neither_trained_nor_held_out():
    held = [_problem("h1", "c-held")]
    known = {p.id: p for p in [*held, _problem("t1", "c1"), _problem("t1v", "c1"), _problem("t2", "c2"),
                               _problem("t2v", "c2"), _problem("u1", "c3"), _problem("h1v", "c-held")]}  # fmt: skip
    mates = leak_mates(held, known, ["t1", "t2"], limit=10)
    assert [p.id for p in mates] == ["t1v", "t2v"]
    assert [p.id for p in leak_mates(held, known, ["t1", "t2"], limit=1)] == ["t1v"]
    assert leak_mates(held, known, ["u1"], limit=10) == []  # a trained problem alone in its cluster


def _evaluation(greedy: dict[str, bool]) -> dict:
    asr = sum(greedy.values()) / len(greedy)
    return {"greedy": greedy, "metrics": {"asr": asr, "by_intent": {"product": {"asr": asr}}}}


def test_every_row_gets_a_paired_gain_against_the_base_and_the_format_control_and_the_entries_are_in_report_json():
    ids = [f"p{i}" for i in range(20)]
    base = _evaluation(dict.fromkeys(ids, False))
    control = _evaluation({i: n < 4 for n, i in enumerate(ids)})
    sft = _evaluation({i: n < 16 for n, i in enumerate(ids)})
    rows = [with_control_gain(make_row(name, ev, base, None), ev, control)
            for name, ev in (("base", base), ("format-control", control), ("sft", sft))]  # fmt: skip
    by = {row.stage: row for row in rows}
    assert by["format-control"].asr_gain_control_ci == (0.0, 0.0)
    low, high = by["sft"].asr_gain_control_ci
    assert 0.0 < low <= 0.6 <= high  # 12 more successes of 20 than the control: the interval excludes 0
    assert by["sft"].asr_gain_ci[0] > by["sft"].asr_gain_control_ci[0]  # the base is the weaker baseline
    mates = _evaluation({f"m{i}": i < 18 for i in range(20)})
    inflation = leak_inflation("sft", mates, sft)
    assert inflation.inflation == pytest.approx(0.9 - 0.8) and inflation.n == 20
    assert inflation.inflation_ci[0] <= inflation.inflation <= inflation.inflation_ci[1]
    report = Report(model="m", heldout=Heldout(n=20, clusters=10, leak_check="ok"), rows=rows,
                    leak_inflation=inflation)  # fmt: skip
    payload = json.loads(report.json_text())
    assert set(payload) == {"model", "heldout", "rows", "leak_inflation"}  # entries only where they apply
    assert payload["rows"][2]["asr_gain_control_ci"] == list(by["sft"].asr_gain_control_ci)
    official = official_row("sft", sft, base)
    assert official.asr == 0.8 and official.asr_gain_ci[0] > 0


def test_official_tasks_come_from_each_intent_file_through_the_task_pack(tmp_path):
    from distill.experiment.config import ExperimentConfig
    from distill.experiment.pipeline import Experiment

    tasks = official_dir()
    config = ExperimentConfig.model_validate(
        {"name": "t", "stages": [{"name": "sft", "kind": "sft"}],
         "official_tasks": {"tasks": str(tasks), "per_intent": 2, "background": 50}}
    )  # fmt: skip
    run = Experiment(config, tmp_path, lambda _: None)
    pack = run.official_pack()
    problems = [json.loads(line) for line in (run.steps.dir("official") / "problems.jsonl").open()]
    assert pack.result["problems"] == len(problems) == 8
    from arena.problems.model import Problem

    intents = sorted(Problem.model_validate(p).intent.value for p in problems)
    assert intents == ["knowledge"] * 2 + ["product"] * 2 + ["shop"] * 2 + ["voucher"] * 2
    summary = json.loads((run.official_catalog / "taskpack.json").read_text())
    assert summary["tasks"] >= 8 and (run.official_catalog / "catalog.json").is_file()
    # The first usable tasks of each file, in file order; a conflicting task is passed over.
    heads = sorted((run.steps.dir("official") / "tasks").glob("*.jsonl"))
    first = official_problems(heads, 1, unusable=set())
    skipping = official_problems(heads, 1, unusable={first[0].id})
    assert skipping[0].id != first[0].id and skipping[1:] == first[1:]


def test_the_controls_run_end_to_end_on_the_tiny_model(catalog_dir, tmp_path):
    """The CI suite and arena, a tiny random Qwen3 as the student (fast, learns nothing): SFT, its format
    control, leak inflation and official tasks go through the real pipeline into report.json."""
    from arena.runner.sandbox import bubblewrap_path
    from distill.experiment.config import load_config
    from distill.experiment.pipeline import run_experiment
    from tests.distill.experiment.test_experiment import CI_CONFIG
    from tests.support.train_support import tiny_checkpoint

    if bubblewrap_path() is None:
        pytest.skip("bubblewrap is not installed")
    tiny = tiny_checkpoint(tmp_path, catalog_dir)
    (tiny / "student.json").write_text(json.dumps({"name": "tiny-qwen3"}))
    short = {"max_length": 512, "learning_rate": 1.0e-3, "max_steps": 2, "per_device_train_batch_size": 1}
    base = load_config(CI_CONFIG)
    config = base.model_validate(
        base.model_dump()
        | {
            "student": {"max_new_tokens": 16},
            # The tiny tokenizer (600 ids) spends many more tokens per character than the student's.
            "export": {**base.export.model_dump(), "max_tokens": 100_000},
            "eval": {**base.eval.model_dump(), "llm_calls": 2},
            "stages": [
                {"name": "sft", "kind": "sft", "lora": {"r": 4, "alpha": 8, "dropout": 0.0}, "settings": short},
                {
                    "name": "format-control",
                    "kind": "format-control",
                    "controls": "sft",
                    "lora": {"r": 4, "alpha": 8, "dropout": 0.0},
                    "settings": short,
                },
            ],  # fmt: skip
            "leak_inflation": {"row": "sft", "problems": 2},
            "official_tasks": {
                "tasks": str(official_dir()),
                "per_intent": 1,
                "rows": ["base", "sft"],
                "background": 50,
            },
        }
    )
    out = tmp_path / "run"
    report = run_experiment(config, out, log=lambda _: None, materialise=lambda _: tiny)
    payload = json.loads((out / "report.json").read_text())
    assert set(payload) == {"model", "heldout", "rows", "precision", "format_control", "leak_inflation",
                            "official_tasks"}  # fmt: skip
    assert [row["stage"] for row in payload["rows"]] == ["base", "sft", "format-control"]
    # Every row: a paired gain against the base and against the format control.
    assert all(row["asr_gain_control_ci"] is not None for row in payload["rows"])
    control = payload["format_control"]
    assert control["controls"] == "sft" and control["candidates"] >= 1 and control["tokens"] >= control["target"] > 0
    trained = [json.loads(line) for line in (out / "steps" / "train-format-control" / "format_control.jsonl").open()]
    assert trained and all(failed_or_rejected(row) for row in trained)
    assert payload["leak_inflation"]["row"] == "sft" and 1 <= payload["leak_inflation"]["n"] <= 2
    official = payload["official_tasks"]
    assert official["n"] == 4 and official["by_intent"] == {"knowledge": 1, "product": 1, "shop": 1, "voucher": 1}
    assert [row["stage"] for row in official["rows"]] == ["base", "sft"]
    assert official["rows"][0]["asr_gain_ci"] == [0.0, 0.0]
    markdown = (out / "report.md").read_text()
    assert report.format_control is not None and "Format control" in markdown
    # The turn and episode budgets every row ran under, and the episodes that spent the latter, per row.
    assert "at most 16 tokens a turn and" in markdown and "spent the episode budget" in markdown
    precision = payload["precision"]  # both trained rows took one path, recorded
    assert precision["train_deterministic_algorithms"] is True and "train_differs_in" not in precision
