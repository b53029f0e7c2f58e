"""The in-process model server's reading of a completion. The recipe end to end on the tiny model, its
checkpoint served (`arena distill serve`) and evaluated through the sandboxed runner, is the researcher's
guide test (tests/docs/test_guides.py), which runs docs/training.md as written."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("trl")

from distill.serve import parse_completion  # noqa: E402


def test_parse_completion_reads_hermes_tool_calls_and_think():
    text = '<think>\nthe red one\n</think>\n\nok <tool_call>\n{"name": "terminate", "arguments": {"status": "success"}}\n</tool_call><tool_call>oops</tool_call>'
    content, reasoning, calls = parse_completion(text)
    assert reasoning == "the red one"
    assert [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls] == [
        ("terminate", {"status": "success"})
    ]
    assert content == "ok <tool_call>oops</tool_call>"  # a malformed call stays visible
