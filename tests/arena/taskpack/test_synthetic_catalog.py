"""Tests for the seeded synthetic catalog (arena/taskpack/synthetic.py).

They check what the rest of the arena relies on: byte-for-byte determinism
(also across processes with different hash seeds), the official document
format, and the catalog's shape -- valid products, unique ids, multi-product
shops, lower-cased SKU/attribute data, sane prices and categories.
"""

from __future__ import annotations

import collections
import gzip
import hashlib
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse

import pytest

from arena.shop.product import SERVICES, Product
from arena.shop.vocabulary import LEAVES, check_vocabulary
from arena.taskpack.synthetic import document, generate_products, write_documents

REPO = Path(__file__).resolve().parents[3]


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def products() -> list[Product]:
    return list(generate_products(5000, 11))


def test_vocabulary_is_sound() -> None:
    assert check_vocabulary() == []
    assert len(LEAVES) >= 40
    assert len({leaf.path.split(" > ")[0] for leaf in LEAVES}) >= 12


@pytest.mark.parametrize("name", ["catalog.jsonl", "catalog.jsonl.gz"])
def test_same_seed_same_bytes(tmp_path: Path, name: str) -> None:
    a, b = tmp_path / "a" / name, tmp_path / "b" / name
    assert write_documents(generate_products(1500, 7), a) == 1500
    assert write_documents(generate_products(1500, 7), b) == 1500
    assert _sha256(a) == _sha256(b)


def test_same_bytes_in_another_process(tmp_path: Path) -> None:
    """A fresh interpreter with a different string-hash salt writes the same file."""
    here = tmp_path / "here.jsonl.gz"
    there = tmp_path / "there.jsonl.gz"
    write_documents(generate_products(1500, 3), here)
    code = (
        "import sys; from arena.taskpack.synthetic import generate_products, write_documents; "
        "write_documents(generate_products(1500, 3), sys.argv[1])"
    )
    for hash_seed in ("1", "987"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(REPO)}
        subprocess.run([sys.executable, "-c", code, str(there)], check=True, cwd=REPO, env=env)
        assert _sha256(there) == _sha256(here)


def test_different_seeds_differ(tmp_path: Path) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    write_documents(generate_products(300, 1), a)
    write_documents(generate_products(300, 2), b)
    assert _sha256(a) != _sha256(b)
    titles_a = {p.title for p in generate_products(300, 1)}
    titles_b = {p.title for p in generate_products(300, 2)}
    assert titles_a != titles_b
    ids_a = {p.product_id for p in generate_products(300, 1)}
    ids_b = {p.product_id for p in generate_products(300, 2)}
    assert not ids_a & ids_b  # salted ids: two seeds' catalogs do not share ids


def test_prefix_is_stable() -> None:
    """n only matters through the shop-size cap (n // 20, at least 30): with
    the same cap, a shorter catalog is a prefix of a longer one."""
    small = [p.model_dump() for p in generate_products(50, 5)]
    longer = [p.model_dump() for p in itertools.islice(generate_products(600, 5), 50)]
    assert small == longer


def test_streams_lazily() -> None:
    """A billion-product request yields its first products at once."""
    first = list(itertools.islice(generate_products(10**9, 1), 5))
    assert len(first) == 5


def test_every_product_validates(products: list[Product]) -> None:
    for p in products:
        dumped = p.model_dump()
        assert set(dumped) == set(Product.model_fields)
        again = Product.model_validate(dumped)
        assert again.model_dump() == dumped
        # model_validate would coerce; make sure nothing needed coercing
        assert type(p.price) is float and type(p.sold_count) is int
        assert all(type(dumped[f]) is str for f in ("product_id", "shop_id", "brand", "title"))


def test_ids(products: list[Product]) -> None:
    ids = [p.product_id for p in products]
    assert len(set(ids)) == len(ids)
    assert all(i.isdigit() and 9 <= len(i) <= 10 and i[0] != "0" for i in ids)
    assert all(p.shop_id.isdigit() and 6 <= len(p.shop_id) <= 7 for p in products)
    # ids look random, not a counter
    assert sorted(ids) != ids


def test_multi_product_shops(products: list[Product]) -> None:
    sizes = collections.Counter(p.shop_id for p in products)
    assert sum(1 for s in sizes.values() if s >= 10) >= 20
    categories: dict[str, set[str]] = collections.defaultdict(set)
    for p in products:
        categories[p.shop_id].add(p.category)
    spanning = [s for s, c in sizes.items() if c >= 20 and len(categories[s]) >= 3]
    assert len(spanning) >= 5
    # heavy tail: plenty of one-product shops too
    assert sum(1 for s in sizes.values() if s == 1) >= 100


def test_services(products: list[Product]) -> None:
    order = {name: i for i, name in enumerate(SERVICES)}
    counts: collections.Counter[str] = collections.Counter()
    for p in products:
        assert set(p.service) <= set(SERVICES)
        assert len(set(p.service)) == len(p.service)
        assert [order[s] for s in p.service] == sorted(order[s] for s in p.service)
        counts.update(p.service)
    n = len(products)
    for name, rate in (("official", 0.10), ("freeShipping", 0.40), ("COD", 0.60), ("flashsale", 0.15)):
        assert abs(counts[name] / n - rate) < 0.03, name


def test_sku_and_attributes_shape(products: list[Product]) -> None:
    with_skus = 0
    for p in products:
        assert 0 <= len(p.sku_options) <= 9
        assert list(p.sku_options) == [str(i) for i in range(1, len(p.sku_options) + 1)]
        for option in p.sku_options.values():
            assert 1 <= len(option) <= 2
            for key, value in option.items():
                assert key == key.lower() and value == value.lower() and value
        distinct = {tuple(sorted(o.items())) for o in p.sku_options.values()}
        assert len(distinct) == len(p.sku_options)
        with_skus += bool(p.sku_options)
        assert 2 <= len(p.attributes) <= 6
        for key, values in p.attributes.items():
            assert key == key.lower()
            assert 1 <= len(values) <= 2 and len(set(values)) == len(values)
            assert all(v == v.lower() and v for v in values)
        if p.brand:
            assert p.attributes["brand"] == [p.brand.lower()]
    assert 0.6 < with_skus / len(products) < 0.9


def test_prices_categories_and_text(products: list[Product]) -> None:
    leaf_paths = {leaf.path for leaf in LEAVES}
    for p in products:
        assert p.price > 0 and round(p.price, 2) == p.price
        assert p.sold_count >= 0
        parts = p.category.split(" > ")
        assert 2 <= len(parts) <= 3 and all(parts)
        assert p.category in leaf_paths
        assert p.title and p.title == p.title.strip() and "  " not in p.title
        if p.brand:
            assert p.brand in p.title
        for url in (p.main_image_url, p.product_url):
            parsed = urlparse(url)
            assert parsed.scheme == "https" and parsed.netloc == "example.invalid"
        assert p.product_url.endswith(f"-i{p.product_id}.html")
    assert len({p.category for p in products}) >= 40
    assert 0.1 < sum(1 for p in products if not p.brand) / len(products) < 0.5
    assert 0.3 < sum(1 for p in products if p.description) / len(products) < 0.9
    sold = sorted(p.sold_count for p in products)
    assert sold[len(sold) // 2] <= 5 and sold[-1] >= 500  # heavy-tailed
    prices = sorted(p.price for p in products)
    assert prices[len(prices) // 2] < 1000 and prices[-1] > 5000


def test_documents_on_disk(tmp_path: Path) -> None:
    path = tmp_path / "documents.jsonl.gz"
    expected = list(generate_products(400, 21))
    assert write_documents(iter(expected), path) == 400
    with gzip.open(path, "rb") as fh:
        rows = [json.loads(line) for line in fh]
    assert len(rows) == 400
    for row, p in zip(rows, expected, strict=True):
        assert list(row) == ["id", "contents", "product"]
        assert list(row["product"]) == list(Product.model_fields)
        assert row["id"] == p.product_id == row["product"]["product_id"]
        loaded = Product.model_validate(row["product"])
        assert loaded == p
        assert row["contents"] == loaded.contents()
        assert row["contents"].split("\n")[0] == p.title
    assert document(expected[0]) == rows[0]
    # reproducible gzip header: mtime 0, no embedded file name
    head = path.read_bytes()[:10]
    assert head[:2] == b"\x1f\x8b" and head[4:8] == b"\x00\x00\x00\x00" and not head[3] & 0x08
    assert not list(tmp_path.glob("*.partial"))


def test_plain_jsonl_and_empty(tmp_path: Path) -> None:
    path = tmp_path / "docs.jsonl"
    assert write_documents(generate_products(50, 4), path) == 50
    lines = path.read_bytes().splitlines()
    assert len(lines) == 50 and all(json.loads(line)["product"] for line in lines)
    empty = tmp_path / "empty.jsonl.gz"
    assert write_documents(generate_products(0, 4), empty) == 0
    assert gzip.decompress(empty.read_bytes()) == b""


def test_failed_write_leaves_nothing(tmp_path: Path) -> None:
    def broken():
        yield from generate_products(10, 1)
        raise RuntimeError("boom")

    path = tmp_path / "x.jsonl.gz"
    with pytest.raises(RuntimeError, match="boom"):
        write_documents(broken(), path)
    assert list(tmp_path.iterdir()) == []


def test_bad_n() -> None:
    with pytest.raises(ValueError):
        generate_products(-1, 0)
    with pytest.raises(ValueError):
        generate_products(1 << 40, 0)


def test_memory_is_flat() -> None:
    """Peak Python allocations do not grow with n: nothing is kept per product."""
    import tracemalloc

    def peak(n: int) -> int:
        tracemalloc.start()
        try:
            for _ in generate_products(n, 8):
                pass
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    generate_products(1, 0)  # build the shared leaf tables outside the measurement
    small, large = peak(1000), peak(4000)
    assert large < small * 1.5 + 64 * 1024


def test_cli_writes_a_catalog(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from arena.taskpack.synthetic import main

    out = tmp_path / "docs.jsonl.gz"
    assert main(["--n", "25", "--seed", "2", "--out", str(out)]) == 0
    with gzip.open(out, "rb") as fh:
        assert sum(1 for _ in fh) == 25
    assert "25 products" in capsys.readouterr().err
