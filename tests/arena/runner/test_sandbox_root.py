"""The sandbox's read-only root as one prepared folder (arena.runner.sandbox.sandbox_root): the
agent sees exactly what the same pieces bound one by one showed it, in fewer mounts."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from arena.runner import sandbox
from arena.runner.launch import SandboxLaunch
from arena.runner.record import EpisodeLimits
from arena.runner.runtime import ensure_runtime
from arena.runner.syscall_filter import compile_filter

if sandbox.bubblewrap_path() is None:
    if os.environ.get("ARENA_REQUIRE_SANDBOX"):
        raise RuntimeError("bubblewrap is required for these tests (scripts/test installs it)")
    pytest.skip("bubblewrap is not installed (apt-get install bubblewrap)", allow_module_level=True)

VIEW = r"""
import os, stat
for top in ["/", "/opt", "/opt/python", "/opt/python/bin", "/opt/python/lib", "/usr", "/run", "/agent", "/opt/sdk"]:
    print(top, oct(os.lstat(top).st_mode), os.lstat(top).st_uid, sorted(os.listdir(top)))
for path in ["/lib", "/lib64", "/opt/python/bin/python3", "/opt/python/bin/setpriv", "/opt/sdk/boot.py",
             "/opt/python/lib/python3.%d/os.py" % __import__("sys").version_info[1]]:
    if os.path.lexists(path):
        mode = os.lstat(path).st_mode
        print(path, oct(mode), os.readlink(path) if stat.S_ISLNK(mode) else "")
site = sorted(os.path.join(d, f)[len("/opt/site"):] for d, _, fs in os.walk("/opt/site") for f in fs)
print("site", len(site), __import__("zlib").crc32("\n".join(site).encode()))
print("sitepackages", os.listdir("/opt/python/lib/python3.%d/site-packages" % __import__("sys").version_info[1]))
for target in ["/x", "/opt/x", "/usr/lib/x", "/opt/site/x"]:
    try:
        open(target, "w")
        print("wrote", target)
    except OSError as exc:
        print(target, exc.errno)
print("mounts", len(open("/proc/self/mountinfo").read().splitlines()))
"""


@pytest.fixture(scope="module")
def runtime() -> Path:
    return ensure_runtime(None)


def _view(runtime: Path) -> dict[str, str]:
    workdir = Path(tempfile.mkdtemp(prefix="root-view-"))
    (workdir / "agent").mkdir()
    (workdir / "arena.sock").touch()
    launch = SandboxLaunch(limits=EpisodeLimits(), runtime=runtime, workdir=workdir, agent_dir=workdir / "agent",
                           socket_path=workdir / "arena.sock", sandbox=True, defences=True,
                           syscall_filter=compile_filter())  # fmt: skip
    try:
        python = launch.argv.index("/opt/python/bin/python3", launch.argv.index("--"))
        launch.argv = [*launch.argv[: python + 1], "-I", "-S", "-B", "-c", VIEW]
        result = launch.run()
    finally:
        launch.close()
    assert result.exit_code == 0, result.stderr_tail
    return dict(line.split(" ", 1) for line in result.stdout_tail.splitlines())


def test_the_root_folder_shows_what_the_separate_binds_showed(runtime, monkeypatch):
    layout = sandbox.PythonLayout.detect()
    root = sandbox.sandbox_root(layout, runtime, os.geteuid() == 0)
    if root is None:
        pytest.skip("the libraries cannot be narrowed here (no ldd): everything is bound one by one")
    assert sandbox.sandbox_root(layout, runtime, os.geteuid() == 0) == root  # built once, then reused
    one_folder = _view(runtime)
    # The same pieces bound one by one, the narrowed libraries included (what the runner did before).
    libraries = sandbox.linked_library_tree(layout, runtime)
    assert libraries is not None

    separate_binds = sandbox._separate_binds

    def separate(python, runtime_dir, py, as_root):
        argv = separate_binds(python, runtime_dir, py, as_root)
        start = argv.index("/usr/lib") - 1
        end = argv.index("/lib") + 1
        narrowed = ["--ro-bind", str(libraries / "lib"), "/usr/lib", "--symlink", "usr/lib", "/lib"]
        if (libraries / "lib64").is_dir():
            narrowed += ["--ro-bind", str(libraries / "lib64"), "/usr/lib64", "--symlink", "usr/lib64", "/lib64"]
        rest = argv[end:]
        for host_lib64 in (["--ro-bind", "/usr/lib64", "/usr/lib64", "--symlink", "usr/lib64", "/lib64"],
                           ["--ro-bind", "/lib64", "/lib64"]):  # fmt: skip
            if rest[: len(host_lib64)] == host_lib64:  # replaced by the narrowed one above
                rest = rest[len(host_lib64) :]
        return argv[:start] + narrowed + rest

    monkeypatch.setattr(sandbox, "sandbox_root", lambda *args: None)
    monkeypatch.setattr(sandbox, "_separate_binds", separate)
    bind_by_bind = _view(runtime)
    mounts = int(one_folder.pop("mounts")), int(bind_by_bind.pop("mounts"))
    assert one_folder == bind_by_bind
    assert mounts[0] < mounts[1]  # what the folder is for
    assert "wrote" not in one_folder and one_folder["/opt/site/x"] in ("13", "30")  # read-only, the packages too
    assert one_folder["sitepackages"] == "[]"  # the interpreter's own packages stay out of sight
