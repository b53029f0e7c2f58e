"""The `arena` command as users and other tools call it (a real subprocess)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from tests.conftest import REPO, official_dir

ARENA = [str(Path(sys.executable).parent / "arena")]


def arena(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run([*ARENA, *map(str, args)], capture_output=True, text=True, cwd=REPO)
    if check and done.returncode != 0:
        raise AssertionError(f"arena {' '.join(map(str, args))} failed:\n{done.stderr}")
    return done


@pytest.fixture(scope="module")
def task_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("tasks") / "tasks.jsonl"
    rows = [
        {"query": "a cheap widget", "reward": {"product_id": "1001", "title": ["widget widget gadget"],
                                               "price": [{"less than": [0, 150]}]}},
        {"query": "two things from one shop", "reward": [
            {"product_id": "1001", "title": ["widget widget gadget"]},
            {"product_id": "1003", "title": ["widget widget gadget"]}]},
        {"query": "Which fabric? buy jeans", "Knowledge_Attribute": "denim",
         "reward": {"product_id": "3000", "title": "blue denim jeans", "price": 250.0}},
    ]  # fmt: skip
    path.write_bytes(b"\n".join(orjson.dumps(r) for r in rows) + b"\n")
    return path


def test_score_json_contract(catalog_dir, documents_file, task_file, tmp_path):
    answers = tmp_path / "answers.jsonl"
    answers.write_text(
        '{"query": "a cheap widget", "product_ids": ["1002"]}\n'
        '{"query": "Which fabric? buy jeans", "product_ids": ["3000"]}\n'
        '{"query": "not a task", "product_ids": ["1"]}\n'
    )
    for catalog in (catalog_dir, documents_file):
        done = arena("score", "--catalog", catalog, "--problems", task_file, "--answers", answers, "--json")
        report = json.loads(done.stdout)  # exactly one JSON object: anything else fails to parse
        assert set(report) == {"asr", "n", "by_intent", "problems", "unmatched"}
        assert report["n"] == 3 and report["unmatched"] == ["not a task"]
        assert report["by_intent"]["product"] == {"n": 1, "asr": 1.0}  # 1002 matches title and price
        assert report["by_intent"]["shop"] == {"n": 1, "asr": 0.0}  # unanswered
        assert report["by_intent"]["knowledge"] == {"n": 1, "asr": 1.0}
        assert report["asr"] == pytest.approx(2 / 3)
        first = report["problems"][0]
        assert set(first) == {"id", "query", "intent", "success", "rule"} and first["rule"] == 1.0


def test_strict_mode_and_bad_inputs(catalog_dir, task_file, tmp_path):
    answers = tmp_path / "answers.jsonl"
    answers.write_text('{"query": "two things from one shop", "product_ids": ["1001", "3000"]}\n')
    done = arena(
        "score", "--catalog", catalog_dir, "--problems", task_file, "--answers", answers, "--mode", "strict", "--json"
    )
    assert json.loads(done.stdout)["by_intent"]["shop"]["asr"] == 0.0
    answers.write_text("{broken\n")
    bad = arena("score", "--catalog", catalog_dir, "--problems", task_file, "--answers", answers, check=False)
    assert bad.returncode == 2 and "answers.jsonl:1" in bad.stderr and bad.stdout == ""
    answers.write_text('{"query": "a cheap widget", "product_ids": ["1002"]}\n')
    missing = arena("score", "--catalog", tmp_path / "nope", "--problems", task_file, "--answers", answers, check=False)
    assert missing.returncode == 2 and "does not exist" in missing.stderr


def test_problems_show_counts_the_official_files():
    folder = official_dir()
    done = arena("problems", "show", *sorted(folder.glob("*.jsonl")))
    assert "900 problems" in done.stdout
    for intent, total in (("product", 250), ("shop", 250), ("voucher", 250), ("knowledge", 150)):
        line = next(line for line in done.stdout.splitlines() if f" {intent} " in line)
        assert line.rstrip(" │|").split()[-1] == str(total)


def test_catalog_build_and_search(tmp_path):
    arena("catalog", "build", "--synthetic", "300", "--seed", "3", "--out", tmp_path / "cat")
    manifest = json.loads((tmp_path / "cat" / "catalog.json").read_text())
    assert manifest["products"] == 300 and manifest["source"] == {"kind": "synthetic", "products": 300, "seed": 3}
    from arena.taskpack.synthetic import generate_products

    first = next(iter(generate_products(300, 3)))
    done = arena("catalog", "search", tmp_path / "cat", first.title, "--page", "1")
    result = json.loads(done.stdout)
    assert result["name"] == "find_product" and result["ok"] is True
    assert first.product_id in [hit["product_id"] for hit in result["result"]]
    both = arena("catalog", "build", "--out", tmp_path / "x", check=False)
    assert both.returncode == 2 and "exactly one" in both.stderr


def test_config_show_json():
    done = arena("config", "show", "--json")
    assert json.loads(done.stdout)["scoring"]["mode"] == "official"


def test_version_prints_the_installed_package_version_on_stdout():
    from importlib.metadata import version

    done = arena("--version")
    assert done.stdout == f"trajectory-arena {version('trajectory-arena')}\n" and not done.stderr
