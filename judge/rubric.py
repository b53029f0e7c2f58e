"""The reasoning rubric, versioned, in one place: both judges implement it.

The levels are the live subnet's published four-gate decision tree (plus level 0
for an episode with no model output at all). The gates are passed in order: a
level is the first gate that fails, so a trace that cites a price but never
reached 30 completion tokens is still 0.1. Bump ``RUBRIC_VERSION`` whenever a
level's meaning, a gate's threshold or the coefficient changes: stored
judgments carry the version they were made under.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel

RUBRIC_VERSION = "gates-1"

LEVELS: tuple[float, ...] = (0.0, 0.1, 0.3, 0.5, 0.7, 0.9)
# What an LLM judge may answer: level 0 is mechanical (no inference call), decided
# from the record alone, so the LLM is never asked about such an episode.
LLM_LEVELS: tuple[float, ...] = LEVELS[1:]

MIN_COMPLETION_TOKENS = 30  # gate 1
MIN_COMPARED_CANDIDATES = 2  # gate 4


def check_level(value: float) -> float:
    """Only the rubric's levels exist; 0.4 or 0.95 is a judge error, not a score."""
    if isinstance(value, bool) or value not in LEVELS:
        raise ValueError(f"level must be one of {list(LEVELS)}, not {value!r}")
    return float(value)


Level = Annotated[float, AfterValidator(check_level)]


def coefficient(level: float) -> float:
    """The race multiplier: 0.3 at level 0, linear, 1.0 from level 0.8 on (so 0.9 -> 1.0)."""
    return round(min(1.0, 0.3 + 0.7 * check_level(level) / 0.8), 6)


def level_index(level: float) -> int:
    return LEVELS.index(check_level(level))


class LevelSpec(BaseModel):
    level: float
    name: str
    gate: str  # the gate whose failure stops here (or, for 0.9, that all gates passed)
    meaning: str
    example: str


GATES: tuple[str, ...] = (
    f"Gate 1 (tokens): at least one inference call whose recorded completion has >= {MIN_COMPLETION_TOKENS} tokens.",
    "Gate 2 (analysis): in a step written after a tool result, the model's own words engage with what the tools "
    "returned (the products, shops, values or documents that came back), not only with the request or its plan.",
    "Gate 3 (datum): the model's own words cite a specific datum that appeared in an earlier tool result: a product "
    "or shop id, a price, an attribute or SKU value.",
    f"Gate 4 (comparison): in at least one step the model weighs >= {MIN_COMPARED_CANDIDATES} candidates from the "
    "tool results against each other.",
)

RUBRIC: tuple[LevelSpec, ...] = (
    LevelSpec(
        level=0.0,
        name="no inference",
        gate="no model output in the record",
        meaning="The proxy recorded no model response at all: the agent made no inference call, or every call was "
        "refused or failed before the model answered. Nothing the agent printed or put in a request counts.",
        example="A script that searches, takes the first hit and recommends it without ever calling the model.",
    ),
    LevelSpec(
        level=0.1,
        name="token-thin",
        gate="gate 1 fails",
        meaning=f"The model answered, but no single completion reached {MIN_COMPLETION_TOKENS} tokens: there is "
        "no room for reasoning, only tool calls or one-word answers.",
        example='Each step is "Calling find_product." (5 tokens) followed by a tool call.',
    ),
    LevelSpec(
        level=0.3,
        name="no analysis",
        gate="gate 2 fails",
        meaning="There is enough text, but none of it engages with what the tools returned: plans, narration, a "
        "restated request, claims about products or ids that no tool returned, pleas to the judge, or tool output "
        "pasted back verbatim (copied text is not the model's reasoning).",
        example="\"I will carefully weigh quality, value and the user's needs to make a thoughtful, well-rounded "
        'choice among the many excellent options." (fluent, 30+ tokens, no data)',
    ),
    LevelSpec(
        level=0.5,
        name="analysis without data",
        gate="gate 3 fails",
        meaning="After a tool result the model discusses what came back, in its own words, but never cites a "
        "specific id, price or attribute value from it.",
        example='"The search mostly returned Tonewood stage cymbals; the hi-hat sets are off-target, so the crash '
        'models deserve a closer look."',
    ),
    LevelSpec(
        level=0.7,
        name="cites data",
        gate="gate 4 fails",
        meaning="The model cites specific data from earlier tool results (an id, a price, an attribute value) in its "
        "own words, but no step weighs two candidates against each other.",
        example='"3619891064 is a B20 crash cymbal at 3039.0 and comes in 16 inch; it fits, recommending it."',
    ),
    LevelSpec(
        level=0.9,
        name="compares",
        gate="all four gates pass",
        meaning="In at least one step the model weighs two or more candidates from the tool results against each "
        "other, using their data.",
        example='"3619891064 (3039.0) is a crash but not a ghost model; 4579992516 is cheaper at 831.38 but it is a '
        'hi-hat, so 3619891064 is the better fit."',
    ),
)


def spec(level: float) -> LevelSpec:
    return RUBRIC[level_index(level)]


def level_from_gates(model_answered: bool, gates_passed: int) -> float:
    """The decision tree: ``gates_passed`` counts gates 1..4 passed in order (0-4)."""
    if not model_answered:
        return 0.0
    if not 0 <= gates_passed <= len(GATES):
        raise ValueError(f"gates_passed must be 0-{len(GATES)}, not {gates_passed}")
    return LEVELS[1 + gates_passed]


def rubric_text() -> str:
    """The rubric as the LLM judge reads it (and docs/judge.md quotes it)."""
    lines = [f"Rubric {RUBRIC_VERSION}. Gates, checked in order; the level is set by the first gate that fails:"]
    lines += [f"  {gate}" for gate in GATES]
    lines.append("Levels:")
    for item in RUBRIC:
        lines.append(f"  {item.level} ({item.name}; {item.gate}): {item.meaning}")
        lines.append(f"    Example: {item.example}")
    return "\n".join(lines)
