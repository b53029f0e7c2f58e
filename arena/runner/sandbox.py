"""The bubblewrap sandbox an agent runs in.

What the agent sees: a read-only root made of the system libraries, the
Python interpreter and its standard library at ``/opt/python``, the allowed
packages at ``/opt/site`` and the SDK at ``/opt/sdk`` (read-only, never their
parent folders: one folder prepared under the runtime, :func:`sandbox_root`, with
the standard library bound into it), its own file on a private tmpfs at
``/agent``, a private ``/tmp``, and one Unix socket at ``/run/arena.sock``.
All namespaces are unshared (no network at all), the environment is cleared.

The validator usually runs as root, and neither a process limit nor dropped
capabilities bind uid 0. So, as root, bubblewrap starts the agent through
``setpriv`` as an unprivileged uid of its own (leased host-wide for the
episode, see arena/runner/uids.py, so episodes do not share a process count) with every capability and the
bounding set dropped and no_new_privs set. Run as a normal user, bubblewrap's
user namespace does the same job.

On both paths a seccomp filter (arena/runner/syscall_filter.py) refuses new
namespaces, mounts, ptrace and the rest of the kernel's riskier calls; the
private ``/tmp`` is the only writable place and it is bounded in bytes and,
as root, in inodes (a tmpfs the runner mounts in a mount namespace of the
sandbox's own, so it dies with the sandbox); host-wide /proc files that would
let one episode watch another (memory, load, pressure) are masked.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import resource
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import dataclass
from pathlib import Path

from arena.runner.accounting import EpisodeCgroup
from arena.runner.memory_cgroup import EpisodeMemoryCgroup
from arena.runner.record import EpisodeLimits
from arena.runner.spawner import StartSteps

SANDBOX_SOCKET = "/run/arena.sock"
SANDBOX_AGENT = "/agent/agent.py"
STATUS_FD_ENV = "ARENA_STATUS_FD"
# Host-wide figures another episode moves: masked by empty (or synthetic) files.
# (slabinfo and pagetypeinfo are root's only: the agent cannot read them anyway.)
MASKED_PROC_FILES = ("meminfo", "vmstat", "zoneinfo", "buddyinfo", "swaps", "loadavg",
                     "pressure/cpu", "pressure/io", "pressure/memory", "pressure/irq")  # fmt: skip
INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) or pass --unsafe-no-sandbox for local development only"


class SandboxUnavailable(RuntimeError):
    pass


@dataclass(frozen=True)
class PythonLayout:
    """Where the host interpreter's pieces are, to bind them at /opt/python."""

    executable: Path
    stdlib: Path
    libpython: Path | None
    version: str  # "3.11"

    @classmethod
    def detect(cls) -> PythonLayout:
        executable = Path(os.path.realpath(sys.executable))
        stdlib = Path(sysconfig.get_paths()["stdlib"])
        version = f"{sys.version_info.major}.{sys.version_info.minor}"
        libdir = sysconfig.get_config_var("LIBDIR")
        ldlibrary = sysconfig.get_config_var("LDLIBRARY") or ""
        libpython = None
        if libdir and (ldlibrary.endswith(".so") or ".so." in ldlibrary):
            for candidate in sorted(Path(libdir).glob(f"libpython{version}*.so*")):
                libpython = Path(os.path.realpath(candidate))
                break
        return cls(executable=executable, stdlib=stdlib, libpython=libpython, version=version)


def bubblewrap_path() -> str | None:
    return shutil.which("bwrap")


def require_bubblewrap() -> str:
    path = bubblewrap_path()
    if path is None:
        raise SandboxUnavailable(
            f"bubblewrap (bwrap) is not installed: refusing to run untrusted agent code; {INSTALL_HINT}"
        )
    return path


def bubblewrap_command(
    *,
    runtime: Path,
    agent_dir: Path,
    socket_path: Path,
    uid: int,
    python: PythonLayout | None = None,
    limits: EpisodeLimits | None = None,
    seccomp_fd: int | None = None,
    status_fd: int | None = None,
    private_tmp: Path | None = None,
    proc_masks: Path | None = None,
    only_linked_libraries: bool = False,
) -> list[str]:
    """The full argv: bwrap, its mounts, then (as root) setpriv, then python.

    ``private_tmp`` is a tmpfs the runner mounted (as root, with an inode bound) to
    bind as /tmp; without it bubblewrap makes the tmpfs, bounded in bytes by
    ``limits.tmp_bytes``. ``seccomp_fd`` holds the compiled filter; ``status_fd`` is
    the channel boot reports its start and end on; ``proc_masks`` the folder of
    :func:`write_proc_masks`; ``only_linked_libraries`` binds the libraries of
    :func:`shared_libraries` instead of all of /usr/lib."""
    bwrap = require_bubblewrap()
    python = python or PythonLayout.detect()
    as_root = os.geteuid() == 0
    py = f"/opt/python/lib/python{python.version}"
    argv = [bwrap, "--unshare-net", "--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try"]
    if not as_root:
        # --disable-userns: no user namespace can be made inside this one (the filter refuses it too).
        argv += ["--unshare-user", "--disable-userns", "--cap-drop", "ALL"]
    argv += ["--die-with-parent", "--new-session", "--hostname", "sandbox"]
    root = sandbox_root(python, runtime, as_root) if only_linked_libraries else None
    if root is not None:
        # One bind for the root, the libraries, the interpreter, setpriv, the packages and the SDK
        # (sandbox_root); the standard library and the mounts below are bound on top of it.
        argv += ["--ro-bind", str(root), "/", "--ro-bind", str(python.stdlib), py]
    else:
        argv += _separate_binds(python, runtime, py, as_root)
    # The interpreter's own site-packages (and a venv's) must stay out of sight.
    for packages in ("site-packages", "dist-packages"):
        if (python.stdlib / packages).is_dir():
            argv += ["--perms", "0755", "--tmpfs", f"{py}/{packages}", "--remount-ro", f"{py}/{packages}"]
    argv += ["--ro-bind", str(agent_dir), "/agent"]
    argv += ["--bind", str(socket_path), SANDBOX_SOCKET]
    argv += ["--proc", "/proc", "--dev", "/dev"]
    if proc_masks is not None:
        for name in MASKED_PROC_FILES:
            if (proc_masks / name).is_file() and Path("/proc", name).exists():
                argv += ["--ro-bind", str(proc_masks / name), f"/proc/{name}"]
    if private_tmp is not None:
        argv += ["--bind", str(private_tmp), "/tmp"]
    else:
        if limits is not None:
            argv += ["--size", str(limits.tmp_bytes)]
        argv += ["--perms", "1777", "--tmpfs", "/tmp"]
    # Read-only from here: the root and /dev are tmpfs mounts too, writable (and
    # unbounded) to the agent on the user-namespace path, where it owns them.
    argv += ["--remount-ro", "/dev", "--remount-ro", "/"]
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]
    argv += ["--clearenv"]
    for key, value in sandbox_environment(SANDBOX_SOCKET, status_fd).items():
        argv += ["--setenv", key, value]
    argv += ["--chdir", "/tmp", "--"]  # the options end here (see arguments_by_descriptor)
    if as_root:
        # The command bubblewrap runs: setpriv, which drops to the agent's uid, then python.
        argv += [
            "/opt/python/bin/setpriv",
            "--reuid",
            str(uid),
            "--regid",
            str(uid),
            "--clear-groups",
            "--inh-caps=-all",
            "--bounding-set=-all",
        ]
        argv += ["--no-new-privs", "--"]
    argv += ["/opt/python/bin/python3", "-I", "-S", "-B", "/opt/sdk/boot.py", SANDBOX_AGENT]
    return argv


def _setpriv() -> str:
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        raise SandboxUnavailable("setpriv (util-linux) is needed to drop root inside the sandbox")
    return setpriv


def _separate_binds(python: PythonLayout, runtime: Path, py: str, as_root: bool) -> list[str]:
    """The root assembled bind by bind (when the libraries cannot be narrowed: benchmarks'
    defences off, a host without ldd): all of /usr/lib, the interpreter, setpriv, the packages."""
    # System libraries only; /etc, /home, /root, /var, /srv, /mnt stay invisible.
    # Folders bubblewrap creates on its own are 0700: the agent's uid could not traverse them.
    argv = ["--perms", "0755", "--dir", "/usr", "--ro-bind", "/usr/lib", "/usr/lib", "--symlink", "usr/lib", "/lib"]
    if Path("/usr/lib64").is_dir():
        argv += ["--ro-bind", "/usr/lib64", "/usr/lib64", "--symlink", "usr/lib64", "/lib64"]
    elif Path("/lib64").is_dir():
        argv += ["--ro-bind", "/lib64", "/lib64"]
    for folder in ("/opt", "/opt/python", "/opt/python/bin", "/opt/python/lib", "/run", "/agent"):
        argv += ["--perms", "0755", "--dir", folder]
    argv += ["--ro-bind", str(python.executable), "/opt/python/bin/python3"]
    if python.libpython is not None:
        argv += ["--ro-bind", str(python.libpython), f"/opt/python/lib/{python.libpython.name}"]
        soname = f"libpython{python.version}.so.1.0"
        if python.libpython.name != soname:
            argv += ["--symlink", python.libpython.name, f"/opt/python/lib/{soname}"]
    argv += ["--ro-bind", str(python.stdlib), py]
    if as_root:
        argv += ["--ro-bind", _setpriv(), "/opt/python/bin/setpriv"]
    argv += ["--ro-bind", str(runtime / "site"), "/opt/site", "--ro-bind", str(runtime / "sdk"), "/opt/sdk"]
    return argv


# The sandbox's mount points in sandbox_root: bubblewrap mounts on them, the root being read-only.
_MOUNT_POINTS = ("agent", "dev", "proc", "run", "tmp", "opt/python/bin", "opt/python/lib")


def sandbox_root(python: PythonLayout, runtime: Path, as_root: bool) -> Path | None:
    """The sandbox's whole read-only root as one folder under the runtime, bound at ``/``:
    /usr/lib (and lib64) with only :func:`shared_libraries`, /lib symlinks, the interpreter,
    libpython and (as root) setpriv at /opt/python, the packages at /opt/site, the SDK at
    /opt/sdk, and the empty mount points of the rest (the standard library, /agent, the
    socket, /proc, /dev, /tmp). Each bind costs bubblewrap a mount, a remount and a read of
    the mount table: one instead of a dozen is milliseconds of every start
    (benchmarks/episode.py). Files are hard links where the file system allows (copies
    where not), named by what they are linked from, built aside and renamed into place.
    None where the libraries cannot be narrowed (then everything is bound one by one)."""
    libraries = linked_library_tree(python, runtime)
    if libraries is None:
        return None
    pieces = {"usr": libraries, "opt/python/bin/python3": python.executable}
    if python.libpython is not None:
        pieces[f"opt/python/lib/{python.libpython.name}"] = python.libpython
    if as_root:
        pieces["opt/python/bin/setpriv"] = Path(_setpriv())
    digest = hashlib.sha256(f"{python.version}\0{as_root}\0{libraries.name}\n".encode())
    for dest, source in sorted(pieces.items()):
        stat = os.stat(source)
        digest.update(f"{dest}\0{source}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    target = runtime / f"sandbox-root-{digest.hexdigest()[:16]}"
    if target.is_dir():
        return target
    staging = Path(tempfile.mkdtemp(prefix=".building-root-", dir=runtime))
    try:
        staging.chmod(0o755)
        for folder in _MOUNT_POINTS:
            (staging / folder).mkdir(mode=0o755, parents=True, exist_ok=True)
        (staging / "run" / "arena.sock").touch(mode=0o644)
        (staging / py_folder(python)).mkdir(mode=0o755)
        _link_tree(libraries, staging / "usr")
        for name in ("lib", "lib64"):
            if (staging / "usr" / name).is_dir():
                (staging / name).symlink_to(f"usr/{name}")
        for dest, source in pieces.items():
            if dest != "usr":
                _link(source, staging / dest)
        if python.libpython is not None and python.libpython.name != f"libpython{python.version}.so.1.0":
            (staging / "opt/python/lib" / f"libpython{python.version}.so.1.0").symlink_to(python.libpython.name)
        _link_tree(runtime / "site", staging / "opt" / "site")
        _link_tree(runtime / "sdk", staging / "opt" / "sdk")
        for path in [staging, *staging.rglob("*")]:
            if path.is_dir() and not path.is_symlink():
                path.chmod(0o755)  # mkdir's mode is masked by the umask; the agent's uid must traverse
        _publish(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


def _publish(staging: Path, target: Path) -> None:
    """Rename a folder built aside into place; a runner that built the same one first wins (same content)."""
    try:
        staging.rename(target)
    except OSError:
        if not target.is_dir():
            raise
        shutil.rmtree(staging, ignore_errors=True)


def py_folder(python: PythonLayout) -> str:
    return f"opt/python/lib/python{python.version}"


def _link(source: Path, dest: Path) -> None:
    """A hard link (the runtime and the sources usually share a file system), else a copy."""
    dest.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
    try:
        os.link(os.path.realpath(source), dest)
    except OSError:
        shutil.copy2(source, dest)


def _link_tree(source: Path, dest: Path) -> None:
    for path in sorted(source.rglob("*")):
        relative = dest / path.relative_to(source)
        if path.is_symlink():
            relative.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
            relative.symlink_to(os.readlink(path))
        elif path.is_dir():
            relative.mkdir(mode=0o755, parents=True, exist_ok=True)
        else:
            _link(path, relative)


_LDD_LINE = re.compile(r"^\s*(?:(\S+) => )?(/\S+) \(0x[0-9a-f]+\)$")
# Loaded with dlopen by the C library itself (thread cancellation, unwinding), so ldd never lists it.
_DLOPENED = ("libgcc_s.so.1",)
# Extension modules for terminals and windows: no agent has either, and they pull in X11 and Tk.
_INTERACTIVE = ("_tkinter", "_curses", "readline")


@functools.cache
def shared_libraries(python: PythonLayout, runtime: Path) -> dict[str, str] | None:
    """Sandbox path -> host file of every shared library the interpreter, its
    extension modules and the runtime's packages link (ldd's closure), bound at
    the loader's default folders under /usr. None when ldd is missing or a
    library lives outside /usr and /lib* (then /usr/lib is bound whole).
    Computed once per runner process: about a hundred ldd runs."""
    ldd = shutil.which("ldd")
    if ldd is None:
        return None
    own = {python.executable.parent.parent, runtime}
    modules = [m for m in Path(python.stdlib, "lib-dynload").glob("*.so") if not m.name.startswith(_INTERACTIVE)]
    setpriv = shutil.which("setpriv")  # the root path's first command
    objects = [python.executable, *([Path(setpriv)] if setpriv else []), *sorted(modules)]
    objects += sorted(Path(runtime, "site").rglob("*.so"))
    found: dict[str, str] = {}
    for start in range(0, len(objects), 64):
        batch = [str(o) for o in objects[start : start + 64]]
        done = subprocess.run([ldd, *batch], capture_output=True, text=True, check=False, timeout=60)
        for line in done.stdout.splitlines():
            match = _LDD_LINE.match(line)
            if match is None:
                continue
            name, path = match.group(1), Path(match.group(2))
            real = Path(os.path.realpath(path))
            if any(real.is_relative_to(folder) for folder in own):
                continue  # libpython and the packages' own libraries are bound with them
            folder = Path(os.path.realpath(path.parent))
            if not folder.is_relative_to("/usr"):
                return None
            found[str(folder / (name or path.name))] = str(real)
    if not found:
        return None
    libc_folder = next((Path(d).parent for d in found if Path(d).name == "libc.so.6"), None)
    for name in _DLOPENED:
        if libc_folder is not None and (libc_folder / name).exists():
            found[str(libc_folder / name)] = os.path.realpath(libc_folder / name)
    return found


def linked_library_tree(python: PythonLayout, runtime: Path) -> Path | None:
    """A folder mirroring /usr with only :func:`shared_libraries` in it, under the
    runtime: two binds instead of one per library (each costs the sandbox's start).
    Named by the libraries' paths, sizes and times, so an upgraded system library
    gives a new tree at the next episode; built aside and renamed into place.
    Checked per episode (a few stats): a rebuilt runtime folder has none yet."""
    libraries = shared_libraries(python, runtime)
    if libraries is None:
        return None
    digest = hashlib.sha256()
    for dest, source in sorted(libraries.items()):
        stat = os.stat(source)
        digest.update(f"{dest}\0{source}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    target = runtime / f"system-libs-{digest.hexdigest()[:16]}"
    if target.is_dir():
        return target
    staging = Path(tempfile.mkdtemp(prefix=".building-libs-", dir=runtime))
    try:
        for dest, source in libraries.items():
            copy = staging / Path(dest).relative_to("/usr")
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy)
        for path in [staging, *staging.rglob("*")]:
            path.chmod(0o755)  # world-readable (and the loader wants libraries executable)
        _publish(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


def arguments_by_descriptor(argv: list[str]) -> tuple[list[str], int]:
    """``bwrap --args FD``: bubblewrap reads its options from a descriptor, so the
    sandbox's pid 1 (bubblewrap) shows no host paths in /proc/1/cmdline, only the
    command, whose paths are the sandbox's own."""
    end = argv.index("--")
    fd = os.memfd_create("arena-bwrap-args", os.MFD_CLOEXEC)
    os.write(fd, b"".join(arg.encode() + b"\0" for arg in argv[1:end]))
    os.lseek(fd, 0, os.SEEK_SET)
    return [argv[0], "--args", str(fd), *argv[end:]], fd


def write_proc_masks(folder: Path, limits: EpisodeLimits) -> Path:
    """Files bound over host-wide /proc entries: empty ones, and a meminfo that
    shows the episode's own memory bound instead of the host's (and no Shmem)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pressure").mkdir(exist_ok=True)
    for name in MASKED_PROC_FILES:
        (folder / name).write_text("")
    kib = limits.memory_bytes // 1024
    (folder / "meminfo").write_text(
        f"MemTotal:       {kib} kB\nMemFree:        {kib} kB\nMemAvailable:   {kib} kB\n"
        "Buffers:               0 kB\nCached:                0 kB\nShmem:                 0 kB\n"
        "SwapTotal:             0 kB\nSwapFree:              0 kB\n"
    )
    (folder / "loadavg").write_text("0.00 0.00 0.00 1/1 1\n")
    for path in [folder, folder / "pressure", *folder.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o444)
    return folder


def shared_proc_masks(runtime: Path, limits: EpisodeLimits) -> Path:
    """The masks for this memory bound, written once under the runtime and reused by
    every episode (writing them per episode cost more than the binds themselves)."""
    target = runtime / f"proc-masks-{limits.memory_bytes}"
    if not (target / "meminfo").is_file():
        staging = Path(tempfile.mkdtemp(prefix=".building-masks-", dir=runtime))
        write_proc_masks(staging, limits)
        try:
            staging.rename(target)
        except OSError:
            shutil.rmtree(staging, ignore_errors=True)  # another runner wrote it first
    return target


def unsafe_command(*, runtime: Path, agent_file: Path) -> list[str]:
    """No sandbox at all: for local development of a trusted agent only."""
    return [sys.executable, "-I", "-S", "-B", str(runtime / "sdk" / "boot.py"), str(agent_file), str(runtime)]


def sandbox_environment(socket: str, status_fd: int | None = None) -> dict[str, str]:
    status = {STATUS_FD_ENV: str(status_fd)} if status_fd is not None else {}
    return status | {
        "ARENA_SOCKET": socket,
        "HOME": "/tmp",
        "PATH": "/opt/python/bin",
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
        # The host interpreter may carry an absolute RUNPATH to its own lib folder
        # (pyenv does); the loader must find the bound copy, not a system libpython.
        "LD_LIBRARY_PATH": "/opt/python/lib",
    }


def start_steps(
    limits: EpisodeLimits,
    *,
    cgroup: EpisodeCgroup | None = None,
    memory: EpisodeMemoryCgroup | None = None,
    private_tmp: Path | None = None,
    extra_tasks: int = 0,
) -> StartSteps:
    """What bubblewrap's process does before it executes (arena.runner.spawner.apply_steps): joins
    the episode's cgroups (CPU, memory), mounts the bounded private /tmp (root only) and applies
    the rlimits; the agent inherits all of them. The memory cgroup is joined before the mount,
    so the tmpfs's pages are charged to it."""
    cgroups = [entry for entry in (cgroup and cgroup.procs_file, memory and memory.procs_file) if entry]
    tmp = None
    if private_tmp is not None:
        tmp = [str(private_tmp), f"size={limits.tmp_bytes},nr_inodes={limits.tmp_inodes},mode=1777"]
    return {"cgroups": cgroups, "tmp": tmp, "rlimits": rlimit_steps(limits, extra_tasks=extra_tasks)}


def runner_tasks() -> int:
    """Not root, the agent runs as the validator's own uid, and RLIMIT_NPROC counts all of
    that uid's tasks: the validator's threads (several per running episode) and its spawn
    helper would eat the agent's budget, down to bubblewrap failing to start. They are added on top."""
    return len(os.listdir("/proc/self/task")) + 1 if os.geteuid() != 0 else 0


def rlimit_steps(limits: EpisodeLimits, extra_tasks: int = 0) -> list[list[int]]:
    """The limits as (resource, soft, hard); children (and the agent) inherit them.

    RLIMIT_CPU is only a backstop, a second past the bound: the runner's monitor
    (arena/runner/accounting.py) holds the episode's total CPU to ``cpu_s``."""
    nproc = limits.processes + extra_tasks
    return [
        [resource.RLIMIT_AS, limits.memory_bytes, limits.memory_bytes],
        [resource.RLIMIT_CPU, limits.cpu_s + 1, limits.cpu_s + 5],
        [resource.RLIMIT_NPROC, nproc, nproc],
        [resource.RLIMIT_NOFILE, limits.open_files, limits.open_files],
        [resource.RLIMIT_FSIZE, limits.file_size_bytes, limits.file_size_bytes],
        [resource.RLIMIT_CORE, 0, 0],
    ]
