"""`arena run-agent`: the command contract, on a real catalog in real sandboxes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from arena.runner.record import EpisodeRecord
from arena.runner.sandbox import bubblewrap_path
from tests.conftest import REPO

ARENA = str(Path(sys.executable).parent / "arena")
pytestmark = pytest.mark.skipif(bubblewrap_path() is None, reason="bubblewrap is not installed")


def test_run_agent_writes_scored_records_and_prints_asr_and_pass_at_k(catalog_dir, tmp_path):
    problems = tmp_path / "problems.jsonl"
    rows = [
        {"query": "widget gadget", "reward": {"product_id": "1003", "title": ["widget widget gadget"]}},
        {"query": "blue denim jeans", "reward": {"product_id": "3000", "title": ["blue denim jeans"]}},
    ]
    problems.write_bytes(b"\n".join(orjson.dumps(r) for r in rows) + b"\n")
    out = tmp_path / "records.jsonl"
    done = subprocess.run(
        [ARENA, "run-agent", str(REPO / "arena" / "agents" / "tool_calling.py"), "--catalog", str(catalog_dir),
         "--problems", str(problems), "--samples", "2", "--concurrency", "2", "--out", str(out)],
        capture_output=True, text=True, timeout=600, env={"COLUMNS": "150", "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    records = [EpisodeRecord.model_validate_json(line) for line in out.read_text().splitlines()]
    assert len(records) == 4 and all(r.outcome is not None for r in records)
    assert sorted(r.attempt for r in records) == [0, 0, 1, 1]
    assert all(r.sandbox == "bubblewrap" and r.llm_calls for r in records)
    assert "pass@k" in done.stdout and "k=2" in done.stdout and "ASR" in done.stdout
    jeans = [r for r in records if r.problem.query == "blue denim jeans"]
    assert all(r.final_recommendation == ["3000"] and r.outcome["success"] for r in jeans)


def test_run_agent_refuses_what_it_cannot_run(tmp_path):
    done = subprocess.run([ARENA, "run-agent", str(tmp_path / "missing.py"), "--catalog", str(tmp_path),
                           "--problems", str(tmp_path / "p.jsonl")], capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 2 and "does not exist" in done.stderr


def test_a_crashing_agent_shows_its_first_traceback_and_where_the_rest_is(catalog_dir, tmp_path):
    from contextlib import chdir

    from typer.testing import CliRunner

    from arena.cli import app

    agent = tmp_path / "broken.py"
    agent.write_text("def agent_main(problem):\n    raise RuntimeError('the agent broke on ' + problem['intent'])\n")
    problems = tmp_path / "problems.jsonl"
    problems.write_bytes(orjson.dumps({"query": "widget", "reward": {"product_id": "1003", "title": ["w"]}}) + b"\n")
    with chdir(tmp_path):
        result = CliRunner().invoke(
            app, ["run-agent", str(agent), "--catalog", str(catalog_dir), "--problems", str(problems)]
        )
    assert result.exit_code == 1, result.output  # every episode crashed: a script must see the failure
    assert "crash: 1" in result.stdout
    assert "RuntimeError: the agent broke on product" in result.stderr
    assert "rerun with --out records.jsonl" in result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("error: every episode (1) crashed") and "fix" in last, last


def test_a_model_server_that_is_down_is_not_the_agents_crash(catalog_dir, tmp_path):
    """Every episode crashed because --base-url does not answer: exit 2 and the fix is the server's,
    not "fix the agent" (the proxy's own view of the upstream, arena/runner/faults.py)."""
    import socket

    from typer.testing import CliRunner

    from arena.cli import app

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    problems = tmp_path / "problems.jsonl"
    problems.write_bytes(orjson.dumps({"query": "widget", "reward": {"product_id": "1003", "title": ["w"]}}) + b"\n")
    result = CliRunner().invoke(
        app,
        ["run-agent", str(REPO / "arena" / "agents" / "tool_calling.py"), "--catalog", str(catalog_dir),
         "--problems", str(problems), "--base-url", f"http://127.0.0.1:{port}/v1", "--model", "m"],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("error: every episode (1) failed on this machine's side, not the agent's (upstream:"), last
    assert "--base-url" in last, last


def test_an_agent_that_crashes_on_some_problems_only_is_a_result_not_a_failure(catalog_dir, tmp_path):
    from contextlib import chdir

    from typer.testing import CliRunner

    from arena.cli import app

    agent = tmp_path / "picky.py"
    agent.write_text(
        "import arena.sdk as sdk\n\n"
        "def agent_main(problem):\n"
        "    if 'jeans' in problem['query']:\n"
        "        raise RuntimeError('no jeans')\n"
        "    sdk.tool('terminate', status='failure')\n"
    )
    problems = tmp_path / "problems.jsonl"
    rows = [
        {"query": "widget", "reward": {"product_id": "1003", "title": ["w"]}},
        {"query": "blue denim jeans", "reward": {"product_id": "3000", "title": ["blue denim jeans"]}},
    ]
    problems.write_bytes(b"\n".join(orjson.dumps(r) for r in rows) + b"\n")
    with chdir(tmp_path):
        result = CliRunner().invoke(
            app, ["run-agent", str(agent), "--catalog", str(catalog_dir), "--problems", str(problems)]
        )
    assert result.exit_code == 0, result.output
    assert "crash: 1" in result.stdout and "RuntimeError: no jeans" in result.stderr


@pytest.mark.parametrize(
    "source, refusal",
    [
        ("import numpy\n\ndef agent_main(problem):\n    return None\n", "line 1 imports 'numpy'"),
        ("def main(problem):\n    return None\n", "defines no top-level `def agent_main(problem)`"),
        ("def agent_main(problem):\n    return (\n", "is not valid Python"),
    ],
)
def test_run_agent_refuses_what_the_intake_would_before_any_episode(catalog_dir, tmp_path, source, refusal):
    """The same checks and the same line as `arena submit` (arena/intake/checks.py): an agent the
    validator would refuse is refused here, not run to crash in every episode."""
    from typer.testing import CliRunner

    from arena.cli import app
    from arena.miner.client import MinerClientError, read_agent

    agent = tmp_path / "agent.py"
    agent.write_text(source)
    problems = tmp_path / "problems.jsonl"
    problems.write_bytes(orjson.dumps({"query": "widget", "reward": {"product_id": "1003", "title": ["w"]}}) + b"\n")
    records = tmp_path / "records.jsonl"
    result = CliRunner().invoke(
        app,
        ["run-agent", str(agent), "--catalog", str(catalog_dir), "--problems", str(problems), "--out", str(records)],
    )
    assert result.exit_code == 2, result.output
    with pytest.raises(MinerClientError) as submit_refusal:
        read_agent(agent)  # what `arena submit` checks before it signs anything
    assert result.stderr.strip() == f"error: {submit_refusal.value}" and refusal in result.stderr
    assert not records.exists() and "episodes" not in result.stderr  # refused before any episode
