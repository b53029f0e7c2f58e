"""Telling the validator's failures from the agent's, from validator-side signals only.

Four signals, none of them anything the agent printed:

- the record's ``validator_fault``, set by the runner when bubblewrap failed before the agent process
  started (its ``--json-status-fd`` report);
- the boot handshake (``boot_fault``): the sandbox's boot code (``arena/runner/boot.py``) fetches the
  episode before it loads a line of the agent, so an episode server that was never asked means the
  sandbox or the runtime failed before the agent started (whatever the process printed or returned);
- the proxy's own view of the model server (``upstream_fault``): calls the proxy forwarded and the
  upstream did not answer (502: refused, broken, erroring; 504: the per-call deadline). The agent's
  own refused requests (400, 403, 404, 413, 422, 429, 499) are the agent's;
- the exception the runner raised (``exception_fault``): bubblewrap missing, the store failing, a bug.

Whether such a failure is the validator's for everyone or follows the one agent is then settled by the
**canary**: a reference agent (``CANARY_SOURCE``: one tool call, one inference call, terminate) run by
the same worker, on the same runner and sandbox, on the same problem. A canary that runs clean says the
sandbox, the model server and the runner work, so the failure follows the submission; a canary that
fails too says the validator cannot measure right now.
"""

from __future__ import annotations

from pydantic import BaseModel

from arena.runner.record import EpisodeRecord, FaultKind, Termination, ValidatorFault

# The proxy answers 502 only when the upstream failed (refused, broke off, answered an error or garbage)
# and 504 only when the upstream missed the per-call deadline (docs/inference-proxy.md).
UPSTREAM_FAILURE_STATUSES = frozenset({502, 504})
PROXY_BUG_STATUS = 500  # proxy_error: the validator's own code failed

CANARY_NAME = "arena-canary"
CANARY_SOURCE = b'''"""The validator's canary: proves the sandbox, the tools and the model server work."""

import arena.sdk as sdk


def agent_main(problem):
    try:  # a tool's answer (even an error) proves the tool server works; only the model call must succeed
        sdk.tool("find_product", q=problem["query"][:200] or "product", page=1)
    except sdk.ToolError:
        pass
    body = {"model": sdk.model(), "messages": [{"role": "user", "content": problem["query"][:500]}]}
    sdk._request("POST", "/v1/chat/completions", body)
    sdk.tool("terminate", status="failure")
'''


class CanaryResult(BaseModel):
    ok: bool
    detail: str


def upstream_fault(record: EpisodeRecord) -> ValidatorFault | None:
    """The model server failed calls the proxy forwarded for this episode (the proxy's records)."""
    failed = [c for c in record.llm_calls if c.status_code in UPSTREAM_FAILURE_STATUSES]
    if failed:
        first = failed[0]
        return ValidatorFault(
            kind=FaultKind.upstream,
            detail=f"{len(failed)} of {len(record.llm_calls)} inference call(s) failed upstream "
            f"(first: HTTP {first.status_code}: {first.error or 'no message'})",
        )
    bugs = [c for c in record.llm_calls if c.status_code == PROXY_BUG_STATUS]
    if bugs:
        return ValidatorFault(kind=FaultKind.runner, detail=f"the inference proxy failed: {bugs[0].error}")
    return None


def boot_fault(booted: bool, exit_code: int | None, signal: int | None, timed_out: bool) -> ValidatorFault | None:
    """The agent never started: the boot handshake never reached the episode server."""
    if booted:
        return None
    how = "timed out" if timed_out else f"exit code {exit_code}" if signal is None else f"signal {signal}"
    return ValidatorFault(
        kind=FaultKind.sandbox,
        detail=f"the sandbox ended ({how}) before the agent started: the boot handshake never arrived",
    )


def record_fault(record: EpisodeRecord) -> ValidatorFault | None:
    """The validator's failure in a finished episode's record, if any (the runner's mark first)."""
    return record.validator_fault or upstream_fault(record)


def exception_fault(exc: BaseException) -> ValidatorFault:
    """What an exception out of the runner says about the validator."""
    from arena.runner.sandbox import SandboxUnavailable
    from arena.store.resilience import is_transient

    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, SandboxUnavailable):
        return ValidatorFault(kind=FaultKind.sandbox, detail=text)
    if is_transient(exc) or _is_database_error(exc):
        return ValidatorFault(kind=FaultKind.store, detail=text)
    return ValidatorFault(kind=FaultKind.runner, detail=text)


def _is_database_error(exc: BaseException) -> bool:
    from sqlalchemy import exc as sa_exc

    return isinstance(exc, sa_exc.SQLAlchemyError)


def canary_verdict(record: EpisodeRecord) -> CanaryResult:
    """Did the canary's episode show a working validator? Judged from the record only."""
    fault = record_fault(record)
    if fault is not None:
        return CanaryResult(ok=False, detail=f"{fault.kind.value}: {fault.detail}")
    if record.termination not in (Termination.terminated, Termination.returned):
        return CanaryResult(ok=False, detail=f"the canary ended {record.termination.value}: {record.error or ''}")
    if not record.tool_calls or not any(c.status_code == 200 for c in record.llm_calls):
        return CanaryResult(ok=False, detail="the canary reached neither the tools nor the model")
    return CanaryResult(ok=True, detail="the canary ran clean on the same sandbox and model server")
