"""Post-training stages on a tiny random Qwen3 on CPU: SFT drives the loss down on an overfit set,
teacher-SFT picks the teacher subset, KTO trains on per-step labels, configs fail clearly."""

from __future__ import annotations

import json
import os

import pytest

pytest.importorskip("trl")

from typer.testing import CliRunner  # noqa: E402

from arena.commands.distill import app  # noqa: E402
from arena.config_file import ConfigError  # noqa: E402
from distill.train.config import load_stage_config  # noqa: E402
from distill.train.data import CorpusError, dialogue_rows  # noqa: E402
from tests.support.train_support import kto_rows, tiny_checkpoint, train_rows, write_jsonl  # noqa: E402

# Few, short steps: a tiny model on 2 cores. Sequences are ~1.3k tokens (the real tool schemas).
FAST = {
    "max_length": 1400,
    "per_device_train_batch_size": 2,
    "use_cpu": True,
    "save_steps": 4,
    "lr_scheduler_type": "constant",
    "warmup_steps": 0,
    "dataloader_num_workers": 0,
}

runner = CliRunner()


@pytest.fixture(scope="session")
def tiny(tmp_path_factory, catalog_dir):
    return tiny_checkpoint(tmp_path_factory.mktemp("tiny"), catalog_dir)


@pytest.fixture(scope="session")
def corpus(tmp_path_factory, catalog):
    data = tmp_path_factory.mktemp("corpus")
    rows = train_rows(catalog)
    write_jsonl(data / "train.jsonl", rows)
    write_jsonl(data / "kto.jsonl", kto_rows(rows))
    return data


@pytest.fixture(scope="session")
def sft_run(tiny, corpus, tmp_path_factory):
    """SFT through the command, as a user runs it: config file + flags overriding it."""
    out = tmp_path_factory.mktemp("sft")
    config = out / "sft.yaml"
    config.write_text(json.dumps({"model": "overridden-by-flag", "learning_rate": 5e-3, "max_steps": 8, **FAST}))
    result = runner.invoke(
        app, ["sft", "--config", str(config), "--model", str(tiny), "--data", str(corpus), "--output", str(out / "run")]
    )
    assert result.exit_code == 0, result.output
    return out / "run", json.loads(result.stdout)


def test_sft_drives_the_loss_down_on_an_overfit_set(sft_run):
    out, report = sft_run
    losses = [loss for _, loss in report["losses"]]
    assert len(losses) == 8 and all(loss > 0 for loss in losses)  # assistant tokens are in the loss
    assert losses[-1] < 0.75 * losses[0], losses
    assert report["tokens"] > 0 and report["tokens_per_s"] > 0 and report["peak_memory_mb"] > 0
    assert report["precision"] == expected_cpu_precision()
    final = out / "final"
    assert (final / "config.json").is_file()
    # The checkpoint is saved with the training template (think block on every turn, generation markers).
    template = (
        json.loads((final / "tokenizer_config.json").read_text()).get("chat_template")
        or (final / "chat_template.jinja").read_text()
    )
    assert "{%- generation %}" in template
    assert sorted(p.name for p in out.glob("checkpoint-*")) == ["checkpoint-4", "checkpoint-8"]


def test_sft_resumes_from_its_last_checkpoint(sft_run, corpus, tmp_path):
    out, first = sft_run
    # Same output, more steps, --resume: training continues at step 8 instead of starting over.
    config = tmp_path / "more.yaml"
    config.write_text(json.dumps({"learning_rate": 3e-3, "max_steps": 10, **FAST}))
    base = json.loads((out / "final" / "config.json").read_text())
    assert base["model_type"] == "qwen3"
    result = runner.invoke(
        app,
        ["sft", "--config", str(config), "--model", str(out / "final"), "--data", str(corpus),
         "--output", str(out), "--resume"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    # The history of steps 1-8 came back with the checkpoint (a fresh start would re-log step 1 from
    # the already-trained weights, with a much lower loss); only steps 9 and 10 ran now.
    assert report["steps"] == 10 and [s for s, _ in report["losses"]] == list(range(1, 11))
    assert report["losses"][:8] == first["losses"]


def test_teacher_sft_trains_only_on_the_teacher_subset(sft_run, corpus, tmp_path):
    out, _ = sft_run
    config = load_stage_config(
        None,
        "teacher-sft",
        {"model": str(out / "final"), "data": corpus, "output": tmp_path / "teacher", "learning_rate": 1e-3,
         "max_steps": 2, "teacher_min_coefficient": 0.8, **FAST},
    )  # fmt: skip
    from distill.train.sft import run_teacher_sft, teacher_rows

    assert len(teacher_rows(config)) == 4  # half the rows have judge coefficient 1.0, half 0.5
    report = run_teacher_sft(config)
    assert report.stage == "teacher-sft" and report.examples == 4 and report.steps == 2
    assert (tmp_path / "teacher" / "final" / "model.safetensors").is_file()


def test_kto_trains_on_per_step_labels(sft_run, corpus, tmp_path):
    out, _ = sft_run
    config = load_stage_config(
        None,
        "kto",
        {"model": str(out / "final"), "data": corpus, "output": tmp_path / "kto", "learning_rate": 1e-3,
         "max_steps": 2, **FAST},
    )  # fmt: skip
    from distill.train.kto import run_kto

    report = run_kto(config)
    assert report.stage == "kto" and report.examples == 8 and report.steps == 2
    assert report.losses and all(loss == loss for _, loss in report.losses)  # finite, logged
    assert {"desirable", "undesirable"} <= set(report.extra)


def test_unknown_config_key_names_the_file(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("model: m\noutput: o\nlerning_rate: 0.1\n")
    with pytest.raises(ConfigError, match=r"bad\.yaml: 'lerning_rate' is neither"):
        load_stage_config(bad, "sft")
    result = runner.invoke(app, ["sft", "--config", str(bad)])
    assert result.exit_code == 2 and "lerning_rate" in result.output


def test_bad_corpus_row_names_file_and_line(tmp_path):
    path = tmp_path / "train.jsonl"
    path.write_text('{"messages": [{"role": "user", "content": "hi"}], "tools": []}\n{"messages": 3}\n')
    with pytest.raises(CorpusError, match=r"train\.jsonl:1: no assistant message"):
        dialogue_rows(path)


def test_rft_samples_through_the_sandboxed_runner_and_retrains_on_distinct_successes(
    tiny, corpus, catalog_dir, tmp_path
):
    """Rejection-sampled re-SFT end to end: rollouts of the tool-calling harness in real sandboxes against an
    OpenAI-compatible endpoint (here the offline policy on loopback, standing in for vLLM serving the
    checkpoint), successes kept once per distinct path, then SFT of the checkpoint on them."""
    import threading
    import time

    import orjson
    import uvicorn

    from arena.policy.server import create_policy_app
    from arena.runner.sandbox import bubblewrap_path

    if bubblewrap_path() is None:
        pytest.skip("bubblewrap is not installed")
    server = uvicorn.Server(uvicorn.Config(create_policy_app(seed=3), host="127.0.0.1", port=0, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    problems = tmp_path / "train_problems.jsonl"
    rows = [
        {"query": "blue denim jeans", "reward": {"product_id": "3000", "title": ["blue denim jeans"]}},
        {"query": "a widget thing", "reward": {"product_id": "2000", "title": ["widget thing other"]}},
    ]
    problems.write_bytes(b"\n".join(orjson.dumps(r) for r in rows) + b"\n")
    config = tmp_path / "rft.yaml"
    config.write_text(json.dumps({
        "learning_rate": 1e-3, "max_steps": 2, **FAST, "catalog": str(catalog_dir), "problems_file": str(problems),
        "rollout": {"base_url": f"http://127.0.0.1:{port}/v1", "served_model": "heuristic-policy", "samples": 2,
                    "temperature": 0.7, "concurrency": 2, "wall_s": 120},
    }))  # fmt: skip
    try:
        result = runner.invoke(
            app, ["rft", "--config", str(config), "--model", str(tiny), "--data", str(corpus),
                  "--output", str(tmp_path / "run")],
        )  # fmt: skip
    finally:
        server.should_exit = True
        thread.join(timeout=10)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["extra"]["rollouts"] == 4 and 1 <= report["extra"]["kept"] <= 4
    rollouts = (tmp_path / "run" / "rollouts.jsonl").read_text().splitlines()
    assert len(rollouts) == 4
    assert (tmp_path / "run" / "final").is_dir()


def test_recipe_resume_skips_finished_stages_and_trains_from_the_first_unfinished(tmp_path, monkeypatch):
    import yaml

    from distill.train import recipe
    from distill.train.report import StageReport

    root = tmp_path / "run"
    config = tmp_path / "recipe.yaml"
    stages = {"sft": {}, "teacher-sft": {}, "kto": {}}
    config.write_text(yaml.safe_dump({"model": "base-model", "output": str(root), "stages": stages}))

    def finished(name: str, model_in: str) -> StageReport:
        final = root / name / "final"
        final.mkdir(parents=True)
        report = StageReport(stage=name, model_in=model_in, model_out=str(final), examples=1, steps=1, seconds=1.0,
                             tokens=1, tokens_per_s=1.0, peak_memory_mb=1.0, peak_memory_kind="cpu-rss")  # fmt: skip
        (root / name / recipe.STAGE_REPORT).write_text(report.model_dump_json())
        return report

    sft = finished("sft", "base-model")
    finished("teacher-sft", "some-other-model")  # finished from another input: no longer this recipe's stage
    trained: list[tuple[str, str, bool]] = []

    def train(stage_config):  # stands in for the trainers (covered in tests/distill/test_train_pipeline.py)
        trained.append((stage_config.stage, stage_config.model, stage_config.resume))
        final = stage_config.output / "final"
        final.mkdir(parents=True, exist_ok=True)
        return StageReport(stage=stage_config.stage, model_in=stage_config.model, model_out=str(final), examples=1,
                           steps=2, seconds=1.0, tokens=1, tokens_per_s=1.0, peak_memory_mb=1.0,
                           peak_memory_kind="cpu-rss")  # fmt: skip

    monkeypatch.setattr(recipe, "run_stage", train)
    result = recipe.run_recipe(config, {"resume": True})
    assert trained == [("teacher-sft", sft.model_out, True), ("kto", str(root / "teacher-sft" / "final"), True)]
    assert [s.stage for s in result.stages] == ["sft", "teacher-sft", "kto"] and result.stages[0] == sft
    again = recipe.run_recipe(config, {"resume": True})  # everything finished: nothing trains
    assert len(trained) == 2 and again.final_model == result.final_model
    recipe.run_recipe(config)  # without --resume every stage trains again
    assert [t[0] for t in trained[2:]] == ["sft", "teacher-sft", "kto"]


def test_importing_distill_makes_openmp_wait_passively_unless_told_otherwise():
    # torch's OpenMP threads spin by default; beside any other busy process that made a LoRA
    # step several times slower (distill/__init__.py). The policy must be in place before torch loads.
    import subprocess
    import sys

    probe = "import os, sys, distill; print(os.environ['OMP_WAIT_POLICY'], 'torch' in sys.modules)"
    env = {key: value for key, value in os.environ.items() if key != "OMP_WAIT_POLICY"}
    plain = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    assert plain.stdout.split() == ["PASSIVE", "False"]
    chosen = subprocess.run(
        [sys.executable, "-c", probe],
        env=env | {"OMP_WAIT_POLICY": "ACTIVE"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert chosen.stdout.split() == ["ACTIVE", "False"]


def test_the_fused_lm_head_projects_only_labelled_positions_on_cpu_with_the_same_loss_and_gradients(tiny):
    import torch
    from transformers import AutoModelForCausalLM
    from trl.trainer import utils
    from trl.trainer.utils import add_fused_lm_head

    from distill.train.checkpoints import score_only_labelled_positions

    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(tiny, dtype=torch.float32)
    add_fused_lm_head(model)
    ids = torch.randint(5, model.config.vocab_size, (1, 96))
    labels = torch.full_like(ids, -100)
    labels[0, 60:80] = ids[0, 60:80]  # an assistant turn among prompt and tool tokens
    projected: list[int] = []
    kernel = utils._ChunkedLogProbFunction
    apply = kernel.apply  # inherited from torch.autograd.Function

    def counting(hidden, *rest):
        projected.append(hidden.shape[0])
        return apply(hidden, *rest)

    def loss_and_grads():
        model.zero_grad()
        out = model(input_ids=ids, labels=labels, fused_lm_head=True)
        out.loss.backward()
        return out.loss.item(), [p.grad.clone() for p in model.parameters() if p.grad is not None]

    saved = utils._use_triton
    try:
        utils._use_triton = getattr(saved, "original", saved)  # trl's own, whatever ran before in this process
        kernel.apply = counting
        full_loss, full_grads = loss_and_grads()
        assert score_only_labelled_positions() and score_only_labelled_positions()  # idempotent
        compact_loss, compact_grads = loss_and_grads()
    finally:
        utils._use_triton = saved
        del kernel.apply
    assert projected == [95, 20]  # every shifted position, then only the 20 labelled ones
    assert compact_loss == pytest.approx(full_loss, rel=1e-6)
    for full, compact in zip(full_grads, compact_grads, strict=True):
        torch.testing.assert_close(compact, full, rtol=1e-5, atol=1e-7)


def expected_cpu_precision() -> str:
    from distill.train.checkpoints import native_bf16_on_cpu

    return "bf16-mixed" if native_bf16_on_cpu() else "fp32"


def test_the_trainer_computes_in_fp32_on_a_cpu_without_native_bf16(monkeypatch):
    # trl defaults to bf16 autocast; on an AVX2-only CPU torch's bf16 matmul is a reference loop (~6x slower).
    import torch
    from trl import SFTConfig

    from distill.train import checkpoints as model
    from distill.train.report import trainer_precision

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    for native, expected in ((False, "fp32"), (True, "bf16-mixed")):
        monkeypatch.setattr(model, "native_bf16_on_cpu", lambda native=native: native)
        fields = {"use_cpu": True} | model.precision_fields({"use_cpu": True})
        assert trainer_precision(SFTConfig(output_dir="unused", report_to="none", **fields)) == expected
    # What a config says is kept, on any CPU.
    monkeypatch.setattr(model, "native_bf16_on_cpu", lambda: False)
    assert model.precision_fields({"bf16": True}) == {} and model.precision_fields({"fp16": False}) == {}


def test_one_seed_gives_one_run_whatever_order_the_corpus_file_lists_its_rows(tiny, catalog, tmp_path):
    # The arena's episodes and rft's rollouts reach the corpus in the order they finish, which follows
    # the machine's load; two runs of one config started from different first batches (first loss
    # 1.50 against 1.58). Here the second run's file lists the same rows in another order: the losses,
    # the LoRA adapters (initialisation, dropout, data order all from the seed) must come out equal.
    import random

    from safetensors.torch import load_file

    from distill.train.stages import run_stage

    rows = train_rows(catalog)
    for i, row in enumerate(rows):  # every row distinct, so an order change is a data change
        row["messages"][1]["content"] += f" (request {i})"
    shuffled = list(rows)
    random.Random(1).shuffle(shuffled)
    assert shuffled != rows
    reports, adapters = [], []
    for name, listed in (("first", rows), ("second", shuffled)):
        data = tmp_path / name / "corpus"
        data.mkdir(parents=True)
        write_jsonl(data / "train.jsonl", listed)
        config = load_stage_config(
            None,
            "sft",
            {"model": str(tiny), "data": data, "output": tmp_path / name / "run", "learning_rate": 5e-3,
             "max_steps": 3, "seed": 11, "lora": {"r": 4, "alpha": 8, "dropout": 0.2, "merge": False},
             **FAST, "save_strategy": "no"},
        )  # fmt: skip
        reports.append(run_stage(config))
        adapters.append(load_file(tmp_path / name / "run" / "final" / "adapter_model.safetensors"))
    first, second = reports
    assert len(first.losses) == 3 and first.losses == second.losses
    assert adapters[0].keys() == adapters[1].keys() and adapters[0]
    for key, weight in adapters[0].items():
        assert torch_equal(weight, adapters[1][key]), key
    # The path that fixes the numbers on this machine is in the report.
    path = first.precision_path
    assert path == second.precision_path
    assert path["weights"] == "float32" and path["compute"] == expected_cpu_precision()
    assert path["deterministic_algorithms"] is True and path["threads"] >= 1 and path["torch"] and path["cpu"]


def torch_equal(a, b) -> bool:
    import torch

    return bool(torch.equal(a, b))
