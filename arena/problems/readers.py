"""Reading a pool's problems on two cores: a second interpreter reads the second half.

Reading each request (its ask for the text rules, its request for the veto) is four fifths of
clustering 100k problems, each problem read on its own, in pure Python: one core does it all
unless a second process reads too. :class:`PoolReader` starts a reader (``python -m
arena.problems.readers FOLDER``) that splits, asks and reads the second half of the pool, while
this process does the first half; each half's results come back in the pool's order, so the
clustering is the one a single process computes (every reading is a function of its problem
alone).

A fresh interpreter, not a fork: a forked reader shares this process's pages only until either
side writes to one, and both do (every object read has its reference count written, every new
object fills a free slot of an old page), so a fork's copy grew to the whole heap it was forked
from (measured: 473 MiB of proportional set size at 100k, the process tree over the 1 GiB
budget). The reader holds only its modules, its half's splits and a block at a time.

What else keeps the memory down (the budget is 1 GiB at 100k, both processes together):

- The problems go to the reader and the readings come back through files, a block at a time;
  the page cache holds them, not either process.
- A reading's words are interned strings shared by 100k requests. Pickled, each block carries
  each word once, and each word is interned again as it is loaded (:class:`_Loader`), so the
  half read elsewhere holds no copies of words this process already has.
- The asks and the requests are never held at once, as in one process: the asks come back
  first, the requests after this process has dropped its asks.

If the reader cannot start or dies (killed, out of memory), this process reads its half itself:
the clustering is the same, only slower, and the reader's failure is logged.
"""

from __future__ import annotations

import io
import logging
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, BinaryIO

from arena.problems.asks import Ask, Split, read_ask, split_problem
from arena.problems.model import Problem
from arena.problems.twins import Request, read_request

log = logging.getLogger(__name__)

# Below this many problems a second reader costs more than it saves (its interpreter takes about a
# second to start; suites of a few thousand problems are read in seconds).
SECOND_READER_MIN = 4_000
# Problems per pickled block: each block carries each of its words once.
_BLOCK = 4_096
_ASKS_DONE, _REQUESTS_DONE = b"A", b"R"


def default_readers(count: int) -> int:
    """Two readers where this process may run on a second core and the pool is large enough."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return 2 if count >= SECOND_READER_MIN and cores >= 2 else 1


class _Dumper(pickle.Pickler):
    """Pickles a block with every string as a persistent id: written once a block (the pickle memo),
    and handed to :class:`_Loader`, which interns it."""

    def persistent_id(self, obj: Any) -> Any:
        return obj if type(obj) is str else None


class _Loader(pickle.Unpickler):
    def persistent_load(self, pid: Any) -> Any:
        return sys.intern(pid)


def _dump_block(handle: BinaryIO, items: list) -> None:
    buffer = io.BytesIO()
    _Dumper(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(items)
    handle.write(len(buffer.getbuffer()).to_bytes(8, "big"))
    handle.write(buffer.getbuffer())


def _blocks(path: Path) -> Iterator[list]:
    with path.open("rb") as handle:
        while size := handle.read(8):
            yield _Loader(io.BytesIO(handle.read(int.from_bytes(size, "big")))).load()


def _load_blocks(path: Path) -> list:
    return [item for block in _blocks(path) for item in block]


class PoolReader:
    """The asks, then the requests, of ``ordered``, read in ``readers`` processes (1 or 2).

    Use as a context manager: leaving it reaps the reader (and stops it early on an error)."""

    def __init__(self, ordered: Sequence[Problem], readers: int = 1) -> None:
        self.ordered = ordered
        self.cut = len(ordered) if readers < 2 or len(ordered) < 2 else len(ordered) // 2
        self.splits: list[Split | None] = []
        self._reader: subprocess.Popen[bytes] | None = None
        self._signal: BinaryIO | None = None
        self._folder: Path | None = None
        if self.cut < len(ordered):
            self._start()

    # --- this process --------------------------------------------------------------------------

    def asks(self) -> list[Ask]:
        """Every problem's ask, in order (and each problem's split, kept for its request)."""
        self.splits = [split_problem(p) for p in self.ordered[: self.cut]]
        asks = [read_ask(p, self.splits[k]) for k, p in enumerate(self.ordered[: self.cut])]
        theirs = _load_blocks(self._folder / "asks") if self._received(_ASKS_DONE) and self._folder else []
        if len(theirs) == len(self.ordered) - self.cut:
            asks.extend(theirs)
        else:  # no reader, or one that stopped short: its half is read here
            if theirs:
                log.warning(
                    "the second reader wrote %d of %d asks: reading its half here",
                    len(theirs),
                    len(self.ordered) - self.cut,
                )
            self._split_the_rest()
            asks.extend(read_ask(p, self.splits[k]) for k, p in enumerate(self.ordered) if k >= self.cut)
        return asks

    def requests(self, embed: Callable[[list[str]], Any], into: Any) -> list[Request]:
        """Every problem's request, in order, with its text left out once ``embed`` has written the
        text's vector into the row of ``into`` (an array with a row a problem)."""
        requests: list[Request] = []
        self._read_requests(0, self.cut, requests, embed, into)
        if self._received(_REQUESTS_DONE):
            assert self._folder is not None
            at = self.cut
            for block in _blocks(self._folder / "requests"):  # a block at a time: texts are dropped as read
                into[at : at + len(block)] = embed([r.text for r in block])
                # The rewards stayed here: a reading refers to its problem's own, never a copy.
                requests.extend(replace(r, text="", rewards=self.ordered[at + k].rewards) for k, r in enumerate(block))
                at += len(block)
            if at < len(self.ordered):  # a reader that stopped short: the rest is read here
                log.warning(
                    "the second reader wrote %d of %d requests: reading the rest here",
                    at - self.cut,
                    len(self.ordered) - self.cut,
                )
                self._split_the_rest()
                self._read_requests(at, len(self.ordered), requests, embed, into)
        else:
            self._split_the_rest()
            self._read_requests(self.cut, len(self.ordered), requests, embed, into)
        self.splits = []
        return requests

    def _read_requests(
        self, start: int, end: int, requests: list[Request], embed: Callable[[list[str]], Any], into: Any
    ) -> None:
        for at in range(start, end, _BLOCK):
            stop = min(at + _BLOCK, end)
            block = [read_request(self.ordered[k], self.splits[k]) for k in range(at, stop)]
            self.splits[at:stop] = [None] * len(block)  # a split is dropped once its request is read
            into[at:stop] = embed([r.text for r in block])
            requests.extend(replace(r, text="") for r in block)

    def _split_the_rest(self) -> None:
        """The reader failed: its half is split here, for its asks and requests."""
        if len(self.splits) < len(self.ordered):
            self.splits.extend(split_problem(p) for p in self.ordered[len(self.splits) :])

    def _received(self, expected: bytes) -> bool:
        if self._reader is None or self._signal is None:
            return False
        if self._signal.read(1) == expected:
            return True
        # The reader died (its pipe closed without the signal): its half is read here.
        self._reader.kill()
        status = self._reader.wait()
        log.warning("the second reader stopped (exit status %s): reading its half in this process", status)
        self._close()
        return False

    # --- the reader ----------------------------------------------------------------------------

    def _start(self) -> None:
        try:
            self._folder = Path(tempfile.mkdtemp(prefix="arena-readers-"))
            theirs = self.ordered[self.cut :]
            with (self._folder / "problems").open("wb") as handle:
                for at in range(0, len(theirs), _BLOCK):
                    pickle.dump(list(theirs[at : at + _BLOCK]), handle, protocol=pickle.HIGHEST_PROTOCOL)
        except (OSError, pickle.PicklingError, TypeError) as error:  # no room, or a problem that will not pickle
            log.warning("could not start a second reader (%s): reading in one process", error)
            self._close()
            return
        # The reader imports this package as this process does, wherever it was found.
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        # Its signals come on a pipe of their own: whatever a library prints goes to its stdout.
        signal_read, signal_write = os.pipe()
        try:
            self._reader = subprocess.Popen(
                [sys.executable, "-m", __name__, str(self._folder), str(signal_write)],
                pass_fds=(signal_write,),
                env=env,
            )
        except OSError as error:
            os.close(signal_read)
            log.warning("could not start a second reader (%s): reading in one process", error)
            self._close()
        else:
            self._signal = os.fdopen(signal_read, "rb", buffering=0)
        finally:
            os.close(signal_write)

    # --- leaving -------------------------------------------------------------------------------

    def __enter__(self) -> PoolReader:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._reader is not None:
            if exc[0] is not None:
                self._reader.kill()
            self._reader.wait()
        self._close()

    def _close(self) -> None:
        self._reader = None
        if self._signal is not None:
            self._signal.close()
            self._signal = None
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None


def _problems(path: Path) -> Iterator[list[Problem]]:
    with path.open("rb") as handle:
        while True:
            try:
                yield pickle.load(handle)
            except EOFError:
                return


def read_theirs(folder: Path, signal: BinaryIO) -> None:
    """The reader: the asks of the problems in ``folder``, then their requests (each problem split
    once, its split kept between the two), written there block by block; each pass signalled."""
    splits: list[Split | None] = []
    with (folder / "asks").open("wb") as handle:
        for block in _problems(folder / "problems"):
            split = [split_problem(p) for p in block]
            _dump_block(handle, [read_ask(p, split[k]) for k, p in enumerate(block)])
            splits.extend(split)
    signal.write(_ASKS_DONE)
    signal.flush()
    at = 0
    with (folder / "requests").open("wb") as handle:
        for block in _problems(folder / "problems"):
            read = [read_request(p, splits[at + k]) for k, p in enumerate(block)]
            splits[at : at + len(block)] = [None] * len(block)
            _dump_block(handle, [replace(r, rewards=()) for r in read])
            at += len(block)
    signal.write(_REQUESTS_DONE)
    signal.flush()


if __name__ == "__main__":
    with os.fdopen(int(sys.argv[2]), "wb", buffering=0) as _signal:
        read_theirs(Path(sys.argv[1]), _signal)
