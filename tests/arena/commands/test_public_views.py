"""A miner's terminal views over a validator's public /v1 API: `arena submissions show ID` and
`arena leaderboard --validator-url URL`, against a real `arena serve` on the demo's store (a finished cycle),
with stdout piped as a script reads it."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

ARENA = str(Path(sys.executable).with_name("arena"))
RECEIVER = "5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY"  # any ss58: nothing is submitted here


def environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("ARENA_") and k not in ("COLUMNS", "LINES")}


def arena(*args: str, code: int = 0) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([ARENA, *args], capture_output=True, text=True, env=environment(), timeout=120)
    assert done.returncode == code, (done.stdout, done.stderr)
    return done


@pytest.fixture(scope="module")
def validator(demo_world, tmp_path_factory) -> Iterator[str]:
    """`arena serve` on a copy of the demo's store; its base URL."""
    folder = tmp_path_factory.mktemp("served")
    for database in demo_world.glob("arena.db*"):
        shutil.copy2(database, folder / database.name)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = environment() | {"ARENA_API__VALIDATOR_HOTKEY": RECEIVER}
    log = (folder / "serve.log").open("w")
    server = subprocess.Popen(
        [ARENA, "serve", "--api-host", "127.0.0.1", "--api-port", str(port), "--database-url",
         f"sqlite:///{folder / 'arena.db'}"],
        env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300  # a hang guard: readiness is the server answering
        while True:
            try:
                httpx.get(f"{url}/healthz", timeout=5)
                break
            except httpx.TransportError:
                assert server.poll() is None and time.monotonic() < deadline, (folder / "serve.log").read_text()
                time.sleep(0.2)
        yield url
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=60)


def test_leaderboard_json_is_the_validators_board_and_the_table_keeps_hotkeys_whole(validator):
    board = json.loads(arena("leaderboard", "--validator-url", validator, "--json").stdout)
    assert board == httpx.get(f"{validator}/v1/leaderboard", timeout=30).json()
    assert board["cycle"] is not None and board["entries"], board
    shown = arena("leaderboard", "--validator-url", validator).stdout
    assert f"cycle {board['cycle']} standings" in shown and "coef: the judge's mean coefficient" in shown
    for entry in board["entries"]:
        assert any(entry["hotkey"] in line and entry["agent_name"] in line for line in shown.splitlines()), shown
    assert "…" not in shown and "waiting for their first cycle:" in shown
    if board["weights"]:
        assert "weights sent" in shown


def test_submissions_show_counts_the_episodes_the_api_lists(validator):
    board = json.loads(arena("leaderboard", "--validator-url", validator, "--json").stdout)
    entry = board["entries"][0]
    shown = json.loads(arena("submissions", "show", str(entry["submission_id"]), "--validator-url", validator,
                             "--json").stdout)  # fmt: skip
    assert shown["submission"]["id"] == entry["submission_id"]
    assert board["cycle"] in {s["cycle"] for s in shown["standings"]}
    listed = httpx.get(f"{validator}/v1/submissions/{entry['submission_id']}/episodes", timeout=30).json()
    outcomes = shown["episodes"]["outcomes"]
    assert shown["episodes"]["total"] == listed["total"] > 0
    assert sum(o["episodes"] for o in outcomes) == listed["total"]
    assert sum(sum(o["terminations"].values()) for o in outcomes) == listed["total"]
    assert sum(o["successes"] for o in outcomes) == sum(1 for e in all_episodes(validator, entry) if e["success"])
    human = arena("submissions", "show", str(entry["submission_id"]), "--validator-url", validator).stdout
    assert f"submission {entry['submission_id']}: {entry['agent_name']}" in human and "episodes" in human, human


def all_episodes(validator: str, entry: dict) -> list[dict]:
    items: list[dict] = []
    while True:
        page = httpx.get(f"{validator}/v1/submissions/{entry['submission_id']}/episodes",
                         params={"offset": len(items)}, timeout=30).json()  # fmt: skip
        items += page["items"]
        if not page["items"] or len(items) >= page["total"]:
            return items


def test_a_missing_submission_or_validator_is_one_line_with_the_fix(validator):
    missing = arena("submissions", "show", "99999", "--validator-url", validator, "--json", code=2)
    assert missing.stdout == ""  # nothing a script would parse as data
    (line,) = missing.stderr.strip().splitlines()
    assert "has no submission 99999" in line and "`arena submit` printed" in line
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    down = arena("leaderboard", "--validator-url", f"http://127.0.0.1:{closed}", code=2)
    (line,) = down.stderr.strip().splitlines()
    assert "cannot reach the validator" in line and "/healthz" in line
    bad = arena("leaderboard", "--validator-url", "127.0.0.1:8000", code=2)
    assert "not an http(s):// URL" in bad.stderr
