"""The sandbox runtime cache: built once, reused, and pruned of runtimes nobody uses."""

from __future__ import annotations

import os
import time

from arena.runner.runtime import ABANDONED_BUILD_S, STALE_AFTER_S, ensure_runtime, prune_runtimes


def _runtime(cache, name, age_s):
    folder = cache / name
    folder.mkdir()
    (folder / "READY").write_text("openai==0\n")
    then = time.time() - age_s
    os.utime(folder / "READY", (then, then))
    return folder


def test_prune_removes_unused_runtimes_and_dead_builds_only(tmp_path):
    keep = _runtime(tmp_path, "current", STALE_AFTER_S * 3)  # the one in use is never pruned
    recent = _runtime(tmp_path, "recent", STALE_AFTER_S - 3600)
    _runtime(tmp_path, "stale", STALE_AFTER_S + 3600)
    dead = tmp_path / ".building-dead"
    dead.mkdir()
    os.utime(dead, (time.time() - ABANDONED_BUILD_S - 60,) * 2)
    building = tmp_path / ".building-live"
    building.mkdir()
    foreign = tmp_path / "notes"
    foreign.mkdir()  # no READY: not ours to judge
    removed = prune_runtimes(tmp_path, keep=keep)
    assert sorted(p.name for p in removed) == [".building-dead", "stale"]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([keep.name, recent.name, building.name, foreign.name])


def test_ensure_runtime_builds_reuses_marks_use_and_prunes(tmp_path):
    stale = _runtime(tmp_path, "0123456789abcdef", STALE_AFTER_S + 3600)
    built = ensure_runtime(tmp_path)
    assert (built / "READY").is_file() and (built / "sdk" / "arena" / "sdk.py").is_file()
    assert (built / "site" / "openai").is_dir()
    assert not stale.exists()  # building a new runtime pruned the unused one
    old = time.time() - STALE_AFTER_S - 3600
    os.utime(built / "READY", (old, old))
    assert ensure_runtime(tmp_path) == built  # reused, not rebuilt
    assert time.time() - (built / "READY").stat().st_mtime < 600  # and marked as in use


def test_a_long_running_runner_rebuilds_a_runtime_pruned_under_it(tmp_path, monkeypatch, catalog):
    import shutil

    from arena.runner import episode
    from arena.runner.episode import EpisodeRunner, RunnerConfig
    from arena.runner.proxy import UpstreamRegistry

    runner = EpisodeRunner(catalog, UpstreamRegistry([]), RunnerConfig(sandbox=False, runtime_dir=tmp_path))
    first = runner.runtime
    shutil.rmtree(first)  # e.g. another validator's build pruned it
    assert runner._fresh_runtime() == first and not first.exists()  # within the hour: trusted
    monkeypatch.setattr(episode, "RUNTIME_RECHECK_S", -1)
    assert runner._fresh_runtime() == first and (first / "READY").is_file()
