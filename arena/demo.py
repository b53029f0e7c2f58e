"""``arena demo``: the whole local job on the embedded defaults.

For now: build a synthetic catalog and its index, load the 900 official
tasks, answer them with a plain search baseline (the first hits of
``find_product`` for the raw query), write the answer file, and score it.
Later stages (suites, the race, the corpus) extend this flow.
"""

from __future__ import annotations

import json
from pathlib import Path

import orjson
from rich.console import Console

from arena.config import ArenaSettings
from arena.problems.model import Problem
from arena.problems.official import load_problems
from arena.scoring.answers import ScoreReport, load_answers, score_answers
from arena.scoring.outcome import ScoreMode
from arena.scoring.similarity import similarity_from_settings
from arena.shop.building import build_catalog
from arena.shop.index import MANIFEST, CatalogIndex
from arena.shop.tools import ShopEnvironment

OFFICIAL_FILES = (
    "synthesize_product_test.jsonl",
    "synthesize_shop_test.jsonl",
    "synthesize_voucher_test.jsonl",
    "synthesize_web_simpleqa_test.jsonl",
)


def official_task_files(folder: Path) -> list[Path]:
    missing = [name for name in OFFICIAL_FILES if not (folder / name).is_file()]
    if missing:
        raise FileNotFoundError(
            f"official task files missing in {folder}: {', '.join(missing)} (set ARENA_SHOPPINGBENCH_DIR)"
        )
    return [folder / name for name in OFFICIAL_FILES]


def baseline_answer(env: ShopEnvironment, problem: Problem) -> list[str]:
    """Recommend the first distinct hits of the raw query, one per requested item."""
    wanted = max(1, len(problem.rewards))
    result = env.call("find_product", {"q": problem.query, "page": 1})
    hits = [h["product_id"] for h in (result.result or [])]
    return hits[:wanted]


def run_demo(settings: ArenaSettings, out_dir: Path, *, products: int, seed: int, console: Console) -> ScoreReport:
    out_dir.mkdir(parents=True, exist_ok=True)
    catalog_dir = out_dir / "catalog"
    wanted_source = {"kind": "synthetic", "products": products, "seed": seed}
    if _existing_source(catalog_dir) != wanted_source:
        if catalog_dir.exists():
            import shutil

            shutil.rmtree(catalog_dir)
        console.print(f"[bold]1/3[/] building a synthetic catalog of {products} products (seed {seed})")
        build_catalog(catalog_dir, synthetic=products, seed=seed, settings=settings.catalog, console=console)
    else:
        console.print(f"[bold]1/3[/] reusing the catalog in {catalog_dir}")
    catalog = CatalogIndex(catalog_dir)

    files = official_task_files(settings.shoppingbench_dir)
    problems = load_problems(*files)
    console.print(f"[bold]2/3[/] loaded {len(problems)} official tasks; answering them with the search baseline")
    answers_path = out_dir / "answers.baseline.jsonl"
    with answers_path.open("wb") as handle:
        for problem in problems:
            env = ShopEnvironment(catalog)
            row = {"query": problem.query, "product_ids": baseline_answer(env, problem)}
            handle.write(orjson.dumps(row) + b"\n")

    console.print(f"[bold]3/3[/] scoring {answers_path}")
    report = score_answers(
        problems, load_answers(answers_path), catalog, mode=ScoreMode.official,
        similarity=similarity_from_settings(settings.scoring),
    )  # fmt: skip
    (out_dir / "score.json").write_text(report.model_dump_json(indent=2))
    console.print(f"wrote {out_dir / 'score.json'}")
    return report


def _existing_source(catalog_dir: Path) -> dict | None:
    manifest = catalog_dir / MANIFEST
    if not manifest.is_file():
        return None
    return json.loads(manifest.read_text()).get("source")
