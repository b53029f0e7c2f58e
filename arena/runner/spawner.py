"""The sandbox's first process, forked by a small helper process instead of the runner.

Three steps must run between fork and exec of bubblewrap: joining the episode's
cgroups (before bubblewrap makes the cgroup namespace, so that is rooted there),
mounting the private /tmp in a mount namespace of its own, and the rlimits. A
preexec function rules out vfork, so the runner forked itself, and a fork copies
the page tables of the whole validator (catalog, indexes, models): on the
benchmark's runner that alone was 20-35 ms of every episode's start
(benchmarks/episode.py), against 0.1 ms for a vfork. So a runner process starts
one helper, this file run as a script (standard library only, a few MB), that
receives each launch's argv, environment and descriptors over a socket, forks
(cheap from a small process), takes the same steps in the child (:func:`apply_steps`,
the one implementation of them) and executes bubblewrap. It reports the pid and,
when the process ends, its exit status and resource usage, which only its parent
can collect (``wait4``).

The helper dies with its runner (EOF on its socket, and PR_SET_PDEATHSIG), and
every sandbox with the helper (bubblewrap's ``--die-with-parent``).
"""

from __future__ import annotations

import ctypes
import fcntl
import itertools
import json
import os
import resource
import select
import signal
import socket
import subprocess
import sys
import threading
from typing import Any

_CLONE_NEWNS = 0x00020000
_MS_NOSUID, _MS_NODEV, _MS_REC, _MS_PRIVATE = 0x2, 0x4, 0x4000, 0x40000
_PR_SET_PDEATHSIG = 1
_MESSAGE_BYTES = 1 << 18
_REPLY_TIMEOUT_S = 60.0
_RESET_SIGNALS = (signal.SIGCHLD, signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT)
_libc = ctypes.CDLL(None, use_errno=True)

# What runs between fork and exec, as plain data (it crosses the socket as JSON):
#   {"cgroups": [cgroup.procs path, ...], "tmp": [mount point, tmpfs options] | None,
#    "rlimits": [[resource, soft, hard], ...]}
StartSteps = dict[str, Any]


class SpawnHelperDied(RuntimeError):
    """The helper process is gone: the processes it started died with it (a validator failure)."""


def join_cgroup(procs: bytes | str) -> None:
    """Move the calling process into the cgroup whose ``cgroup.procs`` path is ``procs``:
    run between fork and exec, so only os calls, no allocation-heavy Python."""
    fd = os.open(procs, os.O_WRONLY)
    try:
        os.write(fd, b"0\n")
    finally:
        os.close(fd)


def apply_steps(steps: StartSteps) -> None:
    """In the sandbox's first process, before it executes bubblewrap: the cgroups first (the
    tmpfs's pages are then charged to the episode's memory cgroup), the /tmp mount, the rlimits.
    Every process of the episode inherits all three."""
    for procs in steps.get("cgroups") or ():
        join_cgroup(procs)
    tmp = steps.get("tmp")
    if tmp:
        target, options = (part.encode() for part in tmp)
        # A mount namespace of bubblewrap's own: the tmpfs is invisible to the host's
        # mount table and is freed when the sandbox's last process exits.
        _check(_libc.unshare(_CLONE_NEWNS), "unshare(CLONE_NEWNS)")
        _check(_libc.mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None), "making / private")
        _check(_libc.mount(b"tmpfs", target, b"tmpfs", _MS_NOSUID | _MS_NODEV, options), "mount tmpfs")
    for kind, soft, hard in steps.get("rlimits") or ():
        resource.setrlimit(kind, (soft, hard))


def _check(result: int, what: str) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")


class Exited:
    """How a spawned process ended (``wait4``'s figures)."""

    def __init__(self, status: int, utime: float, stime: float, maxrss: int) -> None:
        self.status, self.ru_utime, self.ru_stime, self.ru_maxrss = status, utime, stime, maxrss


class Spawner:
    """The runner's side: one helper per runner process, shared by its episodes (thread-safe)."""

    _shared: Spawner | None = None
    _shared_lock = threading.Lock()

    @classmethod
    def shared(cls) -> Spawner:
        """This process's helper, started on first use (and again if it died, or after a fork)."""
        with cls._shared_lock:
            current = cls._shared
            if current is None or current.owner != os.getpid() or current.dead:
                current = cls._shared = cls()
            return current

    def __init__(self) -> None:
        self.owner = os.getpid()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            # -I -S: the helper imports nothing of the project or the venv, and stays small.
            self.process = subprocess.Popen(
                [sys.executable, "-I", "-S", "-B", os.path.abspath(__file__), str(theirs.fileno())],
                stdin=subprocess.DEVNULL,
                pass_fds=(theirs.fileno(),),
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self._socket = ours
        self._send_lock = threading.Lock()
        self._changed = threading.Condition()
        self._replies: dict[int, dict[str, Any]] = {}
        self._exits: dict[int, Exited] = {}
        self._ids = itertools.count(1)
        self.dead = False
        threading.Thread(target=self._read, name="spawner-replies", daemon=True).start()

    def spawn(
        self,
        argv: list[str],
        *,
        env: dict[str, str] | None,
        cwd: str | None,
        stdout: int,
        stderr: int,
        pass_fds: tuple[int, ...],
        steps: StartSteps,
        standby: int | None = None,
    ) -> int:
        """Starts the process (its own session, stdin /dev/null, ``pass_fds`` under their
        numbers here); returns its pid once it executed ``argv``, or raises what stopped it.
        ``standby``: a :meth:`prepare`'d process already in ``steps``' cgroups, to start it as."""
        request_id = next(self._ids)
        request = {"id": request_id, "argv": argv, "env": env,
                   "cwd": cwd, "fds": [1, 2, *pass_fds], "steps": steps, "standby": standby}  # fmt: skip
        with self._send_lock:
            try:
                socket.send_fds(self._socket, [json.dumps(request).encode()], [stdout, stderr, *pass_fds])
            except OSError as exc:
                raise SpawnHelperDied(f"the spawn helper is gone: {exc}") from None
        with self._changed:
            if not self._changed.wait_for(lambda: request_id in self._replies or self.dead, _REPLY_TIMEOUT_S):
                raise SpawnHelperDied("the spawn helper did not answer")
            reply = self._replies.pop(request_id, None)
        if reply is None:
            raise SpawnHelperDied("the spawn helper died during a start")
        if "error" in reply:
            code, message = reply["error"]
            raise OSError(code, message)
        return int(reply["pid"])

    def prepare(self, cgroups: list[str]) -> int:
        """A process made now and moved into these cgroups (``cgroup.procs`` paths), for a
        later :meth:`spawn` to start as: the move is then off that start. Returns its id."""
        key = next(self._ids)
        self._send({"prepare": key, "cgroups": cgroups})
        return key

    def discard(self, standby: int) -> None:
        """A :meth:`prepare`'d process no launch will use: it exits."""
        try:
            self._send({"discard": standby})
        except SpawnHelperDied:
            pass  # gone with the helper

    def _send(self, message: dict[str, Any]) -> None:
        with self._send_lock:
            try:
                self._socket.send(json.dumps(message).encode())
            except OSError as exc:
                raise SpawnHelperDied(f"the spawn helper is gone: {exc}") from None

    def wait(self, pid: int) -> Exited:
        """Blocks until the process ``pid`` (spawned here) has ended."""
        with self._changed:
            self._changed.wait_for(lambda: pid in self._exits or self.dead)
            exited = self._exits.pop(pid, None)
        if exited is None:
            raise SpawnHelperDied(f"the spawn helper died before process {pid} ended")
        return exited

    def _read(self) -> None:
        try:
            while message := self._socket.recv(_MESSAGE_BYTES):
                reply = json.loads(message)
                with self._changed:
                    if "exit" in reply:
                        self._exits[reply["exit"]] = Exited(reply["status"], reply["utime"], reply["stime"], reply["maxrss"])  # fmt: skip
                    else:
                        self._replies[reply["id"]] = reply
                    self._changed.notify_all()
        except OSError:
            pass
        with self._changed:
            self.dead = True
            self._changed.notify_all()
        self._socket.close()
        self.process.wait()

    def close(self) -> None:
        """Ends the helper (tests): its socket's EOF makes it exit."""
        try:
            self._socket.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass  # closed already: the helper is gone


# The helper's side: runs in its own small process (``python -I -S spawner.py FD``).


class _Helper:
    def __init__(self, control: socket.socket) -> None:
        self.control = control
        self.launched: set[int] = set()  # the processes whose end the runner waits for
        self.standbys: dict[int, tuple[int, socket.socket]] = {}  # id -> (pid, its socket)

    def serve(self) -> None:
        _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # the runner died: so does the helper
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's Ctrl-C is the runner's to handle
        wake_read, wake_write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        signal.set_wakeup_fd(wake_write)
        signal.signal(signal.SIGCHLD, lambda *_: None)  # wakes the select below through the pipe
        if os.getppid() == 1:
            return  # the runner was gone before the death signal was set
        while True:
            ready, _, _ = select.select([self.control.fileno(), wake_read], [], [])
            if wake_read in ready:
                while True:
                    try:
                        os.read(wake_read, 4096)
                    except BlockingIOError:
                        break
                self.reap()
            if self.control.fileno() in ready:
                message, fds, _, _ = socket.recv_fds(self.control, _MESSAGE_BYTES, 64)
                if not message:
                    return  # the runner closed its end (or exited)
                request = json.loads(message)
                if "prepare" in request:
                    self.prepare(request["prepare"], request["cgroups"])
                elif "discard" in request:
                    self.discard(request["discard"])
                else:
                    self.control.send(json.dumps(self.spawn(request, fds)).encode())

    def reap(self) -> None:
        while True:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            for key, (standby, _) in list(self.standbys.items()):
                if standby == pid:
                    self.standbys.pop(key)[1].close()  # died waiting: its launch falls back
            if pid in self.launched:
                self.launched.discard(pid)
                exited = {"exit": pid, "status": status, "utime": usage.ru_utime, "stime": usage.ru_stime,
                          "maxrss": usage.ru_maxrss}  # fmt: skip
                self.control.send(json.dumps(exited).encode())

    def prepare(self, key: int, cgroups: list[str]) -> None:
        """A process for a coming launch, moved into its cgroups now. Moving a process between
        cgroups waits for an RCU grace period (the kernel's cgroup_threadgroup_rwsem), several
        milliseconds, 15 on a loaded host: done here, it is off the episode's start."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        pid = os.fork()
        if pid == 0:
            try:
                _standby(theirs, cgroups)
            finally:
                os._exit(127)
        theirs.close()
        self.standbys[key] = (pid, ours)

    def discard(self, key: int) -> None:
        held = self.standbys.pop(key, None)
        if held is not None:
            held[1].close()  # EOF: it exits (and is reaped without a report)

    def spawn(self, request: dict[str, Any], fds: list[int]) -> dict[str, Any]:
        held = self.standbys.pop(request.get("standby") or 0, None)
        if held is not None:
            reply = self._hand_over(held, request, fds)
            if reply is not None:
                return reply
        errors_read, errors_write = os.pipe2(os.O_CLOEXEC)  # closed by the exec: EOF means it ran
        try:
            pid = os.fork()
            if pid == 0:
                try:
                    _child(request, fds, errors_write)
                except BaseException as exc:  # noqa: BLE001 - reported to the runner, whatever it is
                    _report(errors_write, exc)
                os._exit(127)
        finally:
            os.close(errors_write)
            for fd in fds:
                os.close(fd)
        return self._outcome(request["id"], pid, errors_read)

    def _hand_over(
        self, held: tuple[int, socket.socket], request: dict[str, Any], fds: list[int]
    ) -> dict[str, Any] | None:
        """The launch given to the process prepared for it; None when it cannot take it (its
        cgroups failed it, or it died): the launch then forks as usual."""
        pid, channel = held
        errors_read, errors_write = os.pipe2(os.O_CLOEXEC)
        with channel:
            try:
                joined = json.loads(channel.recv(4096) or b"{}")  # waits if it is still moving
                if joined.get("joined"):
                    socket.send_fds(channel, [json.dumps(request).encode()], [*fds, errors_write])
                    handed = True
                else:
                    handed = False
            except OSError:
                handed = False
            finally:
                os.close(errors_write)
        if not handed:
            os.close(errors_read)
            return None
        for fd in fds:
            os.close(fd)
        return self._outcome(request["id"], pid, errors_read)

    def _outcome(self, request_id: int, pid: int, errors_read: int) -> dict[str, Any]:
        with open(errors_read, "rb") as errors:
            failure = errors.read()
        if failure:
            os.waitpid(pid, 0)  # it never ran: reaped here, no exit report
            code, message = json.loads(failure)
            return {"id": request_id, "error": [code, message]}
        self.launched.add(pid)
        return {"id": request_id, "pid": pid}


def _report(errors_write: int, exc: BaseException) -> None:
    os.write(errors_write, json.dumps([getattr(exc, "errno", None) or 0, str(exc)]).encode())


def _standby(channel: socket.socket, cgroups: list[str]) -> None:
    """A prepared process: joins its cgroups, says so, then waits for its launch (or EOF)."""
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    _reset_signals()
    _close_all_but({channel.fileno()})  # the helper's control socket above all: its EOF must reach the runner
    try:
        for procs in cgroups:
            join_cgroup(procs)
        channel.send(b'{"joined": true}')
    except OSError:
        channel.send(b'{"joined": false}')
        return
    message, fds, _, _ = socket.recv_fds(channel, _MESSAGE_BYTES, 64)
    if not message:
        return
    request, errors_write = json.loads(message), fds.pop()
    os.set_inheritable(errors_write, False)  # received inheritable: the exec must close it (EOF: it ran)
    request["steps"] = {**request["steps"], "cgroups": []}  # joined already
    try:
        _child(request, fds, errors_write)
    except BaseException as exc:  # noqa: BLE001 - reported to the runner, whatever it is
        _report(errors_write, exc)


def _reset_signals() -> None:
    signal.set_wakeup_fd(-1)
    for number in _RESET_SIGNALS:
        signal.signal(number, signal.SIG_DFL)


def _close_all_but(keep: set[int]) -> None:
    for name in os.listdir("/proc/self/fd"):
        if int(name) not in keep:
            try:
                os.close(int(name))
            except OSError:
                pass  # the listing's own descriptor, already closed


def _child(request: dict[str, Any], fds: list[int], errors_write: int) -> None:
    """After the fork: what subprocess does for a child, then the steps, then the exec."""
    _reset_signals()
    os.setsid()  # one process group (and session) for the runner to kill
    targets: list[int] = request["fds"]
    # Each descriptor under the runner's number for it (the argv and the environment name those):
    # first all above every number in play, then down to their places.
    floor = max([*targets, *fds, errors_write]) + 1
    high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, floor) for fd in fds]
    for copy, target in zip(high, targets, strict=True):
        os.dup2(copy, target)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    _close_all_but({0, *targets, errors_write})
    if request["cwd"]:
        os.chdir(request["cwd"])
    apply_steps(request["steps"])
    argv, env = request["argv"], request["env"]
    # None: the helper's own environment, the runner's when it started it (bubblewrap clears it anyway).
    os.execvpe(argv[0], argv, os.environ if env is None else env)


if __name__ == "__main__":
    _Helper(socket.socket(fileno=int(sys.argv[1]))).serve()
