"""Every table fits a script: with stdout (or stderr) piped, rich used to cut tables at 80 columns, ending
cells with "…" and wrapping hotkeys mid-token. Each command runs here as a script runs it: a subprocess whose
output is a pipe, with no COLUMNS set."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from arena.settings import ArenaSettings
from distill.eval_results import METRICS_FILE, PROBLEMS_FILE, ProblemResult
from distill.evaluate import EvalSettings, metrics_from_results

ARENA = str(Path(sys.executable).with_name("arena"))


def piped(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_") and k not in ("COLUMNS", "LINES")}
    done = subprocess.run([ARENA, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=120)
    assert done.returncode == 0, done.stderr
    return done


def test_config_show_piped_keeps_every_setting_and_meaning_whole():
    shown = piped("config", "show").stdout
    assert "…" not in shown
    field = ArenaSettings.model_fields["data_dir"]
    (row,) = [line for line in shown.splitlines() if line.startswith("│ data_dir ")]
    assert str(field.description) in row, row  # the meaning on the setting's own line, not wrapped below it


def test_subnets_metagraph_piped_keeps_hotkeys_on_one_line(tmp_path):
    database = f"sqlite:///{tmp_path / 'arena.db'}"
    piped("db", "upgrade", "--database-url", database)
    hotkeys = []
    for name in ("owner", "validator"):
        created = piped("wallet", "create", "--wallet.name", name, "--json", cwd=tmp_path).stdout
        hotkeys.append(json.loads(created)["ss58"])
        piped("subnets", "register", "--wallet.name", name, "--database-url", database, cwd=tmp_path)
    table = piped("subnets", "metagraph", "--database-url", database, cwd=tmp_path).stderr
    for uid, hotkey in enumerate(hotkeys):
        assert any(line.startswith(f"│ {uid} ") and hotkey in line for line in table.splitlines()), table


def write_run(folder: Path, label: str, samples: int, solved: int) -> Path:
    results = [
        ProblemResult(id=f"p{n}", intent="product", greedy=n < solved, successes=[n < solved] * samples)
        for n in range(20)
    ]
    metrics = metrics_from_results(results, EvalSettings(model="m", samples=samples, label=label), {})
    folder.mkdir()
    (folder / METRICS_FILE).write_text(metrics.model_dump_json())
    (folder / PROBLEMS_FILE).write_text("".join(r.model_dump_json() + "\n" for r in results))
    return folder


@pytest.mark.parametrize("samples", [1, 3])
def test_eval_compare_piped_has_each_header_once_and_whole(tmp_path, samples):
    """Greedy runs (one sample) once had two "pass@1" columns; "[interval]" in a header was read as rich
    markup and dropped ("difference , better")."""
    base = write_run(tmp_path / "base", "base-model", samples, solved=5)
    tuned = write_run(tmp_path / "tuned", "a-much-longer-run-label-than-eighty-columns-allow-sft", samples, solved=15)
    table = piped("eval", "compare", str(base), str(tuned), "--resamples", "200").stdout
    header = next(line for line in table.splitlines() if "ASR" in line and "run" in line)
    assert header.count("pass@1") == 1, header
    assert ("pass@3" in header) == (samples == 3), header
    assert "difference [interval], better / worse: verdict" in table, table
    assert "a-much-longer-run-label-than-eighty-columns-allow-sft" in table and "…" not in table
