"""The one place a judge is chosen from settings: the worker, the CLI and the experiment all open theirs here."""

from __future__ import annotations

from typing import Literal

from judge.batch import Judge
from judge.settings import JudgeSettings


def open_judge(settings: JudgeSettings, kind: Literal["rules", "openai"] | None = None) -> Judge:
    """The judge ``kind`` names (default: ``settings.kind``); the LLM judge reads its server from ``settings``."""
    if (kind or settings.kind) == "openai":
        from judge.llm import OpenAIJudge  # httpx and the client only when the LLM judge is asked for

        return OpenAIJudge(settings)
    from judge.rules import RulesJudge

    return RulesJudge()
