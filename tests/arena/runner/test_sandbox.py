"""Untrusted agents in the real bubblewrap sandbox, run as CI runs (root).

Every hostile behaviour is contained, recorded with the right termination
reason, and the runner survives all of them in one run.
"""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from pathlib import Path

import pytest

from arena.problems.official import parse_row
from arena.runner.episode import AgentSource, EpisodeRunner, RunnerConfig
from arena.runner.proxy import UpstreamRegistry
from arena.runner.record import EpisodeLimits, EpisodeRecord, Termination
from arena.runner.sandbox import bubblewrap_path

AGENTS = Path(__file__).parents[2] / "support" / "agents"
CANARY = f"CANARY-{uuid.uuid4().hex}"

if bubblewrap_path() is None:
    if os.environ.get("ARENA_REQUIRE_SANDBOX"):
        raise RuntimeError("bubblewrap is required for these tests (scripts/test installs it)")
    pytest.skip("bubblewrap is not installed (apt-get install bubblewrap)", allow_module_level=True)

LIMITS = EpisodeLimits(wall_s=20, cpu_s=3, memory_bytes=1024**3, processes=32, output_bytes=16 * 1024,
                       file_size_bytes=8 * 1024**2)  # fmt: skip


@pytest.fixture(scope="module")
def canaries(tmp_path_factory) -> list[str]:
    """Secrets planted where a careless sandbox would show them."""
    home = tmp_path_factory.mktemp("home")
    wallet = home / ".bittensor" / "wallets" / "default"
    (wallet / "hotkeys").mkdir(parents=True)
    (wallet / "coldkey").write_text(CANARY)
    (wallet / "hotkeys" / "default").write_text(CANARY)
    tmp_secret = Path("/tmp") / f"canary-{uuid.uuid4().hex}.txt"
    tmp_secret.write_text(CANARY)
    os.environ["ARENA_TEST_CANARY"] = CANARY  # the runner's environment must not leak either
    yield [str(wallet / "coldkey"), str(wallet / "hotkeys" / "default"), str(tmp_secret)]
    tmp_secret.unlink()
    os.environ.pop("ARENA_TEST_CANARY", None)


@pytest.fixture(scope="module")
def records(catalog, canaries) -> dict[str, EpisodeRecord]:
    """Every hostile agent, run by one runner in one event loop."""
    runner = EpisodeRunner(catalog, UpstreamRegistry([]), RunnerConfig(limits=LIMITS))
    problem = parse_row({"query": json.dumps(canaries), "reward": {"product_id": "1001", "title": ["widget"]}})

    async def run_all() -> dict[str, EpisodeRecord]:
        names = sorted(p.stem for p in AGENTS.glob("*.py"))
        # Two at a time: the bombs must not starve each other on a 2-core machine.
        out: dict[str, EpisodeRecord] = {}
        for i in range(0, len(names), 2):
            batch = names[i : i + 2]
            results = await asyncio.gather(
                *(runner.run(AgentSource.from_path(AGENTS / f"{n}.py"), problem, "heuristic-policy") for n in batch)
            )
            out.update(zip(batch, results, strict=True))
        return out

    return asyncio.run(run_all())


def test_no_record_contains_a_secret(records):
    for name, record in records.items():
        dumped = record.model_dump_json()
        assert CANARY not in dumped, f"{name} leaked a canary"


def test_snooping_is_contained(records):
    out = records["snoop"].stdout_tail
    assert "READ" not in out and "CONNECTED" not in out and "RESOLVED" not in out and "WROTE" not in out
    assert out.count("blocked read") >= 7 and out.count("blocked net") == 3
    identity = next(line for line in out.splitlines() if line.startswith("IDENTITY"))
    assert "IDENTITY 0 " not in identity  # not root
    assert "CapEff:\\t0000000000000000" in identity and "CapBnd:\\t0000000000000000" in identity
    env = {line.split()[1] for line in out.splitlines() if line.startswith("ENV")}
    assert env <= {"ARENA_SOCKET", "HOME", "PATH", "LANG", "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED",
                   "LD_LIBRARY_PATH", "PWD", "ARENA_STATUS_FD"}  # fmt: skip
    root = next(line for line in out.splitlines() if line.startswith("ROOT"))
    for hidden in ("'root'", "'home'", "'etc'", "'work'", "'var'"):
        assert hidden not in root
    assert records["snoop"].termination is Termination.terminated


@pytest.mark.parametrize(
    ("agent", "termination", "limit"),
    [
        ("fork_bomb", Termination.limit, "processes"),
        ("memory_bomb", Termination.limit, "memory"),
        ("cpu_loop", Termination.limit, "cpu"),
        ("sleeper", Termination.timeout, "wall_clock"),
        ("flood", Termination.limit, "output"),
        ("big_file", Termination.limit, "file_size"),
    ],
)
def test_resource_abuse_is_stopped_and_named(records, agent, termination, limit):
    record = records[agent]
    assert (record.termination, record.limit_hit) == (termination, limit), record.error
    assert len(record.stdout_tail.encode()) <= LIMITS.output_bytes + 4


def test_crashes_and_missing_entry_are_recorded(records):
    crash = records["crasher"]
    assert crash.termination is Termination.crash and "agent bug" in crash.error
    assert [c.name for c in crash.tool_calls] == ["find_product"]
    assert records["no_entry"].termination is Termination.crash
    assert "agent_main" in records["no_entry"].error


def test_garbage_tool_calls_are_recorded_errors(records):
    record = records["garbage_tools"]
    assert record.termination is Termination.terminated
    failed = [c for c in record.tool_calls if not c.ok]
    assert len(failed) >= 7  # five bad calls through the SDK, two malformed bodies
    assert all(c.error for c in failed)
    assert record.final_recommendation and record.tool_calls[-1].name == "terminate"
    assert "RAW /tools/find_product 200" in record.stdout_tail


def test_every_tool_call_is_in_the_record_with_its_result(records):
    record = records["garbage_tools"]
    assert [c.index for c in record.tool_calls] == list(range(len(record.tool_calls)))
    search = next(c for c in record.tool_calls if c.ok and c.name == "find_product")
    assert search.result and {"product_id", "title", "price"} <= set(search.result[0])


def test_records_round_trip_through_json(records):
    for record in records.values():
        assert EpisodeRecord.model_validate_json(record.model_dump_json()) == record
