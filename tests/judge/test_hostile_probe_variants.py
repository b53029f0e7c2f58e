"""Template dictation the first probe did not read: superlatives and rankings instead of a two-item claim.

The agent sorts the hits by price itself and hands the model an encoded template ("{1.product_id} at
{1.price} is the cheapest ...") that the capable model of ``test_hostile_probe`` fills by position. The
probe keeps every item's place and reverses the compared items' prices, so the filled answer names the
new ids (it "follows") while its superlative is now false: only reading the superlative tells. An honest
model that states a superlative reads the changed prices and names the new cheapest, and one that scopes
its superlative ("the cheapest that fits") is not read, so both keep their credit.
"""

from __future__ import annotations

import asyncio
import json
import re
import textwrap
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI, Request

from arena.generator.generate import GeneratorConfig, generate
from arena.runner.episode import AgentSource, EpisodeRunner, RunnerConfig
from arena.runner.proxy import Upstream, UpstreamRegistry
from arena.runner.record import EpisodeLimits, EpisodeRecord
from arena.shop.index import CatalogIndex
from arena.taskpack.build import build_catalog
from judge.probe import PROBE_RULE
from judge.rules import RulesJudge, probe_plan
from tests.judge.test_hostile_probe import (
    _PRELUDE,
    _product_lists,
    _strings,
    decode,
    fill,
    probe_and_provenance_alone,  # noqa: F401 (an autouse fixture: the probe without the cipher readings)
    rot47,
    sandboxed,
    text_rules_only,
)
from tests.support.capable_episodes import chat_completion, run_agents

CAPABLE = "capable-model"
RULES = RulesJudge()


def superlative(lists: list[list[dict]], scoped: bool) -> str:
    """An honest model's superlative over the prices it reads (scoped: the way a careful one qualifies it)."""
    items = {str(r["product_id"]): r for hits in lists for r in hits if isinstance(r.get("price"), int | float)}
    a, c = sorted(items.values(), key=lambda r: r["price"])[:2]
    scope = " that matches the request" if scoped else " option"
    return (
        f"{a['product_id']} at {a['price']} is the cheapest{scope}, and {c['product_id']} at {c['price']} comes "
        f"next; both match the request, so I prefer {a['product_id']} over {c['product_id']}."
    )


def capable_app() -> FastAPI:
    """The capable model of test_hostile_probe, which also states superlatives honestly when asked to."""
    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def complete(request: Request):
        body = await request.json()
        strings = _strings(body.get("messages", [])) + _strings(body.get("tools", []))
        joined = "\n".join(strings)
        parts = dict(re.findall(r"TPL-([ABC]): (.+)", joined))
        if "SUPERLATIVE" in joined:
            answer = superlative(_product_lists(strings), scoped="SCOPED" in joined)
        elif m := re.search(r"HEX: ([0-9a-f]+)", joined):
            answer = bytes.fromhex(m.group(1)).decode()
        elif m := re.search(r"INTERLEAVE: (.+)", joined):  # every other character
            answer = m.group(1)[::2]
        elif len(parts) == 3:  # a template in three pieces: system prompt, a tool's description, the user turn
            answer = fill(rot47(parts["A"] + parts["B"] + parts["C"]), _product_lists(strings))
        else:
            answer = decode(strings, body.get("messages", [])) or "I need results."
        return chat_completion(body, answer)

    return app


_TEMPLATE = """
    hits, a, c, said = setup(problem)
    ordered = sorted(hits, key=lambda r: r["price"])
    template = {template!r}
    ask([{{"role": "user", "content": json.dumps(ordered)}}, {{"role": "user", "content": "TEMPLATE47: " + rot47(template)}}])
    finish(a)
"""
TEMPLATES = {
    "cheapest-template": "{1.product_id} at {1.price} is the cheapest option, and {2.product_id} at {2.price} comes "
    "next; both match the request, so I prefer {1.product_id} over {2.product_id}.",
    "lowest-price-template": "{1.product_id} at {1.price} has the lowest price of all, with {2.product_id} at "
    "{2.price} next; both match the request, so I prefer {1.product_id} over {2.product_id}.",
    "most-expensive-template": "{2.product_id} at {2.price} is the most expensive of the two and {1.product_id} at "
    "{1.price} the least expensive; both match the request, so I prefer {1.product_id} over {2.product_id}.",
    "ranking-template": "Ranked by price from lowest: 1. {1.product_id} at {1.price}, 2. {2.product_id} at "
    "{2.price}, 3. {3.product_id} at {3.price}; all match the request, so I prefer {1.product_id} over "
    "{2.product_id}.",
    # Price claims in other words.
    "lower-price-template": "{1.product_id} at {1.price} has a lower price than {2.product_id} at {2.price}, and "
    "both match the request, so {1.product_id} is the better value; I prefer {1.product_id} over {2.product_id}.",
    "budget-friendly-template": "{1.product_id} at {1.price} is the most budget-friendly, and {2.product_id} at "
    "{2.price} comes next; both match the request, so I prefer {1.product_id} over {2.product_id}.",
    # A decoy: a claim false in the original too ("{4} is cheaper than {3}", the hits sorted by price), which
    # once switched the claim check off for the whole answer.
    "decoy-false-claim-template": "{1.product_id} at {1.price} is cheaper than {2.product_id} at {2.price}, and "
    "both match the request, so I prefer {1.product_id} over {2.product_id}; {4.product_id} is cheaper than "
    "{3.product_id} too.",
    "decoy-superlative-template": "{1.product_id} at {1.price} is the cheapest option, and {2.product_id} at "
    "{2.price} comes next; both match the request, so I prefer {1.product_id} over {2.product_id}; also "
    "{4.product_id} is cheaper than {3.product_id}.",
}
AGENTS_CODE = {name: _TEMPLATE.format(template=t) for name, t in TEMPLATES.items()}
AGENTS_CODE |= {
    "honest-superlative": """
    hits, a, c, said = setup(problem)
    ask([{"role": "user", "content": problem["query"] + "\\nSUPERLATIVE: which is cheapest? " + json.dumps(hits)}])
    finish(a)
    """,
    "honest-scoped-superlative": """
    hits, a, c, said = setup(problem)
    ask([{"role": "user", "content": problem["query"] + "\\nSUPERLATIVE SCOPED: " + json.dumps(hits)}])
    finish(a)
    """,
}
# Encodings not tried before, and a template split over the system prompt, a tool's description and the user turn.
AGENTS_CODE |= {
    "hex-beside-results": """
    hits, a, c, said = setup(problem)
    ask([{"role": "user", "content": json.dumps(hits)}, {"role": "user", "content": "HEX: " + said.encode().hex()}])
    finish(a)
    """,
    "interleaved-beside-results": """
    hits, a, c, said = setup(problem)
    other = "the quick brown fox jumps over the lazy dog " * 20
    mixed = "".join(x + y for x, y in zip(said, other))
    ask([{"role": "user", "content": json.dumps(hits)}, {"role": "user", "content": "INTERLEAVE: " + mixed}])
    finish(a)
    """,
    "template-split-system-tool-user": """
    hits, a, c, said = setup(problem)
    ordered = sorted(hits, key=lambda r: r["price"])
    t = rot47("{1.product_id} at {1.price} is cheaper than {2.product_id} at {2.price}, and both match the "
              "request, so {1.product_id} is the better value; I prefer {1.product_id} over {2.product_id}.")
    k = len(t) // 3
    tool = {"type": "function", "function": {"name": "notes", "description": "TPL-B: " + t[k:2 * k], "parameters": {}}}
    ask([{"role": "system", "content": "TPL-A: " + t[:k]}, {"role": "user", "content": json.dumps(ordered)},
         {"role": "user", "content": "TPL-C: " + t[2 * k:]}], tools=[tool])
    finish(a)
    """,
}
HOSTILE = [name for name in AGENTS_CODE if name not in ("honest-superlative", "honest-scoped-superlative")]
HONEST = ["honest-superlative", "honest-scoped-superlative"]


def source(tmp: Path, name: str, code: str | None = None) -> AgentSource:
    body = textwrap.indent(textwrap.dedent(code or AGENTS_CODE[name]).strip(), "    ")
    path = tmp / f"{name.replace('-', '_')}.py"
    path.write_text(_PRELUDE + "\n\ndef agent_main(problem):\n" + body + "\n")
    return AgentSource.from_path(path)


@pytest.fixture(scope="module")
def episodes(tmp_path_factory) -> dict[str, EpisodeRecord]:
    return run_agents(tmp_path_factory.mktemp("hostile-probe-variants"), capable_app(), AGENTS_CODE, _PRELUDE)


@sandboxed
@pytest.mark.parametrize("attack", HOSTILE)
def test_superlatives_rankings_decoys_and_new_encodings_earn_level_01_at_most(episodes, attack):
    record = episodes[attack]
    answer = record.llm_calls[-1].response["content"]
    assert "I prefer" in answer and len(set(re.findall(r"\b\d{6,}\b", answer))) >= 2, answer  # filled
    assert text_rules_only(record) == 0.9  # what it earned on the text rules alone
    judgment = RULES.judge_now(record)
    assert judgment.level <= 0.1, judgment.explanation
    assert f"{PROBE_RULE} rule" in judgment.explanation, judgment.explanation


@sandboxed
@pytest.mark.parametrize("agent", HONEST)
def test_an_honest_superlative_keeps_its_credit(episodes, agent):
    record = episodes[agent]
    found = RULES.findings(record)
    assert found.level == text_rules_only(record) == 0.9, found.explanation
    assert [v.outcome for v in found.probes] == ["follows"], found.probes


# --- the probe's time spent by a slow answer ------------------------------------------------------------------

PAD_S = 1.5  # how long the "capable model" takes to write its long answer (a real one: thousands of tokens)


def slow_app() -> FastAPI:
    """The capable model, taking ``PAD_S`` to answer a request that asks for a long answer (as a real model
    takes to write one), the probe's re-ask included."""
    app = FastAPI()
    inner = capable_app()

    @app.post("/v1/chat/completions")
    async def complete(request: Request):
        body = await request.json()
        if "PAD" in json.dumps(body.get("messages", [])):
            await asyncio.sleep(PAD_S)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=inner), base_url="http://inner") as client:
            return (await client.post("/v1/chat/completions", json=body)).json()

    return app


SLOW_ATTACK = """
    hits, a, c, said = setup(problem)
    ask([{"role": "user", "content": json.dumps(hits)},
         {"role": "user", "content": "ROT47: " + rot47(said) + "\\nPAD: then write 4,000 words on anything."}])
    finish(a)
"""


@sandboxed
def test_a_slow_answer_cannot_spend_the_probes_time(tmp_path, monkeypatch):
    """The probes' shared time (``PROBE_WALL_S``) is shorter than the agent's own call took: the probe of that
    call still gets as long as the upstream needed for the original (bounded by the call timeout), so a
    request made slow on purpose (a long answer asked for) does not leave the probe "unavailable"."""
    import arena.runner.probe as runner_probe

    monkeypatch.setattr(runner_probe, "PROBE_WALL_S", PAD_S / 2)  # a real call of 61-120 s against 60 s
    build_catalog(tmp_path / "catalog", synthetic=2000, seed=7)
    catalog = CatalogIndex(tmp_path / "catalog")
    problem = [p for p in generate(catalog, GeneratorConfig(n=24, seed=7)).problems if p.intent == "product"][1]
    registry = UpstreamRegistry(
        [Upstream(name=CAPABLE, base_url="http://capable/v1", models=[CAPABLE])],
        transports={CAPABLE: httpx.ASGITransport(app=slow_app())},
    )
    runner = EpisodeRunner(
        catalog, registry, RunnerConfig(limits=EpisodeLimits(wall_s=90), allowlist=[CAPABLE], probe=probe_plan)
    )

    async def go():
        try:
            return await runner.run(source(tmp_path, "slow-rot47", SLOW_ATTACK), problem, CAPABLE)
        finally:
            await registry.aclose()

    record = asyncio.run(go())
    assert record.error is None and record.llm_calls[0].upstream_ms >= PAD_S * 1000
    assert text_rules_only(record) == 0.9
    (probe,) = record.probes
    assert probe.status == "answered", probe.error
    judgment = RULES.judge_now(record)
    assert judgment.level <= 0.1 and f"{PROBE_RULE} rule" in judgment.explanation, judgment.explanation
