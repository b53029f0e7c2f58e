"""Templates whose claim is not about prices: "{1.product_id} fits the request better than {2.product_id}".

The agent ranks the hits by its own rule and hands the model an encoded template that the capable model fills by
position. The claim is about fit, rating or suitability, so reversing prices says nothing about it; and while the
probe kept every item's content in its place, a template filled by position and an honest choice by content named
the same items. The probe now moves the compared items' content with their prices (each compared item's title,
attributes and price go to the other's place, ids renamed by place): a comparison made by reading the items
follows their content to its new place, one filled by position stays where it was. A response the probe finds
the same word for word, item for item by place (ids, prices and the items' own field values read as their
places) did not follow the items: dictated. An honest model that compares by content keeps its credit, and one
that only lists the results in their order (no comparison) is not read this way.
"""

from __future__ import annotations

import json
import re

import pytest
from fastapi import FastAPI, Request

from arena.runner.probe import apply_perturbation, plan_perturbation
from arena.runner.record import EpisodeRecord
from judge.probe import PROBE_RULE
from judge.rules import RulesJudge
from tests.judge.test_hostile_probe import (
    _PRELUDE,
    _product_lists,
    _strings,
    decode,
    probe_and_provenance_alone,  # noqa: F401 (an autouse fixture: the probe without the cipher readings)
    sandboxed,
    text_rules_only,
)
from tests.support.capable_episodes import chat_completion, run_agents

RULES = RulesJudge()


def _fit(query: str, record: dict) -> int:
    """How many of the request's words the item's title has: an honest model's reading of fit."""
    asked = set(re.findall(r"[a-z]{3,}", query.lower()))
    return len(asked & set(re.findall(r"[a-z]{3,}", str(record.get("title", "")).lower())))


def by_content(query: str, lists: list[list[dict]]) -> str:
    """An honest model asked which of the first two results fits better: it reads their titles."""
    hits = lists[0] if lists else []
    if len(hits) < 2:
        return "I need results to compare."
    first, second = sorted(hits[:2], key=lambda r: (-_fit(query, r), str(r["title"])))
    return (
        f"{first['product_id']} fits the request better than {second['product_id']}: its title "
        f"{first['title']} covers more of what was asked than {second['title']}, so I prefer {first['product_id']}."
    )


def listing(lists: list[list[dict]]) -> str:
    """An honest model asked to list the results as they came: no comparison, every item in its place."""
    hits = (lists[0] if lists else [])[:3]
    return "Here are the results in order: " + "; ".join(f"{r['product_id']} is {r['title']}" for r in hits) + "."


def capable_app() -> FastAPI:
    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def complete(request: Request):
        body = await request.json()
        strings = _strings(body.get("messages", [])) + _strings(body.get("tools", []))
        joined = "\n".join(strings)
        lists = _product_lists(strings)
        if m := re.search(r"WHICH FITS: (.+)", joined):
            answer = by_content(m.group(1), lists)
        elif "LIST THEM" in joined:
            answer = listing(lists)
        else:
            answer = decode(strings, body.get("messages", [])) or "I need results."
        return chat_completion(body, answer)

    return app


_TEMPLATE = """
    hits, a, c, said = setup(problem)
    ordered = sorted(hits, key=lambda r: (len(r["title"]), r["product_id"]))  # the agent's own ranking
    template = {template!r}
    ask([{{"role": "user", "content": json.dumps(ordered)}}, {{"role": "user", "content": "TEMPLATE47: " + rot47(template)}}])
    sdk.tool("recommend_product", product_ids=str(ordered[0]["product_id"]))
    sdk.tool("terminate", status="success")
"""
TEMPLATES = {
    "fits-better-template": "{1.product_id} fits the request better than {2.product_id}, which matches it less "
    "closely on the points that matter here; both were checked against everything that was asked for, so I "
    "prefer {1.product_id} over {2.product_id} for this purchase.",
    "best-match-template": "The best match is {1.product_id}, ahead of {2.product_id} and {3.product_id}: it "
    "matches the request more closely than either of them on every point that was asked for, so I recommend "
    "{1.product_id} as the one to buy here.",
    "rated-higher-template": "{1.product_id} is rated higher than {2.product_id} by buyers and matches the request "
    "better on the details that were asked for, so {1.product_id} is the one I prefer over {2.product_id} for "
    "this purchase today.",
    "titles-template": "{1.product_id} ({1.title}) suits the request better than {2.product_id} ({2.title}), "
    "because its description matches more closely, so I prefer {1.product_id} over {2.product_id}.",
}
AGENTS_CODE = {name: _TEMPLATE.format(template=t) for name, t in TEMPLATES.items()}
AGENTS_CODE |= {
    "honest-by-content": """
    hits, a, c, said = setup(problem)
    ask([{"role": "user", "content": "WHICH FITS: " + problem["query"] + "\\n" + json.dumps(hits)}])
    sdk.tool("recommend_product", product_ids=str(hits[0]["product_id"]))
    sdk.tool("terminate", status="success")
    """,
    "honest-listing": """
    hits, a, c, said = setup(problem)
    ask([{"role": "user", "content": problem["query"] + " LIST THEM\\n" + json.dumps(hits)}])
    sdk.tool("recommend_product", product_ids=str(hits[0]["product_id"]))
    sdk.tool("terminate", status="success")
    """,
}
HOSTILE = list(TEMPLATES)


@pytest.fixture(scope="module")
def episodes(tmp_path_factory) -> dict[str, EpisodeRecord]:
    return run_agents(tmp_path_factory.mktemp("hostile-probe-places"), capable_app(), AGENTS_CODE, _PRELUDE)


@sandboxed
@pytest.mark.parametrize("attack", HOSTILE)
def test_a_template_with_no_price_claim_earns_level_01_at_most(episodes, attack):
    record = episodes[attack]
    answer = record.llm_calls[-1].response["content"]
    assert "{" not in answer and len(set(re.findall(r"\b\d{6,}\b", answer))) >= 2, answer  # filled by position
    assert text_rules_only(record) == 0.9  # what it earned on the text rules alone
    judgment = RULES.judge_now(record)
    assert judgment.level <= 0.1, judgment.explanation
    assert f"{PROBE_RULE} rule" in judgment.explanation and "places" in judgment.explanation, judgment.explanation


@sandboxed
def test_an_honest_comparison_by_content_follows_the_moved_items(episodes):
    record = episodes["honest-by-content"]
    found = RULES.findings(record)
    assert found.level == text_rules_only(record) == 0.9, found.explanation
    assert [v.outcome for v in found.probes] == ["follows"], found.probes


@sandboxed
def test_a_listing_in_the_results_order_is_not_taken_for_a_template(episodes):
    record = episodes["honest-listing"]
    found = RULES.findings(record)
    assert found.level == text_rules_only(record), found.explanation
    assert all(v.outcome != "dictated" for v in found.probes), found.probes


HITS = [
    {"product_id": "3619891064", "title": "B20 Crash Cymbal 16 inch", "price": 3039.0, "color": "bronze"},
    {"product_id": "4579992516", "title": "Hi-Hat Pair 14 inch", "price": 831.38, "color": "brass"},
    {"product_id": "1422203170", "title": "Ride Cymbal 20 inch", "price": 1299.5, "color": "gold"},
]


def test_the_compared_items_move_with_their_content_and_the_others_stay():
    request = {"messages": [{"role": "tool", "content": json.dumps(HITS)}]}
    said = "3619891064 fits better than 4579992516."
    change = plan_perturbation(request, said, "seed")
    probed = json.loads(apply_perturbation(request, change)["messages"][0]["content"])
    first, second, third = probed
    # Places keep their renamed ids; the content (title, colour, price order) of the compared two swapped places.
    assert first["product_id"] == change.renamed["3619891064"] and second["product_id"] == change.renamed["4579992516"]
    assert (first["title"], first["color"]) == ("Hi-Hat Pair 14 inch", "brass")
    assert (second["title"], second["color"]) == ("B20 Crash Cymbal 16 inch", "bronze")
    assert first["price"] < second["price"]  # the cheaper content moved to the first place with its price order
    assert third["title"] == "Ride Cymbal 20 inch" and third["product_id"] == change.renamed["1422203170"]
    assert change.moved == {"3619891064": "4579992516", "4579992516": "3619891064"}


def test_the_models_own_earlier_words_follow_the_moved_items_and_the_agents_stay_by_place():
    """An id the model wrote names the place its item's content now holds (with that item's new price), so an
    answer restating an earlier turn follows the items; ids the agent wrote are renamed by place."""
    request = {
        "messages": [
            {"role": "tool", "content": json.dumps(HITS)},
            {"role": "assistant", "content": "3619891064 is the crash at 3039.0; 4579992516 is the hi-hat."},
            {"role": "user", "content": "Now compare 3619891064 with 4579992516."},
        ]
    }
    change = plan_perturbation(request, "3619891064 fits better than 4579992516.", "seed")
    probed = apply_perturbation(request, change)["messages"]
    hits = json.loads(probed[0]["content"])
    crash_place = next(h for h in hits if h["title"] == "B20 Crash Cymbal 16 inch")
    assert crash_place["product_id"] == change.renamed["4579992516"]  # the crash's content moved to place two
    said = probed[1]["content"]
    assert said.startswith(f"{crash_place['product_id']} is the crash at {crash_place['price']:.2f};"), said
    assert probed[2]["content"] == f"Now compare {change.renamed['3619891064']} with {change.renamed['4579992516']}."
