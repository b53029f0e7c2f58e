"""`arena export`'s flags are generated from its config model: defaults and bounds cannot drift."""

from __future__ import annotations

import inspect
from pathlib import Path

import typer
from pydantic import BaseModel, Field
from typer.testing import CliRunner

from arena.cli import app
from arena.commands import export
from arena.commands.model_options import model_options
from distill.export_model import ExportConfig

# Every flag the command had before its flags were generated: scripts and docs use them.
FLAGS = (
    "--out --database-url --records --judgments --suite --shoppingbench --subnet --format --min-coefficient --seed "
    "--cycles --since --until --suites --max-agent-share --eval-fraction --min-attribution --max-tokens --tokenizer "
    "--batch-size --chat-template"
).split()


def _flags(command) -> set[str]:
    found = set()
    for parameter in inspect.signature(command).parameters.values():
        option = parameter.annotation.__metadata__[0]
        found.update(d for d in (option.default, *(option.param_decls or ())) if isinstance(d, str))
    return found


def _fields(model: type[BaseModel], prefix: str = "") -> list[str]:
    names = []
    for name, info in model.model_fields.items():
        if isinstance(info.annotation, type) and issubclass(info.annotation, BaseModel):
            names += _fields(info.annotation, f"{prefix}{name}.")
        else:
            names.append(prefix + name)
    return names


def test_every_config_field_is_a_flag_and_every_old_flag_still_works():
    flags = _flags(export.export)
    assert set(FLAGS) <= flags
    for path in _fields(ExportConfig):
        assert export.FLAGS.get(path, "--" + path.rsplit(".", 1)[-1].replace("_", "-")) in flags


def test_bounds_are_the_models(tmp_path):
    def run(*args: str):
        return CliRunner().invoke(app, ["export", "--out", str(tmp_path / "o"), "--records", "nope.jsonl", *args])

    # The config allows eval fractions below 1 (the hand-written flag stopped at 0.9).
    assert "nope.jsonl does not exist" in run("--eval-fraction", "0.95").output
    refused = run("--eval-fraction", "1.0")
    assert refused.exit_code == 2 and "--eval-fraction" in refused.output and "less than 1" in refused.output
    assert run("--max-agent-share", "0").exit_code == 2  # gt=0 in the model
    assert "expected A:B with A <= B" in run("--cycles", "5:1").output
    assert "give a time zone" in run("--since", "2025-06-01").output


class _Inner(BaseModel):
    names: list[str] = Field(default_factory=lambda: ["a"], description="Names.")
    limit: int = Field(3, ge=1, description="A limit.")


class _Outer(BaseModel):
    out: Path = Field(description="Where.")
    share: float = Field(0.5, gt=0.0, lt=1.0, description="A share.")
    inner: _Inner = Field(default_factory=_Inner)


def test_a_flag_left_out_leaves_the_model_default():
    seen = []
    toy = typer.Typer()

    @toy.command()
    @model_options(_Outer, flags={"inner.names": "--name"})
    def command(config: _Outer, extra: int = 0) -> None:
        seen.append((config, extra))

    @toy.command()
    def other() -> None:  # two commands: typer then takes the command's name
        pass

    runner = CliRunner()
    assert runner.invoke(toy, ["command", "--out", "x"]).exit_code == 0
    assert seen[-1] == (_Outer(out=Path("x")), 0)
    result = runner.invoke(toy, ["command", "--out", "x", "--name", "b, c", "--limit", "5", "--extra", "2"])
    assert result.exit_code == 0, result.output
    assert seen[-1] == (_Outer(out=Path("x"), inner=_Inner(names=["b", "c"], limit=5)), 2)
    assert runner.invoke(toy, ["command", "--out", "x", "--limit", "0"]).exit_code == 2
    assert runner.invoke(toy, ["command", "--out", "x", "--share", "1"]).exit_code == 2
    assert runner.invoke(toy, ["command"]).exit_code == 2  # --out is required: the field has no default
    assert "0.0<x<1.0" in runner.invoke(toy, ["command", "--help"], env={"COLUMNS": "200"}).output
