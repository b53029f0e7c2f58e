"""The README's main job: `arena demo` on a fresh directory, then again (it continues)."""

from __future__ import annotations

import os
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


def check_columnar_exports(workdir: Path) -> None:
    """The researcher's formats on the demo's real store: each loads with `datasets`, as the guide says."""
    from contextlib import chdir

    import datasets
    from typer.testing import CliRunner

    from arena.cli import app

    out = workdir / "columnar"
    with chdir(workdir):
        result = CliRunner().invoke(
            app,
            ["export", "--database-url", f"sqlite:///{workdir / 'arena.db'}", "--out", str(out),
             "--format", "jsonl,parquet,hf"],
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    splits = [n for n in ("train", "eval", "subtask", "rejected") if (out / f"{n}.jsonl").is_file()]
    assert "train" in splits and "subtask" in splits
    jsonl = datasets.load_dataset("json", data_files={n: str(out / f"{n}.jsonl") for n in ("train", "eval")})
    parquet = datasets.load_dataset("parquet", data_files={n: str(out / f"{n}.parquet") for n in splits})
    on_disk = datasets.load_from_disk(str(out / "hf" / "trajectories"))
    for name in splits:
        n = len((out / f"{name}.jsonl").read_text().splitlines())
        assert parquet[name].num_rows == on_disk[name].num_rows == n
    assert jsonl["train"].num_rows == parquet["train"].num_rows
    row = parquet["train"][0]
    assert {g["name"] for g in row["metadata"]["gates"]} >= {"reasoning", "format"}
    assert row["messages"][0]["role"] == "system" and row["tools"][0]["function"]["name"]
    kto = datasets.load_from_disk(str(out / "hf" / "kto"))["train"]
    assert kto.num_rows == len((out / "kto.jsonl").read_text().splitlines()) > 0


def test_demo_runs_a_whole_race_and_continues_on_rerun(tmp_path):
    first = run_demo(tmp_path)
    assert "Leaderboard after cycle 1" in first.stdout
    assert "champion: " in first.stdout and "champion: none yet" not in first.stdout
    assert "the copied agent was rejected: ast_copy" in first.stdout
    weights_line = next(line for line in first.stdout.splitlines() if line.startswith("weights"))
    weights = [float(part.split(":")[1]) for part in weights_line.split("->")[1].split(",")]
    assert abs(sum(weights) - 1.0) < 1e-6
    for name in ("train", "eval", "subtask", "kto"):
        assert (tmp_path / "demo" / "corpus" / f"{name}.jsonl").is_file()
    check_columnar_exports(tmp_path)
    assert (tmp_path / "demo" / "corpus" / "README.md").is_file()
    assert not (Path.home() / ".bittensor" / "wallets" / "tool_calling").exists()  # wallets stay in the demo folder
    assert (tmp_path / "demo" / "wallets" / "tool_calling").is_dir()

    second = run_demo(tmp_path)
    assert "Leaderboard after cycle 2" in second.stdout
    assert "catalog reusing" in second.stderr and "suite reusing" in second.stderr
