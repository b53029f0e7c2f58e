"""`arena distill STAGE`: the five post-training stages and the recipe that chains them.

Each stage reads a YAML config (our fields + the trl config's fields); the flags
override the file. The stage's report (JSON) goes to stdout; trainer progress to stderr.
"""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from arena.commands.common import err, fail
from arena.config_file import ConfigError

if TYPE_CHECKING:  # the distill extra is optional: its modules are imported when a stage runs
    from distill.train.config import StageName

app = typer.Typer(
    help="Post-train a model on the corpus: sft, teacher-sft, rft, kto, grpo, recipe.", no_args_is_help=True
)

StageConfigOption = Annotated[Path | None, typer.Option("--config", help="Stage YAML (our fields + trl's).")]
DataOption = Annotated[Path | None, typer.Option("--data", help="Corpus export directory (train.jsonl, kto.jsonl).")]
ModelOption = Annotated[str | None, typer.Option("--model", help="Starting checkpoint: local path or hub name.")]
OutputOption = Annotated[Path | None, typer.Option("--output", help="Output directory of the stage.")]
ResumeOption = Annotated[bool, typer.Option("--resume", help="Continue from the newest checkpoint in --output.")]


def _run(
    stage: StageName, config: Path | None, data: Path | None, model: str | None, output: Path | None, resume: bool
):
    try:
        from distill.train.config import load_stage_config
        from distill.train.data import CorpusError
        from distill.train.stages import run_stage
    except ImportError as exc:
        fail(f"the distill extra is not installed ({exc}); pip install 'trajectory-arena[distill]'")
    if config is not None and not config.is_file():
        fail(f"config file {config} does not exist")
    overrides = {"data": data, "model": model, "output": output, "resume": resume or None}
    try:
        resolved = load_stage_config(config, stage, overrides)
        # The trainers print their logs to stdout; stdout carries only the report.
        with contextlib.redirect_stdout(sys.stderr):
            report = run_stage(resolved)
    except (ConfigError, CorpusError) as exc:
        fail(str(exc))
    _emit(report.model_dump(mode="json"))


def _emit(payload) -> None:
    sys.stdout.write(json.dumps(payload) + "\n")
    sys.stdout.flush()


STAGE_HELP: dict[StageName, str] = {
    "sft": "SFT on the train split (messages + tools), assistant-only loss, packing, LoRA or full.",
    "teacher-sft": "Continued SFT on the teacher subset (best-judged successful trajectories) at a lower learning rate.",
    "rft": "Rejection-sampled re-SFT: sample rollouts from the checkpoint, keep distinct successes, SFT on them.",
    "kto": "KTO on per-step desirable / undesirable examples.",
    "grpo": "Dr. GRPO with tool rollouts in the shop environment; reward = teacher step match + outcome.",
}


def _stage_command(stage: StageName):
    """One command per stage: they take the same flags and differ only in the stage they run."""

    def command(
        config: StageConfigOption = None,
        data: DataOption = None,
        model: ModelOption = None,
        output: OutputOption = None,
        resume: ResumeOption = False,
    ) -> None:
        _run(stage, config, data, model, output, resume)

    command.__doc__ = STAGE_HELP[stage]
    return command


for _stage in STAGE_HELP:
    app.command(_stage)(_stage_command(_stage))


@app.command("recipe")
def recipe(
    config: Annotated[Path, typer.Option("--config", help="Recipe YAML: shared keys + stages: {sft: ..., ...}.")],
    data: DataOption = None,
    model: ModelOption = None,
    output: OutputOption = None,
    resume: ResumeOption = False,
) -> None:
    """Run the configured stages in order, each from the last one's checkpoint; write OUTPUT/report.md."""
    try:
        from distill.train.data import CorpusError
        from distill.train.recipe import run_recipe
    except ImportError as exc:
        fail(f"the distill extra is not installed ({exc}); pip install 'trajectory-arena[distill]'")
    if not config.is_file():
        fail(f"config file {config} does not exist")
    try:
        with contextlib.redirect_stdout(sys.stderr):
            result = run_recipe(config, {"data": data, "model": model, "output": output, "resume": resume or None})
    except (ConfigError, CorpusError) as exc:
        fail(str(exc))
    _emit(result.model_dump(mode="json"))


@app.command("tiny-model")
def tiny_model(
    data: Annotated[
        Path, typer.Option("--data", help="Corpus export directory: its train.jsonl trains the tokenizer.")
    ],
    out: Annotated[Path, typer.Option("--out", help="Folder for the checkpoint (e.g. ./tiny-qwen3).")],
    seed: Annotated[int, typer.Option("--seed", help="Seed of the random weights.")] = 0,
) -> None:
    """Make the tiny random Qwen3-shaped checkpoint distill/configs/tiny-cpu.yaml trains (nothing is fetched)."""
    try:
        from distill.tiny import build_tiny_model, corpus_texts
    except ImportError as exc:
        fail(f"the distill extra is not installed ({exc}); pip install 'trajectory-arena[distill]'")
    if not (data / "train.jsonl").is_file():
        fail(f"{data}/train.jsonl does not exist: export a corpus first (`arena export ... --out {data}`)")
    with contextlib.redirect_stdout(sys.stderr):
        path = build_tiny_model(corpus_texts(data), out, seed=seed)
    err.print(f"tiny model written to {path}", highlight=False)


@app.command("serve")
def serve(
    checkpoint: Annotated[Path, typer.Argument(help="A stage's checkpoint folder, e.g. runs/tiny/grpo/final.")],
    host: Annotated[str, typer.Option("--host", help="Interface to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="Port to listen on.")] = 8001,
    served_model_name: Annotated[
        str | None, typer.Option("--served-model-name", help="Model name clients ask for (default: CHECKPOINT).")
    ] = None,
    max_new_tokens: Annotated[int, typer.Option("--max-new-tokens", min=1, help="Tokens per completion.")] = 256,
    max_batch: Annotated[
        int, typer.Option("--max-batch", min=1, help="Concurrent requests generated together as one batch.")
    ] = 8,
    turn_calls: Annotated[
        int | None,
        typer.Option(
            "--turn-calls", min=1, help="A completion stops right after this many tool calls (default: no bound)."
        ),
    ] = None,
    gguf: Annotated[
        Path | None,
        typer.Option(
            "--gguf",
            help="Generate with llama.cpp from this GGUF (`arena student export-gguf CHECKPOINT FILE`); the "
            "checkpoint still gives the tokenizer and template. Needs llama-cpp-python.",
        ),
    ] = None,
) -> None:
    """Serve a checkpoint on CPU as an OpenAI-compatible chat server (/v1/chat/completions), the small
    models' stand-in for vLLM: `arena eval --base-url http://HOST:PORT/v1 --model CHECKPOINT` evaluates it."""
    try:
        import uvicorn
        from transformers import AutoModelForCausalLM

        from distill.serve import create_model_app
        from distill.train.checkpoints import load_tokenizer
    except ImportError as exc:
        fail(f"the distill extra is not installed ({exc}); pip install 'trajectory-arena[distill]'")
    if not (checkpoint / "config.json").is_file():
        fail(f"{checkpoint} is not a checkpoint (no config.json): give a stage's OUTPUT/final folder")
    name = served_model_name or str(checkpoint)  # vLLM's default too: clients name the path they served
    tokenizer = load_tokenizer(str(checkpoint))
    if gguf is not None:
        from distill.serve import LlamaCppBackend

        if not gguf.is_file():
            fail(f"--gguf {gguf}: no such file")
        try:
            model = LlamaCppBackend(gguf, tokenizer)
        except (RuntimeError, ValueError) as exc:
            fail(f"--gguf {gguf}: {exc}")
    else:
        model = AutoModelForCausalLM.from_pretrained(checkpoint).eval()
    application = create_model_app(
        model, tokenizer, name, max_new_tokens=max_new_tokens, max_batch=max_batch, turn_calls=turn_calls
    )
    err.print(f"serving {name} on http://{host}:{port}/v1", highlight=False)
    uvicorn.run(application, host=host, port=port, log_level="warning")
