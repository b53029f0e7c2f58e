"""The reference agents (miner templates) complete real episodes.

An in-test ``arena.sdk`` stands in for the sandbox's: ``tool()`` runs the
real ``ShopEnvironment`` on a real synthetic catalog, and ``openai_client()``
is a real ``openai.OpenAI`` talking to the real policy app through the httpx
ASGI transport. Each agent file is loaded fresh, as the sandbox would load a
submission.
"""

from __future__ import annotations

import importlib.util
import json
import math
import random
import re
import sys
import types

import httpx
import openai
import pytest

import arena
from arena.agents import REFERENCE_AGENTS, agent_path
from arena.policy.client import SyncASGITransport
from arena.policy.server import create_policy_app
from arena.problems.official import parse_row
from arena.scoring import ScoreMode, score_problem
from arena.shop.index import CatalogIndex
from arena.shop.knowledge import KnowledgeDocument, LocalKnowledgeBase, build_knowledge_index
from arena.shop.tools import KNOWLEDGE_TOOLS, ShopEnvironment
from arena.taskpack.build import build_catalog
from arena.taskpack.synthetic import generate_products

MODEL = "heuristic-policy"


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    out = tmp_path_factory.mktemp("agents") / "catalog"
    build_catalog(out, synthetic=2000, seed=1)
    return CatalogIndex(out), list(generate_products(2000, 1))


@pytest.fixture(scope="module")
def policy_app():
    return create_policy_app(seed=0)


class RecordingTransport(SyncASGITransport):
    """The ASGI bridge, keeping every request body and response body the agent exchanged with the model."""

    def __init__(self, app) -> None:
        super().__init__(app)
        self.exchanges: list[tuple[dict, dict]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        self.exchanges.append((json.loads(request.content), response.json()))
        return response


class SdkDouble:
    """What the agent sees as ``arena.sdk``, over a real environment and the real policy."""

    def __init__(self, env: ShopEnvironment, app) -> None:
        self.env = env
        self.transport = RecordingTransport(app)
        self.tool_log: list[tuple[str, dict, bool]] = []
        self.module = types.ModuleType("arena.sdk")
        self.module.ToolError = type("ToolError", (Exception,), {})
        self.module.tool = self.tool
        self.module.tool_schemas = env.schemas
        self.module.model = lambda: MODEL
        self.module.openai_client = self.openai_client

    def tool(self, name: str, **arguments):
        result = self.env.call(name, arguments)
        self.tool_log.append((name, arguments, result.ok))
        if not result.ok:
            raise self.module.ToolError(result.error)
        return json.loads(json.dumps(result.result))  # what crosses the socket is JSON

    def openai_client(self, **kwargs):
        http_client = httpx.Client(transport=self.transport, base_url="http://proxy")
        return openai.OpenAI(base_url="http://proxy/v1", api_key="sandbox", http_client=http_client, max_retries=0)


def run_agent(name: str, env: ShopEnvironment, app, problem: dict, monkeypatch) -> SdkDouble:
    double = SdkDouble(env, app)
    monkeypatch.setitem(sys.modules, "arena.sdk", double.module)
    monkeypatch.setattr(arena, "sdk", double.module, raising=False)  # `import arena.sdk as sdk` reads the attribute
    spec = importlib.util.spec_from_file_location(f"agent_under_test_{name}", agent_path(name))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.agent_main(problem)
    return double


def easy_problem(products, seed: int):
    rng = random.Random(seed)
    product = rng.choice(products)
    words = re.findall(r"[A-Za-z0-9][A-Za-z0-9'-]*", product.title)
    lo, hi = math.floor(product.price * 0.8), math.ceil(product.price * 1.2)
    query = f"Looking for {' '.join(words).lower()} priced between {lo} and {hi} pesos."
    reward = {"product_id": product.product_id, "title": [product.title], "price": [{"between": [lo, hi]}]}
    return parse_row({"query": query, "reward": reward, "id": f"agent-easy-{seed}"})


def as_input(problem) -> dict:
    return {"id": problem.id, "query": problem.query, "intent": problem.intent.value}


def test_agents_only_import_the_sdk_and_the_standard_library():
    for name in REFERENCE_AGENTS:
        source = agent_path(name).read_text()
        imported = set(re.findall(r"^\s*(?:import|from)\s+([\w.]+)", source, re.M))
        assert imported <= {"arena.sdk"} | sys.stdlib_module_names, f"{name} imports {imported}"
        assert "def agent_main(problem: dict) -> None:" in source
        assert source.startswith('"""Reference agent')  # the pattern is explained to miners


def test_tool_calling_agent_solves_an_easy_problem_agentically(shop, policy_app, monkeypatch):
    catalog, products = shop
    problem = easy_problem(products, 3)
    env = ShopEnvironment(catalog)
    double = run_agent("tool_calling", env, policy_app, as_input(problem), monkeypatch)
    assert env.state.terminated and env.state.status == "success"
    assert score_problem(problem, env.state.recommended, catalog, mode=ScoreMode.strict).success

    # Exactly the calls the model emitted were executed, in order, and nothing else.
    emitted = [(c["function"]["name"], json.loads(c["function"]["arguments"]))
               for _, response in double.transport.exchanges
               for c in response["choices"][0]["message"].get("tool_calls") or []]  # fmt: skip
    assert [(name, args) for name, args, _ in double.tool_log] == emitted

    # One growing dialogue: each request extends the previous one, and every tool call is answered in order.
    requests = [request for request, _ in double.transport.exchanges]
    for before, after in zip(requests, requests[1:], strict=False):
        assert after["messages"][: len(before["messages"])] == before["messages"]
        assert after["tools"] == env.schemas()
    dialogue = requests[-1]["messages"]
    assert [m["role"] for m in dialogue[:2]] == ["system", "user"] and dialogue[1]["content"] == problem.query
    for i, message in enumerate(dialogue):
        for j, call in enumerate(message.get("tool_calls") or []):
            answer = dialogue[i + 1 + j]
            assert answer["role"] == "tool" and answer["tool_call_id"] == call["id"]
            json.loads(answer["content"])  # results travel as JSON


def test_tool_calling_agent_answers_a_knowledge_riddle(shop, policy_app, monkeypatch, tmp_path):
    catalog, products = shop
    gold = next(p for p in products if p.brand and p.brand.split()[0].lower() in p.title.lower())
    build_knowledge_index(
        [
            KnowledgeDocument(
                doc_id="k", title="Ada Quill", content=f"In 1987, Ada Quill founded the label {gold.brand}."
            )
        ],
        tmp_path / "kb",
    )
    env = ShopEnvironment(catalog, LocalKnowledgeBase(tmp_path / "kb"), allowed=KNOWLEDGE_TOOLS)
    noun = " ".join(w for w in gold.title.lower().split() if w not in gold.brand.lower().split())
    query = f"Which label did Ada Quill found in 1987? I would like to buy {noun}."
    double = run_agent(
        "tool_calling", env, policy_app, {"id": "k1", "query": query, "intent": "knowledge"}, monkeypatch
    )
    assert [name for name, _, _ in double.tool_log][0] == "web_search"
    assert gold.brand.lower() in catalog.get(env.state.recommended[0]).title.lower()


def test_tool_calling_reports_tool_errors_to_the_model(shop, policy_app, monkeypatch):
    catalog, _ = shop
    double = SdkDouble(ShopEnvironment(catalog), policy_app)
    monkeypatch.setitem(sys.modules, "arena.sdk", double.module)
    monkeypatch.setattr(arena, "sdk", double.module, raising=False)
    spec = importlib.util.spec_from_file_location("agent_errors", agent_path("tool_calling"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    content, ok = module._execute("find_product", json.dumps({"page": 1}))
    assert not ok and content.startswith("error:") and "missing required argument 'q'" in content
    content, ok = module._execute("find_product", "{not json")
    assert not ok and "not valid JSON" in content
    content, ok = module._execute("find_product", json.dumps({"q": "mug", "page": 1}))
    assert ok and isinstance(json.loads(content), list)


def test_search_loop_agent_asks_only_yes_no_questions(shop, policy_app, monkeypatch):
    catalog, products = shop
    problem = easy_problem(products, 4)
    env = ShopEnvironment(catalog)
    double = run_agent("search_loop", env, policy_app, as_input(problem), monkeypatch)
    assert env.state.terminated and len(env.state.recommended) == 1
    searched = {pid for name, args, _ in double.tool_log if name == "view_product_information"
                for pid in args["product_ids"].split(",")}  # fmt: skip
    assert env.state.recommended[0] in searched
    assert double.transport.exchanges, "the model was never asked"
    for request, response in double.transport.exchanges:
        assert "tools" not in request and len(request["messages"]) == 1  # a sub-task: no tools, no dialogue
        assert "Answer yes or no" in request["messages"][0]["content"]
        assert response["choices"][0]["message"]["content"].startswith(("Yes", "No"))
    # It recommends the first candidate the model accepted.
    last_answer = double.transport.exchanges[-1][1]["choices"][0]["message"]["content"]
    assert last_answer.startswith("Yes") or len(double.transport.exchanges) == 5


def test_shortcut_agent_recommends_the_first_hit(shop, policy_app, monkeypatch):
    catalog, products = shop
    problem = easy_problem(products, 5)
    env = ShopEnvironment(catalog)
    double = run_agent("shortcut", env, policy_app, as_input(problem), monkeypatch)
    first_hit = ShopEnvironment(catalog).call("find_product", {"q": problem.query, "page": 1}).result[0]
    assert env.state.recommended == [first_hit["product_id"]] and env.state.status == "success"
    assert [name for name, _, _ in double.tool_log] == ["find_product", "recommend_product", "terminate"]
    (exchange,) = double.transport.exchanges  # one short explanation from the model, nothing more
    assert exchange[0]["max_tokens"] == 60 and exchange[1]["choices"][0]["message"]["content"]
