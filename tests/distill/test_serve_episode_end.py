"""A completion stops where it ends its episode: right after a valid call of the request's ``terminate``
tool. The episode's tools refuse every later call and the agent stops after that turn, so what a
student writes after it changes nothing; a student that learned to loop ("terminate", then more calls,
to the token limit) costs its real turn. An invalid terminate, a request without the tool, and every
other call go on as before. On the real student's tokenizer and server (Gemma 3 270M), with the
model's choices scripted where a looping student is needed."""

from __future__ import annotations

import pytest

from tests.distill.scripted import ask, script_backend

TOOLS = [
    {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": {}}}}
    for name in ("find_product", "recommend_product", "terminate")
]
SEARCH = '<tool_call>{"name": "find_product", "arguments": {"q": "kettle", "page": 1}}</tool_call>'
END = '<tool_call>{"name": "terminate", "arguments": {"status": "success"}}</tool_call>'
LOOP = "\n".join(
    [
        SEARCH,
        '<tool_call>{"name": "recommend_product", "arguments": {"product_ids": "1"}}</tool_call>',
        END,
        SEARCH,
        END,
        SEARCH,
    ]
)


def test_the_episode_ends_at_the_last_token_of_a_valid_terminate_call_and_nowhere_before(student):
    from distill.serve import EpisodeEnd

    _, tokenizer = student
    ends = EpisodeEnd(tokenizer)
    ids = tokenizer("Done.\n" + SEARCH + "\n" + END, add_special_tokens=False)["input_ids"]
    verdicts = [ends(ids[: n + 1]) for n in range(len(ids))]
    assert verdicts[-1] is True and not any(verdicts[:-1])
    for other in (
        '<tool_call>{"name": "terminate", "arguments": {"status": "done"}}</tool_call>',  # refused by the tools
        '<tool_call>{"name": "terminate", "arguments": {"status": "success", "why": "x"}}</tool_call>',
        '<tool_call>{"name": "recommend_product", "arguments": {"product_ids": "1"}}</tool_call>',
        '<tool_call>{"name": "terminate", "arguments": {"status": "success"}',  # not closed
    ):
        assert not ends(tokenizer(other, add_special_tokens=False)["input_ids"]), other
    # arguments written as a JSON string are read as the tools read them
    quoted = '<tool_call>{"name": "terminate", "arguments": "{\\"status\\": \\"failure\\"}"}</tool_call>'
    assert ends(tokenizer(quoted, add_special_tokens=False)["input_ids"])


@pytest.mark.parametrize("continuous", [True, False])
def test_a_looping_student_stops_after_its_terminate_and_a_request_without_the_tool_does_not(student, continuous):
    from distill.serve import create_model_app

    model, tokenizer = student
    script = tokenizer(LOOP, add_special_tokens=False)["input_ids"]
    replies = {}
    for offered in (True, False):
        app = create_model_app(
            model, tokenizer, "s", max_new_tokens=len(script), continuous=continuous, batch_wait_s=0.0
        )
        script_backend(app, script, continuous=continuous)
        body = {"model": "s", "messages": [{"role": "user", "content": "A kettle."}], "temperature": 0,
                "max_tokens": len(script), **({"tools": TOOLS} if offered else {})}  # fmt: skip
        replies[offered] = ask(app, body)
    ended, whole = replies[True]["choices"][0], replies[False]["choices"][0]
    names = [call["function"]["name"] for call in ended["message"]["tool_calls"]]
    assert names == ["find_product", "recommend_product", "terminate"]
    assert ended["finish_reason"] == "tool_calls"
    assert replies[True]["usage"]["completion_tokens"] < len(script)
    # without a terminate tool on offer, nothing ends the episode: the whole script, to the limit
    assert [c["function"]["name"] for c in whole["message"]["tool_calls"]].count("terminate") == 2
    assert replies[False]["usage"]["completion_tokens"] == len(script)
