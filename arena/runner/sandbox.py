"""The bubblewrap sandbox an agent runs in.

What the agent sees: a read-only root made of the system libraries, the
Python interpreter and its standard library at ``/opt/python``, the allowed
packages at ``/opt/site`` and the SDK at ``/opt/sdk`` (each bound read-only,
never their parent folders), its own file on a private tmpfs at
``/agent``, a private ``/tmp``, and one Unix socket at ``/run/arena.sock``.
All namespaces are unshared (no network at all), the environment is cleared.

The validator usually runs as root, and neither a process limit nor dropped
capabilities bind uid 0. So, as root, bubblewrap starts the agent through
``setpriv`` as an unprivileged uid of its own (leased host-wide for the
episode, see arena/runner/uids.py, so episodes do not share a process count) with every capability and the
bounding set dropped and no_new_privs set. Run as a normal user, bubblewrap's
user namespace does the same job.
"""

from __future__ import annotations

import os
import resource
import shutil
import sys
import sysconfig
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from arena.runner.record import EpisodeLimits

SANDBOX_SOCKET = "/run/arena.sock"
SANDBOX_AGENT = "/agent/agent.py"
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
) -> list[str]:
    """The full argv: bwrap, its mounts, then (as root) setpriv, then python."""
    bwrap = require_bubblewrap()
    python = python or PythonLayout.detect()
    as_root = os.geteuid() == 0
    py = f"/opt/python/lib/python{python.version}"
    argv = [bwrap, "--unshare-net", "--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try"]
    if not as_root:
        argv += ["--unshare-user", "--cap-drop", "ALL"]
    argv += ["--die-with-parent", "--new-session", "--hostname", "sandbox"]
    # System libraries only; /etc, /home, /root, /var, /srv, /mnt stay invisible.
    # Folders bubblewrap creates on its own are 0700: the agent's uid could not traverse them.
    argv += ["--perms", "0755", "--dir", "/usr"]
    argv += ["--ro-bind", "/usr/lib", "/usr/lib", "--symlink", "usr/lib", "/lib"]
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
    # The interpreter's own site-packages (and a venv's) must stay out of sight.
    argv += ["--perms", "0755", "--tmpfs", f"{py}/site-packages"]
    argv += ["--ro-bind", str(runtime / "site"), "/opt/site", "--ro-bind", str(runtime / "sdk"), "/opt/sdk"]
    argv += ["--ro-bind", str(agent_dir), "/agent"]
    argv += ["--bind", str(socket_path), SANDBOX_SOCKET]
    argv += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--tmpfs", "/tmp"]
    argv += ["--clearenv"]
    for key, value in sandbox_environment(SANDBOX_SOCKET).items():
        argv += ["--setenv", key, value]
    argv += ["--chdir", "/tmp"]
    if as_root:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            raise SandboxUnavailable("setpriv (util-linux) is needed to drop root inside the sandbox")
        argv += ["--ro-bind", setpriv, "/opt/python/bin/setpriv"]
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


def unsafe_command(*, runtime: Path, agent_file: Path) -> list[str]:
    """No sandbox at all: for local development of a trusted agent only."""
    return [sys.executable, "-I", "-S", "-B", str(runtime / "sdk" / "boot.py"), str(agent_file), str(runtime)]


def sandbox_environment(socket: str) -> dict[str, str]:
    return {
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


def rlimit_setter(limits: EpisodeLimits) -> Callable[[], None]:
    """A preexec function applying the limits; children (and the agent) inherit them."""

    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_s, limits.cpu_s + 5))
        resource.setrlimit(resource.RLIMIT_NPROC, (limits.processes, limits.processes))
        resource.setrlimit(resource.RLIMIT_NOFILE, (limits.open_files, limits.open_files))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_size_bytes, limits.file_size_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    return apply
