"""``HeuristicPolicy``: one chat request in, one assistant turn out.

Determinism: every random choice comes from a generator seeded by (the
server's seed, the request's ``seed``, ``temperature``, the conversation,
the choice index). The same request to a server with the same seed gets the
same answer on any machine; at temperature 0 nothing random is drawn at all.
"""

from __future__ import annotations

import hashlib
import json
import random

from arena.policy.chat_format import ChatCompletionRequest, NamedToolChoice
from arena.policy.conversation import read_transcript
from arena.policy.heuristic import Decision, Episode, PlannedCall
from arena.policy.plain_answers import plain_answer


class HeuristicPolicy:
    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def rng(self, request: ChatCompletionRequest, choice: int) -> random.Random:
        conversation = [m.model_dump(exclude_none=True) for m in request.messages]
        key = json.dumps(
            [self.seed, request.seed, request.temperature, conversation, choice], sort_keys=True, default=str
        )
        return random.Random(int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big"))

    def respond(self, request: ChatCompletionRequest, choice: int = 0) -> Decision:
        transcript = read_transcript(request.messages)
        tools = request.tool_names()
        if not tools or request.tool_choice == "none":
            return Decision(content=plain_answer(transcript))
        # The OpenAI default temperature is 1; the policy's default is greedy, as an eval harness expects.
        temperature = request.temperature or 0.0
        episode = Episode(transcript, tools, self.rng(request, choice), temperature)
        decision = episode.next()
        decision.tool_calls = [c for c in decision.tool_calls if c.name in tools]
        decision = _honour_tool_choice(decision, request, episode)
        if request.parallel_tool_calls is False and len(decision.tool_calls) > 1:
            decision.tool_calls = decision.tool_calls[:1]
        return decision


def _honour_tool_choice(decision: Decision, request: ChatCompletionRequest, episode: Episode) -> Decision:
    choice = request.tool_choice
    if isinstance(choice, NamedToolChoice):
        name = choice.function.name
        kept = [c for c in decision.tool_calls if c.name == name]
        decision.tool_calls = kept or [PlannedCall(name=name, arguments=_default_arguments(name, episode))]
        return decision
    if choice == "required" and not decision.tool_calls:
        forced = episode.recommend() if not episode.transcript.named("recommend_product") else None
        if forced is not None and forced.tool_calls and forced.tool_calls[0].name in request.tool_names():
            return forced
        name = "terminate" if "terminate" in request.tool_names() else request.tool_names()[0]
        decision.tool_calls = [PlannedCall(name=name, arguments=_default_arguments(name, episode))]
    return decision


def _default_arguments(name: str, episode: Episode) -> dict:
    """Arguments for a tool the caller forced, filled in from what the episode knows."""
    if name == "find_product":
        return episode.search_arguments(0)
    if name == "web_search":
        return {"q": episode.request.question or episode.request.text, "max_results": 5}
    picks = [p.candidate.product_id for p in episode.picks() if p is not None]
    if name in ("view_product_information", "recommend_product"):
        return {"product_ids": ",".join(picks)}
    if name == "terminate":
        return {"status": "success" if episode.transcript.named("recommend_product") else "failure"}
    return {}
