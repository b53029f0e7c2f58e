"""The dashboard: the pages a person reads in a browser, server-rendered from the same typed reads as the JSON API.

Every page is built from the JSON API's own answers (``arena.api.reads``), so the redaction rules of
``arena.api.redaction`` and the embargo of ``arena.api.embargo_view`` apply
unchanged: the dashboard can never show more than ``/v1`` does. What is added
here is presentation: progress per stage, the trajectory as ordered steps,
the answer set against the gold, and the latest export's verdict.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel
from sqlalchemy.orm import Session

from arena.api import charts, history, reads, views
from arena.api.embargo_view import embargo_state
from arena.api.redaction import Redactor
from arena.api.schemas import EpisodeDetail
from arena.api.templates import render
from arena.race.embargo import EmbargoRule
from arena.runner.record import EpisodeRecord
from arena.store import cycles as cycle_rows
from arena.store import submissions as submission_rows
from arena.store import tallies
from arena.store.cycles import latest_cycle
from arena.store.exports import latest_verdict
from arena.store.models import utcnow
from arena.store.models_race import EpisodeStatus


class StageProgress(BaseModel):
    stage: str
    pending: int
    running: int
    done: int
    failed: int

    @property
    def total(self) -> int:
        return self.pending + self.running + self.done + self.failed

    @property
    def finished(self) -> int:
        return self.done + self.failed

    @property
    def percent(self) -> int:
        return round(100 * self.finished / self.total) if self.total else 0


class ToolRequest(BaseModel):
    """A tool call the model emitted (its arguments as the model wrote them, parsed when they are JSON)."""

    name: str
    arguments: Any


class Step(BaseModel):
    """One step of a trajectory: an inference call or a tool call, in the order the validator saw them."""

    kind: Literal["llm", "tool"]
    index: int
    at_s: float
    duration_ms: float
    name: str  # the model, or the tool
    failed: bool = False
    reasoning: str | None = None
    content: str | None = None
    calls: list[ToolRequest] = []
    prompt_tokens: int = 0
    completion_tokens: int = 0
    status_code: int | None = None
    arguments: Any = None
    result: Any = None
    error: str | None = None
    notice: str | None = None


class AnswerRow(BaseModel):
    index: int
    gold: str
    recommended: str | None
    found: bool
    gold_hit: bool
    rule: float


class AnswerView(BaseModel):
    recommended: list[str]
    rows: list[AnswerRow]


def stage_progress(session: Session, cycle: int) -> list[StageProgress]:
    """Episode counts per stage that has any: what a cycle's progress bars show."""
    counts: dict[str, dict[str, int]] = {}
    for (stage, status), n in tallies.episodes_by_stage_and_status(session, cycle=cycle).items():
        counts.setdefault(stage.value, dict.fromkeys((s.value for s in EpisodeStatus), 0))[status.value] = n
    return [StageProgress(stage=stage, **by_status) for stage, by_status in sorted(counts.items())]


ALL_TIME_ROWS = 50  # the page's all-time table: the best; /v1/history has every agent


def leaderboard_html(session: Session) -> str:
    """The front page: the latest ranked cycle, who is qualifying or waiting, and the history with its charts."""
    board = reads.leaderboard(session)
    past = history.history(session, charts.MAX_CYCLES)  # the page shows the latest; /v1/history?limit= more
    current = latest_cycle(session)
    progress = stage_progress(session, current.number) if current is not None else []
    weight_pairs = list(zip(board.weights.uids, board.weights.weights, strict=True)) if board.weights else []
    reign = past.champions[-1] if past.champions and past.champions[-1].reigning else None
    return render(
        "leaderboard.html",
        board=board,
        current=current,
        current_finished=sum(p.finished for p in progress),
        current_total=sum(p.total for p in progress),
        weight_pairs=weight_pairs,
        entering=past.in_cycle + past.waiting,
        history=past,
        best=past.agents[:ALL_TIME_ROWS],
        reign=reign,
        score_chart=charts.score_chart(past),
        weights_chart=charts.weights_chart(past),
    )


def cycles_html(session: Session) -> str:
    return render("cycles.html", cycles=list(reversed(cycle_rows.list_cycles(session))))


def cycle_html(session: Session, number: int) -> str:
    cycle = reads.cycle_detail(session, number)  # raises the API's 404 for an unknown cycle
    numbers = [c.number for c in cycle_rows.list_cycles(session)]
    earlier = [n for n in numbers if n < number]
    later = [n for n in numbers if n > number]
    return render(
        "cycle.html",
        cycle=cycle,
        progress=stage_progress(session, number),
        previous=earlier[-1] if earlier else None,
        next=later[0] if later else None,
    )


def submission_html(session: Session, submission_id: int, rule: EmbargoRule, page_size: int) -> str:
    detail = reads.submission_detail(session, submission_id, rule)
    source = None
    info = submission_rows.get_submission(session, submission_id)
    assert info is not None  # get_submission answered, so the row exists in this transaction
    if not embargo_state(session, info, rule, utcnow()).embargoed:
        code = submission_rows.submission_code(session, submission_id)
        source = code.decode("utf-8", errors="replace") if code is not None else None
    total, episodes = views.episode_summaries(
        session, Redactor(session), submission_id=submission_id, offset=0, limit=page_size
    )
    return render(
        "submission.html", detail=detail, sub=detail.submission, source=source, episodes=episodes, episode_total=total
    )


def _arguments(text: object) -> Any:
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text  # the model wrote something that is not JSON: show it as written


def trajectory_steps(record: EpisodeRecord) -> list[Step]:
    """Inference and tool calls merged by the time they started (ties: the model's call first, it caused the tool's)."""
    steps = []
    for call in record.llm_calls:
        response = call.response or {}
        requested = [
            ToolRequest(name=str(fn.get("name", "?")), arguments=_arguments(fn.get("arguments")))
            for fn in (tc.get("function") or {} for tc in response.get("tool_calls") or [])
        ]
        steps.append(
            Step(
                kind="llm",
                index=call.index,
                at_s=call.at_s,
                duration_ms=call.latency_ms,
                name=call.model,
                failed=call.error is not None,
                reasoning=response.get("reasoning_content"),
                content=response.get("content"),
                calls=requested,
                prompt_tokens=call.usage.prompt_tokens,
                completion_tokens=call.usage.completion_tokens,
                status_code=call.status_code,
                error=call.error,
            )
        )
    for tool_call in record.tool_calls:
        steps.append(
            Step(
                kind="tool",
                index=tool_call.index,
                at_s=tool_call.at_s,
                duration_ms=tool_call.duration_ms,
                name=tool_call.name,
                failed=not tool_call.ok,
                arguments=tool_call.arguments,
                result=tool_call.result,
                error=tool_call.error,
                notice=tool_call.notice,
            )
        )
    return sorted(steps, key=lambda s: (s.at_s, s.kind != "llm", s.index))


def answer_view(outcome: dict | None, record: EpisodeRecord) -> AnswerView | None:
    """The final recommendation position by position against the gold the scorer compared it with."""
    if outcome is None:
        return None
    rows = [
        AnswerRow(
            index=d["index"],
            gold=d["gold_product_id"],
            recommended=d.get("recommended_id"),
            found=d.get("found", False),
            gold_hit=d.get("gold_hit", False),
            rule=d.get("rule", 0.0),
        )
        for d in outcome.get("details", [])
    ]
    return AnswerView(recommended=list(record.final_recommendation or outcome.get("recommended") or []), rows=rows)


def episode_html(session: Session, episode_id: int) -> str:
    detail: EpisodeDetail = reads.episode_detail(session, episode_id)  # redacted exactly as /v1/episodes/{id}
    record = EpisodeRecord.model_validate(detail.record) if detail.record is not None else None
    return render(
        "episode.html",
        ep=detail,
        problem=detail.problem,
        record=record,
        tokens=record.inference_tokens() if record else None,
        steps=trajectory_steps(record) if record else [],
        answer=answer_view(detail.outcome, record) if record else None,
        judgments=detail.judgments,
        # verdicts describe content (filter reasons, gates on the judgment): shown only with the content
        verdict=latest_verdict(session, str(episode_id)) if record else None,
    )


def error_html(status: int, title: str, detail: str) -> str:
    return render("error.html", status=status, title=title, detail=detail)
