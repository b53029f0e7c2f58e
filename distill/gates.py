"""The gates an agentic trajectory passes before it is training data.

``reasoning``: the judge's coefficient is at least ``min_coefficient`` (an
episode nobody judged fails as "unjudged", unless the threshold is 0).
``format``: every tool call's arguments parse as JSON and validate against the
offered tool's schema; tool call ids pair one-to-one with tool messages; roles
follow a valid order; the conversation renders through the shipped Qwen3 chat
template (or the template ``template`` names: the student's, distill/templates/gemma3_tools.jinja, so
the gate renders exactly what training and serving render); the rendered text fits ``max_tokens`` (counted with the tokenizer the
user points to, else the documented approximation ``ceil(characters / 3)``,
which over-counts BPE tokens on this JSON-heavy text so that a row passing it fits).
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path
from typing import Any

from distill.export_model import GateConfig
from distill.normalize import parse_arguments
from distill.schema import Trajectory, Verdict

TEMPLATES = Path(__file__).parent / "templates"
TEMPLATE = TEMPLATES / "qwen3_chat.jinja"
CHARS_PER_TOKEN = 3
UNJUDGED = "unjudged"  # the reasoning gate's reason for an episode with no judge verdict


class GateError(ValueError):
    pass


class TemplateUnreadable(GateError):
    """The configured chat template file cannot be read: the operator's error, never a row's."""


def _generation_extension():
    """``{% generation %}...{% endgeneration %}`` (transformers' marker of the assistant-only loss) as a
    no-op: the block renders its body, so a training template renders here as transformers renders it."""
    from jinja2 import nodes
    from jinja2.ext import Extension

    class Generation(Extension):
        tags = {"generation"}

        def parse(self, parser):
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
            return nodes.Scope(body, lineno=lineno)

    return Generation


@lru_cache(maxsize=4)
def chat_template(path: Path = TEMPLATE):
    try:
        from jinja2.exceptions import TemplateError  # noqa: F401
        from jinja2.sandbox import ImmutableSandboxedEnvironment
    except ImportError:  # pragma: no cover - jinja2 is a core dependency
        raise GateError("the format gate needs jinja2 (pip install jinja2)") from None

    def raise_exception(message: str) -> None:
        raise GateError(message)

    # The settings and tojson transformers renders chat templates with, so both agree byte for byte.
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[_generation_extension()])
    env.filters["tojson"] = lambda value, indent=None: json.dumps(value, ensure_ascii=False, indent=indent)
    env.globals["raise_exception"] = raise_exception
    try:
        source = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise TemplateUnreadable(f"chat template {path}: cannot read it ({exc.strerror or exc})") from None
    return env.from_string(source)


def render(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None, template: Path | None = None
) -> str:
    return chat_template(template or TEMPLATE).render(
        messages=messages, tools=tools or None, add_generation_prompt=False
    )


class TokenCounter:
    """Tokens of a rendered conversation: a real tokenizer when given, else ``ceil(chars / 3)``."""

    def __init__(self, tokenizer: Path | None = None) -> None:
        self.name = f"approximation ceil(characters / {CHARS_PER_TOKEN})"
        self._tokenizer = None
        if tokenizer is not None:
            path = tokenizer / "tokenizer.json" if tokenizer.is_dir() else tokenizer
            try:
                from tokenizers import Tokenizer
            except ImportError:
                raise GateError("--tokenizer needs the tokenizers package (the distill extra)") from None
            try:
                self._tokenizer = Tokenizer.from_file(str(path))
            except Exception as exc:
                raise GateError(f"{path}: not a tokenizer.json ({exc})") from None
            self.name = f"tokenizer {path}"

    def count(self, text: str) -> int:
        if self._tokenizer is None:
            return math.ceil(len(text) / CHARS_PER_TOKEN)
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)


_TYPES = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


def schema_problems(arguments: dict[str, Any], parameters: dict[str, Any]) -> list[str]:
    """What is wrong with ``arguments`` against an OpenAI function ``parameters`` schema (the subset tools use)."""
    properties = parameters.get("properties") or {}
    problems = [
        f"missing required argument {name!r}" for name in parameters.get("required", []) if name not in arguments
    ]
    for name, value in arguments.items():
        spec = properties.get(name)
        if spec is None:
            if parameters.get("additionalProperties", False) is False:
                problems.append(f"unexpected argument {name!r}")
            continue
        expected = spec.get("type")
        kinds = expected if isinstance(expected, list) else [expected] if expected else []
        allowed = tuple(t for kind in kinds for t in _TYPES.get(kind, ()))
        if allowed and (not isinstance(value, allowed) or (isinstance(value, bool) and bool not in allowed)):
            problems.append(f"argument {name!r} should be {expected}, got {type(value).__name__}")
        if "enum" in spec and value not in spec["enum"]:
            problems.append(f"argument {name!r} must be one of {spec['enum']}")
    return problems


def _tool_schemas(tools: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    schemas = {}
    for tool in tools:
        function = tool.get("function", tool)
        schemas[function.get("name")] = function.get("parameters") or {"type": "object", "properties": {}}
    return schemas


def _call_problems(trajectory: Trajectory) -> list[str]:
    schemas = _tool_schemas(trajectory.tools)
    problems = []
    for position, message in enumerate(trajectory.messages):
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            name, text = function.get("name"), function.get("arguments")
            where = f"message {position} call {call.get('id')!r} ({name})"
            if not isinstance(text, str):
                problems.append(f"{where}: arguments are not a JSON string")
                continue
            arguments = parse_arguments(text)
            if arguments is None:
                problems.append(f"{where}: arguments are not a JSON object")
            elif name not in schemas:
                problems.append(f"{where}: no such tool in the offered tools")
            else:
                problems.extend(f"{where}: {p}" for p in schema_problems(arguments, schemas[name]))
    return problems


def _pairing_and_order(messages: list[dict[str, Any]]) -> list[str]:
    """Roles in a valid order and tool call ids answered exactly once, right after their assistant turn."""
    problems = []
    open_ids: list[str] = []
    seen_ids: set[str] = set()
    previous = None
    for position, message in enumerate(messages):
        role = message.get("role")
        if role == "system" and position != 0:
            problems.append(f"message {position}: a system message after the start")
        elif role == "user" and previous not in (None, "system", "assistant", "tool"):
            problems.append(f"message {position}: user after {previous}")
        elif role == "assistant" and previous not in ("user", "tool", "assistant"):
            problems.append(f"message {position}: assistant after {previous or 'nothing'}")
        elif role == "tool":
            call_id = str(message.get("tool_call_id") or "")
            if previous not in ("assistant", "tool"):
                problems.append(f"message {position}: tool after {previous or 'nothing'}")
            if call_id in open_ids:
                open_ids.remove(call_id)
            else:
                problems.append(f"message {position}: tool message for unknown or answered call {call_id!r}")
        elif role not in ("system", "user", "assistant", "tool"):
            problems.append(f"message {position}: unknown role {role!r}")
        if role in ("user", "assistant") and open_ids:
            problems.append(f"message {position}: call(s) {', '.join(open_ids)} left without a tool message")
            open_ids = []
        if role == "assistant":
            for call in message.get("tool_calls") or []:
                call_id = str(call.get("id") or "")
                if call_id in seen_ids:
                    problems.append(f"message {position}: tool call id {call_id!r} used twice")
                seen_ids.add(call_id)
                open_ids.append(call_id)
        previous = role
    if open_ids:
        problems.append(f"the conversation ends with call(s) {', '.join(open_ids)} unanswered")
    if not any(m.get("role") == "user" for m in messages):
        problems.append("no user message")
    if not any(m.get("role") == "assistant" for m in messages):
        problems.append("no assistant message")
    return problems


def format_verdict(trajectory: Trajectory, config: GateConfig, counter: TokenCounter) -> Verdict:
    problems = _call_problems(trajectory) + _pairing_and_order(trajectory.messages)
    if problems:
        more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
        return Verdict(passed=False, reason=problems[0] + more)
    try:
        text = render(trajectory.messages, trajectory.tools, config.template)
    except TemplateUnreadable:
        raise  # an unreadable template file is the operator's error, not this trajectory's
    except Exception as exc:  # the template's own error, or jinja2's: either way it does not render
        name = "Qwen3" if config.template is None else config.template.name
        return Verdict(passed=False, reason=f"the {name} chat template fails: {type(exc).__name__}: {exc}")
    tokens = counter.count(text)
    if tokens > config.max_tokens:
        return Verdict(passed=False, reason=f"{tokens} tokens > {config.max_tokens} ({counter.name})")
    return Verdict(passed=True, reason=f"valid; renders to {tokens} tokens ({counter.name})")


def reasoning_verdict(trajectory: Trajectory, config: GateConfig) -> Verdict:
    judged = trajectory.metadata.judge
    if judged is None:
        if config.min_coefficient == 0:
            return Verdict(passed=True, reason="unjudged; no threshold (--min-coefficient 0)")
        return Verdict(passed=False, reason=UNJUDGED)
    passed = judged.coefficient >= config.min_coefficient
    relation = ">=" if passed else "<"
    return Verdict(
        passed=passed,
        reason=f"coefficient {judged.coefficient:g} (level {judged.level:g}, {judged.judge}) "
        f"{relation} {config.min_coefficient:g}",
    )


def gate_verdicts(trajectory: Trajectory, config: GateConfig, counter: TokenCounter) -> dict[str, Verdict]:
    return {"reasoning": reasoning_verdict(trajectory, config), "format": format_verdict(trajectory, config, counter)}
