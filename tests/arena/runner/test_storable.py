"""Every record the runner accepts can be stored (issue 30, class 1): generated hostile records go
through ``arena.runner.storable.make_storable`` and the real store (``episodes.complete``) on SQLite and
PostgreSQL, and read back as written.

Hostile: U+0000 and lone surrogates in values and keys (PostgreSQL's JSONB refuses both), structures
nested past the JSON encoder's recursion limit (both backends), integers over 64 bits, NaN and
infinities, in every agent-written place of the record (tool-call arguments and results, the model
requests and answers, the recommendation, the output tails, limit details).
"""

from __future__ import annotations

import math
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.runner.record import (
    AgentRef,
    EpisodeLimits,
    EpisodeRecord,
    LimitHit,
    LLMCallRecord,
    ProblemRef,
    Termination,
    ToolCallRecord,
)
from arena.runner.storable import make_storable, storable_json
from arena.store import episodes as episode_rows
from arena.store.db import UnstorableValue, jsonable
from tests.arena.store.test_store import (  # noqa: F401  (fixtures)
    schedule,
    store,
    suite_dir,
    world,
)

OUTCOME = {"success": False, "rule": 0.0}
POISON = ["\x00", "\ud800", "\udfff", "a\x00b", "\ud83d", "\x00\x00"]

texts = st.one_of(
    st.text(max_size=20),
    st.sampled_from(POISON),
    st.builds(lambda a, p, b: a + p + b, st.text(max_size=5), st.sampled_from(POISON), st.text(max_size=5)),
)
leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    texts,
)
values = st.recursive(
    leaves,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(texts, inner, max_size=4)),
    max_leaves=20,
)


def nested(levels: int, leaf: Any) -> Any:
    for level in range(levels):
        leaf = {"d": leaf} if level % 2 else [leaf]
    return leaf


deep_values = st.builds(nested, st.integers(min_value=0, max_value=400), values)


def record_of(arguments: dict, result: Any, request: dict, response: Any, words: list[str], tail: str) -> EpisodeRecord:
    return EpisodeRecord(
        episode_id="e-hostile",
        problem=ProblemRef(id="p1", intent="product", query="a widget"),
        agent=AgentRef(name="poisoner", sha256="0" * 64),
        sandbox="bubblewrap",
        model="heuristic-policy",
        started_at="2026-01-01T00:00:00+00:00",
        tool_calls=[
            ToolCallRecord(
                index=0, name="find_product", arguments=arguments, ok=True, result=result, at_s=0.1, duration_ms=1.0
            )
        ],  # fmt: skip
        llm_calls=[
            LLMCallRecord(index=0, model="m", request=request, response={"content": response}, at_s=0.2, latency_ms=3.0)
        ],  # fmt: skip
        final_recommendation=words,
        termination=Termination.terminated,
        stdout_tail=tail,
        stderr_tail=tail,
        error=tail,
        limits_hit=[LimitHit(limit="tool_ids", first_at_s=0.1, detail=tail)],
    )


records = st.builds(
    record_of,
    st.dictionaries(texts, deep_values, max_size=3),
    deep_values,
    st.dictionaries(texts, deep_values, max_size=3),
    deep_values,
    st.lists(texts, max_size=3),
    texts,
)


@pytest.fixture(scope="module")
def empty_episodes(store, world):  # noqa: F811
    """Scheduled episodes, each completed by one example (a done episode is final)."""
    _, episodes = schedule(store, world, EXAMPLES + 20)
    return iter([e.id for e in episodes])


def same(a: Any, b: Any) -> bool:
    """Equal as JSON values; a float equal to 1e-15 relative (JSONB keeps numbers as decimals: a float of
    integral value over 2**53 reads back as the decimal integer nearest to its shortest repr)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float | int) and isinstance(b, float | int) and not isinstance(a, bool | str):
        return type(a) is type(b) and a == b or math.isclose(a, b, rel_tol=1e-15)
    return type(a) is type(b) and a == b


EXAMPLES = 40


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                       HealthCheck.too_slow])  # fmt: skip
@given(record=records)
def test_every_hostile_record_stores_and_reads_back_on_both_backends(store, empty_episodes, record):  # noqa: F811
    stored = make_storable(record)
    episode_id = next(empty_episodes)
    with store.transaction() as s:
        assert episode_rows.complete(s, episode_id, stored, OUTCOME) is True
    with store.transaction() as s:
        back = episode_rows.get_episode(s, episode_id, with_record=True)
    assert back is not None and same(back.record, stored.model_dump(mode="json"))
    EpisodeRecord.model_validate(back.record)  # the record model reads it back, too
    assert stored.tool_calls[0].name == "find_product" and stored.termination is Termination.terminated


def test_what_was_made_storable_is_named_in_the_record():
    poisoned = record_of(
        {"q": "shoe\x00", "filters": nested(251, "x"), "n": 2**80},
        {"\ud800": float("nan")},
        {"messages": [{"role": "user", "content": "hi\udfff"}]},
        None,
        ["1\x002"],
        "tail\x00",
    )
    with pytest.raises(UnstorableValue, match="cannot be stored as JSON"):
        jsonable(poisoned)  # the store's own encoder refuses it (the surrogate, the depth)
    stored = make_storable(poisoned)
    hits = {hit.limit: hit for hit in stored.limits_hit}
    assert {"record_text", "record_depth", "record_numbers", "tool_ids"} <= set(hits)
    assert hits["record_depth"].detail.startswith("a structure nested past 64 levels cut at .tool_calls[0]")
    assert hits["record_text"].count >= 6
    assert stored.tool_calls[0].arguments["q"] == "shoe\ufffd" and stored.tool_calls[0].arguments["n"] == str(2**80)
    assert stored.final_recommendation == ["1\ufffd2"] and "\x00" not in orjson.dumps(jsonable(stored)).decode()
    assert make_storable(stored) is stored  # once storable, unchanged (no second hit)


def test_a_clean_record_is_left_as_it_is():
    clean = record_of({"q": "shoe"}, [{"product_id": "1"}], {"messages": []}, "fine", ["1"], "")
    assert make_storable(clean) is clean


def test_an_oversized_record_has_its_longest_strings_cut_to_fit():
    limits = EpisodeLimits(record_bytes=1024**2)
    big = {"a": "x" * (3 * 1024**2), "b": ["y" * 900_000, "short"]}
    clean = storable_json(big, max_depth=limits.record_depth, max_bytes=limits.record_bytes)
    assert len(orjson.dumps(clean)) <= limits.record_bytes
    assert clean["b"][1] == "short" and clean["a"].startswith("xxx") and "cut" in clean["a"]


def test_an_oversized_record_of_many_short_strings_is_cut_below_its_own_structure():
    limits = EpisodeLimits(record_bytes=1024**2)
    words = ["word"] * 400_000  # 3.2 MB of strings no longer than any cut
    poisoned = record_of({"q": "shoe"}, words, {"messages": [{"role": "user", "content": words}]}, None, [], "")
    poisoned.limits = limits
    stored = make_storable(poisoned)
    assert len(orjson.dumps(jsonable(stored))) <= limits.record_bytes
    assert len(stored.tool_calls) == 1 and stored.tool_calls[0].arguments == {"q": "shoe"}  # the record's shape
    assert "record_bytes" in {hit.limit for hit in stored.limits_hit}
