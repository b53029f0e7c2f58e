"""The student experiment: the CI config end to end on the real Gemma 3 270M, plus its pure parts.

The end-to-end run is the CI size (experiments/gemma-270m-ci.yaml): a few trajectories, a few LoRA
steps, a few held-out problems. It asserts what that size can show honestly: the loss falls, the
trained student's first turns are tool calls that parsed and that the shop executed, and the report
has every row with the contract's fields. The ASR gain is the quick config's job, not this one's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.problems.official import parse_row
from arena.scoring.paired import bootstrap_interval, paired_bootstrap_gain
from distill.experiment.leak import leak_check
from distill.experiment.steps import Steps, step_key

REPO = Path(__file__).resolve().parents[3]
CI_CONFIG = REPO / "experiments" / "gemma-270m-ci.yaml"
ROW_FIELDS = {
    "stage", "train_examples", "train_tokens", "train_seconds", "asr", "asr_ci", "asr_gain_ci",
    "pass_at_1", "pass_at_k", "k", "by_intent", "asr_gain_control_ci",
}  # fmt: skip


# --- the paired bootstrap ---------------------------------------------------------------------------


def test_paired_gain_pairs_problems_and_ignores_unpaired_ones():
    control = {"a": False, "b": False, "c": True, "d": False}
    treated = {"a": True, "b": True, "c": True, "d": False, "only-here": True}
    gain = paired_bootstrap_gain(control, treated, resamples=500)
    assert gain.n == 4 and gain.gain == pytest.approx(0.5)
    assert 0.0 <= gain.low <= 0.5 <= gain.high <= 1.0
    assert paired_bootstrap_gain(control, treated, resamples=500) == gain  # seeded: reproducible


def test_paired_gain_of_identical_sides_is_exactly_zero():
    # Paired: a problem's difficulty cancels, so two identical runs have no spread at all.
    same = {str(i): i % 3 == 0 for i in range(30)}
    gain = paired_bootstrap_gain(same, same)
    assert (gain.gain, gain.low, gain.high) == (0.0, 0.0, 0.0)
    assert bootstrap_interval([1.0] * 5) == (1.0, 1.0)


def test_paired_gain_needs_shared_problems():
    with pytest.raises(ValueError, match="share no problem"):
        paired_bootstrap_gain({"a": True}, {"b": True})
    with pytest.raises(ValueError):
        bootstrap_interval([])


# --- the leak check ---------------------------------------------------------------------------------


def _problem(pid: str, query: str, gold: str):
    return parse_row({"id": pid, "query": query, "reward": {"product_id": gold}})


def test_leak_check_fails_on_a_cluster_mixing_heldout_and_corpus():
    held = _problem("h1", "a red widget gadget for my kitchen", "1001")
    twin = _problem("t1", "kitchen gadget, a widget in red", "1001")  # same gold product: one leak cluster
    other = _problem("t2", "blue denim jeans for a party", "3000")
    known = {p.id: p for p in (held, twin, other)}
    assert leak_check([held], known, {"t2": "train.jsonl:1"}) == "ok"
    verdict = leak_check([held], known, {"t2": "train.jsonl:1", "t1": "train.jsonl:2"})
    assert verdict.startswith("cluster ") and "h1" in verdict and "t1" in verdict and "train.jsonl:2" in verdict


def test_leak_check_fails_on_a_heldout_or_unknown_problem_in_the_corpus():
    held = _problem("h1", "a red widget gadget", "1001")
    known = {"h1": held}
    assert "trains on held-out problem h1" in leak_check([held], known, {"h1": "subtask.jsonl:3"})
    assert "not in the suite" in leak_check([held], known, {"ghost": "train.jsonl:1"})


# --- the step cache ---------------------------------------------------------------------------------


def test_steps_are_cached_by_key_and_an_interrupted_step_reruns_clean(tmp_path):
    runs = []

    def work(folder: Path) -> dict:
        runs.append(folder)
        (folder / "out.txt").write_text("x")
        return {"n": len(runs)}

    steps = Steps(tmp_path, log=lambda _: None)
    assert steps.run("a", step_key(1), work).result == {"n": 1}
    assert steps.run("a", step_key(1), work).cached and len(runs) == 1
    assert steps.run("a", step_key(2), work).result == {"n": 2}  # new inputs: runs again

    def crash(folder: Path) -> dict:
        (folder / "half.txt").write_text("half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        steps.run("b", step_key(1), crash)
    assert not (steps.dir("b") / "done.json").exists()
    assert steps.run("b", step_key(1), work).result == {"n": 3}
    assert not (steps.dir("b") / "half.txt").exists()  # the half-done step's leftovers are gone


# --- the student, end to end ------------------------------------------------------------------------


def test_template_renders_alike_in_training_serving_and_the_gate(student_checkpoint):
    from transformers import AutoTokenizer

    from arena.shop.tools import openai_tool_schemas
    from distill.gates import render
    from distill.student import TEMPLATE

    tokenizer = AutoTokenizer.from_pretrained(student_checkpoint)
    messages = [
        {"role": "system", "content": "Shop."},
        {"role": "user", "content": "red shoes"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "find_product", "arguments": {"q": "red", "page": 1}},
                }
            ],
        },  # fmt: skip
        {"role": "tool", "tool_call_id": "c1", "content": "y" * 1500},
        {"role": "assistant", "content": "done"},
    ]
    tools = openai_tool_schemas()
    served = tokenizer.apply_chat_template(messages, tools=tools, tokenize=False)
    assert served == tokenizer.bos_token + render(messages, tools, TEMPLATE)
    assert '<tool_call>{"name": "find_product", "arguments": {"q": "red", "page": 1}}</tool_call>' in served
    assert (
        "y" * 600 + "...</tool_response>" in served and "y" * 601 not in served
    )  # tool results cut identically everywhere
    encoded = tokenizer.apply_chat_template(
        messages, tools=tools, tokenize=True, return_dict=True, return_assistant_tokens_mask=True
    )
    trained = tokenizer.decode([t for t, m in zip(encoded["input_ids"], encoded["assistant_masks"], strict=True) if m])
    assert trained.startswith("<tool_call>") and trained.endswith("done<end_of_turn>\n")  # only the model's turns


def _arena_and_export(config, out: Path, student: Path):
    from distill.experiment.pipeline import Experiment

    run = Experiment(config, out, lambda _: None)
    arena = run.arena(run.suite(run.catalog()))
    return arena, run.export(arena, student), run


def test_the_arena_step_stores_its_episodes_as_the_race_does_and_exports_from_the_store(student_checkpoint, tmp_path):
    from arena.runner.sandbox import bubblewrap_path
    from arena.store import episodes as episode_rows
    from arena.store import judgments as judgment_rows
    from arena.store import open_store
    from arena.store import submissions as submission_rows
    from distill.experiment.config import load_config
    from tests.arena.store.test_store import temporary_database

    if bubblewrap_path() is None:
        pytest.skip("bubblewrap is not installed")
    with temporary_database("postgresql", tmp_path) as url:
        base = load_config(CI_CONFIG)
        # The measured configs' export (format gate at 6,144 student tokens): long trajectories are kept.
        quick = load_config(REPO / "experiments" / "gemma-270m-quick.yaml")
        config = base.model_copy(update={"arena": base.arena.model_copy(update={"store": url}), "export": quick.export})
        arena, export, run = _arena_and_export(config, tmp_path / "first", student_checkpoint)
        stored = arena.result["store"]
        assert stored["cycle"] == 1 and stored["episodes"] == arena.result["judged"] > 0
        # A second experiment on the same store is a cycle of its own; each export reads its own cycle only.
        again, export_again, _ = _arena_and_export(config, tmp_path / "second", student_checkpoint)
        assert again.result["store"]["cycle"] == 2
        store = open_store(url)
        try:
            with store.transaction() as session:
                episodes = episode_rows.list_episodes(session, cycle=1)
                assert len(episodes) == stored["episodes"] and all(e.status.value == "done" for e in episodes)
                assert all(judgment_rows.latest(session, e.id) is not None for e in episodes)  # every one judged
                hotkeys = {submission_rows.get_submission(session, e.submission_id).hotkey for e in episodes}
        finally:
            store.dispose()
        assert hotkeys == {f"reference-{agent}" for agent in config.arena.agents}
        rows = [json.loads(line) for line in (run.corpus_dir / "train.jsonl").open()]
        assert rows and {r["metadata"]["cycle"] for r in rows} == {1}
        assert {str(e.id) for e in episodes} >= {r["metadata"]["episode_id"] for r in rows}
        assert export_again.result["funnel"]["episodes"] == export.result["funnel"]["episodes"]  # not both cycles
        # Shop problems reach the training corpus: a successful shop trajectory is 2,500-5,500 student
        # tokens, over the 2,048 the gate allowed before, when the student never saw one.
        shop = [r for r in rows if r["metadata"]["intent"] == "shop" and r["metadata"]["success"]]
        assert shop, [(r["metadata"]["intent"], r["metadata"]["success"]) for r in rows]
        assert any(int(r["metadata"]["gates"]["format"]["reason"].split()[3]) > 2048 for r in shop)


@pytest.fixture(scope="module")
def ci_run(student_checkpoint, tmp_path_factory):
    from arena.runner.sandbox import bubblewrap_path
    from distill.experiment.config import load_config
    from distill.experiment.pipeline import run_experiment

    if bubblewrap_path() is None:
        pytest.skip("bubblewrap is not installed")
    out = tmp_path_factory.mktemp("experiment")
    lines: list[str] = []
    report = run_experiment(load_config(CI_CONFIG), out, log=lines.append, materialise=lambda _: student_checkpoint)
    return out, report, lines


# The CI run (arena, export, two evaluations, 24 LoRA steps) is about 4 min on 2 quiet cores and
# 16 min beside a training run and a benchmark: the test that builds it gets more than the
# suite's 600 s. Its length follows the CPU's matrix speed: on a 2-core AMD EPYC without
# AVX-512 (torch's fp32 matmul at ~36 GFLOPS) a LoRA step took about a minute, and the SFT
# step alone passed 25 min. The limit only catches a hang, so it allows for such a machine.
@pytest.mark.timeout(5400)
def test_ci_config_trains_the_student_into_calling_tools(ci_run):
    out, _, _ = ci_run
    train = json.loads((out / "steps" / "train-sft" / "done.json").read_text())["result"]["report"]
    losses = [loss for _, loss in train["losses"]]
    assert len(losses) >= 3 and losses[-1] < losses[0]
    stats = json.loads((out / "steps" / "eval-sft" / "done.json").read_text())["result"]["stats"]
    assert stats["episodes"] >= 3 and stats["tokens_per_episode"] > 0
    # The trained student's first turns: tool calls that parsed into OpenAI tool_calls and that the shop ran.
    assert stats["first_turn_executed"] >= 0.5, stats
    rows = [json.loads(line)["record"] for line in (out / "steps" / "eval-sft" / "records.jsonl").open()]
    assert all(r["llm_calls"][0]["status_code"] == 200 for r in rows)


def test_the_evaluations_log_their_progress(ci_run):
    _, _, lines = ci_run
    assert "[eval-base] 4/4 episodes" in lines and "[eval-sft] 4/4 episodes" in lines, lines


def test_episode_progress_logs_about_ten_times_and_the_last():
    from distill.experiment.pipeline import episode_progress

    lines: list[str] = []
    advance = episode_progress(lines.append, "eval-sft", 45)
    for _ in range(45):
        advance(None)
    assert lines[0] == "[eval-sft] 4/45 episodes" and lines[-1] == "[eval-sft] 45/45 episodes" and len(lines) == 12
    few: list[str] = []
    advance = episode_progress(few.append, "eval-base", 3)
    for _ in range(3):
        advance(None)
    assert few == [f"[eval-base] {i}/3 episodes" for i in (1, 2, 3)]


def test_the_untrained_student_answers_in_plain_text_without_crashing(ci_run):
    # The base model has never seen a tool call: what it writes is recorded as a plain-text answer.
    out, _, _ = ci_run
    rows = [json.loads(line)["record"] for line in (out / "steps" / "eval-base" / "records.jsonl").open()]
    assert len(rows) == 4
    for record in rows:
        assert record["termination"] in ("returned", "terminated"), record["error"]
        assert all(call["status_code"] == 200 for call in record["llm_calls"])
        assert record["llm_calls"][0]["usage"]["completion_tokens"] > 0


def test_ci_report_has_every_row_with_the_contract(ci_run):
    out, report, _ = ci_run
    payload = json.loads((out / "report.json").read_text())
    # The contract's keys, and the precision path (the CI config has no control or extra evaluation).
    assert set(payload) == {"model", "heldout", "rows", "precision"} and payload["model"] == "gemma-3-270m"
    precision = payload["precision"]
    assert precision["train_weights"] == "float32" and precision["train_deterministic_algorithms"] is True
    assert precision["train_threads"] >= 1 and precision["serving"] == "transformers float32"
    assert payload["heldout"]["n"] == 4 and payload["heldout"]["leak_check"] == "ok"
    assert payload["heldout"]["clusters"] >= 1
    assert [row["stage"] for row in payload["rows"]] == ["base", "sft"]
    for row in payload["rows"]:
        assert set(row) == ROW_FIELDS
        assert row["asr_ci"][0] <= row["asr"] <= row["asr_ci"][1]
        assert set(row["by_intent"]) <= {"product", "shop", "voucher", "knowledge"}
    base, sft = payload["rows"]
    assert base["asr_gain_ci"] == [0.0, 0.0] and base["train_examples"] == 0
    assert sft["train_examples"] >= 1 and sft["train_tokens"] > 0 and sft["train_seconds"] > 0
    assert (out / "report.png").read_bytes()[:4] == b"\x89PNG"
    assert "| sft |" in (out / "report.md").read_text()


def test_a_rerun_resumes_from_the_cache(ci_run, student_checkpoint):
    from distill.experiment.config import load_config
    from distill.experiment.pipeline import run_experiment

    out, report, _ = ci_run
    lines: list[str] = []
    again = run_experiment(load_config(CI_CONFIG), out, log=lines.append, materialise=lambda _: student_checkpoint)
    assert again == report
    ran = [line for line in lines if line.endswith("running")]
    assert ran == [] and sum("cached" in line for line in lines) >= 7


def test_materialise_command_reuses_the_cached_checkpoint(student_checkpoint):
    from typer.testing import CliRunner

    from arena.cli import app
    from distill.student import GGUF_SHA256

    done = CliRunner().invoke(app, ["student", "materialise", "--cache", str(student_checkpoint.parent)])
    assert done.exit_code == 0, done.output
    info = json.loads(done.stdout)
    assert info["checkpoint"] == str(student_checkpoint) and info["gguf_sha256"] == GGUF_SHA256
    assert info["safetensors_bytes"] > 1_000_000_000  # fp32, dequantised: 270M parameters


def test_a_bad_experiment_config_is_refused_with_its_key(tmp_path):
    from typer.testing import CliRunner

    from arena.cli import app

    config = tmp_path / "bad.yaml"
    config.write_text("name: x\nstages: [{name: sft, kind: sft, start: nowhere}]\n")
    done = CliRunner().invoke(app, ["experiment", "run", "--config", str(config), "--out", str(tmp_path / "out")])
    assert done.exit_code == 2 and "starts from 'nowhere'" in done.output
    config.write_text("name: x\nstages: [{name: sft, kind: sft}]\nlearning_rate: 1\n")
    done = CliRunner().invoke(app, ["experiment", "run", "--config", str(config), "--out", str(tmp_path / "out")])
    assert done.exit_code == 2 and "learning_rate" in done.output
    assert not (tmp_path / "out").exists()  # refused before any step ran


SHIPPED = ["gemma-270m-ci", "gemma-270m-quick", "gemma-270m-stages", "gemma-270m-firehose", "gemma-270m"]


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_config_loads_and_each_stage_resolves_to_a_stage_config(name, tmp_path):
    """A shipped config must not fail hours in: its keys validate, and each stage resolves, as the run
    resolves it, to settings that `arena distill` takes (the full config's Dr. GRPO stage included)."""
    from distill.experiment.config import load_config
    from distill.experiment.pipeline import stage_config

    config = load_config(REPO / "experiments" / f"{name}.yaml")
    assert config.stages
    for stage in config.stages:
        resolved = stage_config(
            stage, start=tmp_path, data=tmp_path, output=tmp_path / stage.name, catalog=tmp_path,
            problems=tmp_path / "train.jsonl", seed=config.seed, turn_tokens=64,
        )  # fmt: skip
        sft_like = ("subtask-sft", "firehose-sft", "format-control")
        assert resolved.stage == ("sft" if stage.kind in sft_like else stage.kind)
        if stage.kind in ("firehose-sft", "format-control"):  # the file the step writes before training
            assert str(resolved.data_path(resolved.train_file)).startswith(str(tmp_path / stage.name))
    if name == "gemma-270m":
        assert {s.kind for s in config.stages} >= {"sft", "teacher-sft", "rft", "kto", "subtask-sft", "grpo"}
    if name in ("gemma-270m-quick", "gemma-270m-stages", "gemma-270m-firehose"):
        # The measured configs: >= 100 held-out problems, every row on the same ones.
        assert config.suite.heldout_limit is not None and config.suite.heldout_limit >= 100
    if name == "gemma-270m-quick":
        control = next(s for s in config.stages if s.kind == "format-control")
        sft = next(s for s in config.stages if s.kind == "sft")
        assert config.format_control == control.name and config.controlled(control) == "sft"
        assert control.settings == sft.settings and control.lora == sft.lora  # only the data differs
        assert config.leak_inflation is not None and config.leak_inflation.row == "sft"
        assert config.official_tasks is not None and config.official_tasks.per_intent == 25
        assert config.official_tasks.rows == ["base", "sft"]
    if name == "gemma-270m-stages":
        chain = [(s.kind, s.start) for s in config.stages]
        assert chain == [("sft", "base"), ("teacher-sft", "sft"), ("rft", "teacher-sft"), ("kto", "rft"),
                         ("grpo", "kto")]  # fmt: skip
        assert config.eval.sampled is not None and config.eval.sampled.rows == ["sft", "grpo"]
    if name == "gemma-270m-firehose":
        assert [s.kind for s in config.stages] == ["sft", "firehose-sft"]
        assert config.eval.sampled is not None and config.eval.sampled.k == 4


def test_a_config_scoring_a_row_no_stage_makes_is_refused():
    from pydantic import ValidationError

    from distill.experiment.config import ExperimentConfig

    sft = {"name": "sft", "kind": "sft"}
    with pytest.raises(ValidationError, match="'rft' is scored again but no stage makes it"):
        ExperimentConfig.model_validate({"name": "x", "stages": [sft], "leak_inflation": {"row": "rft"}})
    with pytest.raises(ValidationError, match="a format control needs an sft stage"):
        ExperimentConfig.model_validate({"name": "x", "stages": [{"name": "fc", "kind": "format-control"}]})
    with pytest.raises(ValidationError, match="'grpo' is scored again"):
        ExperimentConfig.model_validate({"name": "x", "stages": [sft], "eval": {"sampled": {"rows": ["sft", "grpo"]}}})


def test_experiment_run_prints_only_its_json_report_on_stdout(tmp_path, monkeypatch):
    """`arena experiment run ... | jq` must work: the trainers' log lines (transformers' PrinterCallback
    prints each log dict, its progress bar writes them with tqdm.write, both to stdout) go to stderr.

    The steps are the real trainers' printing code, called as a training step calls them; the hour-long
    pipeline itself is the CI run's above."""
    pytest.importorskip("transformers")
    from tqdm.auto import tqdm
    from transformers import TrainerControl, TrainerState
    from transformers.trainer_callback import PrinterCallback
    from typer.testing import CliRunner

    import distill.experiment.pipeline as pipeline
    from arena.cli import app
    from distill.experiment.report import Heldout, Report

    def trains_and_logs(config, out, *, log, materialise):
        log("train-sft: running")
        PrinterCallback().on_log(None, TrainerState(), TrainerControl(), logs={"loss": 2.5, "epoch": 1.0})
        tqdm.write("{'train_runtime': 12.0}")
        out.mkdir(parents=True, exist_ok=True)
        (out / "report.md").write_text("| stage |\n")
        return Report(model="gemma-3-270m", heldout=Heldout(n=4, clusters=2, leak_check="ok"), rows=[])

    monkeypatch.setattr(pipeline, "run_experiment", trains_and_logs)
    done = CliRunner().invoke(app, ["experiment", "run", "--config", str(CI_CONFIG), "--out", str(tmp_path / "o")])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["heldout"]["n"] == 4  # stdout is the JSON object alone
    assert "'loss': '2.5'" in done.stderr and "train_runtime" in done.stderr and "train-sft: running" in done.stderr
