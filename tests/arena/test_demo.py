"""The README's main job: `arena demo` on a fresh directory, then again (it continues)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena.runner.sandbox import bubblewrap_path

ARENA = str(Path(sys.executable).parent / "arena")

pytestmark = pytest.mark.skipif(bubblewrap_path() is None, reason="bubblewrap is not installed")


def run_demo(workdir: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "ARENA_DATABASE_URL": f"sqlite:///{workdir / 'arena.db'}", "COLUMNS": "160"}
    done = subprocess.run(
        [ARENA, "demo", "--out", str(workdir / "demo"), "--products", "2000", "--problems", "32"],
        capture_output=True, text=True, cwd=workdir, env=env, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def leaderboard(stdout: str) -> dict[str, tuple[str, float | None]]:
    """agent -> (rank, race score) from the printed table."""
    table = {}
    for line in stdout.splitlines():
        cells = [c.strip() for c in line.strip()[1:-1].split("│")]
        if len(cells) == 7 and cells[1] in ("tool_calling", "search_loop", "shortcut"):
            table[cells[1]] = (cells[0], None if cells[3] == "-" else float(cells[3]))
    return table


def weights_table(stdout: str) -> dict[int, tuple[str, str, float]]:
    """uid -> (wallet, hotkey, weight) from the printed "weights set on the chain" table."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if "weights set on the chain" in line)
    rows = {}
    for line in lines[start:]:
        cells = [c.strip() for c in line.strip()[1:-1].split("│")]
        if len(cells) == 4 and cells[0].isdigit():
            rows[int(cells[0])] = (cells[1], cells[2], float(cells[3]))
        elif line.startswith("└"):
            break
    return rows


def test_demo_runs_a_whole_race_and_continues_on_rerun(demo_world, tmp_path):
    # The first run is the session's shared one (tests/conftest.py); the rerun continues a copy of it.
    for database in demo_world.glob("arena.db*"):  # with its -wal and -shm, if SQLite left them
        shutil.copy2(database, tmp_path / database.name)
    shutil.copytree(demo_world / "demo", tmp_path / "demo", symlinks=True)
    first = subprocess.CompletedProcess([], 0, (demo_world / "demo.stdout").read_text(), "")
    assert "Leaderboard after cycle 1" in first.stdout
    assert "the copied agent was rejected: ast_copy" in first.stdout
    rows = weights_table(first.stdout)
    weights = {uid: weight for uid, (_, _, weight) in rows.items()}
    assert abs(sum(weights.values()) - 1.0) < 1e-6
    # Weights by uid and hotkey, the burn uid named: the subnet owner's, registered first.
    if 0 in rows:  # uid 0 is set only when something is burned or unearned
        assert rows[0][0] == "owner (the burn uid)", first.stdout
    assert "validator" not in {wallet for wallet, _, _ in rows.values()}, first.stdout
    assert all(len(hotkey) == 48 and hotkey.startswith("5") for _, hotkey, _ in rows.values()), first.stdout
    # The legend says what each column means, and every entrant without a race score says why it did not race.
    assert (
        "coef: the judge's mean coefficient" in first.stdout
        and "race: score on the cycle's hidden draw" in first.stdout
    )
    assert "no champion raced:" not in first.stdout  # the sentence that read as "no champion ... is crowned"
    # The rules, not a frozen table: a champion only if confidently above zero, else "undecided"/"nobody";
    # no champion ties another racer; a 0 earns nothing; what nobody earned goes to the owner's uid 0.
    table = leaderboard(first.stdout)
    assert set(table) == {"tool_calling", "search_loop", "shortcut"}, first.stdout
    champion_line = next(line for line in first.stdout.splitlines() if line.startswith("champion: "))
    decision = next(line for line in first.stdout.splitlines() if line.startswith("decision ("))
    champion = champion_line.removeprefix("champion: ").strip()
    if champion in table:
        assert decision.startswith("decision (crowned)") and "confidently above zero" in decision
        best = table[champion][1]
        assert best is not None and best > 0
        others = [score for name, (_, score) in table.items() if name != champion and score is not None]
        assert all(score < best for score in others), first.stdout
    else:
        assert champion in ("undecided", "nobody")
        assert "nobody is crowned" in decision or "crowns nobody" in decision
        assert weights.get(0, 0.0) >= 0.8 - 1e-6  # the champion's share, unearned, is burned
    assert table["tool_calling"][0] != "-", "the agentic agent qualified: six problems cannot knock it out"
    for name, (_, score) in table.items():
        if score is None:
            assert any(line.startswith(f"{name} did not race") for line in first.stdout.splitlines()), first.stdout
    for name in ("train", "eval", "subtask", "kto"):
        assert (tmp_path / "demo" / "corpus" / f"{name}.jsonl").is_file()
    # Its store in jsonl, parquet and hf, each loaded with `datasets`: the researcher's guide test.
    assert (tmp_path / "demo" / "corpus" / "README.md").is_file()
    assert not (Path.home() / ".bittensor" / "wallets" / "tool_calling").exists()  # wallets stay in the demo folder
    assert (tmp_path / "demo" / "wallets" / "tool_calling").is_dir()

    second = run_demo(tmp_path)
    assert "Leaderboard after cycle 2" in second.stdout
    # Nobody new came: the last decided weights stand, runners-up included.
    assert weights_table(second.stdout) == rows
    assert "catalog reusing" in second.stderr and "suite reusing" in second.stderr


def test_a_demo_whose_cycle_halts_fails_with_the_fix(monkeypatch, tmp_path):
    """What `arena demo` does with a halted cycle (the race side is tests/arena/race/test_race_faults.py)."""
    from typer.testing import CliRunner

    from arena.cli import app
    from arena.commands import demo_steps
    from arena.race.halt import FIXES

    halt = {"stage": "qualifying", "kind": "sandbox", "reason": "2 episode(s) failed on a sandbox fault that the "
            "canary hit too", "submissions": [1, 2], "episodes": 2, "canary_failed": True, "fix": FIXES["sandbox"]}  # fmt: skip

    def halted(settings, out_dir, plan, console):
        return demo_steps.DemoResult(cycle=1, champion=None, standings=[], weights={}, rejected_copy=None, funnel={},
                                     paths={}, halt=halt)  # fmt: skip

    monkeypatch.setattr(demo_steps, "run_demo", halted)
    result = CliRunner().invoke(app, ["demo", "--out", str(tmp_path)])
    assert result.exit_code == 3, result.output
    assert "cycle 1 halted at qualifying (sandbox)" in result.output
    assert "fix: install bubblewrap" in result.output and "Leaderboard" not in result.output


def test_an_entrant_that_did_not_race_says_why(tmp_path):
    """The leaderboard's rows without a race score are explained from the qualifying stage's own detail."""
    from rich.console import Console

    from arena.commands import demo_steps

    rule = "an entrant races unless confidently (95%, paired bootstrap) below 0.5 x the leader on the same problems"
    standings = [
        {"submission": "tool_calling.py", "submission_id": 1, "rank": 1, "qualifying_score": 0.6, "race_score": 0.5},
        {"submission": "shortcut.py", "submission_id": 2, "rank": None, "qualifying_score": 0.1, "race_score": None},
    ]
    result = demo_steps.DemoResult(
        cycle=1, champion="tool_calling.py", standings=standings, weights={0: 0.2, 1: 0.8}, rejected_copy=None,
        funnel={}, paths={}, qualifying={"not_qualified": [2], "leader_score": 0.6, "rule": rule},
        neurons={0: ("owner", "5Owner"), 1: ("tool_calling", "5Tool")},
    )  # fmt: skip
    (why,) = demo_steps.not_raced(result)
    assert why.startswith("shortcut did not race: it did not qualify") and rule in why and "0.600" in why
    console = Console(file=(tmp_path / "out.txt").open("w"), width=60)
    demo_steps.print_result(result, console)
    console.file.close()
    printed = (tmp_path / "out.txt").read_text()
    assert "shortcut did not race" in printed and "owner (the burn uid)" in printed and "5Tool" in printed
