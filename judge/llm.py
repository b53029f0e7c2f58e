"""The LLM judge: any OpenAI-compatible server (vLLM in production).

One request per judgment: temperature 0, a JSON-schema ``response_format``
(level + explanation), and a reply validated strictly (exact keys, a rubric
level, a bounded explanation). Transport failures and invalid replies are
retried with exponential backoff, then the next model in the ordered list is
tried; if every model fails the episode is ``JudgmentPending``, never level 0.
With ``panel`` on, every model answers and the median level wins, with the
disagreement recorded. Whatever the LLM says, the rules judge's level caps it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from arena.runner.record import EpisodeRecord
from judge.evidence import Evidence, build_evidence
from judge.prompt import build_prompt, response_format
from judge.rubric import LLM_LEVELS, RUBRIC_VERSION, coefficient
from judge.rules import RULES_JUDGE, RulesFindings, analyse
from judge.settings import JudgeSettings
from judge.verdict import Attempt, JudgeCost, JudgmentOutcome, JudgmentPending, PanelVote, ReasoningJudgment

logger = logging.getLogger(__name__)

# Statuses that another try may fix; any other error status means this model cannot answer
# (unknown model, bad request, auth), so the judge moves on to the next model at once.
RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


class JudgeReply(BaseModel):
    """The reply's JSON, exactly. ``strict``: "0.9" (a string) or an extra key is a schema violation."""

    model_config = ConfigDict(extra="forbid", strict=True)

    level: float
    explanation: str

    @field_validator("level")
    @classmethod
    def _rubric_level(cls, value: float) -> float:
        if value not in LLM_LEVELS:
            raise ValueError(f"level must be one of {list(LLM_LEVELS)}")
        return value


class InvalidReply(ValueError):
    pass


def parse_reply(content: str | None, explanation_chars: int) -> JudgeReply:
    if content is None or not content.strip():
        raise InvalidReply("empty reply")
    try:
        value = json.loads(content)
    except json.JSONDecodeError as exc:
        raise InvalidReply(f"malformed JSON: {exc.msg} at character {exc.pos}: {content[:80]!r}") from None
    if not isinstance(value, dict):
        raise InvalidReply(f"schema: the reply is a JSON {type(value).__name__}, not an object")
    try:
        reply = JudgeReply.model_validate(value)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'reply'}: {e['msg']}" for e in exc.errors())
        raise InvalidReply(f"schema: {problems}") from None
    if not reply.explanation.strip() or len(reply.explanation) > explanation_chars:
        raise InvalidReply(
            f"schema: explanation must be 1-{explanation_chars} characters, not {len(reply.explanation)}"
        )
    return reply


class _ModelAnswer(BaseModel):
    model: str
    reply: JudgeReply | None = None
    attempts: list[Attempt]


class OpenAIJudge:
    """Use as ``async with OpenAIJudge(settings) as judge: outcome = await judge.judge(record)``."""

    def __init__(
        self,
        settings: JudgeSettings,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.settings = settings
        self._transport = transport
        self._client: httpx.AsyncClient | None = None
        self._sleep = sleep
        self._gate: asyncio.Semaphore | None = None
        self._format = response_format(settings.explanation_chars)

    @property
    def name(self) -> str:
        prefix = "openai-panel" if self.settings.panel else "openai"
        return f"{prefix}:{','.join(self.settings.models)}"

    def _http(self) -> httpx.AsyncClient:
        # httpx, not the openai SDK: the SDK's request transformation walks every message
        # through its TypedDicts, the largest client cost in a profile of benchmarks/judge.py
        # (8.9 -> ~6 ms CPU per judgment without it); the wire format is the same.
        if self._client is None:
            key = self.settings.api_key.get_secret_value()
            self._client = httpx.AsyncClient(
                base_url=self.settings.base_url.rstrip("/") + "/",
                headers={"Authorization": f"Bearer {key}"} if key else None,
                timeout=httpx.Timeout(self.settings.timeout_s, connect=min(10.0, self.settings.timeout_s)),
                limits=httpx.Limits(max_connections=self.settings.concurrency * 2, max_keepalive_connections=None),
                transport=self._transport,
            )
        return self._client

    async def __aenter__(self) -> OpenAIJudge:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    # --- one request ---------------------------------------------------------------------------------

    def _payload(self, model: str, evidence: Evidence, cap: RulesFindings) -> dict[str, Any]:
        # A fresh marker per request.
        prompt = build_prompt(evidence, self.settings.truncation, checks=cap.steps)
        return {
            **self.settings.extra_body,
            "model": model,
            "messages": prompt.messages(),
            "temperature": 0,
            "max_tokens": self.settings.max_tokens,
            "response_format": self._format,
        }

    async def _request(
        self, model: str, evidence: Evidence, cap: RulesFindings
    ) -> tuple[JudgeReply | None, Attempt, bool]:
        """One request: (the valid reply or None, its record, whether another try may help)."""
        payload = self._payload(model, evidence, cap)
        if self._gate is None:
            self._gate = asyncio.Semaphore(self.settings.concurrency)
        reply: JudgeReply | None = None
        error: str | None = None
        retryable = True
        usage: dict[str, Any] = {}
        async with self._gate:
            started = time.perf_counter()
            try:
                async with asyncio.timeout(self.settings.timeout_s):
                    response = await self._http().post("chat/completions", json=payload)
                    body = response.content
                if response.status_code != 200:
                    retryable = response.status_code in RETRYABLE_STATUS
                    raise InvalidReply(f"http {response.status_code}: {_error_detail(body)}")
                answer, usage = _answer(body)
                if answer.get("finish_reason") == "length":
                    raise InvalidReply(f"the reply was cut at max_tokens ({self.settings.max_tokens})")
                message = answer.get("message")
                message = message if isinstance(message, dict) else {}
                reply = parse_reply(message.get("content"), self.settings.explanation_chars)
            except (TimeoutError, httpx.TimeoutException):
                error = f"timeout after {self.settings.timeout_s:g}s"
            except httpx.TransportError as exc:
                error = f"connection failed: {type(exc).__name__}: {exc}"
            except InvalidReply as exc:
                error = str(exc)
            latency_ms = (time.perf_counter() - started) * 1000.0
        attempt = Attempt(
            model=model,
            ok=reply is not None,
            error=error,
            latency_ms=latency_ms,
            prompt_tokens=_count(usage.get("prompt_tokens")),
            completion_tokens=_count(usage.get("completion_tokens")),
        )
        return reply, attempt, retryable

    async def _ask(self, model: str, evidence: Evidence, cap: RulesFindings) -> _ModelAnswer:
        attempts: list[Attempt] = []
        for number in range(1, self.settings.attempts_per_model + 1):
            reply, attempt, retryable = await self._request(model, evidence, cap)
            attempts.append(attempt)
            if reply is not None:
                return _ModelAnswer(model=model, reply=reply, attempts=attempts)
            logger.warning("judge %s on %s, attempt %d: %s", model, evidence.episode_id, number, attempt.error)
            if not retryable or number == self.settings.attempts_per_model:
                break
            await self._sleep(self._backoff(number))
        return _ModelAnswer(model=model, attempts=attempts)

    def _backoff(self, retry: int) -> float:
        pause = min(self.settings.backoff_max_s, self.settings.backoff_s * 2 ** (retry - 1))
        return pause * (1 + random.random() / 4)

    # --- one episode ---------------------------------------------------------------------------------

    async def judge(self, record: EpisodeRecord) -> JudgmentOutcome:
        started = time.perf_counter()
        evidence = build_evidence(record)
        cap = analyse(evidence)
        if not evidence.model_answered:
            # Level 0 is a fact of the record, not an opinion: no model is asked.
            return ReasoningJudgment(
                episode_id=record.episode_id,
                level=0.0,
                coefficient=coefficient(0.0),
                explanation=cap.explanation + " (level 0 is decided from the record; no judge model was asked)",
                judge=RULES_JUDGE,
                rubric_version=RUBRIC_VERSION,
                cap=0.0,
                latency_ms=(time.perf_counter() - started) * 1000.0,
            )
        if self.settings.panel:
            answers = list(await asyncio.gather(*(self._ask(model, evidence, cap) for model in self.settings.models)))
        else:
            answers = []
            for model in self.settings.models:
                answers.append(await self._ask(model, evidence, cap))
                if answers[-1].reply is not None:
                    break
        attempts = [attempt for answer in answers for attempt in answer.attempts]
        cost = JudgeCost(
            requests=len(attempts),
            prompt_tokens=sum(a.prompt_tokens for a in attempts),
            completion_tokens=sum(a.completion_tokens for a in attempts),
        )
        elapsed = (time.perf_counter() - started) * 1000.0
        if self.settings.panel:
            return self._panel_outcome(record, answers, cap, attempts, cost, elapsed)
        answered = answers[-1]
        if answered.reply is None:
            return self._pending(record, f"every judge model failed ({_failures(answers)})", attempts, cost, elapsed)
        return self._capped(
            record, answered.reply.level, answered.reply.explanation, f"openai:{answered.model}", cap,
            attempts=attempts, cost=cost, latency_ms=elapsed,
        )  # fmt: skip

    def _panel_outcome(
        self,
        record: EpisodeRecord,
        answers: list[_ModelAnswer],
        cap: RulesFindings,
        attempts: list[Attempt],
        cost: JudgeCost,
        elapsed: float,
    ) -> JudgmentOutcome:
        votes = [
            PanelVote(
                model=a.model,
                level=a.reply.level if a.reply else None,
                explanation=a.reply.explanation if a.reply else None,
                error=None if a.reply else (a.attempts[-1].error if a.attempts else "no attempt"),
            )
            for a in answers
        ]
        valid = [v for v in votes if v.level is not None]
        quorum = self.settings.quorum
        if len(valid) < quorum:
            reason = (
                f"panel quorum not met: {len(valid)} of {len(votes)} answered, {quorum} needed ({_failures(answers)})"
            )
            return self._pending(record, reason, attempts, cost, elapsed)
        levels = sorted(v.level for v in valid if v.level is not None)
        median = levels[(len(levels) - 1) // 2]  # the lower middle: an even panel leans conservative
        spokesman = next(v for v in valid if v.level == median)
        tally = ", ".join(f"{v.model}: {v.level if v.level is not None else 'failed'}" for v in votes)
        explanation = f"panel median {median} ({tally}); {spokesman.explanation}"
        judgment = self._capped(
            record, median, explanation, self.name, cap, attempts=attempts, cost=cost, latency_ms=elapsed
        )
        judgment.panel = votes
        judgment.disagreement = round(levels[-1] - levels[0], 6)
        return judgment

    def _capped(
        self,
        record: EpisodeRecord,
        proposed: float,
        explanation: str,
        judge_name: str,
        cap: RulesFindings,
        *,
        attempts: list[Attempt],
        cost: JudgeCost,
        latency_ms: float,
    ) -> ReasoningJudgment:
        level = min(proposed, cap.level)
        if level < proposed:
            explanation = f"{explanation} [capped from {proposed} to {level} by the rules judge: {cap.explanation}]"
        return ReasoningJudgment(
            episode_id=record.episode_id,
            level=level,
            coefficient=coefficient(level),
            explanation=explanation,
            judge=judge_name,
            rubric_version=RUBRIC_VERSION,
            proposed_level=proposed,
            cap=cap.level,
            attempts=attempts,
            cost=cost,
            latency_ms=latency_ms,
        )

    def _pending(
        self, record: EpisodeRecord, reason: str, attempts: list[Attempt], cost: JudgeCost, elapsed: float
    ) -> JudgmentPending:
        return JudgmentPending(
            episode_id=record.episode_id,
            reason=reason,
            attempts=len(attempts),
            judge=self.name,
            rubric_version=RUBRIC_VERSION,
            errors=attempts,
            cost=cost,
            latency_ms=elapsed,
        )


def _error_detail(body: bytes) -> str:
    """The server's own message (vLLM: {"message": ...}; OpenAI: {"error": {"message": ...}})."""
    try:
        value = json.loads(body)
    except ValueError:
        return body[:200].decode("utf-8", "replace")
    if isinstance(value, dict) and isinstance(value.get("error"), dict):
        value = value["error"]
    message = value.get("message") if isinstance(value, dict) else None
    return str(message if message is not None else value)[:200]


def _answer(body: bytes) -> tuple[dict[str, Any], dict[str, Any]]:
    """(choice 0, usage) of a chat completion, or InvalidReply naming what is wrong."""
    try:
        value = json.loads(body)
    except ValueError:
        raise InvalidReply(f"malformed response: not JSON: {body[:80]!r}") from None
    choices = value.get("choices") if isinstance(value, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise InvalidReply("malformed response: no choices")
    usage = value.get("usage")
    return choices[0], usage if isinstance(usage, dict) else {}


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _failures(answers: list[_ModelAnswer]) -> str:
    parts = []
    for answer in answers:
        if answer.reply is None and answer.attempts:
            parts.append(f"{answer.model}: {answer.attempts[-1].error} after {len(answer.attempts)} attempt(s)")
    return "; ".join(parts)
