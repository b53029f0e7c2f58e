"""The spawn helper (arena/runner/spawner.py): the sandbox's first process is forked by a small
helper, not by the runner, and still gets everything the runner's own fork gave it."""

from __future__ import annotations

import errno
import os
import resource
import signal
import sys
import time

import pytest

from arena.runner.process import run_process
from arena.runner.spawner import Spawner, SpawnHelperDied


@pytest.fixture
def spawner():
    helper = Spawner()
    yield helper
    helper.close()
    helper.process.wait(timeout=10)


PROBE = """
import os, resource, sys
fd = int(sys.argv[1])
print("nofile", resource.getrlimit(resource.RLIMIT_NOFILE)[1])
print("core", resource.getrlimit(resource.RLIMIT_CORE)[1])
print("session-leader", os.getsid(0) == os.getpid())
print("parent", os.getppid())
print("passed", os.read(fd, 100).decode())
print("stdin", repr(sys.stdin.read()))
os.write(2, b"to stderr")
sys.exit(7)
"""


def test_the_steps_descriptors_session_and_exit_reach_the_process(spawner):
    read_end, write_end = os.pipe()
    os.write(write_end, b"under its own number")
    os.close(write_end)
    steps = {"rlimits": [[resource.RLIMIT_NOFILE, 64, 64], [resource.RLIMIT_CORE, 0, 0]]}
    try:
        result = run_process(
            [sys.executable, "-I", "-c", PROBE, str(read_end)],
            wall_s=30,
            output_bytes=4096,
            pass_fds=(read_end,),
            steps=steps,
            spawner=spawner,
        )
    finally:
        os.close(read_end)
    lines = dict(line.split(" ", 1) for line in result.stdout_tail.splitlines())
    assert lines == {
        "nofile": "64",
        "core": "0",
        "session-leader": "True",
        "parent": str(spawner.process.pid),  # forked by the helper, not by this process
        "passed": "under its own number",
        "stdin": "''",
    }, result.stderr_tail
    assert result.stderr_tail == "to stderr"
    assert result.exit_code == 7 and result.signal is None
    assert result.cpu_user_s + result.cpu_system_s > 0 and result.max_rss_kib > 0  # wait4's, through the helper


def test_a_process_that_cannot_start_is_an_error_in_the_runner(spawner):
    with pytest.raises(OSError) as raised:
        spawner.spawn(["/nonexistent/bwrap"], env={}, cwd=None, stdout=1, stderr=2, pass_fds=(), steps={})
    assert raised.value.errno == errno.ENOENT
    # A step that fails stops the start too (and the helper serves the next one).
    with pytest.raises(OSError) as raised:
        spawner.spawn(["true"], env={}, cwd=None, stdout=1, stderr=2, pass_fds=(),
                      steps={"cgroups": ["/nonexistent/cgroup.procs"]})  # fmt: skip
    assert raised.value.errno == errno.ENOENT
    result = run_process(["true"], wall_s=30, output_bytes=1024, spawner=spawner)
    assert result.exit_code == 0


def test_a_dead_helper_fails_the_wait_and_is_replaced():
    helper = Spawner.shared()
    assert Spawner.shared() is helper  # one per runner process
    read_end, write_end = os.pipe()
    pid = helper.spawn(["sleep", "30"], env=None, cwd=None, stdout=write_end, stderr=write_end, pass_fds=(), steps={})
    os.close(write_end)
    os.kill(helper.process.pid, signal.SIGKILL)
    with pytest.raises(SpawnHelperDied):
        helper.wait(pid)
    os.killpg(pid, signal.SIGKILL)  # a plain process outlives the helper (bubblewrap dies with it)
    os.close(read_end)
    assert helper.dead
    replacement = Spawner.shared()
    assert replacement is not helper and not replacement.dead
    assert run_process(["true"], wall_s=30, output_bytes=1024, spawner=replacement).exit_code == 0


def test_the_helper_exits_when_its_runner_lets_go(spawner):
    spawner.close()
    deadline = time.monotonic() + 10
    while spawner.process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert spawner.process.poll() == 0


@pytest.fixture
def memory_cgroup():
    from arena.runner.memory_cgroup import EpisodeMemoryCgroup

    memory = EpisodeMemoryCgroup.create(1 << 30, None)
    if memory is None or memory.procs_file is None:
        pytest.skip("no writable cgroup v1 memory controller on this host")
    yield memory
    memory.remove()


def _wait_for(condition, timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_a_prepared_process_is_in_its_cgroup_before_the_launch_and_becomes_the_launch(spawner, memory_cgroup):
    standby = spawner.prepare([memory_cgroup.procs_file])
    assert _wait_for(lambda: len(memory_cgroup.pids()) == 1)  # moved in ahead, off the start
    [prepared_pid] = memory_cgroup.pids()
    steps = {"cgroups": [memory_cgroup.procs_file], "rlimits": [[resource.RLIMIT_NOFILE, 64, 64]]}
    probe = "import os, resource; print(os.getpid(), resource.getrlimit(resource.RLIMIT_NOFILE)[1])"
    result = run_process([sys.executable, "-I", "-c", probe], wall_s=30, output_bytes=4096, steps=steps,
                         spawner=spawner, standby=standby)  # fmt: skip
    assert result.exit_code == 0, result.stderr_tail
    assert result.stdout_tail.split() == [str(prepared_pid), "64"]  # the prepared process ran it, with the steps


def test_a_prepared_process_that_could_not_join_leaves_the_launch_to_a_fresh_fork(spawner):
    standby = spawner.prepare(["/nonexistent/cgroup.procs"])
    result = run_process([sys.executable, "-I", "-c", "print('ran')"], wall_s=30, output_bytes=4096,
                         steps={}, spawner=spawner, standby=standby)  # fmt: skip
    assert result.exit_code == 0 and result.stdout_tail.strip() == "ran"


def test_a_discarded_prepared_process_leaves_its_cgroup(spawner, memory_cgroup):
    standby = spawner.prepare([memory_cgroup.procs_file])
    assert _wait_for(lambda: len(memory_cgroup.pids()) == 1)
    spawner.discard(standby)
    assert _wait_for(lambda: memory_cgroup.pids() == [])
    assert run_process(["true"], wall_s=30, output_bytes=1024, spawner=spawner).exit_code == 0  # still serving


def test_a_launch_takes_the_prepared_cgroups_and_its_end_prepares_the_next(memory_cgroup):
    import tempfile
    from pathlib import Path

    from arena.runner.launch import PreparedCgroups, SandboxLaunch
    from arena.runner.record import EpisodeLimits
    from arena.runner.runtime import ensure_runtime
    from arena.runner.syscall_filter import compile_filter

    spawner, limits = Spawner.shared(), EpisodeLimits()
    PreparedCgroups.release()
    PreparedCgroups.prepare(spawner, limits)
    held = PreparedCgroups._held
    assert held is not None and held[3] is not None
    prepared = held[3]
    assert _wait_for(lambda: len(prepared.pids()) == 1)  # the process that will start the sandbox
    workdir = Path(tempfile.mkdtemp(prefix="prepared-"))
    (workdir / "agent").mkdir()
    (workdir / "arena.sock").touch()
    launch = SandboxLaunch(limits=limits, runtime=ensure_runtime(None), workdir=workdir, agent_dir=workdir / "agent",
                           socket_path=workdir / "arena.sock", sandbox=True, defences=True,
                           syscall_filter=compile_filter())  # fmt: skip
    try:
        assert launch.memory is prepared and launch.standby == held[4] and PreparedCgroups._held is None
        python = launch.argv.index("/opt/python/bin/python3", launch.argv.index("--"))
        launch.argv = [*launch.argv[: python + 1], "-I", "-S", "-B", "-c", "print(open('/proc/self/cgroup').read())"]
        result = launch.run()
    finally:
        launch.close()
    assert result.exit_code == 0, result.stderr_tail
    # The cgroup namespace is rooted at the episode's own cgroup: joined before bubblewrap ran.
    assert any(line.endswith(":memory:/") for line in result.stdout_tail.splitlines()), result.stdout_tail
    assert result.memory is not None and result.memory.version == "v1"
    assert _wait_for(lambda: PreparedCgroups._held is not None)  # made in the background at the end
    following = PreparedCgroups._held
    assert following is not None and following[3] is not prepared  # the next episode's, made at this one's end
    PreparedCgroups.release()
