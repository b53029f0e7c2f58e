"""Hostile agents against the sandbox's own bounds, in the real sandbox through the real runner.

Each attack runs concurrently with an honest episode; each asserts that the bound
held and was recorded by name, that the validator's memory stayed within a stated
bound, and that the honest neighbour's record and outcome equal those of a solo run.
Bounds are test-sized and each attack goes just past them, so the module stays fast.
The root path (setpriv) runs in this process; the user-namespace path runs the same
runner as an unprivileged user in a subprocess.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from arena.problems.official import parse_row
from arena.runner.accounting import TreeSample
from arena.runner.boot import EXIT_CRASH, EXIT_MEMORY
from arena.runner.episode import AgentSource, EpisodeRunner, RunnerConfig, classify
from arena.runner.process import ProcessResult
from arena.runner.proxy import UpstreamRegistry
from arena.runner.record import EpisodeLimits, EpisodeRecord, FaultKind, Termination
from arena.runner.sandbox import bubblewrap_path
from arena.scoring import ScoreMode, score_problem
from tests.support.process_memory import peak_since_reset, status_bytes

HOSTILE = Path(__file__).parents[2] / "support" / "hostile_sandbox_agents"
HONEST = Path(__file__).parents[2] / "support" / "race_agents" / "first_hit.py"
REPO = Path(__file__).resolve().parents[3]
# The validator's peak RSS during the attacks, over its RSS before them.
VALIDATOR_GROWTH_BOUND = 96 * 1024**2

if bubblewrap_path() is None:
    if os.environ.get("ARENA_REQUIRE_SANDBOX"):
        raise RuntimeError("bubblewrap is required for these tests (scripts/test installs it)")
    pytest.skip("bubblewrap is not installed (apt-get install bubblewrap)", allow_module_level=True)

LIMITS = EpisodeLimits(wall_s=60, cpu_s=2, memory_bytes=1024**3, processes=32, output_bytes=16 * 1024,
                       file_size_bytes=8 * 1024**2, tmp_bytes=16 * 1024**2, tmp_inodes=64)  # fmt: skip
FORGERIES = ["print-only", "raise-memory-error", "exit-code", "status-channel", "SIGXCPU", "SIGXFSZ", "SIGKILL"]
REFUSED = ["unshare", "setns", "mount", "umount2", "pivot_root", "ptrace", "keyctl", "add_key", "bpf",
           "perf_event_open", "userfaultfd", "kexec_load", "kexec_file_load", "init_module", "finit_module",
           "delete_module", "io_uring_setup", "open_tree", "fsopen", "process_vm_readv", "clone", "clone3"]  # fmt: skip


def _problem(query: str = "widget"):
    return parse_row({"query": query, "reward": {"product_id": "1001", "title": ["widget"]}})


def _honest_view(record: EpisodeRecord, catalog) -> dict:
    """What must not depend on the neighbour: the calls, their results, the answer, the outcome."""
    outcome = score_problem(_problem(), record.final_recommendation, catalog, ScoreMode.strict)
    return {
        "termination": record.termination,
        "limit_hit": record.limit_hit,
        "error": record.error,
        "calls": [(c.name, c.arguments, c.ok, c.result, c.error) for c in record.tool_calls],
        "recommendation": record.final_recommendation,
        "status": record.terminate_status,
        "outcome": outcome.model_dump(),
    }


@pytest.fixture(scope="module")
def runs(catalog) -> dict:
    runner = EpisodeRunner(catalog, UpstreamRegistry([]), RunnerConfig(limits=LIMITS))
    honest = AgentSource.from_path(HONEST)

    def hostile(name: str, query: str = "widget"):
        return runner.run(AgentSource.from_path(HOSTILE / f"{name}.py"), _problem(query), "heuristic-policy")

    async def run_all() -> dict:
        out: dict = {"solo": await runner.run(honest, _problem(), "heuristic-policy")}
        peak_since_reset()
        before = status_bytes("VmRSS")
        groups = [
            {n: hostile(n) for n in ("tmp_bytes", "tmp_inodes", "kernel_surface", "host_view")},
            {"cpu_spread": hostile("cpu_spread")},
            {f"forged:{way}": hostile("label_forger", way) for way in FORGERIES},
        ]
        out["neighbours"] = []
        for group in groups:
            results = await asyncio.gather(runner.run(honest, _problem(), "heuristic-policy"), *group.values())
            out["neighbours"].append(results[0])
            out.update(zip(group, results[1:], strict=True))
        out["validator_growth"] = peak_since_reset() - before  # peak during the attacks, over the start
        return out

    return asyncio.run(run_all())


def test_honest_neighbours_match_a_solo_run(runs, catalog):
    solo = _honest_view(runs["solo"], catalog)
    assert solo["termination"] is Termination.terminated and solo["recommendation"]
    for neighbour in runs["neighbours"]:
        assert _honest_view(neighbour, catalog) == solo


def test_the_validator_stays_within_its_memory_bound(runs):
    assert runs["validator_growth"] < VALIDATOR_GROWTH_BOUND


def test_tmp_bytes_are_bounded_and_named(runs):
    record = runs["tmp_bytes"]
    assert (record.termination, record.limit_hit) == (Termination.limit, "tmp_bytes"), record.error
    wrote = int(record.stdout_tail.split()[1])
    assert LIMITS.tmp_bytes - 4 * 1024**2 < wrote <= LIMITS.tmp_bytes  # it filled /tmp, and no more
    assert LIMITS.tmp_bytes - 64 * 1024 <= record.usage.tmp_bytes_used <= LIMITS.tmp_bytes


def test_tmp_inodes_are_bounded_and_named(runs):
    record = runs["tmp_inodes"]
    assert (record.termination, record.limit_hit) == (Termination.limit, "tmp_inodes"), record.error
    created = int(record.stdout_tail.split()[1])
    assert LIMITS.tmp_inodes - 8 <= created < LIMITS.tmp_inodes  # the folder and the root take two
    assert record.usage.tmp_inodes_used == LIMITS.tmp_inodes


def test_total_cpu_over_all_processes_is_bounded_and_measured(runs):
    record = runs["cpu_spread"]
    assert (record.termination, record.limit_hit) == (Termination.limit, "cpu"), record.error
    used = record.usage.cpu_user_s + record.usage.cpu_system_s
    # Six processes, each far below RLIMIT_CPU: only the episode-wide bound stops them, and
    # the record shows the true total (not bubblewrap's own, which is about zero).
    assert LIMITS.cpu_s <= used < LIMITS.cpu_s + 2
    assert record.usage.peak_tasks >= 6


@pytest.mark.parametrize("way", FORGERIES)
def test_agent_text_exit_codes_and_signals_do_not_name_a_limit(runs, way):
    record = runs[f"forged:{way}"]
    assert record.termination is Termination.crash, (way, record.termination, record.error)
    assert record.limit_hit is None and record.validator_fault is None


def _kernel_results(stdout: str) -> dict[str, set[str]]:
    results: dict[str, set[str]] = {}
    for line in stdout.splitlines():
        parts = line.split()
        if parts and parts[0] in ("REFUSED", "ALLOWED"):
            results.setdefault(parts[1], set()).add(parts[0])
    return results


def _assert_kernel_surface_refused(record: EpisodeRecord) -> None:
    results = _kernel_results(record.stdout_tail)
    assert set(REFUSED) <= set(results), record.stdout_tail
    assert all(results[name] == {"REFUSED"} for name in REFUSED), record.stdout_tail
    assert "UIDMAP" not in record.stdout_tail
    assert "FORK 7" in record.stdout_tail  # ordinary processes still work
    assert record.termination is Termination.returned


def test_namespaces_mounts_and_the_kernels_riskier_calls_are_refused_as_root(runs):
    _assert_kernel_surface_refused(runs["kernel_surface"])


def _assert_only_tmp_is_writable(out: str) -> None:
    assert "WRITABLE" not in out and out.count("READ-ONLY") == 9, out


def test_host_wide_figures_and_host_paths_are_masked(runs):
    out = runs["host_view"].stdout_tail
    _assert_only_tmp_is_writable(out)
    meminfo = out.split("== /proc/meminfo\n")[1].split("==")[0]
    assert f"MemTotal:       {LIMITS.memory_bytes // 1024} kB" in meminfo and "Shmem:                 0 kB" in meminfo
    assert out.split("== /proc/vmstat\n")[1].startswith("\n")  # empty
    cmdline = out.split("== /proc/1/cmdline\n")[1]
    assert "--args" in cmdline and str(REPO) not in cmdline and "/tmp/" not in cmdline and "/root" not in cmdline
    # Only the linked libraries: no system Python packages, browsers or JVM under /usr/lib.
    listing = {line.split()[1]: line for line in out.splitlines() if line.startswith("LIST ")}
    for absent in ("python3", "jvm", "chromium", "libX11"):
        assert absent not in listing["/usr/lib"] and absent not in listing.get("/usr/lib/x86_64-linux-gnu", "")
    assert "libc.so.6" in out and "IMPORTS ok" in out  # what the interpreter links is all there


def test_a_sandbox_that_fails_before_the_agent_starts_is_the_validators_fault(catalog, tmp_path):
    runner = EpisodeRunner(catalog, UpstreamRegistry([]), RunnerConfig(limits=LIMITS))
    honest = AgentSource.from_path(HONEST)
    # bubblewrap itself fails (a bind source is missing), then the interpreter starts but boot
    # is not there: neither is the agent's crash.
    broken_bind, no_boot = tmp_path / "empty", tmp_path / "no-boot"
    broken_bind.mkdir()
    (no_boot / "site").mkdir(parents=True)
    (no_boot / "sdk").mkdir()
    for path in (no_boot, no_boot / "site", no_boot / "sdk"):
        path.chmod(0o755)
    for runtime in (broken_bind, no_boot):
        runner.runtime = runtime
        record = asyncio.run(runner.run(honest, _problem(), "heuristic-policy"))
        assert record.validator_fault is not None and record.validator_fault.kind is FaultKind.sandbox
        assert record.termination is Termination.crash and record.limit_hit is None
        assert record.validator_fault.detail and not record.tool_calls


NON_ROOT_SCRIPT = textwrap.dedent(
    """
    import asyncio, json, sys
    from pathlib import Path
    from arena.problems.official import parse_row
    from arena.runner.episode import AgentSource, EpisodeRunner, RunnerConfig
    from arena.runner.proxy import UpstreamRegistry
    from arena.runner.record import EpisodeLimits
    from arena.taskpack.build import build_catalog
    from arena.shop.index import CatalogIndex

    work, limits, agents = Path(sys.argv[1]), EpisodeLimits.model_validate_json(sys.argv[2]), sys.argv[3:]
    build_catalog(work / "catalog", synthetic=60, seed=1)
    config = RunnerConfig(limits=limits, runtime_dir=work / "runtime", work_dir=work)
    runner = EpisodeRunner(CatalogIndex(work / "catalog"), UpstreamRegistry([]), config)
    problem = parse_row({"query": "widget", "reward": {"product_id": "1001", "title": ["widget"]}})

    async def main():
        # One at a time: on this path every episode and the validator share one uid, so one
        # RLIMIT_NPROC budget (see docs/security.md, "Known to remain").
        records = [await runner.run(AgentSource.from_path(a), problem, "heuristic-policy") for a in agents]
        print(json.dumps([r.model_dump(mode="json") for r in records]))

    asyncio.run(main())
    """
)


def test_the_user_namespace_path_refuses_the_same_and_bounds_tmp():
    """The runner as an unprivileged user: bubblewrap's own user namespace, --disable-userns,
    the same filter; /tmp bounded in bytes by bubblewrap; CPU from /proc (no cgroup)."""
    python = shutil.which("python3", path="/usr/bin")
    if os.geteuid() != 0 or python is None or not shutil.which("setpriv"):
        pytest.skip("needs root (to become an unprivileged user) and the system's python3")
    site = next(Path(p) for p in sys.path if p.endswith("site-packages") and Path(p, "pydantic").is_dir())
    if not _readable_by_nobody(python, site):
        pytest.skip(
            f"the environment's site-packages ({site}) is closed to other users (a folder on its path is not "
            "world-readable): the runner cannot run as nobody (uid 65534); install the environment where other "
            "users can read it to run this test"
        )
    work = Path(tempfile.mkdtemp(prefix="arena-nonroot-"))  # pytest's own folders are root's only
    # The checkout may sit where nobody cannot read (a clone under /root, a 0700 temporary folder): what the
    # runner needs of it, the arena package and the agents, is staged in nobody's own folder.
    source = work / "source"
    shutil.copytree(REPO / "arena", source / "arena", ignore=shutil.ignore_patterns("__pycache__"))
    agents = [HOSTILE / "kernel_surface.py", HOSTILE / "tmp_bytes.py", HOSTILE / "host_view.py", HONEST]
    staged = [Path(shutil.copy(agent, source / f"{i}-{agent.name}")) for i, agent in enumerate(agents)]
    for path in (work, *work.rglob("*")):
        os.chown(path, 65534, 65534)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(work), "PYTHONPATH": f"{source}:{site}", "PYTHONDONTWRITEBYTECODE": "1"}
    try:
        done = subprocess.run(
            ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", "--",
             python, "-c", NON_ROOT_SCRIPT, str(work), LIMITS.model_dump_json(), *map(str, staged)],
            capture_output=True, text=True, env=env, timeout=240, check=False,
        )  # fmt: skip
    finally:
        shutil.rmtree(work, ignore_errors=True)
    assert done.returncode == 0, done.stderr[-3000:]
    kernel, tmp_bytes, host_view, honest = (EpisodeRecord.model_validate(r) for r in json.loads(done.stdout))
    _assert_kernel_surface_refused(kernel)
    # There the agent owns the sandbox's root, /dev and folders bubblewrap made: all read-only.
    assert host_view.termination is Termination.returned, (host_view.error, host_view.stderr_tail[-2000:])
    _assert_only_tmp_is_writable(host_view.stdout_tail)
    assert (tmp_bytes.termination, tmp_bytes.limit_hit) == (Termination.limit, "tmp_bytes"), tmp_bytes.error
    assert int(tmp_bytes.stdout_tail.split()[1]) <= LIMITS.tmp_bytes
    assert honest.termination is Termination.terminated and honest.tool_calls[0].ok
    assert honest.usage.cpu_user_s + honest.usage.cpu_system_s > 0  # measured from /proc, not wait4's zero


def _readable_by_nobody(python: str, path: Path) -> bool:
    """Whether uid 65534 can list ``path`` (every folder above it open to others), asked as that user."""
    probe = "import os, sys; sys.exit(0 if os.access(sys.argv[1], os.R_OK | os.X_OK) else 1)"
    done = subprocess.run(
        ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", "--", python, "-c", probe, str(path)],
        capture_output=True, timeout=60, check=False,
    )  # fmt: skip
    return done.returncode == 0


def _result(**kw) -> ProcessResult:
    base = dict(exit_code=None, signal=None, timed_out=False, output_exceeded=False, stdout_tail="",
                stderr_tail="MemoryError\nOSError: [Errno 24] Too many open files", wall_s=1.0, agent_started=True)  # fmt: skip
    return ProcessResult(**(base | kw))


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        # the exit code boot gives a MemoryError, with and without the memory measured at its bound
        (_result(reported_exit=EXIT_MEMORY), (Termination.crash, None)),
        (_result(reported_exit=EXIT_MEMORY, final=TreeSample(vm_peak_bytes=LIMITS.memory_bytes)), (Termination.limit, "memory")),
        # a peak from long ago does not name the limit when the last look shows none
        (_result(reported_exit=EXIT_CRASH, peak=TreeSample(tasks=LIMITS.processes), final=TreeSample(tasks=1)), (Termination.crash, None)),
        (_result(reported_exit=EXIT_CRASH, final=TreeSample(open_files=LIMITS.open_files)), (Termination.limit, "open_files")),
        # killed by a signal without a report: the run's peaks are all there is
        (_result(signal=9, peak=TreeSample(tasks=LIMITS.processes)), (Termination.limit, "processes")),
        (_result(signal=24), (Termination.crash, None)),  # SIGXCPU with no CPU used
        (_result(signal=24, cpu_user_s=LIMITS.cpu_s), (Termination.limit, "cpu")),
        (_result(exit_code=EXIT_MEMORY), (Termination.crash, None)),  # os._exit(5) skips boot's report
        (_result(cpu_limit_hit=True, reported_exit=0), (Termination.limit, "cpu")),
    ],
)  # fmt: skip
def test_the_label_follows_measurements_not_claims(result, expected):
    termination, limit, _, fault = classify(result, False, LIMITS)
    assert (termination, limit) == expected and fault is None
