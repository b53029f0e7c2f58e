"""Issue 30, class 4 (hidden data through the knowledge pages and the tools), round three: in the real
bubblewrap sandbox, on a task pack of five knowledge tasks (one planted answer page each), a prober
(tests/support/hostile_agents/page_prober.py) reaches for other problems' pages by ways the harvester of
tests/arena/runner/test_hostile_integrity.py did not try: every word of every page in one query, the query
as a list, an object or a number, ``max_results`` out of range or of another type, extra scope-like
arguments, the pages' URLs and doc ids given to the catalog tools, and web_search after terminate.

Contained when nothing of another problem's planted page (its URL, its title, the answer it states)
appears anywhere in the episode's record: tool results, errors, stdout and stderr.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
from pathlib import Path

import pytest

from arena.problems.model import Intent
from arena.problems.official import load_problems
from arena.runner.episode import AgentSource, EpisodeRunner, RunnerConfig
from arena.runner.proxy import UpstreamRegistry
from arena.runner.record import EpisodeLimits, EpisodeRecord
from arena.runner.sandbox import bubblewrap_path
from arena.shop.index import CatalogIndex
from arena.shop.knowledge import knowledge_for_catalog
from arena.taskpack.build import build_catalog
from tests.arena.runner.test_hostile_integrity import PlantedPages, jsonl, official_rows

AGENT = Path(__file__).parents[2] / "support" / "hostile_agents" / "page_prober.py"
LIMITS = EpisodeLimits(wall_s=60, cpu_s=30, memory_bytes=1024**3)
PROBED = 2  # knowledge problems probed (each episode ~2 s; every one has four foreign pages)

if bubblewrap_path() is None:
    if os.environ.get("ARENA_REQUIRE_SANDBOX"):
        raise RuntimeError("bubblewrap is required for these tests (scripts/test installs it)")
    pytest.skip("bubblewrap is not installed (apt-get install bubblewrap)", allow_module_level=True)


def _prober(documents: list[dict]) -> AgentSource:
    texts = [f"{d['title']} {d['content']} {d['url']}" for d in documents]
    words = sorted({w for t in texts for w in re.findall(r"\w+", t.lower())})
    ids = sorted({d["url"] for d in documents} | {d["doc_id"] for d in documents})
    source = AGENT.read_text()
    filled = source.replace("WORDS = []", f"WORDS = {json.dumps(random.Random(3).sample(words, len(words)))}")
    filled = filled.replace("IDS = []", f"IDS = {json.dumps(ids)}")
    assert filled.count("= []") == source.count("= []") - 2
    return AgentSource(name="page_prober", code=filled.encode())


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp("round3-knowledge")
    tasks = folder / "tasks.jsonl"
    tasks.write_text("".join(json.dumps(row) + "\n" for row in official_rows()))
    build_catalog(folder / "catalog", tasks=[tasks], background=300, seed=11)
    documents = jsonl(folder / "catalog" / "knowledge.jsonl")
    planted = PlantedPages(folder / "catalog")
    runner = EpisodeRunner(
        CatalogIndex(folder / "catalog"), UpstreamRegistry([]), RunnerConfig(limits=LIMITS),
        knowledge=knowledge_for_catalog(folder / "catalog"),
    )  # fmt: skip
    problems = [p for p in load_problems(tasks) if p.intent is Intent.knowledge][:PROBED]
    agent = _prober(documents)

    async def go() -> list[EpisodeRecord]:
        return await asyncio.gather(*(runner.run(agent, p, "heuristic-policy") for p in problems))

    return {"records": asyncio.run(go()), "problems": problems, "documents": documents, "planted": planted}


def _foreign_pages(world: dict, problem) -> list[str]:
    """What identifies another problem's planted page anywhere: its URL, its doc id, its title."""
    by_url = {d["url"]: d for d in world["documents"]}
    return [
        field
        for url in world["planted"].foreign(problem)
        for field in (url, by_url[url]["doc_id"], by_url[url]["title"])
    ]


def _foreign_answers(world: dict, problem) -> list[str]:
    """The answers other problems' pages state (looked for in web_search results only: the catalog is public,
    and a product title may name the same university or instrument)."""
    return [
        other.knowledge.knowledge_attribute
        for other in world["problems"]
        if other.id != problem.id and other.knowledge is not None
        and other.knowledge.knowledge_attribute.lower() not in problem.query.lower()
    ]  # fmt: skip


def _returned_text(record: EpisodeRecord) -> str:
    """What the agent was given: tool results, and errors and notices less the call's own arguments (an error
    may quote them, and the prober's arguments name every page by design); and what it found (``SEEN``)."""
    parts = []
    for call in record.tool_calls:
        said = json.dumps([call.error, call.notice], ensure_ascii=False)
        for own in re.findall(r"[\w:/.-]{8,}", json.dumps(call.arguments, ensure_ascii=False)):
            said = said.replace(own, "")
        parts += [json.dumps(call.result, ensure_ascii=False), said]
    seen = next((line for line in record.stdout_tail.splitlines() if line.startswith("SEEN")), "")
    return "\n".join([*parts, seen, record.stderr_tail])


def test_the_prober_ran_and_reached_its_own_page(world):
    for record, problem in zip(world["records"], world["problems"], strict=True):
        assert record.knowledge_scope == "problem", record.error
        assert sum(1 for c in record.tool_calls if c.name == "web_search") >= 11, record.stdout_tail[-1500:]
        own = world["planted"].url_of[problem.id]
        assert own in _returned_text(record), "the prober never found its own page: it probed nothing"


def test_no_other_problems_page_reaches_the_prober(world):
    for record, problem in zip(world["records"], world["problems"], strict=True):
        text = _returned_text(record)
        searched = json.dumps([c.result for c in record.tool_calls if c.name == "web_search"], ensure_ascii=False)
        leaked = [n for n in _foreign_pages(world, problem) if n in text]
        leaked += [n for n in _foreign_answers(world, problem) if n in searched]
        assert not leaked, (problem.id, leaked[:5])


def test_web_search_after_terminate_is_refused(world):
    for record in world["records"]:
        late = [line for line in record.stdout_tail.splitlines() if line.startswith("LATE")]
        assert late and "ok=False" in late[0] and "terminated" in late[0], record.stdout_tail[-800:]
