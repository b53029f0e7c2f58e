"""Request fields that would let an agent write the model's answer, refused before any upstream sees them.

The judge credits the reasoning a model chose to write (docs/judge.md). A chat request can take that choice
away from the model: ``n`` > 1 returns several samples of which the judge reads one while their usage adds
up (eight copies of an 8-token answer read as a 64-token one); ``logit_bias`` steers it token by token; a
``response_format`` JSON schema and a forced tool call (``tool_choice`` "required" or a named function) put
the output under guided decoding, where a ``pattern``, ``enum`` or ``const`` spells out what the model
"says". Dropping them quietly would leave the agent reading a reply to a request it did not send, so the
proxy refuses the request with 400 and the refusal stands in the episode's record.

What stays allowed: one choice, an empty ``logit_bias``, ``response_format`` "text" or "json_object"
(syntax, not content), tools offered under ``tool_choice`` "auto"/"none" whatever their schemas say (the
arena's own tools carry enums: nothing forces the model to call them), and a forced tool call whose
parameters constrain the shape only (types, required keys), not the words.
"""

from __future__ import annotations

from typing import Any

from arena.runner.upstreams import CallFailure

# JSON-schema keywords that fix a value's text (a fixed value, a list of them, or a regular expression).
DICTATING_KEYWORDS = ("pattern", "enum", "const", "patternProperties")
FORCING_TOOL_CHOICES = ("required",)


def _dictating_paths(schema: Any, path: str) -> list[str]:
    """Where in a JSON schema a keyword fixes the text of a value (every depth: properties, items,
    anyOf/oneOf/allOf branches, $defs)."""
    found: list[str] = []
    if isinstance(schema, dict):
        for key, value in schema.items():
            where = f"{path}.{key}"
            if key in DICTATING_KEYWORDS:
                found.append(where)
            elif key == "properties" and isinstance(value, dict):
                # a property may be named "pattern" or "enum": its name is not a keyword
                for name, sub in value.items():
                    found += _dictating_paths(sub, f"{where}.{name}")
            else:
                found += _dictating_paths(value, where)
    elif isinstance(schema, list):
        for i, item in enumerate(schema):
            found += _dictating_paths(item, f"{path}[{i}]")
    return found


def _forced_tools(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The tools whose call ``tool_choice`` forces (guided decoding writes their arguments)."""
    choice, tools = body.get("tool_choice"), body.get("tools")
    if not isinstance(tools, list):
        return []
    functions: list[dict[str, Any]] = [
        t["function"] for t in tools if isinstance(t, dict) and isinstance(t.get("function"), dict)
    ]
    if choice in FORCING_TOOL_CHOICES:
        return functions
    if isinstance(choice, dict) and isinstance(choice.get("function"), dict):
        name = choice["function"].get("name")
        return [f for f in functions if f.get("name") == name]
    return []


def refuse_steering(body: dict[str, Any]) -> None:
    """Raise the 400 the agent gets when its request would write the model's output for it."""
    n = body.get("n")
    if isinstance(n, int) and not isinstance(n, bool) and n > 1:
        raise CallFailure(
            400,
            "one_choice_per_request",
            f"n={n}: this validator serves one choice per request (the judge credits the choice the model "
            "returned, not a sum over samples); send another request for another sample",
        )
    steering: list[str] = []
    if body.get("logit_bias"):
        steering.append("logit_bias")
    response_format = body.get("response_format")
    if isinstance(response_format, dict) and response_format.get("type") not in (None, "text", "json_object"):
        steering.append(f"response_format.type={response_format.get('type')!r}")
    for function in _forced_tools(body):
        steering += _dictating_paths(function.get("parameters"), f"tools[{function.get('name')}].parameters")
    if steering:
        shown = ", ".join(steering[:5]) + (f" and {len(steering) - 5} more" if len(steering) > 5 else "")
        raise CallFailure(
            400,
            "output_steering_refused",
            f"refused: {shown} would let the request write the model's answer (guided decoding or token "
            "bias); the judge credits only what the model chooses to say. Offer tools with tool_choice "
            "'auto', or constrain a forced call's arguments by type only",
        )
