"""The episode record: what the validator saw an agent do on one problem.

The validator writes it, never the agent: tool calls are recorded where they
are executed, LLM calls where the proxy forwards them. It is what every later
stage reads (outcome scorer, judge, corpus); it round-trips through JSON
losslessly. Bump ``RECORD_VERSION`` on any change of meaning.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, Field

RECORD_VERSION = 1


class Termination(StrEnum):
    terminated = "terminated"  # the agent called terminate
    returned = "returned"  # agent_main returned without terminate
    timeout = "timeout"  # the wall-clock limit killed it
    crash = "crash"  # an exception escaped agent_main, or the process died
    limit = "limit"  # a resource limit (memory, CPU, processes, output, file size) stopped it

    @property
    def can_succeed(self) -> bool:
        """Whether the episode's answer may score as a success. A timeout or a limit is the
        validator stopping an episode that had not ended: whatever it recommended by then, it is
        a failure (else holding a worker to the wall clock, or a bound, would cost nothing).
        An agent that ended on its own (terminate, return, even a crash after its answer) is
        scored on its last recommendation. arena.runner.verdict applies it for every caller."""
        return self not in (Termination.timeout, Termination.limit)


class FaultKind(StrEnum):
    """What the validator failed to provide; never the agent's doing."""

    sandbox = "sandbox"  # bubblewrap missing, or it failed before the agent process started
    upstream = "upstream"  # the model server was down or erroring (the proxy's own view)
    judge = "judge"  # the reasoning judge was unavailable
    store = "store"  # the database failed
    runner = "runner"  # a bug or crash in the validator's own code


class ValidatorFault(BaseModel):
    """Set only from validator-side signals (bwrap's status, the proxy's view of the
    upstream, the runner's own exceptions), never from anything the agent printed.
    An episode with a fault is retried and never scored against the miner."""

    kind: FaultKind
    detail: str


class ProblemRef(BaseModel):
    """The problem as the episode ran it. ``row`` is the full official-shape row
    (with the reward): downstream stages read it from here; the judge's evidence
    must leave the reward out."""

    id: str
    intent: str
    query: str
    cluster_id: str | None = None
    row: dict[str, Any] = Field(default_factory=dict)


class AgentRef(BaseModel):
    name: str  # the agent file's stem
    sha256: str  # of the agent's source bytes


class ToolCallRecord(BaseModel):
    index: int
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    ok: bool
    result: Any = None
    error: str | None = None
    notice: str | None = None
    at_s: float  # seconds since the episode started
    duration_ms: float
    # Set when the call was refused without being executed: the EpisodeLimits field that refused
    # it (e.g. "tool_ids", "tool_record_bytes"), or "terminated" for a call after terminate.
    refused: str | None = None


class TokenUsage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0


class LLMCallRecord(BaseModel):
    """One request through the inference proxy, as the proxy saw it. Only
    ``response`` is the model's output; ``request.messages`` are agent-written."""

    index: int
    model: str
    upstream: str | None = None
    stream: bool = False
    request: dict[str, Any] = Field(default_factory=dict)  # messages, tools, tool_choice, sampling params
    response: dict[str, Any] | None = None  # content, reasoning_content, tool_calls, finish_reason
    usage: TokenUsage = Field(default_factory=TokenUsage)
    status_code: int = 200
    error: str | None = None  # set when the proxy refused or the upstream failed
    at_s: float
    latency_ms: float  # arrival at the proxy to the record: the call as the agent waited for it
    # From sending the request upstream to the last byte of its answer (both attempts when the
    # proxy re-sent a capped request); None when nothing was sent. latency_ms minus this is the
    # proxy's own share of the call.
    upstream_ms: float | None = None


class EpisodeLimits(BaseModel):
    wall_s: float = Field(300.0, gt=0, description="Wall-clock limit of one episode; the whole process tree is killed.")
    memory_bytes: int = Field(4 * 1024**3, gt=0, description="Address-space limit of the agent (RLIMIT_AS).")
    cpu_s: int = Field(
        300, gt=0, description="CPU-seconds of the whole episode, all its processes together (measured by the runner)."
    )
    episode_memory_bytes: int = Field(
        4 * 1024**3,
        gt=0,
        description="Memory charged to all the episode's processes together, user and kernel (socket and pipe "
        "buffers, page tables, its /tmp): a memory cgroup (v1 or v2) where the host offers one.",
    )
    processes: int = Field(64, gt=0, description="Processes and threads of the agent's uid (RLIMIT_NPROC).")
    open_files: int = Field(256, gt=0, description="Open file descriptors (RLIMIT_NOFILE).")
    file_size_bytes: int = Field(64 * 1024**2, gt=0, description="Largest file the agent may write (RLIMIT_FSIZE).")
    tmp_bytes: int = Field(
        256 * 1024**2, gt=0, description="Bytes of the agent's private /tmp (a tmpfs, in host memory)."
    )
    tmp_inodes: int = Field(
        4096, gt=0, description="Files and folders in the private /tmp (enforced when the validator runs as root)."
    )
    output_bytes: int = Field(
        64 * 1024, gt=0, description="Tail of stdout and of stderr kept; 256x this kills the agent."
    )
    llm_calls: int = Field(64, ge=0, description="Inference calls per episode.")
    prompt_tokens: int = Field(400_000, ge=0, description="Prompt tokens per episode, summed over calls.")
    completion_tokens: int = Field(64_000, ge=0, description="Completion tokens per episode, summed over calls.")
    llm_call_timeout_s: float = Field(120.0, gt=0, description="Timeout of one inference call.")
    terminate_grace_s: float = Field(
        2.0,
        gt=0,
        description="How long the agent may run on after its terminate call before its sandbox is stopped.",
    )
    # --- the episode server, tools and proxy: each bound refuses only the episode's own request
    # and is named in EpisodeRecord.limits_hit (docs/security.md).
    connections: int = Field(16, gt=0, description="Connections the agent may hold open on its socket at once.")
    buffered_bytes: int = Field(
        16 * 1024**2, gt=0, description="Request bytes held for one episode, summed over its connections."
    )
    unsent_bytes: int = Field(
        4 * 1024**2,
        gt=0,
        description="Answer bytes queued unread over the episode's connections (split evenly, at least 64 KiB "
        "each); past its share a connection is no longer read.",
    )
    tool_body_bytes: int = Field(64 * 1024, gt=0, description="Largest request body of a tool call.")
    llm_body_bytes: int = Field(4 * 1024**2, gt=0, description="Largest request body of an inference call.")
    tool_calls: int = Field(256, ge=0, description="Tool calls kept in the record; later calls are refused, counted.")
    tool_ids: int = Field(50, gt=0, description="Product ids in one view_product_information/recommend_product call.")
    tool_result_bytes: int = Field(1024**2, gt=0, description="Largest encoded answer of one tool call.")
    tool_record_bytes: int = Field(
        8 * 1024**2, gt=0, description="Bytes of tool-call arguments and results kept in one episode's record."
    )
    llm_calls_in_flight: int = Field(4, gt=0, description="Inference calls of one episode in flight at once.")
    llm_refusals: int = Field(
        256, ge=0, description="Inference calls refused by the proxy kept in the record; later ones are counted."
    )
    # --- the record itself (arena/runner/storable.py): what the store could refuse is rewritten, and named.
    record_depth: int = Field(
        64,
        ge=8,
        le=200,
        description="Nesting levels of the episode record, from its root; a deeper agent-written structure is "
        "replaced by a marker (the store's JSON encoders stop at 255).",
    )
    record_bytes: int = Field(
        64 * 1024**2,
        ge=1024**2,
        le=200 * 1024**2,
        description="Bytes of the episode record as JSON; past it its longest strings are cut (PostgreSQL's "
        "JSONB holds at most 255 MiB).",
    )


class LimitHit(BaseModel):
    """A bound of the episode server, tools or proxy that refused part of the episode: once
    per limit, however often it was hit, so hitting it cannot grow the record."""

    # The EpisodeLimits field; or record_text / record_numbers: the record was made storable there
    # (arena/runner/storable.py).
    limit: str
    count: int = 1
    first_at_s: float  # seconds since the episode started
    detail: str  # what the first hit refused


class ResourceUsage(BaseModel):
    """Measured by the runner from outside the sandbox (arena/runner/accounting.py)."""

    wall_s: float = 0.0
    cpu_user_s: float = 0.0  # of every process of the episode, alive or dead
    cpu_system_s: float = 0.0
    max_rss_kib: int = 0
    peak_tasks: int = 0  # most processes and threads of the agent seen at once
    peak_vm_bytes: int = 0  # largest address space one of its processes reached
    peak_open_files: int = 0  # most descriptors one process held (sampled)
    tmp_bytes_used: int = 0  # of the private /tmp, at its fullest as sampled
    tmp_inodes_used: int = 0
    # The episode's memory cgroup ("v1" or "v2") when the host offered one: then peak_memory_bytes is the
    # most its processes held at once, user and kernel memory together. None: no writable memory
    # controller, and only the per-process bounds held (RLIMIT_AS, RLIMIT_NOFILE, RLIMIT_NPROC, and the
    # syscall filter's default-sized socket and pipe buffers).
    memory_cgroup: str | None = None
    peak_memory_bytes: int = 0


class Perturbation(BaseModel):
    """What the probe changed, so the judge can read its answer against it."""

    renamed: dict[str, str] = Field(default_factory=dict)  # original id -> the probe's id (products and shops)
    prices: dict[str, float] = Field(default_factory=dict)  # the probe's product id -> its price in the probe
    original_prices: dict[str, float] = Field(default_factory=dict)  # original product id -> its price
    compared: list[str] = Field(default_factory=list)  # original product ids the response named
    # A response with no price claim: the compared items' content (title, attributes, its price's rank) moved
    # to each other's places, ids renamed by place. Original id -> the original id whose content now sits in
    # its place (empty when the prices alone were reversed).
    moved: dict[str, str] = Field(default_factory=dict)
    # Original product id -> its title as the request showed it (at most MAX_TITLES): an answer may name items by
    # title alone, and its claims are read by title too.
    titles: dict[str, str] = Field(default_factory=dict)


class ProbeRecord(BaseModel):
    """One probe: the perturbed request as sent, what came back (or why nothing did)."""

    call_index: int  # the episode's inference call it re-asks
    upstream: str | None = None
    model: str = ""
    request: dict[str, Any] = Field(default_factory=dict)
    response: dict[str, Any] | None = None  # like LLMCallRecord.response
    completion_tokens: int = 0
    prompt_tokens: int = 0
    # "answered"; "unavailable": the validator's failure (upstream down or erroring), never the miner's;
    # "unchanged": the request held no product data to change.
    status: Literal["answered", "unavailable", "unchanged"]
    error: str | None = None
    perturbation: Perturbation = Field(default_factory=Perturbation)
    # Ids and numbers the response names that its request did not hold in plain form, taken before the
    # record's bound could cut the request (the judge's provenance check on a cut record reads these).
    unheld: list[str] = Field(default_factory=list)
    # The compared items' original prices that the changed request still states somewhere (the agent's own
    # turns are left as written), taken before any cut: an answer repeating one of these is not stale.
    held_prices: list[float] = Field(default_factory=list)
    latency_ms: float = 0.0


class EpisodeRecord(BaseModel):
    version: int = RECORD_VERSION
    episode_id: str
    problem: ProblemRef
    agent: AgentRef
    sandbox: str  # "bubblewrap" or "none (unsafe)"
    model: str
    attempt: int = 0
    started_at: str  # ISO-8601 UTC
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    llm_calls: list[LLMCallRecord] = Field(default_factory=list)
    final_recommendation: list[str] | None = None
    terminate_status: str | None = None
    termination: Termination
    limit_hit: str | None = None  # which limit, when termination is limit or timeout
    exit_code: int | None = None
    signal: int | None = None
    error: str | None = None  # the crash's traceback tail, or why the runner stopped it
    validator_fault: ValidatorFault | None = None  # the validator's failure, not the agent's (see ValidatorFault)
    limits_hit: list[LimitHit] = Field(default_factory=list)  # bounds of the server, tools and proxy that refused
    stdout_tail: str = ""
    stderr_tail: str = ""
    usage: ResourceUsage = Field(default_factory=ResourceUsage)
    limits: EpisodeLimits = Field(default_factory=EpisodeLimits)
    timings: dict[str, float] = Field(default_factory=dict)  # e.g. sandbox_start_ms, first_tool_call_ms
    outcome: dict[str, Any] | None = None  # the OutcomeScore, once scored
    # "problem" when web_search read only this problem's pages and neutral ones (issue 30); None on a
    # record made before that filter, whose web_search answers may hold other problems' answer pages.
    knowledge_scope: Literal["problem"] | None = None
    # The counterfactual probes (arena.runner.probe): the validator's re-asks, never the agent's calls.
    probes: list[ProbeRecord] = Field(default_factory=list)

    def inference_tokens(self) -> TokenUsage:
        total = TokenUsage()
        for call in self.llm_calls:
            total.prompt_tokens += call.usage.prompt_tokens
            total.completion_tokens += call.usage.completion_tokens
            total.total_tokens += call.usage.total_tokens
        return total


def knowledge_unscoped(record: Any) -> bool:
    """A stored record (its JSON) with web_search answers read from the whole corpus: made before the
    per-problem filter, so its tool results and the model messages that quote them may hold another
    problem's answer page (a race-bank or held-out one). The API and the corpus export withhold it."""
    if not isinstance(record, dict) or record.get("knowledge_scope") is not None:
        return False
    calls = record.get("tool_calls") or []
    return any(isinstance(c, dict) and c.get("name") == "web_search" and c.get("ok") and c.get("result") for c in calls)
