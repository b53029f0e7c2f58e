"""Issue 13, the attacks on what the race measures, each tried the way a miner would: through the
real bubblewrap sandbox, runner and inference proxy, or over HTTP against the real API.

- hidden data reaching the agent: an agent that looks at everything the sandbox shows it (every
  endpoint's answer, tool error texts, the environment, /proc/self, every file name under / and
  the bytes of every file outside the host's own libraries) finds no trace of the problem's
  content id, gold ids, gold titles or hidden reward values; tool results for its own queries are
  the catalog's and carry no piece of the content id;
- the hash-reconstruction attack: rebuilding candidate rewards from search hits and hashing them
  as the content id is hashed matches nothing, though the same hashes contain the content id;
- the nested chat template: a chat_template inside chat_template_kwargs never reaches the upstream;
- the API as an oracle: a near copy of another hotkey's submission is refused without naming it
  or its similarity, the refusal is recorded, and refusals stop at the daily copy budget;
- the API as a crash: a huge offset or episode id answers the documented JSON error.

Each test asserts that the attack failed and that the validator recorded the refusal by name.
(The judge's classes of the issue are tested with the judge.)
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select

from arena.api import create_app
from arena.chain.local import LocalChain
from arena.policy.server import create_policy_app
from arena.problems.model import Intent, Problem
from arena.problems.official import load_problems
from arena.runner.episode import AgentSource, EpisodeRunner, RunnerConfig
from arena.runner.proxy import Upstream, UpstreamRegistry
from arena.runner.record import EpisodeLimits, EpisodeRecord, Termination
from arena.runner.sandbox import bubblewrap_path
from arena.shop.index import CatalogIndex
from arena.shop.knowledge import knowledge_for_catalog
from arena.store.models import CopyRefusal
from arena.taskpack.build import build_catalog
from arena.wallets import ensure_hotkeys, hotkey_address
from tests.arena.intake.test_api_submissions import app_settings, live_server, make_agent, migrated, signed_headers
from tests.conftest import official_dir

AGENTS = Path(__file__).parents[2] / "support" / "hostile_agents"
MODEL = "heuristic-policy"
LIMITS = EpisodeLimits(wall_s=60, cpu_s=30, memory_bytes=1024**3)

if bubblewrap_path() is None:
    if os.environ.get("ARENA_REQUIRE_SANDBOX"):
        raise RuntimeError("bubblewrap is required for these tests (scripts/test installs it)")
    pytest.skip("bubblewrap is not installed (apt-get install bubblewrap)", allow_module_level=True)


# --- the world: a task pack of official tasks, so gold products keep their official ids ------------


def jsonl(path: Path) -> list[dict]:
    """Rows split at newlines only (a title may hold U+2028, which str.splitlines splits at)."""
    return [json.loads(line) for line in path.read_text().split("\n") if line.strip()]


def official_rows() -> list[dict]:
    folder = official_dir()
    products = jsonl(folder / "synthesize_product_test.jsonl")
    title_only = [row for row in products if set(row["reward"]) == {"product_id", "title"}][:2]
    knowledge = jsonl(folder / "synthesize_web_simpleqa_test.jsonl")
    others = [jsonl(folder / f"synthesize_{n}_test.jsonl")[0] for n in ("shop", "voucher")]
    return [*title_only, knowledge[0], *others, *knowledge[1:KNOWLEDGE_TASKS]]


KNOWLEDGE_TASKS = 5  # planted pages of several problems: each episode must see its own only


class Recorder:
    """An ASGI wrapper keeping every request body the upstream receives."""

    def __init__(self, app) -> None:
        self.app, self.bodies = app, []

    async def __call__(self, scope, receive, send) -> None:
        chunks: list[bytes] = []

        async def recorded():
            message = await receive()
            if message["type"] == "http.request":
                chunks.append(message.get("body", b""))
                if not message.get("more_body"):
                    self.bodies.append(b"".join(chunks))
            return message

        await self.app(scope, recorded if scope["type"] == "http" else receive, send)


def needles(problem: Problem) -> dict[str, list[str]]:
    """What must never be visible: the content id, gold ids and shop ids, gold titles, the hidden answer.
    A value the public query itself states is not hidden."""
    rewards = [problem.knowledge.product] if problem.knowledge else problem.rewards
    titles = [t for r in rewards for t in ([r.title] if isinstance(r.title, str) else r.title)]
    digits = [r.product_id for r in rewards] + [r.shop_id for r in rewards if getattr(r, "shop_id", None)]
    texts = [problem.id, *titles] + ([problem.knowledge.knowledge_attribute] if problem.knowledge else [])
    query = problem.query.lower()
    return {
        "hex": [problem.id.removeprefix("p-")],
        "digits": [d for d in digits if d not in problem.query],
        "text": [t for t in texts if t.lower() not in query],
    }


def exposer(problem: Problem, foreign: list[str]) -> AgentSource:
    """The probe, given this problem's needles and ``foreign``: what identifies another problem's
    planted knowledge page (its URL), looked for in web_search answers too."""
    source = (AGENTS / "exposer.py").read_text()
    filled = source.replace(
        "NEEDLES = {}", f"NEEDLES = {json.dumps(needles(problem) | {'foreign': foreign}, ensure_ascii=False)}"
    )
    assert filled != source
    return AgentSource(name="exposer", code=filled.encode())


class PlantedPages:
    """Which planted page answers which problem, read from the pack's validator-side files."""

    def __init__(self, catalog: Path) -> None:
        urls = {d["doc_id"]: d["url"] for d in jsonl(catalog / "knowledge.jsonl")}
        planted = json.loads((catalog / "taskpack.json").read_text())["planted"]
        self.url_of = {p["task_id"]: urls[p["doc_id"]] for p in planted}

    def foreign(self, problem: Problem) -> list[str]:
        return sorted(url for task, url in self.url_of.items() if task != problem.id)


def harvester(problems: list[Problem], catalog: Path) -> AgentSource:
    """The harvesting agent, given every word of every problem and every planted page (a miner collects
    them over many episodes), at most 180 of them so every query fits in the calls the record keeps."""
    documents = jsonl(catalog / "knowledge.jsonl")
    texts = [p.query for p in problems] + [f"{d['title']} {d['content']} {d['url']}" for d in documents]
    words = sorted({w for t in texts for w in re.findall(r"\w+", t.lower())})
    words = random.Random(5).sample(words, min(180, len(words)))
    source = (AGENTS / "harvester.py").read_text()
    filled = source.replace("WORDS = []", f"WORDS = {json.dumps(words, ensure_ascii=False)}")
    assert filled != source
    return AgentSource(name="harvester", code=filled.encode())


@pytest.fixture(scope="module")
def episodes(tmp_path_factory):
    """Every hostile agent of the sandbox classes, run by one runner in one event loop."""
    folder = tmp_path_factory.mktemp("hostile")
    tasks = folder / "tasks.jsonl"
    tasks.write_text("".join(json.dumps(row) + "\n" for row in official_rows()))
    build_catalog(folder / "catalog", tasks=[tasks], background=300, seed=11)
    catalog = CatalogIndex(folder / "catalog")
    problems = load_problems(tasks)
    policy = Recorder(create_policy_app(seed=1))
    registry = UpstreamRegistry(
        [Upstream(name=MODEL, base_url="http://policy/v1", models=[MODEL])],
        transports={MODEL: httpx.ASGITransport(app=policy)},
    )
    runner = EpisodeRunner(
        catalog,
        registry,
        RunnerConfig(limits=LIMITS, allowlist=[MODEL]),
        knowledge=knowledge_for_catalog(folder / "catalog"),
    )
    product = [p for p in problems if p.intent is Intent.product]
    knowledge = next(p for p in problems if p.intent is Intent.knowledge)
    planted = PlantedPages(folder / "catalog")
    harvest = harvester(problems, folder / "catalog")
    jobs = {
        **{f"exposer-{p.intent.value}": (exposer(p, planted.foreign(p)), p) for p in (product[0], knowledge)},
        # Every problem of the suite, every intent: only a knowledge one has web_search, and that one
        # must reach its own planted page and nothing planted for another problem.
        **{f"harvest-{p.id}": (harvest, p) for p in problems},
        **{f"hash-{i}": (AgentSource.from_path(AGENTS / "hash_matcher.py"), p) for i, p in enumerate(product)},
        "nested": (AgentSource.from_path(AGENTS / "nested_template.py"), product[0]),
    }

    async def run_all() -> dict[str, tuple[EpisodeRecord, Problem]]:
        out = {}
        names = list(jobs)
        try:
            for i in range(0, len(names), 2):  # two at a time on a 2-core machine
                batch = names[i : i + 2]
                records = await asyncio.gather(*(runner.run(jobs[n][0], jobs[n][1], MODEL) for n in batch))
                out.update({n: (r, jobs[n][1]) for n, r in zip(batch, records, strict=True)})
        finally:
            await registry.aclose()
        return out

    return asyncio.run(run_all()), policy, planted


def reported(record: EpisodeRecord) -> dict:
    (call,) = [c for c in record.tool_calls if c.name == "exfiltrate"]
    assert not call.ok and "unknown tool" in call.error  # recorded by name like every call, with its arguments
    return call.arguments


# --- hidden data never reaches the agent --------------------------------------------------------


@pytest.mark.parametrize("intent", ["product", "knowledge"])
def test_nothing_the_sandbox_shows_is_a_function_of_hidden_problem_content(episodes, intent):
    record, problem = episodes[0][f"exposer-{intent}"]
    assert record.termination is Termination.terminated, record.stderr_tail
    dump = reported(record)
    report, raw = dump["report"], dump["raw"]
    # The probe really looked, and its scanner finds a needle wherever one is.
    assert report["names"] > 1000 and report["scanned_files"] > 100 and report["scanned_bytes"] > 1_000_000
    assert report["self_hits"] >= len(needles(problem)["text"])
    assert report["hits"] == {}, f"hidden content visible to the agent: {report['hits']}"
    # The agent's id is its episode's, random; the content id stays on the validator's side.
    seen = raw["episode"]["problem"]
    assert seen["id"] == record.episode_id != problem.id and record.problem.id == problem.id
    assert set(seen) == {"id", "intent", "query"}
    # Tool results for its own queries are the catalog's; no piece of the content id is among them.
    digest = problem.id.removeprefix("p-")
    answers = json.dumps([c.result for c in record.tool_calls], ensure_ascii=False)
    assert not any(digest[i : i + 10] in answers for i in range(len(digest) - 9))
    # No web_search answer, whatever it asked, names a page planted for another problem.
    assert report["foreign_checked"] >= 1 and report["foreign_hits"] == {}, report["foreign_hits"]


def harvested(episodes) -> dict[str, tuple[EpisodeRecord, Problem]]:
    return {name: episode for name, episode in episodes[0].items() if name.startswith("harvest-")}


def test_harvesting_the_knowledge_corpus_gets_only_the_problems_own_page(episodes):
    """Issue 30 class 4: one corpus for every partition let a knowledge episode pull every problem's
    answer page. Each episode now reaches its own problem's pages and neutral ones, whatever it asks;
    the filter keys on the problem, so it holds for a problem of any partition."""
    planted = episodes[2]
    runs = harvested(episodes)
    assert {p.intent for _, p in runs.values()} == set(Intent)  # every intent
    assert sum(p.intent is Intent.knowledge for _, p in runs.values()) == KNOWLEDGE_TASKS == len(planted.url_of)
    for record, problem in runs.values():
        assert record.termination is Termination.terminated, record.stderr_tail
        dump = reported(record)
        served = {hit["url"] for c in record.tool_calls if c.name == "web_search" and c.ok for hit in c.result}
        assert served <= set(dump["pages"])
        if problem.intent is not Intent.knowledge:
            assert dump["pages"] == [] and all(e.startswith("unknown tool 'web_search'") for e in dump["errors"])
            continue
        # The official behaviour for its own page: the riddle finds it (first), and so do its words.
        own = planted.url_of[problem.id]
        first = next(c for c in record.tool_calls if c.name == "web_search")
        assert first.ok and first.result[0]["url"] == own
        assert dump["pages"] == [own], f"{problem.id} reached pages planted for other problems: {dump['pages']}"
        assert dump["queries"] > 200 and len(record.tool_calls) > dump["queries"]  # every query was answered


def test_hashing_guessed_rewards_finds_nothing(episodes):
    records = [episodes[0][name] for name in ("hash-0", "hash-1")]
    for record, problem in records:
        assert record.termination is Termination.terminated, record.stderr_tail
        dump = reported(record)
        # The attack is sound: among its guesses is the very row the content id hashes ...
        assert problem.id in dump["hashes"].values()
        # ... but the id it was given is not the content id, so nothing matches and it recommends nothing.
        assert dump["seen_id"] == record.episode_id and dump["seen_id"] not in dump["hashes"].values()
        assert "NO MATCH" in record.stdout_tail and record.final_recommendation in (None, [], "")


def test_a_chat_template_nested_in_allowed_fields_never_reaches_the_upstream(episodes):
    (record, _), policy = episodes[0]["nested"], episodes[1]
    assert record.termination is Termination.terminated, record.stderr_tail
    (call,) = record.llm_calls
    assert call.status_code == 200
    dropped = set(call.request["proxy"]["dropped_keys"])
    assert {"chat_template", "chat_template_kwargs.chat_template", "chat_template_kwargs.tools"} <= dropped
    assert "messages[0].chat_template" in dropped
    sent = [json.loads(body) for body in policy.bodies if b"PWNED" in body or b"messages" in body]
    assert sent and all(b"PWNED" not in json.dumps(body).encode() for body in sent)
    assert sent[-1]["chat_template_kwargs"] == {"enable_thinking": False}


# --- the API is no oracle and no crash ----------------------------------------------------------


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    wallets = ensure_hotkeys(tmp_path_factory.mktemp("wallets"), "hostile", ["validator", "owner", "prober"])
    with migrated("sqlite", tmp_path_factory.mktemp("db")) as store:
        chain = LocalChain(store.sessions)
        receiver = hotkey_address(wallets[0])
        for wallet in wallets:
            chain.register(hotkey_address(wallet), validator_permit=wallet is wallets[0])
        app = create_app(app_settings(), store=store, chain=chain, validator_hotkey=receiver)
        with live_server(app) as url, httpx.Client(base_url=url, timeout=30) as http:
            yield http, store, receiver, wallets[1], wallets[2]


def test_the_copy_check_is_no_oracle_on_earlier_code(api):
    http, store, receiver, owner, prober = api

    def post(wallet, code: bytes) -> httpx.Response:
        return http.post("/v1/submissions", content=code, headers=signed_headers(wallet, code, receiver))

    original = make_agent(7001)
    assert post(owner, original).status_code == 201
    # The prober edits the hidden code bit by bit and reads how similar each try is.
    probes = [original.replace(b"    return", b"    c = (a, b)\n" * n + b"    return") for n in range(1, 5)]
    answers = [post(prober, code) for code in probes]
    refused = [a.json() for a in answers[:3]]
    assert [a.status_code for a in answers[:3]] == [409, 409, 409]
    for body in refused:
        assert body["detail"] == "this agent is too close to an earlier submission, which came first"
        assert "collides_with" not in body and "%" not in body["detail"] and hotkey_address(owner) not in str(body)
    assert [b["copy_refusals_left"] for b in refused] == [2, 1, 0]
    # The fourth probe gets no copy verdict at all: the daily copy budget is spent.
    last = answers[3].json()
    assert (answers[3].status_code, last["error"]) == (429, "copy_budget_exhausted") and last["retry_after"] > 0
    with store.transaction() as session:
        rows = session.execute(select(CopyRefusal.check).where(CopyRefusal.hotkey == hotkey_address(prober)))
        assert sorted(rows.scalars()) == sorted(b["error"] for b in refused)  # recorded by name
    metrics = http.get("/metrics").text
    assert 'arena_submissions_total{outcome="rejected",reason="copy_budget_exhausted"} 1.0' in metrics


@pytest.mark.parametrize(
    "path",
    [
        "/v1/submissions?offset=99999999999999999999",
        "/v1/submissions/1/episodes?offset=99999999999999999999&cycle=-3",
        "/v1/episodes/99999999999999999999",
        "/v1/cycles/2147483648",
        "/v1/leaderboard?cycle=1e309",
        "/v1/submissions?hotkey=%00",
        "/episodes/99999999999999999999",
    ],
)
def test_huge_or_garbage_parameters_answer_the_documented_error(api, path):
    http = api[0]
    response = http.get(path)  # once a reset connection or a plain 500
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["error"] == "invalid_request" and body["detail"]
    assert http.get("/healthz").status_code == 200  # and the server is still there
