"""The streaming loader of the official documents file."""

from __future__ import annotations

import gzip

import pytest

from arena.shop.documents import DocumentError, LoadReport, document_row, iter_documents
from arena.shop.index import CatalogIndex
from arena.shop.product import Product
from arena.taskpack.build import CatalogBuildError, build_catalog

GOOD = Product(product_id="1", shop_id="9", title="red mug", price=5, sku_options={"1": {"color_family": "red"}})


def write_lines(path, lines: list[bytes]):
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "wb") as handle:
        handle.write(b"\n".join(lines) + b"\n")
    return path


def test_reads_plain_and_gzip_rows(tmp_path):
    for name in ("documents.jsonl", "documents.jsonl.gz"):
        path = write_lines(
            tmp_path / name, [document_row(GOOD), document_row(GOOD.model_copy(update={"product_id": "2"}))]
        )
        products = list(iter_documents(path, strict=True))
        assert [p.product_id for p in products] == ["1", "2"]
        assert products[0].sku_options == {"1": {"color_family": "red"}}


def test_numeric_ids_become_strings(tmp_path):
    row = b'{"id": 7, "contents": "x", "product": {"product_id": 7, "shop_id": 3, "title": "t", "price": "2.5"}}'
    (product,) = iter_documents(write_lines(tmp_path / "d.jsonl", [row]), strict=True)
    assert product.product_id == "7" and product.shop_id == "3" and product.price == 2.5


BAD_ROWS = [
    (b"{not json", "not valid JSON"),
    (b'{"id": "5", "contents": "x"}', "missing 'product'"),
    (b'{"id": "5", "product": {"product_id": "5", "price": "cheap"}}', "invalid product: price"),
    (b'{"id": "5", "product": {"product_id": "5", "service": ["teleport"]}}', "invalid product: service"),
]


@pytest.mark.parametrize(("row", "reason"), BAD_ROWS)
def test_strict_load_names_the_line(tmp_path, row, reason):
    path = write_lines(tmp_path / "d.jsonl", [document_row(GOOD), row])
    with pytest.raises(DocumentError) as info:
        list(iter_documents(path, strict=True))
    assert info.value.line == 2
    assert reason in str(info.value) and ":2:" in str(info.value)


def test_lenient_load_skips_and_reports_every_bad_row(tmp_path):
    lines = (
        [document_row(GOOD)]
        + [row for row, _ in BAD_ROWS]
        + [document_row(GOOD.model_copy(update={"product_id": "2"}))]
    )
    report = LoadReport(path="d")
    products = list(iter_documents(write_lines(tmp_path / "d.jsonl", lines), report=report))
    assert [p.product_id for p in products] == ["1", "2"]
    assert report.read == 2 and report.skipped == len(BAD_ROWS)
    assert [e.split(":")[1] for e in report.errors] == ["2", "3", "4", "5"]


def test_catalog_build_reports_skips_or_fails(tmp_path):
    path = write_lines(tmp_path / "d.jsonl", [document_row(GOOD), b"{oops"])
    report = build_catalog(tmp_path / "idx", documents=path)
    assert report.products == 1 and report.skipped == 1 and "d.jsonl:2" in report.load_errors[0]
    assert CatalogIndex(tmp_path / "idx").get("1").title == "red mug"
    with pytest.raises(CatalogBuildError, match="d.jsonl:2"):
        build_catalog(tmp_path / "idx2", documents=path, strict=True)


def test_building_into_a_non_empty_directory_is_refused(tmp_path, documents_file):
    (tmp_path / "idx").mkdir()
    (tmp_path / "idx" / "keep.txt").write_text("mine")
    with pytest.raises(CatalogBuildError, match="not empty"):
        build_catalog(tmp_path / "idx", documents=documents_file)
    assert (tmp_path / "idx" / "keep.txt").read_text() == "mine"


def test_contents_follow_the_official_recipe():
    product = Product(product_id="1", title="Mug", sku_options={"1": {"size": "l"}, "2": {"size": "s"}},
                      attributes={"material": ["ceramic"]})  # fmt: skip
    assert product.contents() == "Mug\nl s\nceramic"
