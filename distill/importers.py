"""Where trajectories come from: episode-record files, the store, and two outside formats.

Every source yields ``(Trajectory, Trace)`` pairs, or an ``Unreadable`` naming
the file, the line and the reason: a bad line is reported, never skipped in
silence. Outside formats are specified in ``../shared/data/formats.md``:
ShoppingBench's official rollouts (the benchmark harness recorded the tool
results: validator-recorded) and the live subnet's dialogue steps (written by
the agent itself: agent-reported, so they can never pass attribution).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from arena.jsonl import json_lines
from arena.problems.partitions import PartitionName
from arena.problems.suite_manifest import sha256_file
from arena.runner.record import EpisodeRecord, knowledge_unscoped
from arena.shop.tools import KNOWLEDGE_TOOLS, SHOP_TOOLS, openai_tool_schemas
from distill.normalize import ExecutedCall, ModelTurn, Trace, judge_info, normalize_record, tool_content
from distill.schema import AgentInfo, JudgeInfo, Provenance, Trajectory, TrajectoryMetadata

Item = tuple[Trajectory, Trace]


class Unreadable(BaseModel):
    source: str
    line: int
    reason: str

    def __str__(self) -> str:
        return f"{self.source}:{self.line}: {self.reason}"


class CorpusFileError(ValueError):
    """An input file the export cannot use at all (unreadable, not a suite, a bad judgment line)."""


def _lines(path: Path) -> Iterator[tuple[int, Any | Unreadable]]:
    try:
        for number, row in json_lines(path):
            if isinstance(row, ValueError):
                row = Unreadable(source=str(path), line=number, reason=f"not valid JSON ({row})")
            yield number, row
    except OSError as exc:
        raise CorpusFileError(f"{path}: cannot read it ({exc.strerror or exc})") from None


def _validation(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(map(str, first["loc"])) or "(top)"
    return f"{where}: {first['msg']}" + (f" (+{exc.error_count() - 1} more)" if exc.error_count() > 1 else "")


# --- judgments and suites -------------------------------------------------------------------------


def read_judgments(paths: Iterable[Path]) -> dict[str, JudgeInfo | None]:
    """``arena judge run`` output: episode id -> judgment (None: pending). A bad line fails the export."""
    found: dict[str, JudgeInfo | None] = {}
    for path in paths:
        for number, row in _lines(Path(path)):
            if isinstance(row, Unreadable):
                raise CorpusFileError(str(row))
            if not isinstance(row, dict) or "episode_id" not in row:
                raise CorpusFileError(f"{path}:{number}: not a judgment line (no episode_id)")
            try:
                found[str(row["episode_id"])] = judge_info(row)
            except (KeyError, TypeError, ValueError) as exc:
                raise CorpusFileError(f"{path}:{number}: not a judgment line ({exc})") from None
    return found


class ProblemPlace(BaseModel):
    cluster_id: str
    partition: str
    suite_id: str


def read_suites(paths: Iterable[Path]) -> dict[str, ProblemPlace]:
    """Problem id -> leak cluster and partition, from suite directories (a sealed partition is skipped)."""
    from arena.problems.suites import Suite, SuiteError

    places: dict[str, ProblemPlace] = {}
    for path in paths:
        try:
            suite = Suite(path)
        except (SuiteError, OSError) as exc:
            raise CorpusFileError(f"{path}: not a suite directory ({exc})") from None
        for partition in PartitionName:
            try:
                problems = suite.problems(partition)
            except SuiteError:
                continue  # a sealed race bank: its clusters are in the manifest, its problems are not here
            for problem in problems:
                places[problem.id] = ProblemPlace(
                    cluster_id=problem.cluster_id or problem.id,
                    partition=partition.value,
                    suite_id=suite.manifest.version,
                )
    return places


# --- episode records ------------------------------------------------------------------------------


def record_items(
    paths: Iterable[Path], judgments: dict[str, JudgeInfo | None], places: dict[str, ProblemPlace]
) -> Iterator[Item | Unreadable]:
    """Episode records (``arena run-agent --out``), with judgments and suite places joined by id."""
    for path in paths:
        for number, row in _lines(Path(path)):
            if isinstance(row, Unreadable):
                yield row
                continue
            if knowledge_unscoped(row):  # may quote another problem's answer page (issue 30)
                reason = "web_search answers predate the per-problem knowledge filter; left out"
                yield Unreadable(source=str(path), line=number, reason=reason)
                continue
            try:
                record = EpisodeRecord.model_validate(row)
            except ValidationError as exc:
                yield Unreadable(source=str(path), line=number, reason=f"not an episode record: {_validation(exc)}")
                continue
            place = places.get(record.problem.id)
            try:
                yield normalize_record(
                    record,
                    source=f"records:{Path(path).name}",
                    judgment=judgments.get(record.episode_id),
                    cluster_id=place.cluster_id if place else None,
                    partition=place.partition if place else record.problem.row.get("partition"),
                    suite_id=place.suite_id if place else None,
                )
            except ValueError as exc:
                yield Unreadable(source=str(path), line=number, reason=f"cannot be normalised: {exc}")


# --- outside formats ------------------------------------------------------------------------------

_TAG = {name: re.compile(rf"<{name}>(.*?)</{name}>", re.DOTALL) for name in ("think", "tool_call", "response")}


def _step_calls(step: dict[str, Any]) -> list[dict[str, Any]]:
    """The step's calls: ``message.tool_call``, else the JSON array inside ``<tool_call>`` in the content."""
    completion = step.get("completion") or {}
    calls = (completion.get("message") or {}).get("tool_call")
    if calls is None:
        match = _TAG["tool_call"].search(completion.get("content") or "")
        calls = json.loads(match.group(1)) if match else []
    if not isinstance(calls, list) or not all(isinstance(c, dict) and "name" in c for c in calls):
        raise ValueError("tool_call is not a list of {name, parameters}")
    return calls


def _think(completion: dict[str, Any]) -> str:
    message = completion.get("message") or {}
    if message.get("think"):
        return str(message["think"])
    match = _TAG["think"].search(completion.get("content") or "")
    return match.group(1).strip() if match else str(completion.get("reasoning_content") or "")


def _response_text(completion: dict[str, Any]) -> str:
    message = completion.get("message") or {}
    if message.get("response"):
        return str(message["response"])
    match = _TAG["response"].search(completion.get("content") or "")
    return match.group(1).strip() if match else ""


def _steps_trace(steps: list[Any], provenance: Provenance) -> tuple[Trace, list[dict[str, Any]], str, Any]:
    """One rollout (a list of steps) as a trace plus its canonical messages, query and first timestamp."""
    if not isinstance(steps, list) or not steps:
        raise ValueError("a rollout must be a non-empty JSON list of steps")
    first_info = (steps[0] or {}).get("extra_info") or {}
    query = str(first_info.get("query") or "")
    system = next(
        (m.get("content") for m in (steps[0].get("prompt") or []) if isinstance(m, dict) and m.get("role") == "system"),
        None,
    )
    messages: list[dict[str, Any]] = ([{"role": "system", "content": str(system)}] if system else []) + [
        {"role": "user", "content": query}
    ]
    trace = Trace(provenance=provenance, dialogue="text-history")
    names: set[str] = set()
    for number, step in enumerate(steps):
        if not isinstance(step, dict) or not isinstance(step.get("completion"), dict):
            raise ValueError(f"step {number} has no completion object")
        completion = step["completion"]
        calls = _step_calls(step)
        observations = list((completion.get("message") or {}).get("obs") or [])
        counts: dict[str, int] = {}
        tool_calls, executed = [], []
        for call in calls:
            base = str(
                call.get("tool_call_id") or hashlib.sha256(json.dumps(call, sort_keys=True).encode()).hexdigest()[:8]
            )
            counts[base] = counts.get(base, 0) + 1
            call_id = base if counts[base] == 1 else f"{base}-{counts[base]}"  # identical calls share an id
            arguments = call.get("parameters") or {}
            if not isinstance(arguments, dict):
                raise ValueError(f"step {number}: parameters of {call['name']} are not an object")
            names.add(str(call["name"]))
            tool_calls.append(
                {"id": call_id, "type": "function",
                 "function": {"name": str(call["name"]), "arguments": json.dumps(arguments, ensure_ascii=False)}}
            )  # fmt: skip
            seen = next((o for o in observations if str(o.get("tool_call_id")) == base), None)
            if seen is not None:
                observations.remove(seen)
            executed.append(
                ExecutedCall(
                    name=str(call["name"]),
                    arguments=arguments,
                    result=seen.get("results") if seen else None,
                    observed=provenance == "validator-recorded" and seen is not None,
                )
            )
        think = _think(completion)
        response: dict[str, Any] = {"content": _response_text(completion), "reasoning_content": think or None}
        if tool_calls:
            response["tool_calls"] = tool_calls
        request = [m for m in step.get("prompt") or [] if isinstance(m, dict)]
        trace.turns.append(ModelTurn(request=request, response=response))
        trace.executed.extend(executed)
        assistant = {"role": "assistant", "content": response["content"]}
        if think:
            assistant["reasoning_content"] = think
        if tool_calls:
            assistant["tool_calls"] = tool_calls
        messages.append(assistant)
        messages.extend(
            {"role": "tool", "tool_call_id": c["id"], "content": tool_content(e)}
            for c, e in zip(tool_calls, executed, strict=True)
        )
        for done in executed:
            if done.name == "recommend_product":
                trace.final_recommendation = [p.strip() for p in str(done.arguments.get("product_ids", "")).split(",")]
        if not calls or "terminate" in {c["name"] for c in calls}:
            break
    trace.tools = openai_tool_schemas(KNOWLEDGE_TOOLS if "web_search" in names else SHOP_TOOLS)
    return trace, messages, query, first_info.get("timestamp")


def _outside_items(path: Path, provenance: Provenance, kind: str) -> Iterator[Item | Unreadable]:
    path = Path(path)
    agent = AgentInfo(name=path.stem, sha256=sha256_file(path))
    for number, row in _lines(path):
        if isinstance(row, Unreadable):
            yield row
            continue
        try:
            trace, messages, query, stamp = _steps_trace(row, provenance)
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            yield Unreadable(source=str(path), line=number, reason=f"not a {kind} rollout: {exc}")
            continue
        started = datetime.fromtimestamp(stamp / 1000, UTC).isoformat() if isinstance(stamp, int | float) else None
        metadata = TrajectoryMetadata(
            episode_id=f"{kind}-{hashlib.sha256(f'{path.name}:{number}'.encode()).hexdigest()[:16]}",
            problem_id=f"q-{hashlib.sha256(query.encode()).hexdigest()[:16]}",
            intent="unknown",
            agent=agent,
            started_at=started,
            provenance=provenance,
            source=f"{kind}:{path.name}:{number}",
        )
        yield Trajectory(messages=messages, tools=trace.tools, metadata=metadata), trace


def shoppingbench_items(path: Path) -> Iterator[Item | Unreadable]:
    """ShoppingBench's official rollout records (``run_rollout.py`` output)."""
    return _outside_items(path, "validator-recorded", "shoppingbench")


def subnet_items(path: Path) -> Iterator[Item | Unreadable]:
    """The live subnet's dialogue steps (agent-reported: no tool results, nothing attributable)."""
    return _outside_items(path, "agent-reported", "subnet")


# --- the store ------------------------------------------------------------------------------------


def store_items(store: Any, *, cycles: tuple[int, int] | None = None, suites: list[str] | None = None,
                batch_size: int = 500) -> Iterator[Item | Unreadable]:  # fmt: skip
    """Done episodes with their latest done judgment and problem place, streamed in batches of ``batch_size``."""
    from arena.store.exports import exportable_episodes

    source = f"store:{store.url}"
    with store.sessions() as session:
        for row in exportable_episodes(session, cycles=cycles, suites=suites, batch_size=batch_size):
            if knowledge_unscoped(row.record):  # may quote another problem's answer page (issue 30)
                reason = f"episode {row.id}: web_search answers predate the per-problem knowledge filter; left out"
                yield Unreadable(source=source, line=row.id, reason=reason)
                continue
            try:
                record = EpisodeRecord.model_validate(row.record)
            except ValidationError as exc:
                yield Unreadable(source=source, line=row.id, reason=f"episode {row.id}: {_validation(exc)}")
                continue
            judged = JudgeInfo.model_validate(row.judgment.model_dump()) if row.judgment is not None else None
            try:
                trajectory, trace = normalize_record(
                    record,
                    source="store",
                    outcome=row.outcome,
                    judgment=judged,
                    cluster_id=row.cluster_id,
                    partition=row.partition,
                    cycle=row.cycle,
                    submission_id=row.submission_id,
                    suite_id=row.suite_id,
                )
            except ValueError as exc:
                yield Unreadable(source=source, line=row.id, reason=f"episode {row.id} cannot be normalised: {exc}")
                continue
            trajectory.metadata.episode_id = str(row.id)  # the store's id: what the API and verdicts use
            yield trajectory, trace
