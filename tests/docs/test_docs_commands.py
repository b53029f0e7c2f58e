"""Every `arena ...` line in a shell block of README.md and docs/ (run, skipped or synopsis alike) names an
existing command with existing options. The blocks come from tests/support/guide_blocks.py, the extractor
tests/docs/test_guides.py runs them with; which blocks run, and how, is that file's business."""

from __future__ import annotations

import re

import pytest
import typer

from arena.cli import app
from tests.support.guide_blocks import REPO, all_shell_blocks

ROOT = typer.main.get_command(app)  # typer's own (vendored) click: groups are told by their commands
COMMANDS = [(block, line) for block in all_shell_blocks() for line in block.arena_commands()]
FLAG = re.compile(r"(?<![\w-])--[a-z][\w.-]*")


def resolve(line: str):
    """The command a line names (its path of group and subcommand names) and the click command itself."""
    command = ROOT
    path = []
    for word in line.split()[1:]:
        if word not in getattr(command, "commands", {}):
            break
        command = command.commands[word]
        path.append(word)
    return path, command


def test_the_guides_document_commands():
    pages = {block.page for block, _ in COMMANDS}
    assert {"docs/operator-guide.md", "docs/miner-guide.md", "docs/researcher-guide.md", "README.md"} - {
        "README.md"
    } <= pages
    assert len(COMMANDS) >= 40


@pytest.mark.parametrize(("block", "line"), COMMANDS, ids=[f"{b.where}:{c[:50]}" for b, c in COMMANDS])
def test_a_documented_command_and_its_options_exist(block, line):
    path, command = resolve(line)
    assert path, f"{block.where}: {line!r} names no arena command"
    assert not hasattr(command, "commands") or command.invoke_without_command, (
        f"{block.where}: {line!r}: `arena {' '.join(path)}` is a group, not a command"
    )
    options = {opt for param in command.params for opt in (*param.opts, *param.secondary_opts)}
    options.add("--help")
    for flag in FLAG.findall(line.split(" -- ")[0]):
        assert flag.split("=")[0] in options, f"{block.where}: {line!r}: `arena {' '.join(path)}` has no {flag}"


def test_the_guides_say_what_a_new_user_needs_and_no_stale_notes():
    sources = [*(REPO / "docs").glob("*.md"), *(REPO / "arena").rglob("*.py")]
    stale = [p.name for p in sources if re.search(r"until the lead (registers|adds)", p.read_text(), re.I)]
    assert not stale, stale
    assert "needs an export-run" not in (REPO / "docs" / "corpus.md").read_text()
    researcher = (REPO / "docs" / "researcher-guide.md").read_text()
    assert re.search(r"pip install -e '\.\[distill[,\]]", researcher)  # before the first training command
    assert researcher.index("[distill") < researcher.index("arena distill")
    operator = (REPO / "docs" / "operator-guide.md").read_text()
    without_docker = operator.split("## Without Docker")[1].split("\n## ")[0]
    for needed in ("ARENA_API__WALLET_HOTKEY", "api.public_url", "btcli subnets register"):
        assert needed in without_docker, needed


@pytest.mark.parametrize(
    "page", ["README.md", "docs/operator-guide.md", "docs/miner-guide.md", "docs/researcher-guide.md"]
)
def test_a_page_says_to_activate_the_environment_before_its_first_bare_arena(page):
    """`arena` is installed in the checkout's .venv: a newcomer who copies the first `arena ...` line
    into a fresh shell gets "command not found" unless the page said to activate it (or to call .venv/bin/arena)."""
    lines = (REPO / page).read_text().splitlines()
    bare = re.compile(r"(^|`)arena [a-z]")  # a command line or inline `arena demo`, not `arena ...` or arena.toml
    first = next(i for i, line in enumerate(lines, 1) if bare.search(line) and not line.startswith("<!--"))
    before = "\n".join(lines[: first - 1])
    assert "source .venv/bin/activate" in before and ".venv/bin/arena" in before, (
        f"{page}: the first `arena` command (line {first}) comes before any word on activating .venv"
    )


def test_the_evaluation_guide_gives_the_eval_flags_real_defaults():
    """docs/evaluation.md once gave --temperature's default as 1 "as in run-agent" (it is 0.7, and
    run-agent has no such flag): each "`--flag` (default X" there is checked against `arena eval`."""
    text = " ".join((REPO / "docs" / "evaluation.md").read_text().split())
    said = re.findall(r"`(--[\w-]+)` \(default ([\w.]+)", text)
    assert said, "docs/evaluation.md states no flag default"
    _, command = resolve("arena eval")
    defaults = {opt: param.default for param in command.params for opt in param.opts}
    for flag, value in said:
        assert float(value) == float(defaults[flag]), (
            f"docs/evaluation.md: {flag} default {value}, the CLI's is {defaults[flag]}"
        )
    assert "`--temperature` (default" in text
