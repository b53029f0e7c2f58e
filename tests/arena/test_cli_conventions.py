"""One spelling per idea across `arena` commands: the API's --api-host/--api-port, --database-url, where
problems come from (--problems FILE | --suite DIR --partition), --samples, --local against --network local;
old spellings still work with a note. In process (typer's runner): help and flag parsing only."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from arena.cli import app

runner = CliRunner()
WIDE = {"COLUMNS": "240", "TERMINAL_WIDTH": "240", "NO_COLOR": "1"}


def command(*path: str):
    group = typer.main.get_command(app)
    for name in path:
        group = group.commands[name]  # type: ignore[attr-defined]
    return group


def options(*path: str) -> dict:
    return {opt: p for p in command(*path).params if p.param_type_name == "option" for opt in p.opts}


def help_text(*path: str) -> str:
    result = runner.invoke(app, [*path, "--help"], env=WIDE)
    assert result.exit_code == 0, result.output
    return result.output


def test_the_api_binds_with_the_same_flags_in_serve_and_validator_run():
    serve, validator = options("serve"), options("validator", "run")
    for flag in ("--api-host", "--api-port"):
        assert flag in serve and flag in validator
        assert serve[flag].default is None and validator[flag].default is None  # both default to api.host/port
    assert serve["--database-url"].envvar == validator["--database-url"].envvar == "ARENA_DATABASE_URL"
    shown = help_text("serve").split("Options")[1]
    assert "--api-host" in shown and "--database-url" in shown
    assert "--host " not in shown and "--port " not in shown  # the old spellings work but are not listed
    assert serve["--host"].hidden and serve["--port"].hidden


def test_problems_and_samples_are_spelled_alike_in_run_agent_and_eval():
    run_agent, evaluate = options("run-agent"), options("eval")
    for flag in ("--problems", "--suite", "--partition", "--samples", "--catalog", "--out", "--limit", "--mode"):
        assert flag in run_agent and flag in evaluate, flag
    assert run_agent["--samples"].default == evaluate["--samples"].default == 1
    assert run_agent["--samples"].help == evaluate["--samples"].help
    assert run_agent["--problems"].help == evaluate["--problems"].help


def test_eval_shows_its_required_flags_and_names_the_missing_one(tmp_path):
    shown = help_text("eval")
    for flag in ("--catalog", "--out"):
        line = next(line for line in shown.splitlines() if f" {flag} " in line)
        assert "[required]" in line, line
    missing = runner.invoke(app, ["eval", "--catalog", str(tmp_path)], env=WIDE)
    assert missing.exit_code == 2 and "--out required" in missing.output
    assert "--catalog" not in missing.output.split("error:")[1].split("required")[0]


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--problems", "a.jsonl", "--suite", "s"], "exactly one of --problems FILE or --suite DIR"),
        ([], "exactly one of --problems FILE or --suite DIR"),
        (["--suite", "s", "--partition", "nope"], "--partition must be one of"),
        (["--problems", "a.jsonl", "--samples", "0"], "--samples must be at least 1"),
    ],
)
def test_run_agent_takes_a_suite_partition_like_eval(tmp_path, flags, message):
    agent = tmp_path / "agent.py"
    agent.write_text("def agent_main(problem):\n    return None\n")
    result = runner.invoke(app, ["run-agent", str(agent), "--catalog", str(tmp_path), *flags], env=WIDE)
    assert result.exit_code == 2 and message in result.output, result.output


def test_local_and_network_local_are_told_apart(tmp_path):
    for path in (("submit",), ("validator", "run")):
        flags = options(*path)
        assert "not the same as --network local" in flags["--local"].help
        assert "not --local" in flags["--network"].help and "ws://127.0.0.1:9944" in flags["--network"].help
    agent = tmp_path / "missing.py"
    both = runner.invoke(app, ["submit", str(agent), "--netuid", "3", "--local", "--network", "test"], env=WIDE)
    assert both.exit_code == 2 and "--network test is ignored with --local" in both.output
