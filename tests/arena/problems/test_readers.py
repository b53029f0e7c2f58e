"""Reading a pool in two processes clusters it as one process does, and a reader that dies costs
time, never a reading: the pool's half it held is read again here.

The pool: the 900 official tasks and the 494 hand-written problems (riddles, vouchers, Taglish,
shop lists), clustered together with the second reader forced on however small the pool."""

from __future__ import annotations

import logging
import os
import pickle
import sys
import tempfile
from pathlib import Path

import pytest

from arena.problems import readers
from arena.problems.clusters import Clustering, cluster_problems
from arena.problems.official import load_problems
from arena.problems.pair_scores import read_pairs
from tests.conftest import official_dir

HANDWRITTEN = Path(__file__).resolve().parents[2] / "support" / "data" / "cluster_pairs_handwritten.jsonl"


@pytest.fixture(scope="module")
def pool():
    return [*load_problems(*sorted(official_dir().glob("*.jsonl"))), *read_pairs(HANDWRITTEN).problems]


@pytest.fixture(scope="module")
def alone(pool) -> Clustering:
    return cluster_problems(pool, readers=1)


def _same(a: Clustering, b: Clustering) -> None:
    assert a.cluster_of == b.cluster_of
    assert [m.model_dump() for m in a.merges] == [m.model_dump() for m in b.merges]


def _leftovers() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob("arena-readers-*")}


def test_two_readers_cluster_the_pool_as_one(pool, alone, monkeypatch):
    started, pids = readers.PoolReader._start, []

    def start(self):
        started(self)
        pids.append(self._reader.pid)

    monkeypatch.setattr(readers.PoolReader, "_start", start)
    before = _leftovers()
    _same(cluster_problems(pool, readers=2), alone)
    assert len(alone.merges) > 50  # the pool merges (signature, gold, text and meaning links)
    assert _leftovers() == before  # the reader's files are gone
    assert len(pids) == 1  # a second reader read
    with pytest.raises(ChildProcessError):
        os.waitpid(pids[0], os.WNOHANG)  # and it was reaped


@pytest.mark.parametrize("dies", ["before its asks", "after its asks"])
def test_a_reader_that_dies_costs_time_not_readings(pool, alone, monkeypatch, caplog, dies):
    started, asked = readers.PoolReader._start, readers.PoolReader.asks
    killed = []

    def kill(reader):
        reader._reader.kill()  # killed, out of memory: it leaves no signal
        killed.append(reader._reader.pid)

    def start_then_die(self):
        started(self)
        if dies == "before its asks":
            kill(self)

    def ask_then_die(self):
        found = asked(self)
        if dies == "after its asks":
            kill(self)
        return found

    monkeypatch.setattr(readers.PoolReader, "_start", start_then_die)
    monkeypatch.setattr(readers.PoolReader, "asks", ask_then_die)
    with caplog.at_level(logging.WARNING, logger="arena.problems.readers"):
        _same(cluster_problems(pool, readers=2), alone)
    assert killed
    assert "the second reader stopped" in caplog.text


@pytest.mark.parametrize("fails", ["no interpreter", "no room for its problems"])
def test_a_reader_that_cannot_start_is_read_here(pool, alone, monkeypatch, caplog, tmp_path, fails):
    if fails == "no interpreter":
        monkeypatch.setattr(readers.sys, "executable", str(tmp_path / "no-python"))
    else:
        monkeypatch.setattr(readers.tempfile, "tempdir", str(tmp_path / "no-such-folder"))
    with caplog.at_level(logging.WARNING, logger="arena.problems.readers"):
        _same(cluster_problems(pool, readers=2), alone)
    assert "could not start a second reader" in caplog.text


def test_a_reading_loaded_back_holds_this_process_s_words(tmp_path):
    # Strings built at run time (not interned), as a reader's words would be without interning.
    words = ["".join(["pow", "er"]), "".join(["ba", "nk"])]
    interned = [sys.intern("".join(["pow", "er"])), sys.intern("".join(["ba", "nk"]))]
    path = tmp_path / "block"
    with path.open("wb") as handle:
        readers._dump_block(handle, [tuple(words), tuple(words)])
    loaded = readers._load_blocks(path)
    assert loaded == [tuple(words), tuple(words)]
    assert all(a is b for row in loaded for a, b in zip(row, interned, strict=True))
    # A plain pickle of the same block would hold new copies: the check is not vacuous.
    plain = pickle.loads(pickle.dumps([tuple(words)]))[0]
    assert plain[0] is not interned[0]


def test_the_default_reads_small_pools_here_and_large_ones_on_two_cores(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    assert readers.default_readers(readers.SECOND_READER_MIN - 1) == 1
    assert readers.default_readers(readers.SECOND_READER_MIN) == 2
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    assert readers.default_readers(100_000) == 1


def test_a_reader_that_stops_short_has_the_rest_read_here(pool, alone, monkeypatch, caplog):
    # Its files end early (a disk filled, a write cut): whatever is missing is read here, in place.
    complete = readers._blocks

    def short(path):
        blocks = list(complete(path))
        blocks[-1] = blocks[-1][:-1]
        yield from blocks

    monkeypatch.setattr(readers, "_blocks", short)
    with caplog.at_level(logging.WARNING, logger="arena.problems.readers"):
        _same(cluster_problems(pool, readers=2), alone)
    assert "asks: reading its half here" in caplog.text
    assert "requests: reading the rest here" in caplog.text
