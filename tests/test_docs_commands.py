"""The guides' commands are real: every `arena ...` line in a fenced bash block of the guides names an existing
command with existing options, and the cheap ones run as written (in a scratch folder). The expensive ones are
covered elsewhere: `arena demo` (tests/test_demo.py) runs the whole race, catalog build to export."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ARENA = str(Path(sys.executable).with_name("arena"))
GUIDES = ["operator-guide.md", "miner-guide.md", "researcher-guide.md", "dashboard.md"]
GROUPS = {
    "validator",
    "db",
    "catalog",
    "problems",
    "suite",
    "judge",
    "distill",
    "config",
    "policy",
    "wallet",
    "subnets",
}
# commands that run in seconds and touch only the scratch folder: run as written
CHEAP = ("arena config show", "arena db upgrade", "arena db current", "arena catalog build", "arena problems generate")


def documented_commands() -> list[tuple[str, str]]:
    found = []
    for guide in GUIDES:
        text = (REPO / "docs" / guide).read_text()
        for block in re.findall(r"```bash\n(.*?)```", text, re.S):
            for line in block.replace("\\\n", " ").splitlines():
                line = line.strip()
                if line.startswith("arena "):
                    found.append((guide, line))
    return found


COMMANDS = documented_commands()


def test_the_guides_document_commands():
    guides = {guide for guide, _ in COMMANDS}
    assert {"operator-guide.md", "miner-guide.md", "researcher-guide.md"} <= guides
    assert len(COMMANDS) >= 10


@pytest.mark.parametrize(("guide", "line"), COMMANDS, ids=[f"{g}:{c[:50]}" for g, c in COMMANDS])
def test_a_documented_command_and_its_options_exist(guide, line):
    argv = shlex.split(line)[1:]
    depth = 2 if argv[0] in GROUPS else 1
    done = subprocess.run(
        [ARENA, *argv[:depth], "--help"], capture_output=True, text=True, env=os.environ | {"COLUMNS": "250"}
    )
    assert done.returncode == 0, f"{guide}: `arena {' '.join(argv[:depth])}` is not a command: {done.stderr}"
    for flag in (a.split("=")[0] for a in argv if a.startswith("--")):
        assert re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", done.stdout), f"{guide}: {line!r}: no {flag}"


def test_the_cheap_documented_commands_run_as_written(tmp_path):
    # the documented defaults, not this machine's config file
    env = {k: v for k, v in os.environ.items() if k != "ARENA_CONFIG"}
    env["ARENA_DATABASE_URL"] = f"sqlite:///{tmp_path / 'arena.db'}"
    ran = []
    for guide, line in COMMANDS:
        if not line.startswith(CHEAP):
            continue
        argv = shlex.split(line)
        if argv[1:3] == ["catalog", "build"]:
            if "--synthetic" not in argv:
                continue  # built from the operator's own documents file: its flags are checked above
            argv[argv.index("--synthetic") + 1] = "300"  # the documented size, shrunk: same code path
        done = subprocess.run([ARENA, *argv[1:]], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"{guide}: {line!r} failed: {done.stderr[-2000:]}"
        ran.append(line)
    assert any("db upgrade" in line for line in ran) and any("catalog build" in line for line in ran)
    assert (tmp_path / "arena.db").is_file() and (tmp_path / "demo" / "catalog" / "catalog.json").is_file()
    assert (tmp_path / "demo" / "problems.jsonl").stat().st_size > 0


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
    for needed in ("arena catalog build", "arena suite build", "arena wallet create", "arena subnets register",
                   "ARENA_API__WALLET_NAME", "ARENA_API__WALLET_HOTKEY", "ARENA_API__WALLET_PATH",
                   "api.public_url", "arena serve"):  # fmt: skip
        assert needed in without_docker, needed
