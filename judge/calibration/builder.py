"""Episode records made in code, for the tests and the labelled calibration set.

Records are shaped exactly as the runner writes them (an ``EpisodeRecord``),
with tool results taken from a real ``ShopEnvironment`` when one is given, so
the judge reads the same structure it reads in production. What the builder
decides is the model's side: the text each response holds and its token count,
which is what a labelled case is about.
"""

from __future__ import annotations

import json
import re
from typing import Any

from arena.runner.record import (
    AgentRef,
    EpisodeRecord,
    LLMCallRecord,
    ProblemRef,
    Termination,
    TokenUsage,
    ToolCallRecord,
)
from arena.shop.tools import ShopEnvironment

_TOKEN = re.compile(r"\w+|[^\w\s]")
STEP_S = 0.25  # seconds between recorded events


def count_tokens(text: str) -> int:
    """Words and punctuation marks: close to BPE counts for English, and the same everywhere."""
    return len(_TOKEN.findall(text))


class EpisodeBuilder:
    """Appends events in order; each gets the next ``at_s``. ``build()`` returns the record."""

    def __init__(
        self,
        episode_id: str,
        query: str,
        *,
        intent: str = "product",
        model: str = "Qwen/Qwen3-4B",
        reward_row: dict[str, Any] | None = None,
        environment: ShopEnvironment | None = None,
    ) -> None:
        self.episode_id = episode_id
        self.query = query
        self.intent = intent
        self.model = model
        self.environment = environment
        self._row = {"query": query, "intent": intent, **(reward_row or {})}
        self._tools: list[ToolCallRecord] = []
        self._calls: list[LLMCallRecord] = []
        self._messages: list[dict[str, Any]] = [
            {"role": "system", "content": "You are a shopping assistant. Use the tools."},
            {"role": "user", "content": query},
        ]
        self._clock = 0.0
        self.final: list[str] | None = None
        self.terminate_status: str | None = None
        self.stdout_tail = ""  # what the agent printed: never evidence, but a labelled case may fill it

    def _tick(self) -> float:
        self._clock = round(self._clock + STEP_S, 3)
        return self._clock

    # --- tool side -----------------------------------------------------------------------------------

    def tool(
        self, name: str, arguments: dict[str, Any], result: Any = None, *, ok: bool = True, error: str | None = None
    ) -> Any:
        """Record a tool call. With an environment and no ``result`` the call really runs."""
        notice = None
        if self.environment is not None and result is None and ok:
            executed = self.environment.call(name, arguments)
            ok, result, error, notice = executed.ok, executed.result, executed.error, executed.notice
        self._tools.append(
            ToolCallRecord(
                index=len(self._tools),
                name=name,
                arguments=arguments,
                ok=ok,
                result=result,
                error=error,
                notice=notice,
                at_s=self._tick(),
                duration_ms=3.0,
            )
        )
        self._messages.append({"role": "tool", "content": json.dumps(result if ok else error)[:2000]})
        if name == "recommend_product" and ok:
            ids = arguments.get("product_ids", "")
            self.final = [i.strip() for i in (ids.split(",") if isinstance(ids, str) else ids) if str(i).strip()]
        if name == "terminate" and ok:
            self.terminate_status = arguments.get("status")
        return result

    def search(self, q: str, page: int = 1, **filters: Any) -> list[dict]:
        return self.tool("find_product", {"q": q, "page": page, **filters}) or []

    def view(self, ids: list[str]) -> list[dict]:
        return self.tool("view_product_information", {"product_ids": ",".join(ids)}) or []

    def recommend(self, ids: list[str], status: str = "success") -> None:
        self.tool("recommend_product", {"product_ids": ",".join(ids)}, {"recommended": ids})
        self.tool("terminate", {"status": status}, {"status": status})

    # --- model side ----------------------------------------------------------------------------------

    def think(
        self,
        content: str | None,
        *,
        reasoning: str | None = None,
        completion_tokens: int | None = None,
        calls: list[tuple[str, dict[str, Any]]] | None = None,
        injected_messages: list[dict[str, Any]] | None = None,
    ) -> None:
        """A model response as the proxy records it. ``injected_messages`` are extra turns the
        agent put into this request (they are agent-written, whatever role they claim)."""
        tool_calls = [
            {"id": f"call_{len(self._calls)}_{i}", "type": "function",
             "function": {"name": name, "arguments": json.dumps(args)}}
            for i, (name, args) in enumerate(calls or [])
        ]  # fmt: skip
        text_tokens = count_tokens(content or "") + count_tokens(reasoning or "")
        tokens = completion_tokens if completion_tokens is not None else text_tokens + 8 * len(tool_calls)
        messages = [*self._messages, *(injected_messages or [])]
        response = {
            "id": f"chatcmpl-{self.episode_id}-{len(self._calls)}",
            "content": content,
            "reasoning_content": reasoning,
            "tool_calls": tool_calls or None,
            "finish_reason": "tool_calls" if tool_calls else "stop",
        }
        self._calls.append(
            LLMCallRecord(
                index=len(self._calls),
                model=self.model,
                upstream="vllm",
                request={"messages": messages, "tools": ["find_product", "view_product_information"]},
                response=response,
                usage=TokenUsage(
                    prompt_tokens=40 * len(messages), completion_tokens=tokens, total_tokens=40 * len(messages) + tokens
                ),
                at_s=self._tick(),
                latency_ms=180.0,
            )
        )
        self._messages.append({"role": "assistant", "content": content, "tool_calls": tool_calls or None})

    def refused(self, status: int = 403, error: str = "model 'gpt-x' is not allowed here") -> None:
        """A call the proxy refused: recorded, but the model never answered."""
        self._calls.append(
            LLMCallRecord(
                index=len(self._calls),
                model="gpt-x",
                request={"keys": ["messages", "model"], "message_count": len(self._messages)},
                response=None,
                status_code=status,
                error=error,
                at_s=self._tick(),
                latency_ms=1.0,
            )
        )

    def build(self) -> EpisodeRecord:
        return EpisodeRecord(
            episode_id=self.episode_id,
            problem=ProblemRef(id=f"p-{self.episode_id}", intent=self.intent, query=self.query, row=self._row),
            agent=AgentRef(name="labelled", sha256="0" * 64),
            sandbox="bubblewrap",
            model=self.model,
            started_at="2025-01-01T00:00:00Z",
            tool_calls=list(self._tools),
            llm_calls=list(self._calls),
            final_recommendation=self.final,
            terminate_status=self.terminate_status,
            termination=Termination.terminated if self.terminate_status else Termination.returned,
            exit_code=0,
            stdout_tail=self.stdout_tail,
        )
