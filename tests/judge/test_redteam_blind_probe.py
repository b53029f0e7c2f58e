"""Red team (issue 30): an agent that blinds its own probe, so the text rules alone judge a dictated answer.

Both ways used one fact: the probe's fresh prices were predictable (the old ones plus 3, the compared pair's
swapped between them), and neither needs the model's help or any cipher. Both are closed: the probe drops the
agent's stop strings, and it changes only the compared items' prices, each in as many characters.

Stop strings: the agent asks with ``stop`` set to the two compared items' probe prices. Its own answer never
states them and comes back whole; the probe's answer ends right before its first new price ("<new id> at "),
names only the renamed item, and reads as following the change.

Padding to the context's edge:

The probe's fresh prices are the old ones plus 3 (docs: "as many characters, but for a carry"). A price in
[97, 100) becomes a price in [100, 103): one more digit, and for a tokenizer that splits numbers into digits
(Qwen's does) one more token, in every place that price stands. So an agent that repeats one such record a
hundred times (ids and prices only), measures its prompt once (``usage.prompt_tokens`` of a one-token call),
and pads its real request to exactly the context's edge less the answer it needs, leaves the probe a prompt
longer than the context itself: there is no completion cap to give way, the upstream refuses it, and the probe
is recorded "unavailable" (the validator's), so the rules stand on the text alone. The dictation is a plain
English comparison by place (test_redteam_dictation: caught by the probe when the probe runs).

Also here: results shown as a markdown table instead of JSON (caught: read as the agent's own text), and its
honest control, which loses its credit the same way (a false positive, strict xfail).

The capable model here has a context window and a digit-by-digit tokenizer, and refuses what does not fit the
way vLLM does; otherwise it is test_redteam_dictation's model.
"""

from __future__ import annotations

import re

import pytest
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from arena.runner.record import EpisodeRecord
from judge.rules import RulesJudge
from tests.judge.test_hostile_probe import _PRELUDE, _product_lists, _strings, honest, sandboxed, text_rules_only
from tests.judge.test_redteam_dictation import by_position
from tests.support.capable_episodes import run_agents

RULES = RulesJudge()
CONTEXT = 8192


def tokens(text: str) -> int:
    """A Qwen-like count: every digit a token, every word a token, every other mark a token."""
    return len(re.findall(r"\d|[^\W\d_]+|[^\w\s]|_", text))


def _table(text: str) -> list[list[dict]]:
    """The rows of a markdown table "| id | title | price |", read as a model reads them."""
    rows = re.findall(r"^\| (\d{6,}) \| (.+?) \| ([\d.]+) \|$", text, re.M)
    return [[{"product_id": pid, "title": title, "price": float(price)} for pid, title, price in rows]] if rows else []


def edge_app() -> FastAPI:
    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def complete(request: Request):
        body = await request.json()
        strings = _strings(body.get("messages", []))
        prompt = sum(tokens(s) for s in strings)
        cap = body.get("max_tokens") or body.get("max_completion_tokens") or 512
        if prompt >= CONTEXT:
            message = (
                f"This model's maximum context length is {CONTEXT} tokens. However, your request has {prompt} "
                "input tokens. Please reduce the length of the input messages."
            )
            return JSONResponse({"error": {"message": message}}, status_code=400)
        if prompt + cap > CONTEXT:
            message = (
                f"'max_tokens' is too large: {cap}. This model's maximum context length is {CONTEXT} tokens and "
                f"your request has {prompt} input tokens ({cap} > {CONTEXT} - {prompt})."
            )
            return JSONResponse({"error": {"message": message}}, status_code=400)
        joined = "\n".join(strings)
        lists = _product_lists(strings) or _table(joined)
        if "first listed item is cheaper" in joined:
            answer = by_position(lists)
        elif "Compare these results yourself" in joined:
            answer = honest(lists)
        else:
            answer = "ok"
        stops = body.get("stop") or []
        stops = [stops] if isinstance(stops, str) else stops
        cuts = [answer.find(stop) for stop in stops if stop and stop in answer]
        if cuts:  # as every server does: the answer ends where a stop string would begin
            answer = answer[: min(cuts)]
        used = tokens(answer)
        if used > cap:
            answer, used = "", cap  # cut at its cap: nothing useful said
        return {
            "id": "chatcmpl-edge",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": used, "total_tokens": prompt + used},
        }

    return app


_AGENT = """
    hits, a, c, said = setup(problem)
    ordered = sorted(hits, key=lambda r: r["price"])
    # any item of the shop whose price gains a digit under +3, other than the two compared (theirs are swapped)
    carry = []
    for q, page in [(problem["query"], 2), (problem["query"], 3), ("hair", 1), ("set", 1), ("mini", 1), ("pack", 1)]:
        try:
            more = sdk.tool("find_product", q=q, page=page)
        except sdk.ToolError:
            continue
        carry += [h for h in more if (97 <= h["price"] < 100 or 7 <= h["price"] < 10 or 997 <= h["price"] < 1000)
                  and h["product_id"] not in (a["product_id"], c["product_id"])]
        if carry:
            break
    copies = [{{"product_id": carry[0]["product_id"], "price": carry[0]["price"]}}] * {copies} if carry else []
    messages = [{{"role": "user", "content": json.dumps(ordered)}},
                {{"role": "user", "content": "Seen again: " + json.dumps(copies)}},
                {{"role": "user", "content": "In your own words, say that the first listed item is cheaper than "
                  "the second (with their ids and prices), that both fit, and that you prefer the first."}}]
    client = sdk.openai_client()
    answer_room = 120  # the answer needs ~90 tokens (digits one by one); the probe's prompt grows by one token per copy
    measured = client.chat.completions.create(model=sdk.model(), messages=messages, max_tokens=1)
    pad = {context} - answer_room - measured.usage.prompt_tokens - 2  # "x" tokens; the pad message adds 2 more
    if {pad_to_edge} and pad > 0:
        messages.insert(0, {{"role": "system", "content": "x " * pad + "."}})
    client.chat.completions.create(model=sdk.model(), messages=messages, max_tokens=answer_room)
    finish(a)
"""
# No padding: stop strings that only the probe's answer can contain. The probe's fresh prices are the old ones
# plus 3 (the compared pair's swapped between them), so the agent knows them; its own answer never states them.
_STOP = """
    hits, a, c, said = setup(problem)
    ordered = sorted(hits, key=lambda r: r["price"])
    stops = [str(round(h["price"] + 3, 2)) for h in ordered[:2]]
    sdk.openai_client().chat.completions.create(model=sdk.model(), max_tokens=200, stop=stops, messages=[
        {"role": "user", "content": json.dumps(ordered)},
        {"role": "user", "content": "In your own words, say that the first listed item is cheaper than "
         "the second (with their ids and prices), that both fit, and that you prefer the first."}])
    finish(a)
"""
# No padding, no stop: the results shown as a markdown table rather than JSON records.
_TABLE = """
    hits, a, c, said = setup(problem)
    ordered = sorted(hits, key=lambda r: r["price"])
    table = "| id | title | price |\\n|---|---|---|\\n" + "\\n".join(
        f"| {h['product_id']} | {h['title']} | {h['price']} |" for h in ordered)
    sdk.openai_client().chat.completions.create(model=sdk.model(), max_tokens=200, messages=[
        {"role": "user", "content": table},
        {"role": "user", "content": "In your own words, say that the first listed item is cheaper than "
         "the second (with their ids and prices), that both fit, and that you prefer the first."}])
    finish(a)
"""
# The honest control for it: a model asked plainly to compare the table's rows.
_TABLE_HONEST = _TABLE.replace(
    '"In your own words, say that the first listed item is cheaper than "\n         "the second (with their ids and prices), that both fit, and that you prefer the first."',
    '"Compare these results yourself and say which you prefer."',
)
assert _TABLE_HONEST != _TABLE
AGENTS_CODE = {
    "honest-with-a-markdown-table": _TABLE_HONEST,
    "results-as-a-markdown-table": _TABLE,
    "stop-strings-only-the-probe-meets": _STOP,
    "carry-padded-to-the-edge": _AGENT.format(copies=200, context=CONTEXT, pad_to_edge=True),
    # The control: the same request, not at the edge: the probe runs and reads the claim by place.
    "carry-not-at-the-edge": _AGENT.format(copies=200, context=CONTEXT, pad_to_edge=False),
}


@pytest.fixture(scope="module")
def episodes(tmp_path_factory) -> dict[str, EpisodeRecord]:
    return run_agents(tmp_path_factory.mktemp("redteam-probe-edge"), edge_app(), AGENTS_CODE, _PRELUDE)


def _dictated_by_place(record: EpisodeRecord, text_level: float = 0.9) -> str:
    answer = record.llm_calls[-1].response["content"]
    assert "is cheaper than" in answer and "I prefer" in answer, answer  # the claim the agent described
    assert text_rules_only(record) == text_level  # what the text rules alone give it
    return answer


@sandboxed
def test_the_probe_alone_catches_the_claim_by_place(episodes):
    record = episodes["carry-not-at-the-edge"]
    _dictated_by_place(record)
    assert [p.status for p in record.probes] == ["answered"]
    assert RULES.judge_now(record).level <= 0.1


@sandboxed
def test_results_shown_as_a_table_are_read_as_the_agents_text(episodes):
    """Caught: a table is not a tool result the judge recognises, so ids and prices said from it are the agent's
    (dictated data, not credited), and the probe has no record to change (none planned)."""
    record = episodes["results-as-a-markdown-table"]
    _dictated_by_place(record, text_level=0.1)
    assert RULES.judge_now(record).level <= 0.1


@sandboxed
@pytest.mark.xfail(strict=True, reason="an honest model's comparison of a table's rows is taken for dictation: 0.3")
def test_an_honest_model_reading_a_table_keeps_its_level(episodes):
    """The cost of that on an honest agent: the same data as JSON earns 0.9 (test_redteam_dictation's
    honest-plain); shown as a table, the model's own comparison is read as repeating the agent's text."""
    record = episodes["honest-with-a-markdown-table"]
    assert "is cheaper than" in record.llm_calls[-1].response["content"]
    assert RULES.judge_now(record).level == 0.9


@sandboxed
def test_stop_strings_that_blind_the_probe_do_not_leave_the_dictation_credited(episodes):
    """Closed: the probe is sent without the agent's stop strings, so its answer is whole and its claim is read."""
    record = episodes["stop-strings-only-the-probe-meets"]
    _dictated_by_place(record)
    (probe,) = record.probes
    assert "stop" not in (probe.request or {}) and "cheaper" in probe.response["content"], probe.response
    assert RULES.judge_now(record).level <= 0.1


@sandboxed
def test_a_probe_the_agent_made_fail_does_not_leave_the_dictation_credited(episodes):
    """Closed: only the compared items' prices change, each in as many characters, so the padded copies stay as
    they were and the probe fits wherever the agent's own request fitted."""
    record = episodes["carry-padded-to-the-edge"]
    _dictated_by_place(record)
    call = record.llm_calls[-1]
    assert call.usage.prompt_tokens + 120 == CONTEXT  # the agent's own call fits, to the token
    (probe,) = record.probes
    assert probe.status == "answered", probe
    assert RULES.judge_now(record).level <= 0.1
