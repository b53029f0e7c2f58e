"""An agent's imports are checked against what the sandbox really holds.

The intake derives its list from the sandbox runtime's own package closure
(arena/intake/sandbox_imports.py); these tests prove the two agree by importing, inside
the real sandbox, every third-party module the intake accepts, and by watching
a module the intake refuses fail there too.
"""

from __future__ import annotations

import asyncio
import os
import sys
from contextlib import chdir

import pytest
from typer.testing import CliRunner

from arena.intake.checks import check_submission
from arena.intake.sandbox_imports import sandbox_modules
from arena.problems.official import parse_row
from arena.runner.episode import AgentSource, EpisodeRunner, RunnerConfig
from arena.runner.proxy import UpstreamRegistry
from arena.runner.record import EpisodeLimits, Termination
from arena.runner.sandbox import bubblewrap_path

MAIN = "\ndef agent_main(problem):\n    return None\n"


@pytest.mark.parametrize(
    ("code", "module", "line"),
    [
        ("import numpy", "numpy", 1),
        ("import json\nfrom numpy.linalg import norm", "numpy.linalg", 2),
        ("import arena.runner.episode", "arena.runner.episode", 1),
        ("from arena import store", "arena.store", 1),
        ("from . import helper", ".", 1),
        ("def agent_main(problem):\n    __import__('requests')", "requests", 2),
        ("import importlib\nimportlib.import_module('torch')", "torch", 2),
        ("try:\n    import numpy\nexcept KeyError:\n    pass", "numpy", 2),  # the handler does not catch it
    ],
)
def test_refused_with_the_module_and_its_line(code, module, line):
    verdict = check_submission((code + MAIN).encode(), earlier=[])
    assert (verdict.accepted, verdict.check, verdict.status_code, verdict.line) == (False, "imports", 422, line)
    assert repr(module) in verdict.reason and f"line {line}" in verdict.reason


@pytest.mark.parametrize(
    "code",
    [
        "import json, re, sqlite3, urllib.request\nfrom collections import Counter",
        "import arena.sdk as sdk\nfrom arena.sdk import tool\nfrom arena import sdk as s2",
        "from openai import OpenAI\nimport httpx, pydantic",
        "try:\n    import numpy\nexcept ImportError:\n    numpy = None",
        "from __future__ import annotations",
    ],
)
def test_what_the_sandbox_has_is_accepted(code):
    assert check_submission((code + MAIN).encode(), earlier=[]).accepted


def test_arena_submit_refuses_before_touching_keys_or_chain(tmp_path):
    agent = tmp_path / "agent.py"
    agent.write_text("import numpy" + MAIN)
    from arena.cli import app

    with chdir(tmp_path):
        result = CliRunner().invoke(app, ["submit", str(agent), "--netuid", "15", "--local"])
    assert result.exit_code == 2
    assert "imports 'numpy'" in result.stderr
    assert not (tmp_path / "wallets").exists() and not (tmp_path / "arena.db").exists()


@pytest.mark.skipif(bubblewrap_path() is None and not os.environ.get("ARENA_REQUIRE_SANDBOX"), reason="no bwrap")
def test_the_intake_and_the_sandbox_agree(catalog):
    third_party = sorted(m for m in sandbox_modules() if m not in sys.stdlib_module_names)
    assert {"openai", "httpx", "pydantic"} <= set(third_party)
    importer = (
        "import importlib, sys\n"
        "import arena.sdk as sdk\n"
        f"NAMES = {third_party!r}\n"
        "def agent_main(problem):\n"
        "    for name in NAMES:\n"
        "        importlib.import_module(name)\n"
        "    print('IMPORTED', len(NAMES))\n"
        "    sdk.tool('terminate', status='success')\n"
    )
    refused = "import numpy" + MAIN
    assert check_submission(importer.encode(), earlier=[]).accepted
    assert not check_submission(refused.encode(), earlier=[]).accepted
    limits = EpisodeLimits(wall_s=60, cpu_s=30, memory_bytes=2 * 1024**3)
    runner = EpisodeRunner(catalog, UpstreamRegistry([]), RunnerConfig(limits=limits))
    problem = parse_row({"query": "a widget", "reward": {"product_id": "1001", "title": ["widget"]}})

    async def both():
        return await asyncio.gather(
            runner.run(AgentSource(name="importer", code=importer.encode()), problem, "heuristic-policy"),
            runner.run(AgentSource(name="numpy", code=refused.encode()), problem, "heuristic-policy"),
        )

    ok, bad = asyncio.run(both())
    assert ok.termination is Termination.terminated, (ok.error, ok.stderr_tail)
    assert f"IMPORTED {len(third_party)}" in ok.stdout_tail
    assert bad.termination is Termination.crash and "No module named 'numpy'" in bad.stderr_tail


def test_the_guide_names_every_allowed_root():
    from arena.runner.runtime import ALLOWED_ROOTS
    from tests.conftest import REPO

    guide = (REPO / "docs" / "miner-guide-agents.md").read_text()
    section = guide.split("## What an agent may import", 1)[1].split("\n## ", 1)[0]
    for root in ALLOWED_ROOTS:
        assert f"`{root}`" in section, root
