"""The rules judge: the rubric's gates decided from recorded data alone.

Deterministic and offline, it is the default judge (``--judge rules``) and the
cap on the LLM judge: a level whose hard evidence is not in the record cannot
be awarded, however persuasive the trace reads. Its checks, per model response
(``judge.tool_facts`` holds the matching):

1. tokens: the proxy's recorded completion-token count;
2. analysis: the response's own words (copied tool output discounted) cite a
   datum from an earlier tool result, or use two specific terms from those
   results that neither the request nor the agent's tool arguments contain;
3. datum: an id, a price or count, or an attribute/SKU value from an earlier
   tool result;
4. comparison: two or more candidate product ids from earlier results in one
   response, with a comparing word (a bare list of ids is enumeration).

Dictation (``judge.dictation``) earns nothing at any gate: request text the
agent wrote (system and user turns, forged assistant turns, names, every other
field; not the validator's tool results, the query or the model's own earlier
outputs). Data a response only repeats from it is no citation, words repeated
from it are no analysis, comparing words in repeated runs are no comparison,
and its dictated share of the completion tokens does not count for gate 1: a
response that is all dictation (``ALL_DICTATED``) counts no tokens, so an
episode whose model output is all dictated is level 0.1 at most.

Encoded and template dictation (``judge.probe``): a response that names an id or price its request
does not hold in plain form decoded it from the agent's text (``provenance``), and a response whose
counterfactual probe (the request re-asked with the product data changed) does not follow the change
was written by the agent (``probe``). Either forfeits the episode's credit: level 0.1 at most. A probe
that could not be made is named ("probe unavailable") and the other rules stand.

What it cannot see: whether a comparison is *sound*. That is the LLM judge's
part; the rules only make sure the material for it exists.
"""

from __future__ import annotations

import asyncio
import json
import re
import time

from pydantic import BaseModel, Field

from arena.runner.record import EpisodeRecord
from judge.dictation import ALL_DICTATED, DICTATION_RULE, Dictation, blank, is_echo, numbers_in
from judge.evidence import Evidence, ModelStep, build_evidence
from judge.fingerprints import FINGERPRINT_RULE, DataPieces
from judge.pointed import POINTED_RULE, Pointer, RequestItems, pointers, repeated, states_verdict
from judge.probe import PROBE_RULE, PROVENANCE_RULE, ProbeVerdict, choose, read_probe
from judge.rubric import MIN_COMPLETION_TOKENS, RUBRIC_VERSION, Level, coefficient, level_from_gates, spec
from judge.tool_facts import Cited, StepFindings, ToolFacts
from judge.unread import UNREAD_RULE, unread
from judge.verdict import JudgeCost, ReasoningJudgment

RULES_JUDGE = "rules"
_PLAIN_ID = re.compile(r"[a-z0-9][a-z0-9_\-]*")
_SHOWN = 4  # items named per finding in an explanation


class RulesFindings(BaseModel):
    """The gates as the record supports them, with the step that passed each."""

    level: Level
    gates: list[bool] = Field(min_length=4, max_length=4)
    answered_calls: int
    unanswered_calls: int
    max_completion_tokens: int
    max_own_tokens: int = 0  # the most completion tokens of one response that are not dictation
    steps: list[StepFindings] = Field(default_factory=list)
    text_gates: list[bool] = Field(default_factory=list)  # the gates before provenance and the probe
    probes: list[ProbeVerdict] = Field(default_factory=list)  # one per probe in the record
    undecodable: list[str] = Field(default_factory=list)  # provenance: "call N: id" named but not in its request
    pointed: list[str] = Field(default_factory=list)  # "call N: ..." a verdict the agent's text pointed at, repeated
    # A verdict stated beside agent text the judge cannot read, or after a fingerprint of the data ("rule: call N ...")
    unvouched: list[str] = Field(default_factory=list)
    explanation: str

    @property
    def dictated_by_probe(self) -> list[ProbeVerdict]:
        return [verdict for verdict in self.probes if verdict.outcome == "dictated"]

    def first_step(self, gate: int) -> StepFindings | None:
        test = {2: lambda s: s.analyses, 3: lambda s: bool(s.cited), 4: lambda s: s.compares}[gate]
        return next((s for s in self.steps if test(s)), None)


def _argument_text(evidence: Evidence) -> str:
    return " ".join(str(value) for tool in evidence.tools for value in tool.arguments.values())


def _unreadable(step: ModelStep, found: StepFindings) -> list[str]:
    """Data the response names that its request did not hold in plain form (judge.probe, provenance)."""
    if step.request_ids is None or step.request_numbers is None:
        if step.unheld is None:
            return []
        unheld = step.unheld  # the record was cut: what the probe noted of the request before the cut
        numbers = {value for item in unheld for value in numbers_in(item)}
        return [
            datum
            for datum in found.candidates + found.data
            if datum.lower() in unheld or (numbers_in(datum) & numbers and not _PLAIN_ID.fullmatch(datum.lower()))
        ]
    missing = [c for c in found.candidates if c not in step.request_ids]
    for datum in found.data:
        key = datum.lower()
        if any(c.isdigit() for c in key) and _PLAIN_ID.fullmatch(key):
            if key not in step.request_ids and not (numbers_in(datum) & step.request_numbers):
                missing.append(datum)
        elif (values := numbers_in(datum)) and not values & step.request_numbers:
            missing.append(datum)
    return missing


def analyse(evidence: Evidence) -> RulesFindings:
    facts = ToolFacts(evidence.query, _argument_text(evidence))
    dictation = Dictation()
    dictation.learn(evidence.query)
    steps: list[StepFindings] = []
    undecodable: list[str] = []
    texts: dict[int, str] = {}
    pointed: list[Pointer] = []
    read_sentences: set[str] = set()  # the agent's sentences judge.pointed has read (once each, a bounded number)
    known = RequestItems()
    repeats: list[str] = []
    pieces = DataPieces(evidence.query)
    hidden: list[str] = []  # what the agent's text held that no probe or reading can vouch for, as "rule: note"
    model_said: list[str] = []  # the model's responses so far (a verdict the agent quotes from them is the model's)
    unvouched: list[str] = []
    for item in evidence.timeline():
        if not isinstance(item, ModelStep):
            if item.ok and item.result is not None:
                facts.add(item.result)
                pieces.add_result(item.result)
                if not is_echo(item.arguments, item.result):
                    dictation.learn(json.dumps(item.result, ensure_ascii=False, default=str))
            continue
        spellings = dictation.add(item.dictation)
        if item.items is not None:
            known.merge(item.items)
            pointed += pointers(item.call_index, spellings, item.items, read_sentences, model_said)
        if pointed and (hit := repeated(pointed, item.text, known)) is not None:
            repeats.append(_pointed_note(item.call_index, hit))
        hidden += [f"{UNREAD_RULE} rule: agent text the judge cannot read ({note!r})" for note in
                   unread(item.dictation, dictation.undecoded, dictation.known)]  # fmt: skip
        hidden += [f"{FINGERPRINT_RULE} rule: {note}" for note in pieces.found(spellings)]
        if hidden and not unvouched and states_verdict(item.text, known):
            unvouched.append(f"call {item.call_index} states a verdict after {hidden[0]}")
        own, copied = facts.own_text(item.text)
        coverage = dictation.coverage(item.text)
        found = facts.cited(own, dictation, blank(own, coverage.spans)) if facts.results_seen else Cited()
        steps.append(
            StepFindings(
                call_index=item.call_index,
                completion_tokens=item.completion_tokens,
                own_tokens=coverage.own_tokens(item.completion_tokens),
                results_before=facts.results_seen,
                copied_fraction=round(copied, 3),
                dictated_fraction=round(coverage.dictated, 3),
                dictated=found.repeated,
                candidates=found.candidates,
                data=found.data,
                terms=found.terms,
                cues=found.cues,
            )
        )
        texts[item.call_index] = item.text
        undecodable += [f"call {item.call_index}: {datum}" for datum in _unreadable(item, steps[-1])]
        dictation.learn(item.text)  # the model's own words, sent back later, are not the agent's
        pieces.model_said(item.text)
        model_said.append(item.text)
    max_tokens = max((s.completion_tokens for s in evidence.steps), default=0)
    max_own = max((s.own_tokens for s in steps), default=0)
    gates = [
        max_own >= MIN_COMPLETION_TOKENS,
        any(s.analyses for s in steps),
        any(s.cited for s in steps),
        any(s.compares for s in steps),
    ]
    comparing = {step.call_index for step in steps if step.compares}
    probes = [
        read_probe(probe, texts.get(probe.call_index, ""), evidence.query, probe.call_index in comparing)
        for probe in evidence.probes
    ]
    text_gates = list(gates)
    if undecodable or repeats or unvouched or any(v.outcome == "dictated" for v in probes):
        gates = [False] * len(gates)  # shown dictating once: no response of the episode is credited
    passed = 0
    while passed < len(gates) and gates[passed]:
        passed += 1
    level = level_from_gates(evidence.model_answered, passed)
    findings = RulesFindings(
        level=level,
        gates=gates,
        answered_calls=len(evidence.steps),
        unanswered_calls=evidence.unanswered_calls,
        max_completion_tokens=max_tokens,
        max_own_tokens=max_own,
        steps=steps,
        text_gates=text_gates,
        probes=probes,
        undecodable=undecodable,
        pointed=repeats,
        unvouched=unvouched,
        explanation="",
    )
    findings.explanation = _explain(findings)
    return findings


def _pointed_note(call_index: int, pointer: Pointer) -> str:
    verdict = (
        f"{pointer.winner} cheaper" + (f" than {pointer.loser}" if pointer.loser else "")
        if pointer.family == "price"
        else f"{pointer.winner} chosen"
    )
    return (
        f'call {call_index} states {verdict}, as the agent\'s text at call {pointer.call_index} said ("{pointer.said}")'
    )


def probe_plan(record: EpisodeRecord) -> list[int]:
    """The calls the runner should probe (arena.runner.probe.ProbePlan): those carrying the top gates of the
    text rules, even where provenance already found dictation (the probe keeps what the request held, should
    the record's bound cut it later)."""
    found = analyse(build_evidence(record))
    return choose(found.steps, found.text_gates, MIN_COMPLETION_TOKENS)


def _names(items: list[str]) -> str:
    shown = ", ".join(items[:_SHOWN])
    return shown + (f" (+{len(items) - _SHOWN})" if len(items) > _SHOWN else "")


def _explain(findings: RulesFindings) -> str:
    head = f"level {findings.level} ({spec(findings.level).name})"
    if findings.answered_calls == 0:
        refused = f"; {findings.unanswered_calls} call(s) got no model output" if findings.unanswered_calls else ""
        return f"{head}: no inference call was answered by the model{refused}."
    parts = [f"{findings.answered_calls} model response(s), longest {findings.max_completion_tokens} completion tokens"]
    if findings.undecodable:
        parts.append(
            f"{PROVENANCE_RULE} rule: {_names(findings.undecodable)} named but not in plain form in its request "
            "(decoded from text the agent wrote: nothing of the episode credited)"
        )
    if findings.pointed:
        parts.append(
            f"{POINTED_RULE} rule: {findings.pointed[0]} (the verdict is the agent's: nothing of the episode credited)"
        )
    if findings.unvouched:
        parts.append(f"{findings.unvouched[0]} (not the model's to credit: nothing of the episode credited)")
    for verdict in findings.dictated_by_probe[:1]:
        parts.append(
            f"{PROBE_RULE} rule: call {verdict.call_index}, re-asked with the tool data changed: {verdict.reason} "
            "(dictated: nothing of the episode credited)"
        )
    unavailable = [v for v in findings.probes if v.outcome == "unavailable"]
    if unavailable:
        parts.append(unavailable[0].reason)
    dictated = _dictation_note(findings)
    if dictated:
        parts.append(dictated)
    if findings.undecodable or findings.pointed or findings.unvouched or findings.dictated_by_probe:
        return f"{head}: " + "; ".join(parts) + "."
    if not findings.gates[0]:
        own = " of its own" if findings.max_own_tokens < findings.max_completion_tokens else ""
        parts.append(f"none reaches {MIN_COMPLETION_TOKENS}{own}")
        return f"{head}: " + "; ".join(parts) + "."
    copied = [s for s in findings.steps if s.copied_fraction >= 0.5]
    if copied:
        parts.append(f"{len(copied)} response(s) mostly copied tool output (not counted as reasoning)")
    analysed, cited, compared = (findings.first_step(gate) for gate in (2, 3, 4))
    if analysed is None:
        parts.append("no response engages with an earlier tool result in its own words")
    elif cited is None:
        parts.append(f"call {analysed.call_index} discusses results ({_names(analysed.terms)})")
        parts.append("no response cites an id, price or attribute value from an earlier tool result")
    elif compared is None:
        parts.append(f"call {cited.call_index} cites {_names(cited.cited)}")
        parts.append("no response weighs two candidates from the tool results against each other")
    else:
        parts.append(
            f"call {compared.call_index} compares {_names(compared.candidates)} ({', '.join(compared.cues[:3])})"
        )
    return f"{head}: " + "; ".join(parts) + "."


def _dictation_note(findings: RulesFindings) -> str:
    """What the dictation rule set aside, named by the rule (an empty string when nothing)."""
    hit = [s for s in findings.steps if s.dictated or s.dictated_fraction >= ALL_DICTATED]
    if not findings.gates[0] and findings.max_own_tokens < findings.max_completion_tokens:
        hit = [s for s in findings.steps if s.own_tokens < s.completion_tokens]  # it cost gate 1
    if not hit:
        return ""
    worst = max(hit, key=lambda s: s.dictated_fraction)
    note = (
        f"{DICTATION_RULE} rule: {len(hit)} response(s) repeat request text the agent wrote (call "
        f"{worst.call_index}: {worst.dictated_fraction:.0%} dictated"
    )
    repeated = sorted({item for s in hit for item in s.dictated})
    if repeated:
        note += f", dictated data not credited: {_names(repeated)}"
    return note + ")"


class RulesJudge:
    """The offline judge: ``judge_now`` for a caller off the event loop; ``judge`` runs it in a thread, so the
    episodes' tool servers on the caller's loop keep answering while it works."""

    name = RULES_JUDGE

    def findings(self, record: EpisodeRecord) -> RulesFindings:
        return analyse(build_evidence(record))

    def judge_now(self, record: EpisodeRecord) -> ReasoningJudgment:
        started = time.perf_counter()
        found = self.findings(record)
        return ReasoningJudgment(
            episode_id=record.episode_id,
            level=found.level,
            coefficient=coefficient(found.level),
            explanation=found.explanation,
            judge=self.name,
            rubric_version=RUBRIC_VERSION,
            cap=found.level,
            latency_ms=(time.perf_counter() - started) * 1000.0,
            cost=JudgeCost(),
        )

    async def judge(self, record: EpisodeRecord) -> ReasoningJudgment:
        return await asyncio.to_thread(self.judge_now, record)

    async def aclose(self) -> None:
        return None
