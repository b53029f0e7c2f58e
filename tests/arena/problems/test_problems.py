"""The problem model reads the official task files as they are."""

from __future__ import annotations

from collections import Counter

import orjson
import pytest

from arena.problems.model import Difficulty, Intent
from arena.problems.official import ProblemFileError, load_problems, parse_row
from tests.conftest import official_dir


@pytest.fixture(scope="module")
def official():
    folder = official_dir()
    return load_problems(*sorted(folder.glob("*.jsonl")))


def test_the_900_official_tasks_load_with_their_intents(official):
    assert len(official) == 900
    assert Counter(p.intent for p in official) == {
        Intent.product: 250, Intent.shop: 250, Intent.voucher: 250, Intent.knowledge: 150,
    }  # fmt: skip
    assert len({p.id for p in official}) == 900


def test_shapes_per_intent(official):
    by = {p.intent: p for p in official}
    assert len(by[Intent.product].rewards) == 1
    assert all(2 <= len(p.rewards) <= 4 for p in official if p.intent is Intent.shop)
    assert all(p.voucher is not None and p.voucher.budget > 0 for p in official if p.intent is Intent.voucher)
    knowledge = by[Intent.knowledge]
    assert knowledge.knowledge is not None and knowledge.knowledge.product.title and not knowledge.rewards


def test_ids_are_stable_hashes_of_content(official):
    first = official[0]
    again = parse_row(orjson.loads(orjson.dumps(first.to_row() | {"id": None})))
    assert again.id == first.id
    changed = parse_row({"query": first.query + "!", "reward": first.to_row()["reward"]})
    assert changed.id != first.id


def test_difficulty_by_constraint_count():
    row = {"query": "q", "reward": {"product_id": "1", "title": ["t"], "price": [{"less than": [0, 5]}]}}
    assert parse_row(row).difficulty is Difficulty.easy
    row["reward"]["attributes"] = [{"material": ["wood", "oak"]}]
    assert parse_row(row).difficulty is Difficulty.medium
    row["reward"]["service"] = ["COD"]
    assert parse_row(row).difficulty is Difficulty.hard
    assert parse_row(row | {"difficulty": "easy"}).difficulty is Difficulty.easy


def test_row_round_trip_keeps_the_official_shape(official):
    for problem in official[::97]:
        row = problem.to_row()
        assert parse_row(row) == problem.model_copy(update={"source": ""})


def test_web_is_an_alias_of_knowledge():
    assert Intent.parse("web") is Intent.knowledge


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b"{bad", "unexpected"),
        (b'{"reward": {}}', "query"),
        (b'{"query": "q"}', "missing 'reward'"),
        (b'{"query": "q", "reward": []}', "non-empty list"),
        (b'{"query": "q", "reward": [{"product_id": "1"}], "voucher": {"voucher_type": "x"}}', "invalid voucher"),
    ],
)
def test_bad_rows_name_file_and_line(tmp_path, line, reason):
    path = tmp_path / "tasks.jsonl"
    path.write_bytes(b'{"query": "ok", "reward": {"product_id": "1", "title": ["t"]}}\n' + line + b"\n")
    with pytest.raises(ProblemFileError) as info:
        load_problems(path)
    assert info.value.line == 2 and "tasks.jsonl:2" in str(info.value)
    assert reason.lower() in str(info.value).lower()
