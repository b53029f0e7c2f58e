"""A completion stops after the most tool calls one turn may make (``turn_calls``), right after the
last token of its Nth well-formed call: a student that learned to loop (the same ``find_product``
eight times in a turn, to the token limit) costs the turns it was trained to write, not the limit.
A malformed block is no call (the agent executes none); without a bound the turn runs to its limit;
the bound and the episode's end cut wherever the first of them falls. On the real student's
tokenizer and server (Gemma 3 270M), with the model's choices scripted where a looping student is
needed."""

from __future__ import annotations

import json

import pytest

from tests.distill.scripted import ask, script_backend

TOOLS = [
    {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": {}}}}
    for name in ("find_product", "recommend_product", "terminate")
]
SEARCH = '<tool_call>{"name": "find_product", "arguments": {"q": "kettle", "page": 1}}</tool_call>'
BROKEN = '<tool_call>{"name": "find_product", "arguments": {"q": "kettle"</tool_call>'
END = '<tool_call>{"name": "terminate", "arguments": {"status": "success"}}</tool_call>'
LOOP = "\n".join([SEARCH, BROKEN, SEARCH, SEARCH, END, SEARCH])


def test_the_bound_falls_on_the_last_token_of_the_nth_well_formed_call(student):
    from distill.serve import CallBound

    _, tokenizer = student
    ids = tokenizer("Searching.\n" + LOOP, add_special_tokens=False)["input_ids"]
    for bound, calls_before in ((1, 1), (2, 3), (3, 4)):  # the broken block (second) is no call
        verdicts = [CallBound(tokenizer, bound)(ids[: n + 1]) for n in range(len(ids))]
        first = verdicts.index(True)
        cut = tokenizer.decode(ids[: first + 1])
        assert cut.endswith("</tool_call>"), cut
        assert cut.count("<tool_call>") == calls_before, (bound, cut)
        assert not any(verdicts[:first])
    # never inside a call, never on text that only mentions one
    prose = tokenizer("I will call <tool_call> later, then </tool_call> it.", add_special_tokens=False)["input_ids"]
    assert not any(CallBound(tokenizer, 1)(prose[: n + 1]) for n in range(len(prose)))
    with pytest.raises(ValueError):
        CallBound(tokenizer, 0)


@pytest.mark.parametrize("continuous", [True, False])
def test_a_looping_turn_ends_at_the_bound_and_the_episode_end_cuts_first_where_it_falls_first(student, continuous):
    from distill.serve import create_model_app

    model, tokenizer = student
    script = tokenizer(LOOP, add_special_tokens=False)["input_ids"]
    names = {}
    tokens = {}
    for bound, offered in ((2, False), (None, False), (9, True), (2, True)):
        app = create_model_app(
            model, tokenizer, "s", max_new_tokens=len(script), continuous=continuous, batch_wait_s=0.0,
            turn_calls=bound,
        )  # fmt: skip
        script_backend(app, script, continuous=continuous)
        body = {"model": "s", "messages": [{"role": "user", "content": "A kettle."}], "temperature": 0,
                "max_tokens": len(script), **({"tools": TOOLS} if offered else {})}  # fmt: skip
        reply = ask(app, body)
        choice = reply["choices"][0]
        names[bound, offered] = [call["function"]["name"] for call in choice["message"].get("tool_calls", [])]
        tokens[bound, offered] = reply["usage"]["completion_tokens"]
        if bound is not None:
            assert choice["finish_reason"] == "tool_calls"
            for call in choice["message"]["tool_calls"]:
                json.loads(call["function"]["arguments"])  # every call the agent gets is whole
    assert names[2, False] == ["find_product", "find_product"]  # the broken block between them is no call
    assert names[None, False] == ["find_product"] * 3 + ["terminate", "find_product"]  # to the limit
    assert tokens[None, False] == len(script) and tokens[2, False] < len(script)
    assert names[9, True] == ["find_product"] * 3 + ["terminate"]  # the terminate ends it before the bound
    assert names[2, True] == ["find_product", "find_product"]  # the bound ends it before the terminate
