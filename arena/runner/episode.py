"""Run one agent on one problem and return the validator's record of it."""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import signal
import socket
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from arena.problems.model import Intent, Problem
from arena.runner.boot import EXIT_CRASH, EXIT_MEMORY, EXIT_NO_ENTRY
from arena.runner.faults import boot_fault
from arena.runner.process import ProcessResult, run_process
from arena.runner.proxy import InferenceProxy, SamplingPin, UpstreamRegistry
from arena.runner.record import AgentRef, EpisodeLimits, EpisodeRecord, ProblemRef, ResourceUsage, Termination
from arena.runner.runtime import RUNTIME_RECHECK_S, ensure_runtime
from arena.runner.sandbox import (
    SANDBOX_AGENT,
    bubblewrap_command,
    require_bubblewrap,
    rlimit_setter,
    sandbox_environment,
    unsafe_command,
)
from arena.runner.server import EpisodeSession, build_episode_handler
from arena.runner.uids import UidLease
from arena.runner.wire import EpisodeWireServer
from arena.shop.index import CatalogIndex
from arena.shop.knowledge import KnowledgeBackend
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
    work_dir: Path | None = None  # where per-episode sockets live (private to the validator)


class EpisodeRunner:
    """Runs episodes against one catalog; safe to use for many concurrent episodes."""

    def __init__(
        self,
        catalog: CatalogIndex,
        registry: UpstreamRegistry,
        config: RunnerConfig | None = None,
        knowledge: KnowledgeBackend | None = None,
    ) -> None:
        self.catalog = catalog
        self.registry = registry
        self.config = config or RunnerConfig()
        self.knowledge = knowledge
        if self.config.sandbox:
            require_bubblewrap()
        self.runtime = ensure_runtime(self.config.runtime_dir)
        self._runtime_checked = time.monotonic()

    def _fresh_runtime(self) -> Path:
        # Hourly, re-ensure the runtime: that marks it in use (runtimes unused for a week are
        # pruned by whoever builds a newer one) and rebuilds it should it have gone anyway.
        if time.monotonic() - self._runtime_checked > RUNTIME_RECHECK_S:
            self.runtime = ensure_runtime(self.config.runtime_dir)
            self._runtime_checked = time.monotonic()
        return self.runtime

    async def run(self, agent: AgentSource, problem: Problem, model: str, attempt: int = 0) -> EpisodeRecord:
        limits = self.config.limits
        started_wall = time.perf_counter()
        started_at = datetime.now(UTC).isoformat()
        clock = lambda: time.perf_counter() - started_wall  # noqa: E731
        allowed = KNOWLEDGE_TOOLS if problem.intent is Intent.knowledge and self.knowledge else SHOP_TOOLS
        env = ShopEnvironment(self.catalog, knowledge=self.knowledge, allowed=allowed)
        llm_calls = []
        proxy = InferenceProxy(self.registry, self.config.allowlist, limits, llm_calls.append, clock, self.config.pin)
        public = {"id": problem.id, "intent": problem.intent.value, "query": problem.query}
        session = EpisodeSession(env, public, model, proxy, clock)

        workdir = Path(tempfile.mkdtemp(prefix="episode-", dir=self.config.work_dir))
        uid_lease: UidLease | None = None
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
            server = EpisodeWireServer(build_episode_handler(session))
            await server.start(listener)
            server_ready_s = clock()
            process_start_s = clock()
            if self.config.sandbox:
                uid_lease = UidLease()
                argv = bubblewrap_command(
                    runtime=self._fresh_runtime(), agent_dir=agent_dir, socket_path=socket_path, uid=uid_lease.uid
                )
                process_env = None
            else:
                argv = unsafe_command(runtime=self._fresh_runtime(), agent_file=agent_dir / "agent.py")
                process_env = sandbox_environment(str(socket_path)) | {"PATH": os.environ.get("PATH", "")}
            result = await asyncio.to_thread(
                run_process,
                argv,
                wall_s=limits.wall_s,
                output_bytes=limits.output_bytes,
                preexec=rlimit_setter(limits),
                env=process_env,
                cwd=str(workdir) if not self.config.sandbox else None,
            )
            # The agent has exited: calls still in flight are cancelled and recorded as hung up.
            await server.close()
            listener.close()
        finally:
            if uid_lease is not None:
                uid_lease.release()  # the sandbox's pid namespace is gone: no process of that uid is left
            shutil.rmtree(workdir, ignore_errors=True)

        termination, limit_hit, error = classify(result, env.state.terminated)
        record = EpisodeRecord(
            episode_id=f"e-{uuid.uuid4().hex[:16]}",
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
            final_recommendation=env.state.recommended,
            terminate_status=env.state.status,
            termination=termination,
            limit_hit=limit_hit,
            exit_code=result.exit_code,
            signal=result.signal,
            error=error,
            stdout_tail=result.stdout_tail,
            stderr_tail=result.stderr_tail,
            usage=ResourceUsage(
                wall_s=round(clock(), 4),
                cpu_user_s=result.cpu_user_s,
                cpu_system_s=result.cpu_system_s,
                max_rss_kib=result.max_rss_kib,
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
            },
        )
        record.validator_fault = record.validator_fault or boot_fault(session.booted_s is not None, result.exit_code, result.signal, result.timed_out)  # fmt: skip
        return record


_SIGNAL_LIMITS = {signal.SIGXCPU: "cpu", signal.SIGXFSZ: "file_size"}


def classify(result: ProcessResult, terminated: bool) -> tuple[Termination, str | None, str | None]:
    """How the episode ended, from the process's fate (not from anything the agent said)."""
    stderr = result.stderr_tail
    if result.signal is None and result.exit_code is not None and 128 < result.exit_code <= 128 + 64:
        # bubblewrap reports its child's death by signal N as exit status 128 + N.
        result.signal, result.exit_code = result.exit_code - 128, None
    if result.timed_out:
        return Termination.timeout, "wall_clock", "killed at the wall-clock limit"
    if result.output_exceeded:
        return Termination.limit, "output", "killed for flooding stdout/stderr"
    if result.signal is not None:
        limit = _SIGNAL_LIMITS.get(result.signal)
        if limit:
            return Termination.limit, limit, f"killed by {signal.Signals(result.signal).name}"
        if result.signal == signal.SIGKILL and "MemoryError" in stderr:
            return Termination.limit, "memory", "killed after running out of memory"
        return Termination.crash, None, f"killed by signal {result.signal}"
    if result.exit_code == EXIT_MEMORY:
        return Termination.limit, "memory", "MemoryError at the memory limit"
    if result.exit_code == EXIT_CRASH:
        limit = _limit_from_traceback(stderr)
        if limit is not None:
            return Termination.limit, limit, _last_line(stderr)
        if terminated:
            return Termination.terminated, None, _last_line(stderr)
        return Termination.crash, None, _last_line(stderr)
    if result.exit_code == EXIT_NO_ENTRY:
        return Termination.crash, None, _last_line(stderr)
    if result.exit_code not in (0, None):
        return Termination.crash, None, f"exit code {result.exit_code}: {_last_line(stderr)}"
    return (Termination.terminated if terminated else Termination.returned), None, None


def _limit_from_traceback(stderr: str) -> str | None:
    if "MemoryError" in stderr:
        return "memory"
    if "BlockingIOError" in stderr and "Resource temporarily unavailable" in stderr:
        return "processes"  # fork/thread creation refused at RLIMIT_NPROC
    if "File too large" in stderr:
        return "file_size"
    if "Too many open files" in stderr:
        return "open_files"
    return None


def _last_line(text: str) -> str | None:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:500] if lines else None


__all__ = ["AgentSource", "EpisodeRunner", "RunnerConfig", "SANDBOX_AGENT", "classify"]
