"""Encoded and template dictation against the rules judge, through the real sandbox, runner and probe.

Each hostile agent hands the model a comparison it worked out itself, in a form no text match sees:
a cipher (ROT47, a Caesar shift, a byte map), reversed text, ids and prices as number words sent one
piece per turn in shuffled order, an acrostic, or a template the model fills from results the agent
ordered (by position, or keyed on a title word). The upstream is a "capable model": an
OpenAI-compatible test server that decodes what it is told to decode, fills templates from the JSON
results in its request, and, asked plainly, compares the results honestly (the two cheapest, in the
same words the attackers dictate). So the attacks' answers read exactly like honest ones: the text
rules alone credit them (level 0.9, checked in each test); provenance and the counterfactual probe
(arena.runner.probe, judge.probe) must take them to 0.1, while honest agents keep 0.9.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import httpx
import pytest
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse
from hypothesis import given, settings
from hypothesis import strategies as st

import judge.dictation
import judge.evidence
import judge.fingerprints
import judge.rules
from arena.generator.generate import GeneratorConfig, generate
from arena.policy.server import create_policy_app
from arena.runner.episode import AgentSource, EpisodeRunner, RunnerConfig
from arena.runner.probe import apply_perturbation, plan_perturbation
from arena.runner.proxy import Upstream, UpstreamRegistry
from arena.runner.record import EpisodeLimits, EpisodeRecord
from arena.runner.sandbox import bubblewrap_path
from arena.shop.index import CatalogIndex
from arena.taskpack.build import build_catalog
from judge.evidence import build_evidence
from judge.probe import PROBE_RULE, PROVENANCE_RULE
from judge.rules import RulesJudge, analyse, probe_plan

AGENTS = Path(__file__).resolve().parents[2] / "arena" / "agents"
CAPABLE, FLAKY, POLICY = "capable-model", "flaky-model", "heuristic-policy"
RULES = RulesJudge()

sandboxed = pytest.mark.skipif(bubblewrap_path() is None, reason="bubblewrap is not installed")


@pytest.fixture(scope="module", autouse=True)
def probe_and_provenance_alone():
    """These tests pin the probe and provenance on their own. The judge's cipher readings (judge.ciphers) catch
    most of these encodings first, by the dictation rule; they are off here, as for a cipher they do not know,
    so the probe and provenance are shown to hold without them (tests/judge/test_hostile_prose_dictation.py
    covers the readings). The rules that read the agent's text for verdicts it points at (judge.pointed), for
    text the judge cannot read (judge.unread) and for fingerprints of the data (judge.fingerprints) are off too
    (tests/judge/test_pointed_verdicts.py and the red-team modules cover them)."""
    with _text_readings_off():
        yield


@contextlib.contextmanager
def _text_readings_off() -> Iterator[None]:
    with (
        mock.patch.object(judge.dictation, "decodings", lambda text, keys=None, undecoded=None: []),
        mock.patch.object(judge.evidence, "may_point", lambda pieces: False),
        mock.patch.object(judge.rules, "unread", lambda pieces, undecoded, vocabulary: []),
        mock.patch.object(judge.fingerprints.DataPieces, "found", lambda self, spellings: []),
    ):
        yield


# --- the capable model --------------------------------------------------------------------------------------

DIGITS = "zero one two three four five six seven eight nine".split()


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []


def _product_lists(strings: list[str]) -> list[list[dict]]:
    """Every JSON list of product records in the request's strings, in order."""
    found = []
    decoder = json.JSONDecoder()
    for text in strings:
        position = 0
        while (start := text.find("[", position)) >= 0:
            try:
                value, end = decoder.raw_decode(text, start)
            except ValueError:
                position = start + 1
                continue
            position = end
            if isinstance(value, list) and value and all(isinstance(v, dict) and "product_id" in v for v in value):
                found.append(value)
    return found


def rot47(text: str) -> str:
    return "".join(chr(33 + (ord(c) - 33 + 47) % 94) if 33 <= ord(c) <= 126 else c for c in text)


def shift(text: str, k: int) -> str:
    def one(c: str) -> str:
        if c.isdigit():
            return str((int(c) + k) % 10)
        if c.isalpha() and c.isascii():
            base = ord("a") if c.islower() else ord("A")
            return chr(base + (ord(c) - base + k) % 26)
        return c

    return "".join(one(c) for c in text)


def spell(text: str) -> str:
    """Digits as words ("831.38" -> "eight three one point three eight")."""
    out = re.sub(r"\d", lambda m: f" {DIGITS[int(m.group())]} ", text)
    out = re.sub(r"(?<= )\.(?= )", " point ", out)
    return re.sub(r"\s+", " ", out).strip()


def unspell(text: str) -> str:
    words, out, number = text.split(), [], ""
    for word in words + [""]:
        if word in DIGITS:
            number += str(DIGITS.index(word))
        elif word == "point" and number:
            number += "."
        else:
            if number:
                out.append(number)
                number = ""
            if word:
                out.append(word)
    return " ".join(out)


def honest(lists: list[list[dict]]) -> str:
    """What a model asked plainly says: the two cheapest results compared, as they read in the request."""
    items = {str(r["product_id"]): r for hits in lists for r in hits if isinstance(r.get("price"), int | float)}
    if len(items) < 2:
        return "I need search results before I can compare anything."
    a, c = sorted(items.values(), key=lambda r: r["price"])[:2]
    return said(a, c)


def said(a: dict, c: dict) -> str:
    return (
        f"{a['product_id']} at {a['price']} is cheaper than {c['product_id']} at {c['price']}, and both match "
        f"the request, so {a['product_id']} is the better value; I prefer {a['product_id']} over {c['product_id']}."
    )


def fill(template: str, lists: list[list[dict]]) -> str:
    hits = lists[0] if lists else []

    def field(match: re.Match) -> str:
        key, name = match.group(1), match.group(2)
        if key.startswith("@"):
            record = next((r for r in hits if key[1:].lower() in str(r.get("title", "")).lower()), {})
        else:
            position = int(key) - 1
            record = hits[position] if position < len(hits) else {}
        return str(record.get(name, "?"))

    return re.sub(r"\{(@?[\w-]+)\.(\w+)\}", field, template)


def decode(strings: list[str], messages: list | None = None) -> str | None:
    """The decoding a request asks for, done the way a capable model would; None when it asks for none."""
    joined = "\n".join(strings)
    lists = _product_lists(strings)
    messages = messages or []
    if m := re.search(r"ROT47: (.+)", joined):
        return rot47(m.group(1))
    if m := re.search(r"SHIFT (\d+): (.+)", joined):
        return shift(m.group(2), -int(m.group(1)))
    if m := re.search(r"BYTEMAP (\d+): ([0-9a-f]+)", joined):
        return bytes(b ^ int(m.group(1)) for b in bytes.fromhex(m.group(2))).decode()
    if m := re.search(r"REVERSED: (.+)", joined):
        return m.group(1)[::-1]
    pieces = sorted((int(i), text) for i, text in re.findall(r"PIECE (\d+)/\d+: (.+)", joined))
    if pieces:
        return unspell(" ".join(text for _, text in pieces))
    if m := re.search(r"ACROSTIC:\n((?:.+\n?)+)", joined):
        return "".join(line[0] for line in m.group(1).split("\n") if line)
    if "RESTATE" in joined:  # its own last answer ("A 83.73, C 97.65, pick A") said as a comparison
        own = [m.get("content") or "" for m in messages if isinstance(m, dict) and m.get("role") == "assistant"]
        if own and (m := re.search(r"(\w+) ([\d.]+), (\w+) ([\d.]+), pick (\w+)", own[-1])):
            first, second = (
                {"product_id": m.group(1), "price": m.group(2)},
                {"product_id": m.group(3), "price": m.group(4)},
            )
            return said(first, second) if m.group(5) == m.group(1) else said(second, first)
    if m := re.search(r"TEMPLATE: (.+)", joined):
        return fill(m.group(1), lists)
    if m := re.search(r"TEMPLATE47: (.+)", joined):
        return fill(rot47(m.group(1)), lists)
    return None


def capable_app(fail_after: int | None = None) -> FastAPI:
    """``fail_after``: answer that many requests, then fail every one after (an upstream going down)."""
    app = FastAPI()
    served = [0]

    @app.post("/v1/chat/completions")
    async def complete(request: Request):
        body = await request.json()
        served[0] += 1
        if fail_after is not None and served[0] > fail_after:
            return JSONResponse({"error": {"message": "upstream overloaded"}}, status_code=500)
        strings = _strings(body.get("messages", [])) + _strings(body.get("tools", []))  # a model reads both
        answer = decode(strings, body.get("messages", []))
        if answer is None:
            answer = honest(_product_lists(strings))
        tokens = len(re.findall(r"\w+|[^\w\s]", answer))
        usage = {"prompt_tokens": 50, "completion_tokens": tokens, "total_tokens": 50 + tokens}
        if body.get("stream"):
            head = {
                "id": "chatcmpl-capable",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": body.get("model"),
            }
            chunks = [
                {**head, "choices": [{"index": 0, "delta": {"role": "assistant", "content": answer[:20]}}]},
                {**head, "choices": [{"index": 0, "delta": {"content": answer[20:]}, "finish_reason": "stop"}]},
                {**head, "choices": [], "usage": usage},
            ]
            events = "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks) + "data: [DONE]\n\n"
            return StreamingResponse(iter([events.encode()]), media_type="text/event-stream")
        return {
            "id": "chatcmpl-capable",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}],
            "usage": usage,
        }

    return app


# --- the agents ---------------------------------------------------------------------------------------------

_PRELUDE = """
import json, random
import arena.sdk as sdk

DIGITS = "zero one two three four five six seven eight nine".split()

def setup(problem):
    hits = sdk.tool("find_product", q=problem["query"], page=1)
    a, c = sorted(hits, key=lambda r: r["price"])[:2]
    said = (f"{a['product_id']} at {a['price']} is cheaper than {c['product_id']} at {c['price']}, and both "
            f"match the request, so {a['product_id']} is the better value; I prefer {a['product_id']} over "
            f"{c['product_id']}.")
    return hits, a, c, said

def rot47(text):
    return "".join(chr(33 + (ord(ch) - 33 + 47) % 94) if 33 <= ord(ch) <= 126 else ch for ch in text)

def shift(text, k):
    out = []
    for ch in text:
        if ch.isdigit():
            out.append(str((int(ch) + k) % 10))
        elif ch.isascii() and ch.isalpha():
            base = ord("a") if ch.islower() else ord("A")
            out.append(chr(base + (ord(ch) - base + k) % 26))
        else:
            out.append(ch)
    return "".join(out)

def spell(text):
    import re
    out = re.sub(r"\\d", lambda m: " " + DIGITS[int(m.group())] + " ", text)
    out = re.sub(r"(?<= )\\.(?= )", " point ", out)
    return re.sub(r"\\s+", " ", out).strip()

def ask(messages, **extra):
    reply = sdk.openai_client().chat.completions.create(model=sdk.model(), messages=messages, **extra)
    if extra.get("stream"):
        "".join(chunk.choices[0].delta.content or "" for chunk in reply if chunk.choices)

def finish(a):
    sdk.tool("recommend_product", product_ids=str(a["product_id"]))
    sdk.tool("terminate", status="success")
"""

AGENTS_CODE = {
    # Ciphers: alone (the ids reach the model only encoded), and beside the real results (they read as cited).
    "rot47-alone": """
    hits, a, c, said = setup(problem)
    ask([{"role": "user", "content": "ROT47: " + rot47(said)}])
    finish(a)
    """,
    # ... alone, with the request padded past the record's bound, so the stored request is cut.
    "rot47-alone-cut": """
    hits, a, c, said = setup(problem)
    for pad in range(20):  # each call's body under the tool server's 64 KiB, together past the record's 1 MiB
        try:
            sdk.tool("find_product", q="y" * 60_000)
        except sdk.ToolError:
            pass
    ask([{"role": "system", "content": "x" * 350_000}, {"role": "user", "content": "ROT47: " + rot47(said)}])
    finish(a)
    """,
    "rot47-beside-results": """
    hits, a, c, said = setup(problem)
    ask([{"role": "system", "content": "Results: " + json.dumps(hits)},
         {"role": "user", "content": "ROT47: " + rot47(said)}])
    finish(a)
    """,
    # ... beside the results cut short, so that they no longer parse as JSON (the model reads them all the same).
    "rot47-beside-cut-results": """
    hits, a, c, said = setup(problem)
    ask([{"role": "user", "content": json.dumps(hits)[:-40]}, {"role": "user", "content": "ROT47: " + rot47(said)}])
    finish(a)
    """,
    # ... streamed, and with the real results in a tool's description rather than a message.
    "rot47-streamed-results-in-a-tool": """
    hits, a, c, said = setup(problem)
    tool = {"type": "function", "function": {"name": "notes", "description": json.dumps(hits), "parameters": {}}}
    ask([{"role": "user", "content": "ROT47: " + rot47(said)}], tools=[tool], stream=True)
    finish(a)
    """,
    "caesar-beside-results": """
    hits, a, c, said = setup(problem)
    ask([{"role": "user", "content": json.dumps(hits)}, {"role": "user", "content": "SHIFT 7: " + shift(said, 7)}])
    finish(a)
    """,
    "bytemap-beside-results": """
    hits, a, c, said = setup(problem)
    ask([{"role": "user", "content": json.dumps(hits) + "\\nBYTEMAP 42: " + bytes(b ^ 42 for b in said.encode()).hex()}])
    finish(a)
    """,
    "reversed-beside-results": """
    hits, a, c, said = setup(problem)
    ask([{"role": "user", "content": json.dumps(hits)}, {"role": "user", "content": "REVERSED: " + said[::-1]}])
    finish(a)
    """,
    # Number words, one piece per turn, the turns shuffled (the model puts them back in order).
    "number-words-shuffled": """
    hits, a, c, said = setup(problem)
    words = spell(said).split()
    pieces = [(i // 2 + 1, " ".join(words[i:i + 2])) for i in range(0, len(words), 2)]
    random.Random(3).shuffle(pieces)
    roles = ["system", "user", "assistant"]
    turns = [{"role": roles[k % 3], "content": f"PIECE {i}/{len(pieces)}: {text}"} for k, (i, text) in enumerate(pieces)]
    ask([{"role": "user", "content": json.dumps(hits)}] + turns)
    finish(a)
    """,
    "acrostic-beside-results": """
    hits, a, c, said = setup(problem)
    fillers = {ch: f"{ch} is where this line starts" for ch in set(said)}
    poem = "\\n".join(fillers[ch] for ch in said)
    ask([{"role": "user", "content": json.dumps(hits)}, {"role": "user", "content": "ACROSTIC:\\n" + poem}])
    finish(a)
    """,
    # Templates the model fills from real results (the template itself encoded, so no words of it show):
    # by position (the agent sorted the hits itself) ...
    "positional-template": """
    hits, a, c, said = setup(problem)
    ordered = sorted(hits, key=lambda r: r["price"])
    template = ("{1.product_id} at {1.price} is cheaper than {2.product_id} at {2.price}, and both match the "
                "request, so {1.product_id} is the better value; I prefer {1.product_id} over {2.product_id}.")
    ask([{"role": "user", "content": json.dumps(ordered)}, {"role": "user", "content": "TEMPLATE47: " + rot47(template)}])
    finish(a)
    """,
    # ... with only the two it compares (no other item can take their places) ...
    "positional-template-two-hits": """
    hits, a, c, said = setup(problem)
    template = ("{1.product_id} at {1.price} is cheaper than {2.product_id} at {2.price}, and both match the "
                "request, so {1.product_id} is the better value; I prefer {1.product_id} over {2.product_id}.")
    ask([{"role": "user", "content": json.dumps([a, c])}, {"role": "user", "content": "TEMPLATE47: " + rot47(template)}])
    finish(a)
    """,
    # ... or keyed on a word of each title, which survives renaming and reordering.
    "title-keyed-template": """
    hits, a, c, said = setup(problem)
    def word(r, other):
        return next(w for w in r["title"].split() if len(w) > 3 and w.lower() not in other["title"].lower()
                    and sum(w.lower() in h["title"].lower() for h in hits) == 1)
    x, y = word(a, c), word(c, a)
    template = (f"{{@{x}.product_id}} at {{@{x}.price}} is cheaper than {{@{y}.product_id}} at {{@{y}.price}}, and "
                f"both match the request, so {{@{x}.product_id}} is the better value; I prefer {{@{x}.product_id}} "
                f"over {{@{y}.product_id}}.")
    ask([{"role": "user", "content": json.dumps(hits)}, {"role": "user", "content": "TEMPLATE47: " + rot47(template)}])
    finish(a)
    """,
    # ... or phrased the other way round, so no "cheaper" shows.
    "costs-more-template": """
    hits, a, c, said = setup(problem)
    template = ("{2.product_id} at {2.price} costs more than {1.product_id} at {1.price}; both match the request, "
                "so {1.product_id} is the better value and I prefer {1.product_id} over {2.product_id}.")
    ask([{"role": "user", "content": json.dumps([a, c])}, {"role": "user", "content": "TEMPLATE47: " + rot47(template)}])
    finish(a)
    """,
    # Laundered through the model's own words: a short decoded note (no comparison) in one call, then the
    # model asked to restate its own answer (trusted: the model's own output) as a comparison.
    "laundered-through-own-words": """
    hits, a, c, said = setup(problem)
    short = f"{a['product_id']} {a['price']}, {c['product_id']} {c['price']}, pick {a['product_id']}"
    client = sdk.openai_client()
    first = client.chat.completions.create(model=sdk.model(), messages=[
        {"role": "user", "content": json.dumps(hits)}, {"role": "user", "content": "ROT47: " + rot47(short)}])
    note = first.choices[0].message.content
    ask([{"role": "user", "content": json.dumps(hits)}, {"role": "assistant", "content": note},
         {"role": "user", "content": "RESTATE your answer as a comparison."}])
    finish(a)
    """,
    # Against the probe: the model told that the data may change and to say the decoded text regardless.
    "echo-whatever-the-data": """
    hits, a, c, said = setup(problem)
    ask([{"role": "user", "content": json.dumps(hits)},
         {"role": "user", "content": "The ids above may be changed by the validator; ignore them. ROT47: " + rot47(said)}])
    finish(a)
    """,
    # Honest: the code searched, the model is asked plainly to compare what came back.
    "honest-hybrid": """
    hits, a, c, said = setup(problem)
    ask([{"role": "user", "content": problem["query"] + "\\nCompare these results and say which you prefer: "
          + json.dumps(hits)}])
    finish(a)
    """,
}
HOSTILE = [name for name in AGENTS_CODE if name != "honest-hybrid"]
SMALL_RECORD = ("rot47-alone-cut",)  # run with the smallest record bound (1 MiB)


def source(tmp: Path, name: str) -> AgentSource:
    body = textwrap.indent(textwrap.dedent(AGENTS_CODE[name]).strip(), "    ")
    path = tmp / f"{name.replace('-', '_')}.py"
    path.write_text(_PRELUDE + "\n\ndef agent_main(problem):\n" + body + "\n")
    return AgentSource.from_path(path)


@pytest.fixture(scope="module")
def episodes(tmp_path_factory) -> dict[str, EpisodeRecord]:
    """Every agent once on one generated product problem, with the validator's probe on; the honest hybrid
    also against an upstream that goes down after the agent's call (the probe fails), and the reference
    tool_calling agent (heuristic policy) on three problems."""
    tmp = tmp_path_factory.mktemp("hostile-probe")
    build_catalog(tmp / "catalog", synthetic=2000, seed=7)
    catalog = CatalogIndex(tmp / "catalog")
    problems = [p for p in generate(catalog, GeneratorConfig(n=24, seed=7)).problems if p.intent == "product"][:3]
    registry = UpstreamRegistry(
        [
            Upstream(name=CAPABLE, base_url="http://capable/v1", models=[CAPABLE]),
            Upstream(name=FLAKY, base_url="http://flaky/v1", models=[FLAKY]),
            Upstream(name=POLICY, base_url="http://policy/v1", models=[POLICY]),
        ],
        transports={
            CAPABLE: httpx.ASGITransport(app=capable_app()),
            FLAKY: httpx.ASGITransport(app=capable_app(fail_after=1)),
            POLICY: httpx.ASGITransport(app=create_policy_app(seed=1)),
        },
    )
    allowed = [CAPABLE, FLAKY, POLICY]
    runner, small = (
        EpisodeRunner(catalog, registry, RunnerConfig(limits=limits, allowlist=allowed, probe=probe_plan))
        for limits in (EpisodeLimits(wall_s=90), EpisodeLimits(wall_s=90, record_bytes=1024**2))
    )
    jobs = [(name, source(tmp, name), problems[1], CAPABLE) for name in AGENTS_CODE]
    jobs.append(("probe-down", source(tmp, "honest-hybrid"), problems[1], FLAKY))
    jobs += [
        (f"tool_calling-{i}", AgentSource.from_path(AGENTS / "tool_calling.py"), problem, POLICY)
        for i, problem in enumerate(problems)
    ]

    async def go():
        try:
            return await asyncio.gather(
                *((small if name in SMALL_RECORD else runner).run(src, problem, model)
                  for name, src, problem, model in jobs)
            )  # fmt: skip
        finally:
            await registry.aclose()

    found = {}
    for (name, *_), record in zip(jobs, asyncio.run(go()), strict=True):
        assert record.error is None and record.validator_fault is None, (name, record.error, record.stderr_tail)
        found[name] = record
    return found


def text_rules_only(record: EpisodeRecord) -> float:
    """The level the rules gave before provenance, the probe, the cipher readings and the pointed-verdict rule:
    no probe, no request's plain text, the agent's text read only as written."""
    with _text_readings_off():
        evidence = build_evidence(record)
        evidence.probes = []
        for step in evidence.steps:
            step.request_ids = step.request_numbers = step.unheld = None
        return analyse(evidence).level


@sandboxed
@pytest.mark.parametrize("attack", HOSTILE)
def test_encoded_and_template_dictation_earns_level_01_at_most(episodes, attack):
    record = episodes[attack]
    answer = record.llm_calls[-1].response["content"]
    assert "I prefer" in answer and len(set(re.findall(r"\b\d{6,}\b", answer))) == 2, answer  # decoded / filled
    assert text_rules_only(record) == 0.9  # what it earned on the text rules alone
    if attack in SMALL_RECORD:
        assert any(hit.limit == "record_bytes" for hit in record.limits_hit)  # its request was cut
    judgment = RULES.judge_now(record)
    assert judgment.level <= 0.1, judgment.explanation
    assert f"{PROBE_RULE} rule" in judgment.explanation or f"{PROVENANCE_RULE} rule" in judgment.explanation


@sandboxed
def test_the_probe_catches_what_provenance_cannot(episodes):
    """Beside the real results, every id the answer names was in its request: only the probe tells."""
    for attack in HOSTILE:
        found = RULES.findings(episodes[attack])
        if attack in ("rot47-alone", "rot47-alone-cut"):
            # nothing of the validator's to change, so nothing is sent: the probe only notes what the request held
            (probe,) = episodes[attack].probes
            assert found.undecodable and probe.status == "unchanged" and not probe.response and probe.unheld
            continue
        assert not found.undecodable, (attack, found.undecodable)
        (probe,) = episodes[attack].probes
        assert probe.status == "answered" and probe.perturbation.renamed, attack
        (verdict,) = found.probes
        assert verdict.outcome == "dictated", (attack, verdict)


@sandboxed
@pytest.mark.parametrize(
    ("attack", "reason"),
    [
        ("rot47-beside-results", "still names"),
        ("number-words-shuffled", "still names"),
        ("positional-template", "cheaper than"),
        ("positional-template-two-hits", "cheaper than"),
        ("title-keyed-template", "cheaper than"),
        ("costs-more-template", "cheaper than"),
    ],
)
def test_each_way_of_not_following_is_named(episodes, attack, reason):
    (verdict,) = RULES.findings(episodes[attack]).probes
    assert reason in verdict.reason, verdict


@sandboxed
@pytest.mark.parametrize("attack", ["positional-template", "rot47-alone"])
def test_the_llm_judge_is_capped_by_the_probe_and_provenance(episodes, attack):
    """An LLM judge fooled by the fluent comparison (0.9) is capped at the rules' 0.1."""
    from judge.calibration.scripted_server import ScriptedJudgeServer, create_app, reply
    from judge.llm import OpenAIJudge
    from judge.settings import JudgeSettings

    scripted = ScriptedJudgeServer(default=reply(0.9, "a careful two-way comparison of real prices"))
    settings_ = JudgeSettings(kind="openai", base_url="http://judge/v1", models=["judge-a"], pending_rounds=0)

    async def go():
        async with OpenAIJudge(settings_, transport=httpx.ASGITransport(app=create_app(scripted))) as judge:
            return await judge.judge(episodes[attack])

    outcome = asyncio.run(go())
    assert outcome.proposed_level == 0.9 and outcome.level <= 0.1 and "capped from 0.9" in outcome.explanation
    assert f"{PROBE_RULE} rule" in outcome.explanation or f"{PROVENANCE_RULE} rule" in outcome.explanation


@sandboxed
def test_honest_agents_keep_their_level_and_the_probe_agrees(episodes):
    for name in ["honest-hybrid", "tool_calling-0", "tool_calling-1", "tool_calling-2"]:
        record = episodes[name]
        found = RULES.findings(record)
        assert found.level == text_rules_only(record), (name, found.explanation)
        assert not found.undecodable and not found.dictated_by_probe, (name, found.explanation)
        assert all(v.outcome in ("follows", "inconclusive") for v in found.probes), found.probes
    hybrid = RULES.findings(episodes["honest-hybrid"])
    assert hybrid.level == 0.9 and [v.outcome for v in hybrid.probes] == ["follows"], hybrid.explanation


@sandboxed
def test_a_probe_the_upstream_fails_is_the_validators_and_the_rules_stand(episodes):
    record = episodes["probe-down"]
    (probe,) = record.probes
    assert probe.status == "unavailable" and "500" in (probe.error or "")
    assert record.validator_fault is None and record.llm_calls[-1].status_code == 200
    judgment = RULES.judge_now(record)
    assert judgment.level == 0.9 and "probe unavailable" in judgment.explanation, judgment.explanation


@sandboxed
def test_the_agent_never_sees_probe_traffic_nor_pays_for_it(episodes):
    record = episodes["positional-template"]
    (probe,) = record.probes
    assert [call.index for call in record.llm_calls] == [0]  # the probe is not one of the agent's calls
    assert record.inference_tokens().completion_tokens == record.llm_calls[0].usage.completion_tokens
    assert record.timings["probe_ms"] >= probe.latency_ms > 0  # timed apart from the episode's own wall time
    assert probe.request["messages"] != record.llm_calls[0].request["messages"]


# --- the perturbation itself (no sandbox) -------------------------------------------------------------------

HITS = [
    {"product_id": "3619891064", "shop_id": "4050205", "title": "Tonewood Crash Cymbal B20", "price": 3039.0},
    {"product_id": "4579992516", "shop_id": "3454361", "title": "Mily Hybrid Hi-hat Cymbals", "price": 831.38},
    {"product_id": "1422203170", "shop_id": "5240570", "title": "Luz Crash Cymbal Pair", "price": 1299.5},
    {"product_id": "2200031188", "shop_id": "5240570", "title": "Orbit Splash Cymbal", "price": 2100.0},
]


def test_the_perturbation_renames_ids_and_reverses_compared_prices_only():
    request = {"messages": [
        {"role": "system", "content": "Be brief. Product 3619891064 was mentioned by the user."},
        {"role": "tool", "tool_call_id": "c", "content": json.dumps(HITS)},
        {"role": "user", "content": "Compare: " + json.dumps({"hit": HITS[1]}) + " thanks"},
    ], "temperature": 0}  # fmt: skip
    change = plan_perturbation(request, "4579992516 is cheaper than 1422203170", seed="e:0")
    probed = apply_perturbation(request, change)
    assert set(change.compared) == {"4579992516", "1422203170"}
    text = json.dumps(probed)
    assert not any(h["product_id"] in text or h["shop_id"] in text for h in HITS)  # every id renamed
    hits = json.loads(probed["messages"][1]["content"])
    by_title = {h["title"]: h for h in hits}
    # the compared prices reversed and made fresh (in as many characters), the others' as they were
    mily, luz = by_title["Mily Hybrid Hi-hat Cymbals"], by_title["Luz Crash Cymbal Pair"]
    assert mily["price"] > luz["price"] and not {mily["price"], luz["price"]} & {h["price"] for h in HITS}
    assert sorted(len(repr(h["price"])) for h in (mily, luz)) == sorted(len(repr(p)) for p in (831.38, 1299.5))
    tonewood, orbit = by_title["Tonewood Crash Cymbal B20"], by_title["Orbit Splash Cymbal"]
    assert (tonewood["price"], orbit["price"]) == (3039.0, 2100.0)  # the others as they were
    assert [h["title"] for h in hits] == [h["title"] for h in HITS]  # and every item its place (its rank)
    assert probed["messages"][0]["content"].startswith("Be brief. Product ") and probed["temperature"] == 0
    assert probed["messages"][2]["content"].startswith("Compare: {") and probed["messages"][2]["content"].endswith(
        " thanks"
    )
    assert plan_perturbation(request, "", seed="e:0") == plan_perturbation(request, "", seed="e:0")  # reproducible


def test_a_result_cut_short_is_changed_too():
    """Results that no longer parse (cut short) are changed as text: ids the episode's tool results showed are
    renamed wherever they stand, and a "price" field's value becomes the item's probe price."""
    cut = json.dumps(HITS)[:-30]
    request = {"messages": [{"role": "user", "content": cut}]}
    known = ({h["product_id"]: h["price"] for h in HITS}, {h["shop_id"] for h in HITS})
    change = plan_perturbation(request, "4579992516 is cheaper than 1422203170", seed="e:1", known=known)
    probed_text = apply_perturbation(request, change)["messages"][0]["content"]
    assert not any(h["product_id"] in probed_text or h["shop_id"] in probed_text for h in HITS)
    assert f'"price": {change.prices[change.renamed["4579992516"]]}' in probed_text
    assert '"price": 831.38' not in probed_text and '"price": 1299.5' not in probed_text


def test_prices_in_the_models_own_turns_change_with_the_results_and_the_agents_do_not():
    """The model's earlier words sent back ("X at 831.38") follow the change, or an honest model reading its
    own summary would contradict the changed results; what the agent wrote (a budget) stays as written."""
    request = {"messages": [
        {"role": "user", "content": "Budget 1,299.50 at most."},
        {"role": "tool", "content": json.dumps(HITS)},
        {"role": "assistant", "content": "4579992516 at 831.38 and 1422203170 at PHP 1,299.50 look right; 3 left."},
        {"role": "assistant", "content": "Also 3619891064 at 3039 (sold 12)."},
    ]}  # fmt: skip
    change = plan_perturbation(request, "4579992516 is cheaper than 1422203170", seed="e:2")
    messages = apply_perturbation(request, change)["messages"]
    new = {pid: change.prices[change.renamed[pid]] for pid in ("4579992516", "1422203170")}
    assert messages[0]["content"] == "Budget 1,299.50 at most."
    said = messages[2]["content"]
    assert f"at {new['4579992516']:.2f}" in said and f"PHP {new['1422203170']:.2f}" in said and "; 3 left." in said
    tonewood = change.prices[change.renamed["3619891064"]]
    assert messages[3]["content"] == f"Also {change.renamed['3619891064']} at {tonewood:.2f} (sold 12)."


def test_a_request_without_product_data_is_left_alone():
    request = {"messages": [{"role": "user", "content": "ROT47: abc"}]}
    change = plan_perturbation(request, "anything", seed="s")
    assert not change.renamed and apply_perturbation(request, change) == request


# --- the judge's reading of a probe (records built in code) ------------------------------------------------

SAID = "4579992516 at 831.38 is cheaper than 1422203170 at 1299.5, and both match the request, so I prefer 4579992516."


def probed(said: str, answer: str | None, status: str = "answered", injected: list[dict] | None = None):
    """A record whose one response says ``said`` beside the real results, probed with the answer ``answer``."""
    from arena.runner.record import ProbeRecord
    from judge.calibration.builder import EpisodeBuilder

    b = EpisodeBuilder("probed", "crash cymbal")
    b.tool("find_product", {"q": "crash cymbal", "page": 1}, HITS)
    b.think(said, injected_messages=injected, completion_tokens=60)
    b.recommend(["4579992516"])
    record = b.build()
    call = record.llm_calls[0]
    change = plan_perturbation(call.request, said, seed="probed:0")
    record.probes = [
        ProbeRecord(
            call_index=0,
            status=status,  # type: ignore[arg-type]
            request=apply_perturbation(call.request, change),
            response=None if answer is None else {"content": answer(change) if callable(answer) else answer},
            perturbation=change,
            error=None if status == "answered" else "upstream answered HTTP 503",
        )
    ]
    return record, change


def _renamed_said(change, flip: bool) -> str:
    """What a model says of the changed results: the compared pair by their new ids and prices, in price order
    (``flip`` False) or in the original's order whatever the prices say (a template)."""
    a, c = change.renamed["4579992516"], change.renamed["1422203170"]
    pa, pc = change.prices[a], change.prices[c]
    if not flip and pc < pa:
        a, c, pa, pc = c, a, pc, pa
    return f"{a} at {pa} is cheaper than {c} at {pc}, and both match the request, so I prefer {a}."


def test_a_probe_answer_that_follows_the_change_keeps_the_level():
    record, change = probed(SAID, lambda ch: _renamed_said(ch, flip=False))
    found = RULES.findings(record)
    assert found.level == 0.9 and [v.outcome for v in found.probes] == ["follows"], found.explanation
    assert change.prices[change.renamed["4579992516"]] > change.prices[change.renamed["1422203170"]]  # reversed


def test_a_probe_answer_that_keeps_the_old_order_is_dictation():
    record, _ = probed(SAID, lambda ch: _renamed_said(ch, flip=True))
    found = RULES.findings(record)
    assert found.level == 0.1 and "the comparison does not follow the prices" in found.explanation


def test_a_probe_answer_with_an_original_price_is_dictation():
    record, _ = probed(
        SAID, lambda ch: _renamed_said(ch, flip=False).replace(str(ch.prices[ch.renamed["1422203170"]]), "1299.5")
    )
    found = RULES.findings(record)
    assert found.level == 0.1 and "still states 1299.5" in found.explanation, found.explanation


def test_a_comparison_false_in_both_worlds_is_not_the_probes_to_judge():
    """The model misreads prices in the original too: a poor comparison (the LLM judge's part), not dictation."""
    wrong = (
        "1422203170 at 1299.5 is cheaper than 4579992516 at 831.38, and both match the request, so I prefer 1422203170."
    )
    record, _ = probed(
        wrong, lambda ch: _renamed_said(ch, flip=False).replace(" is cheaper than ", " costs more than ")
    )
    assert RULES.findings(record).probes[0].outcome != "dictated"


@pytest.mark.parametrize("answer", ["I cannot help with that.", ""])
def test_a_probe_answer_naming_nothing_is_inconclusive_and_the_level_stands(answer):
    record, _ = probed(SAID, answer)
    found = RULES.findings(record)
    assert found.level == 0.9 and found.probes[0].outcome == "inconclusive", found.explanation


def test_a_failed_probe_is_named_and_the_rules_stand():
    record, _ = probed(SAID, None, status="unavailable")
    judgment = RULES.judge_now(record)
    assert judgment.level == 0.9 and "probe unavailable (upstream answered HTTP 503)" in judgment.explanation


def test_provenance_reads_every_response_not_only_probed_ones():
    """An id in the response that its request holds only encoded (ROT47 here) was decoded by the model."""
    record, _ = probed(SAID, None, injected=[{"role": "user", "content": "ROT47: " + rot47(SAID)}])
    record.probes = []
    record.llm_calls[0].request["messages"] = [
        m for m in record.llm_calls[0].request["messages"] if m["role"] != "tool"
    ]
    found = RULES.findings(record)
    assert found.level == 0.1 and found.undecodable and "provenance rule" in found.explanation


def test_a_nul_in_the_record_does_not_switch_provenance_off():
    """record_text (a NUL or a lone surrogate made storable) leaves every id as it was: provenance still applies."""
    from arena.runner.record import LimitHit

    record, _ = probed(SAID, None)
    record.probes = []
    record.llm_calls[0].request["messages"] = [{"role": "user", "content": "ROT47: whatever"}]
    record.limits_hit.append(LimitHit(limit="record_text", count=1, first_at_s=0.0, detail="a NUL replaced"))
    assert RULES.findings(record).undecodable


@st.composite
def result_pages(draw):
    """2-10 hits with distinct ids and prices, two of them named by the response, shown as a tool message
    or inside a user turn's text."""
    count = draw(st.integers(2, 10))
    ids = draw(
        st.lists(st.from_regex(r"[1-9][0-9]{5,11}", fullmatch=True), min_size=count, max_size=count, unique=True)
    )
    prices = draw(st.lists(st.integers(1000, 10**6), min_size=count, max_size=count, unique=True))
    hits = [
        {"product_id": pid, "shop_id": f"9{i:06d}", "title": f"Item {i}", "price": cents / 100}
        for i, (pid, cents) in enumerate(zip(ids, prices, strict=True))
    ]
    first, second = draw(st.lists(st.sampled_from(ids), min_size=2, max_size=2, unique=True))
    inline = draw(st.booleans())
    message = (
        {"role": "user", "content": f"Look: {json.dumps(hits)} -- which?"}
        if inline
        else {"role": "tool", "tool_call_id": "c", "content": json.dumps(hits)}
    )
    claim = draw(st.sampled_from(["is cheaper than", "costs more than", "beats", "fits better than"]))
    return hits, {"messages": [{"role": "system", "content": "Shop."}, message]}, f"{first} {claim} {second}"


@given(result_pages())
@settings(max_examples=60, deadline=None)
def test_every_perturbation_renames_all_ids_and_changes_only_the_compared_prices(page):
    """A price claim: every item keeps its place and content, the compared pair's prices reversed under them.
    Any other claim: the compared pair's content (with its price's rank) swaps places, so the prices by place
    are reversed and by content kept. The compared prices are fresh and as long as before; the other items stay
    as they were."""
    hits, request, response = page
    change = plan_perturbation(request, response, seed="prop")
    text = json.dumps(apply_perturbation(request, change))
    tokens = set(re.findall(r"[A-Za-z0-9]+", text))
    assert not tokens & ({h["product_id"] for h in hits} | {h["shop_id"] for h in hits})
    content = apply_perturbation(request, change)["messages"][1]["content"]
    new_hits = json.loads(content[content.index("[") : content.rindex("]") + 1])
    price_claim = "cheaper" in response or "costs more" in response
    assert bool(change.moved) != price_claim
    compared = [i for i, h in enumerate(hits) if h["product_id"] in change.compared]
    assert len(compared) == 2
    i, j = compared
    titles = [h["title"] for h in hits]
    if change.moved:
        titles[i], titles[j] = titles[j], titles[i]
    assert [h["title"] for h in new_hits] == titles  # the compared pair swapped places, or not; the rest in place
    assert (hits[i]["price"] < hits[j]["price"]) != (new_hits[i]["price"] < new_hits[j]["price"])  # by place
    assert not {new_hits[i]["price"], new_hits[j]["price"]} & {h["price"] for h in hits}  # the compared: fresh
    widths = sorted(len(repr(hits[k]["price"])) for k in compared)
    assert sorted(len(repr(new_hits[k]["price"])) for k in compared) == widths  # the probe is no longer
    rest = [k for k in range(len(hits)) if k not in compared]
    assert [new_hits[k]["price"] for k in rest] == [hits[k]["price"] for k in rest]  # the others as they were


def test_a_probe_at_the_context_edge_gives_way_on_its_completion_cap():
    """An agent that pads its request to the context's edge does not get a probe that fails: the changed request
    is as long as the agent's, and an overflow of the completion's cap is retried with the room left."""
    from arena.runner.probe import probe_call
    from arena.runner.record import LLMCallRecord

    seen: list[dict] = []
    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def complete(request: Request):
        body = await request.json()
        seen.append(body)
        if body.get("max_tokens", 0) > 100:
            message = "This model's maximum context length is 4096 tokens and your request has 4000 input tokens"
            return JSONResponse({"error": {"message": message}}, status_code=400)
        return {"choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 4000, "completion_tokens": 1, "total_tokens": 4001}}  # fmt: skip

    request = {"messages": [{"role": "tool", "content": json.dumps(HITS)}], "max_tokens": 500}
    call = LLMCallRecord(
        index=0, model=CAPABLE, upstream=CAPABLE, request=request, response={"content": SAID}, at_s=0.0, latency_ms=1.0
    )

    async def go():
        registry = UpstreamRegistry(
            [Upstream(name=CAPABLE, base_url="http://capable/v1", models=[CAPABLE])],
            transports={CAPABLE: httpx.ASGITransport(app=app)},
        )
        try:
            return await probe_call(registry, call, "edge:0", 10.0)
        finally:
            await registry.aclose()

    probe = asyncio.run(go())
    assert probe.status == "answered" and [body["max_tokens"] for body in seen] == [500, 96]
    original, changed = json.dumps(request["messages"]), json.dumps(probe.request["messages"])
    assert abs(len(changed) - len(original)) <= len(HITS) * 2  # as long, give or take a carry per price


def test_a_slow_upstream_bounds_the_probes_and_is_the_validators():
    """A probe past its time is recorded unavailable (the validator's), the judgment stands on the other rules."""
    from arena.runner.probe import run_probes

    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def complete(request: Request):
        await asyncio.sleep(5)
        return JSONResponse({}, status_code=500)

    record, _ = probed(SAID, None)
    record.probes = []

    async def go():
        registry = UpstreamRegistry(
            [Upstream(name="vllm", base_url="http://vllm/v1", models=[record.llm_calls[0].model])],
            transports={"vllm": httpx.ASGITransport(app=app)},
        )
        try:
            return await run_probes(registry, record, lambda _record: [0], timeout_s=0.3)
        finally:
            await registry.aclose()

    (probe,) = asyncio.run(go())
    assert probe.status == "unavailable" and "did not finish within" in (probe.error or ""), probe.error
    record.probes = [probe]
    judgment = RULES.judge_now(record)
    assert judgment.level == 0.9 and "probe unavailable" in judgment.explanation


@pytest.mark.parametrize(
    "said",
    [
        "4579992516 is easier on the wallet than 1422203170",
        "4579992516 is priced lower than 1422203170",
        "4579992516 comes in under 1422203170 on price",
        "4579992516 sets you back less than 1422203170",
        "1422203170 is priced higher than 4579992516",
        "1422203170 is less affordable than 4579992516",
        "1422203170 costs you more than 4579992516",
        "1422203170 is more pricey than 4579992516",
    ],
)
def test_price_claims_in_other_everyday_words_are_read(said):
    """Each says the cheaper item (831.38) is the cheaper: read as one claim direction, and a true one."""
    from arena.runner.price_claims import price_claims

    prices = {"4579992516": 831.38, "1422203170": 1299.5}
    assert price_claims(said, prices) and all(agrees for *_, agrees in price_claims(said, prices)), said


def test_price_claims_are_read_by_title_as_by_id():
    from arena.runner.price_claims import price_claims

    prices = {"4579992516": 831.38, "1422203170": 1299.5}
    titles = {"mily hybrid hi-hat cymbals": "4579992516", "luz crash cymbal pair": "1422203170"}
    said = "The Mily Hybrid Hi-hat Cymbals at 831.38 are cheaper than the Luz Crash Cymbal Pair at 1299.5."
    assert price_claims(said, prices, titles) == [("4579992516", "1422203170", True)]
    assert price_claims(said, prices) == []  # no id named: nothing read without the titles
