"""Shared pieces of the training tests: a tiny random Qwen3 and a tokenizer trained on the spot
(nothing from the hub), and small corpora in the export's format built from a real catalog.

No tests here; the other test_train* modules use these through session-scoped fixtures."""

from __future__ import annotations

import functools
import json
from pathlib import Path

from arena.shop.tools import SHOP_TOOLS, openai_tool_schemas

SYSTEM = "You are a careful shopping assistant. Use the tools, recommend, then terminate."


def tool_schemas() -> list[dict]:
    return openai_tool_schemas(SHOP_TOOLS)


def call(call_id: str, name: str, arguments: dict) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def dialogue(query: str, search: str, product_id: str, found: list[dict]) -> list[dict]:
    """One successful tool-calling trajectory: search, recommend, terminate."""
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": query},
        {"role": "assistant", "content": "", "tool_calls": [call("c1", "find_product", {"q": search, "page": 1})]},
        {"role": "tool", "tool_call_id": "c1", "content": json.dumps(found)},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [call("c2", "recommend_product", {"product_ids": product_id})],
        },
        {"role": "tool", "tool_call_id": "c2", "content": "recommended"},
        {"role": "assistant", "content": "", "tool_calls": [call("c3", "terminate", {"status": "success"})]},
        {"role": "tool", "tool_call_id": "c3", "content": "terminated"},
    ]


def train_rows(catalog, n: int = 8) -> list[dict]:
    """Rows in the corpus export's shape, from real searches on the test catalog."""
    from arena.shop.tools import ShopEnvironment

    rows = []
    queries = ["widget gadget", "widget thing", "blue denim jeans", "widget"]
    for i in range(n):
        q = queries[i % len(queries)]
        env = ShopEnvironment(catalog)
        found = env.call("find_product", {"q": q, "page": 1}).result[:2]
        product_id = found[0]["product_id"]
        rows.append(
            {
                "messages": dialogue(f"I want a {q}, please find one.", q, product_id, found),
                "tools": tool_schemas(),
                "metadata": {
                    "episode_id": f"e{i}",
                    "problem_id": f"p{i}",
                    "success": True,
                    "judge": {"level": 1.0, "coefficient": 1.0 if i % 2 == 0 else 0.5},
                },
            }
        )
    return rows


def kto_rows(rows: list[dict]) -> list[dict]:
    """Per-step examples: the first step of each dialogue, desirable as recorded, undesirable when it
    searches for the wrong thing."""
    out = []
    for i, row in enumerate(rows):
        prompt, step = row["messages"][:2], row["messages"][2]
        out.append({"prompt": prompt, "completion": [step], "label": True, "tools": row["tools"]})
        wrong = {**step, "tool_calls": [call("c1", "terminate", {"status": "failure"})]}
        out.append({"prompt": prompt, "completion": [wrong], "label": False, "tools": row["tools"]})
        if i >= 3:
            break
    return out


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def texts_for_tokenizer(rows: list[dict]) -> list[str]:
    from distill.tiny import TEMPLATE_WORDS

    texts = [json.dumps(r["messages"]) for r in rows] + [json.dumps(tool_schemas())]
    texts.append(TEMPLATE_WORDS)
    return texts * 4


@functools.cache
def tiny_checkpoint(root: Path, catalog_dir: Path) -> Path:
    """A random 2-layer Qwen3 with a byte-level BPE tokenizer trained here (distill/tiny.py)."""
    from arena.shop.index import CatalogIndex
    from distill.tiny import build_tiny_model

    rows = train_rows(CatalogIndex(catalog_dir))
    return build_tiny_model(texts_for_tokenizer(rows), root / "tiny-qwen3")
