"""Run one agent on one problem and return the validator's record of it."""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import socket
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from arena.problems.model import Intent, Problem
from arena.runner.boot import EXIT_CRASH, EXIT_NO_ENTRY
from arena.runner.faults import boot_fault
from arena.runner.grace import TerminateGrace
from arena.runner.launch import PreparedCgroups, SandboxLaunch
from arena.runner.limits import LimitLog
from arena.runner.probe import ProbePlan, run_probes
from arena.runner.process import ProcessResult
from arena.runner.proxy import InferenceProxy, SamplingPin, UpstreamRegistry
from arena.runner.record import (
    AgentRef,
    EpisodeLimits,
    EpisodeRecord,
    FaultKind,
    LLMCallRecord,
    ProblemRef,
    ResourceUsage,
    Termination,
    ValidatorFault,
)
from arena.runner.runtime import RUNTIME_RECHECK_S, ensure_runtime
from arena.runner.sandbox import SANDBOX_AGENT, PythonLayout, require_bubblewrap, sandbox_root
from arena.runner.server import EpisodeSession, build_episode_server
from arena.runner.spawner import Spawner
from arena.runner.storable import make_storable
from arena.runner.syscall_filter import compile_filter
from arena.runner.workdirs import new_episode_folder
from arena.shop.index import CatalogIndex
from arena.shop.knowledge import KnowledgeCorpus
from arena.shop.tools import KNOWLEDGE_TOOLS, SHOP_TOOLS, ShopEnvironment


class AgentSource(BaseModel):
    """An agent file's name and source, as submitted."""

    name: str
    code: bytes

    @classmethod
    def from_path(cls, path: str | Path) -> AgentSource:
        path = Path(path)
        return cls(name=path.stem, code=path.read_bytes())

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.code).hexdigest()


class RunnerConfig(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    limits: EpisodeLimits = EpisodeLimits()
    sandbox: bool = True  # False only with --unsafe-no-sandbox
    allowlist: list[str] = ["heuristic-policy"]
    pin: SamplingPin | None = None
    runtime_dir: Path | None = None
    work_dir: Path | None = None  # root of the episode folders (arena.runner.workdirs; default in TMPDIR)
    # Benchmark-only switch (benchmarks/episode.py): False runs the sandbox without the syscall
    # filter, the bounded /tmp, the /proc masks, the CPU monitor and the status channel.
    defences: bool = True
    # The judge's choice of calls to re-ask with the tool data changed (arena.runner.probe; the validator and
    # run-agent pass judge.rules.probe_plan). None: no probe; the judge then stands on its other rules.
    probe: ProbePlan | None = None


class EpisodeRunner:
    """Runs episodes against one catalog; safe to use for many concurrent episodes."""

    def __init__(
        self,
        catalog: CatalogIndex,
        registry: UpstreamRegistry,
        config: RunnerConfig | None = None,
        knowledge: KnowledgeCorpus | None = None,
    ) -> None:
        self.catalog = catalog
        self.registry = registry
        self.config = config or RunnerConfig()
        self.knowledge = knowledge
        if knowledge is not None:
            knowledge.for_problem("")  # an index that cannot be scoped fails here, before any episode
        if self.config.sandbox:
            require_bubblewrap()
        # Compiled once: each episode's bubblewrap reads it from a descriptor of its own.
        self.syscall_filter = compile_filter() if self.config.sandbox and self.config.defences else None
        self.runtime = ensure_runtime(self.config.runtime_dir)
        self._runtime_checked = time.monotonic()
        if self.config.sandbox:
            spawner = Spawner.shared()  # the helper that forks each sandbox (arena.runner.spawner), started now
            if self.config.defences:
                PreparedCgroups.prepare(spawner, self.config.limits)  # the first episode's cgroups
        if self.syscall_filter is not None:
            # The library closure (ldd, about a second) and the sandbox's root folder built here,
            # not on the event loop at the first episode.
            sandbox_root(PythonLayout.detect(), self.runtime, as_root=os.geteuid() == 0)

    def _fresh_runtime(self) -> Path:
        # Hourly, re-ensure the runtime: that marks it in use (runtimes unused for a week are
        # pruned by whoever builds a newer one) and rebuilds it should it have gone anyway.
        if time.monotonic() - self._runtime_checked > RUNTIME_RECHECK_S:
            self.runtime = ensure_runtime(self.config.runtime_dir)
            self._runtime_checked = time.monotonic()
        return self.runtime

    def pin(self, problem: Problem, attempt: int) -> SamplingPin | None:
        """The sampling the proxy pins on this episode's calls: the config's, the same for every
        episode (an evaluation overrides it to seed each sampled attempt on its own)."""
        return self.config.pin

    async def run(self, agent: AgentSource, problem: Problem, model: str, attempt: int = 0) -> EpisodeRecord:
        limits = self.config.limits
        started_wall = time.perf_counter()
        started_at = datetime.now(UTC).isoformat()
        clock = lambda: time.perf_counter() - started_wall  # noqa: E731
        allowed = KNOWLEDGE_TOOLS if problem.intent is Intent.knowledge and self.knowledge else SHOP_TOOLS
        # web_search reads this problem's pages and neutral ones, never another problem's answers.
        knowledge = self.knowledge.for_problem(problem.id) if self.knowledge is not None else None
        env = ShopEnvironment(self.catalog, knowledge=knowledge, allowed=allowed, max_ids=limits.tool_ids)
        llm_calls: list[LLMCallRecord] = []
        limit_log = LimitLog(clock)
        proxy = InferenceProxy(
            self.registry, self.config.allowlist, limits, llm_calls.append, clock, self.pin(problem, attempt), limit_log
        )
        # The agent's id for this episode is random: the problem's content id hashes the reward, and
        # an agent that saw it could test guessed rewards against it (see docs/security.md).
        episode_id = f"e-{uuid.uuid4().hex[:16]}"
        public = {"id": episode_id, "intent": problem.intent.value, "query": problem.query}
        grace = TerminateGrace(limits.terminate_grace_s, clock)
        session = EpisodeSession(env, public, model, proxy, clock, limits, limit_log, on_terminate=grace.start)

        workdir = new_episode_folder(self.config.work_dir)  # swept if this process dies mid-episode
        launch: SandboxLaunch | None = None
        try:
            agent_dir = workdir / "agent"
            agent_dir.mkdir()
            (agent_dir / "agent.py").write_bytes(agent.code)
            os.chmod(agent_dir, 0o755)
            os.chmod(agent_dir / "agent.py", 0o644)
            socket_path = workdir / "arena.sock"
            # Bind and listen before the sandbox starts: the agent's first connection can
            # never find the socket missing, at worst it waits in the backlog.
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            listener.bind(str(socket_path))
            os.chmod(socket_path, 0o666)  # the agent's unprivileged uid must be able to connect
            listener.listen(64)
            server = build_episode_server(session)
            await server.start(listener)
            server_ready_s = clock()
            process_start_s = clock()
            launch = SandboxLaunch(
                limits=limits,
                runtime=self._fresh_runtime(),
                workdir=workdir,
                agent_dir=agent_dir,
                socket_path=socket_path,
                sandbox=self.config.sandbox,
                defences=self.config.defences,
                syscall_filter=self.syscall_filter,
                switch=grace.switch,
            )
            launched_s = clock()
            result = await asyncio.to_thread(launch.run)
            grace.cancel()
            # The agent has exited: calls still in flight are cancelled and recorded as hung up.
            await server.close()
            listener.close()
        finally:
            grace.cancel()
            if launch is not None:
                await asyncio.to_thread(launch.close)  # the uid, the cgroup, the descriptors
            shutil.rmtree(workdir, ignore_errors=True)

        grace.report(result, env.state.terminated, limit_log)
        termination, limit_hit, error, fault = classify(result, env.state.terminated, limits)
        memory = result.memory
        if memory is not None and (memory.limit_reached or memory.oom_kills):
            limit_log.hit(
                "episode_memory_bytes",
                f"the episode's memory cgroup ({memory.version}) held at its bound of {memory.limit_bytes} bytes: "
                f"{memory.limit_reached} charges refused, {memory.oom_kills} processes killed",
            )
        record = EpisodeRecord(
            episode_id=episode_id,
            problem=ProblemRef(
                id=problem.id,
                intent=problem.intent.value,
                query=problem.query,
                cluster_id=problem.cluster_id,
                row=problem.to_row(),
            ),  # fmt: skip
            agent=AgentRef(name=agent.name, sha256=agent.sha256),
            sandbox="bubblewrap" if self.config.sandbox else "none (unsafe)",
            model=model,
            attempt=attempt,
            started_at=started_at,
            tool_calls=session.tool_calls,
            llm_calls=llm_calls,
            knowledge_scope="problem" if knowledge is not None else None,
            final_recommendation=env.state.recommended,
            terminate_status=env.state.status,
            termination=termination,
            limit_hit=limit_hit,
            exit_code=result.exit_code,
            signal=result.signal,
            error=error,
            limits_hit=limit_log.hits(),
            validator_fault=fault,
            stdout_tail=result.stdout_tail,
            stderr_tail=result.stderr_tail,
            usage=ResourceUsage(
                wall_s=round(clock(), 4),
                cpu_user_s=result.cpu_user_s,
                cpu_system_s=result.cpu_system_s,
                max_rss_kib=result.max_rss_kib,
                peak_tasks=result.peak.tasks,
                peak_vm_bytes=result.peak.vm_peak_bytes,
                peak_open_files=result.peak.open_files,
                tmp_bytes_used=result.peak.tmp_bytes_used,
                tmp_inodes_used=result.peak.tmp_inodes_used,
                memory_cgroup=memory.version if memory is not None else None,
                peak_memory_bytes=memory.peak_bytes if memory is not None else 0,
            ),  # fmt: skip
            limits=limits,
            timings={
                "server_ready_ms": round(server_ready_s * 1000, 2),
                "process_ms": round(result.wall_s * 1000, 2),
                **(
                    {
                        "first_tool_call_ms": round(session.first_tool_call_s * 1000, 2),
                        # From launching the sandbox to the agent's first tool call: the start-up cost.
                        "start_to_first_tool_call_ms": round((session.first_tool_call_s - process_start_s) * 1000, 2),
                    }
                    if session.first_tool_call_s is not None
                    else {}
                ),
                **start_phases(process_start_s, launched_s, result, started_wall, session.booted_s),
            },
        )
        if self.config.probe is not None and any(call.response is not None for call in record.llm_calls):
            # After the agent's process has ended: it never sees probe traffic, nor pays for it.
            probe_started = time.perf_counter()
            record.probes = await run_probes(self.registry, record, self.config.probe, limits.llm_call_timeout_s)
            record.timings["probe_ms"] = round((time.perf_counter() - probe_started) * 1000, 2)
        record.validator_fault = record.validator_fault or boot_fault(session.booted_s is not None, result.exit_code, result.signal, result.timed_out)  # fmt: skip
        # The one boundary: whatever the agent wrote, the record stores on every backend (what changed is named).
        return make_storable(record)


# How close to a bound a measured peak must come for the bound to be named.
MEMORY_NEAR_BOUND = 0.8  # of the address space: the failed allocation itself is never seen
_NEAR_BOUND_COUNT = 2  # processes / descriptors: the runner and the refusal race by a few
_TMP_FULL_BYTES = 64 * 1024  # tmpfs refuses whole pages: "full" is a few pages from the size


def start_phases(
    process_start_s: float, launched_s: float, result: ProcessResult, started_wall: float, booted_s: float | None
) -> dict[str, float]:
    """Where the start went, each a milestone in ms from the launch's first step: the launch
    prepared (cgroups, uid, argv), bubblewrap spawned (the helper's fork, the start steps, exec), boot's first
    line (bubblewrap's namespaces and mounts, setpriv, the interpreter's start), boot's ask for
    the episode (the SDK's imports, the first connection). Missing ones are left out."""
    marks = {"launch_prepared_ms": launched_s, "sandbox_spawned_ms": result.spawned - started_wall}
    if result.boot_started is not None:
        marks["boot_started_ms"] = result.boot_started - started_wall
    if booted_s is not None:
        marks["episode_asked_ms"] = booted_s
    return {name: round((at - process_start_s) * 1000, 2) for name, at in marks.items() if at > 0}


def classify(
    result: ProcessResult, terminated: bool, limits: EpisodeLimits | None = None
) -> tuple[Termination, str | None, str | None, ValidatorFault | None]:
    """How the episode ended, from validator-side facts only: the runner's own kills,
    boot's status channel, the exit status and the peaks the runner measured. Nothing
    the agent printed decides it: a traceback saying MemoryError, or an exit code that
    says so, is a crash unless the runner measured the memory at its bound."""
    limits = limits or EpisodeLimits()
    stderr = result.stderr_tail
    if result.agent_started is False:
        detail = f"the sandbox ended before the agent started: {_last_line(stderr) or 'no output'}"
        return Termination.crash, None, detail, ValidatorFault(kind=FaultKind.sandbox, detail=detail)
    if result.signal is None and result.exit_code is not None and 128 < result.exit_code <= 128 + 64:
        # bubblewrap reports its child's death by signal N as exit status 128 + N.
        result.signal, result.exit_code = result.exit_code - 128, None
    # Still running after its own terminate (stopped at the grace, or the wall clock came first): the episode
    # had ended at terminate, so it is labelled so, and limits_hit names terminate_grace_s (arena.runner.grace).
    lingered = result.stopped or (result.timed_out and terminated)
    if result.timed_out and not lingered:
        return Termination.timeout, "wall_clock", "killed at the wall-clock limit", None
    if result.output_exceeded:
        return Termination.limit, "output", "killed for flooding stdout/stderr", None
    if result.cpu_limit_hit:
        return Termination.limit, "cpu", f"killed at the episode's CPU bound ({limits.cpu_s} s)", None
    if lingered:
        detail = f"stopped: still running {limits.terminate_grace_s:g} s after its terminate call"
        return (
            Termination.terminated,
            None,
            detail if result.stopped else "stopped at the wall clock after its terminate call",
            None,
        )
    reported = result.reported_exit is not None
    exit_code = result.reported_exit if reported else result.exit_code
    death = None if reported else result.signal  # after its report, the runner's kill ended it
    if death is not None or exit_code not in (0, None):
        limit = measured_limit(result, limits)
        if limit is not None:
            return Termination.limit, limit, f"stopped at the {limit} bound (as the validator measured it)", None
    if death is not None:
        return Termination.crash, None, f"killed by signal {death}"[:500], None
    if exit_code == EXIT_CRASH or (exit_code not in (0, None) and reported):
        return (Termination.terminated if terminated else Termination.crash), None, _last_line(stderr), None
    if exit_code == EXIT_NO_ENTRY:
        return Termination.crash, None, _last_line(stderr), None
    if exit_code not in (0, None):
        return Termination.crash, None, f"exit code {exit_code}: {_last_line(stderr)}", None
    return (Termination.terminated if terminated else Termination.returned), None, None, None


def measured_limit(result: ProcessResult, limits: EpisodeLimits) -> str | None:
    """The bound the runner's measurements show the agent at, if any (kernel figures:
    CPU time, free space and inodes of its /tmp, VmPeak, task and descriptor counts, the memory
    cgroup's OOM kills and refusals):
    from the last look when boot reported its end, else the peaks of the whole run."""
    peak = result.final or result.peak
    if result.memory is not None and result.memory.oom_kills:
        return "episode_memory_bytes"  # the kernel killed a process to hold the episode's memory bound
    if result.cpu_user_s + result.cpu_system_s >= limits.cpu_s:
        return "cpu"
    if peak.tmp_bytes_free is not None and peak.tmp_bytes_free < min(_TMP_FULL_BYTES, limits.tmp_bytes // 2):
        return "tmp_bytes"
    if peak.tmp_inodes_free is not None and peak.tmp_inodes_free < _NEAR_BOUND_COUNT:
        return "tmp_inodes"
    if peak.vm_peak_bytes >= MEMORY_NEAR_BOUND * limits.memory_bytes:
        return "memory"
    if peak.tasks >= limits.processes - _NEAR_BOUND_COUNT:
        return "processes"
    if peak.open_files >= limits.open_files - _NEAR_BOUND_COUNT:
        return "open_files"
    if peak.largest_tmp_file >= limits.file_size_bytes:
        return "file_size"
    if result.memory is not None and result.memory.limit_reached:
        return "episode_memory_bytes"  # an allocation (user or kernel) was refused at the bound
    return None


def _last_line(text: str) -> str | None:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:500] if lines else None


__all__ = ["AgentSource", "EpisodeRunner", "RunnerConfig", "SANDBOX_AGENT", "classify", "measured_limit"]
