"""The validator API's read side on PostgreSQL and SQLite: leaderboard, cycles, a submission's results per intent,
episodes with their redaction, the embargo, health, metrics, the OpenAPI schema, the HTML page and `arena serve`.

The world: a real suite (public, race bank, held-out) whose ledger revealed
and retired clusters in cycle 1 and revealed more in cycle 2; cycles 1 and 2
finished, cycle 3 still racing; episodes with real EpisodeRecords scored by
the real strict scorer on the shared test catalog, and versioned judgments.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.api import create_app
from arena.api.settings import ApiSettings
from arena.chain.local import LocalChain
from arena.problems.draw import record_draw, retire
from arena.problems.model import Difficulty, Intent, Problem, ProductReward
from arena.problems.partitions import PartitionName, PartitionPlan
from arena.problems.suites import write_suite
from arena.runner.record import AgentRef, EpisodeRecord, LLMCallRecord, ProblemRef, Termination, ToolCallRecord
from arena.scoring import ScoreMode, score_problem
from arena.settings import ArenaSettings
from arena.store import Store
from arena.store import cycles as cycle_rows
from arena.store import episodes as episode_rows
from arena.store import judgments as judgment_rows
from arena.store import standings as standing_rows
from arena.store import submissions as submission_rows
from arena.store import suites as suite_rows
from arena.store.episodes import EpisodeKey
from arena.store.judgments import JudgmentResult
from arena.store.migrate import head_revision
from arena.store.models import utcnow
from arena.store.models_race import CycleStage, EpisodeStage
from arena.store.standings import StandingIn
from arena.store.submissions import NewSubmission
from arena.wallets import ensure_hotkeys, hotkey_address
from tests.arena.intake.test_api_submissions import BACKENDS, app_settings, make_agent, migrated, signed_headers

REPO = Path(__file__).resolve().parents[3]


# --- the world -----------------------------------------------------------------------------------


def suite_problems() -> list[Problem]:
    """16 clusters of 2 variants; odd clusters are two-item shop problems so results split by intent."""
    problems = []
    for c in range(16):
        for v in range(2):
            shop = c % 2 == 1
            problems.append(
                Problem(
                    id=f"api-p{c:02d}{v}",
                    intent=Intent.shop if shop else Intent.product,
                    query=f"secretquery{c:02d}{v} widget wanted",
                    difficulty=Difficulty.easy,
                    rewards=[ProductReward(product_id="1000", title=["widget"])]
                    + ([ProductReward(product_id="1002", title=["widget"])] if shop else []),
                    cluster_id=f"api-c{c:02d}",
                )
            )
    return problems


@pytest.fixture(scope="module")
def suite_dir(tmp_path_factory):
    problems = suite_problems()
    groups = {
        PartitionName.public: problems[:6],
        PartitionName.race_bank: problems[6:-6],
        PartitionName.train_pool: [],
        PartitionName.heldout: problems[-6:],
    }
    suite = write_suite(
        groups,
        tmp_path_factory.mktemp("suite") / "api",
        seed="secret",
        plan=PartitionPlan(public=6, heldout_fraction=0.2),
        clustering=None,
        version="api-v1",
    )
    revealed_1 = record_draw(suite, 1, "ab" * 32, 2)
    retire(suite, 1)
    revealed_2 = record_draw(suite, 2, "cd" * 32, 2)
    return suite.path, revealed_1, revealed_2


@dataclass
class World:
    store: Store
    client: TestClient
    problems: dict[str, Problem]
    submissions: dict[str, int]  # name -> id
    episodes: dict[str, int]  # what it shows -> episode id
    heldout: list[Problem]


def record_for(problem: Problem, attempt: int = 0) -> EpisodeRecord:
    """A real record: it carries the problem row (gold included) and the query in the LLM request."""
    return EpisodeRecord(
        episode_id=f"{problem.id}-{attempt}",
        problem=ProblemRef(id=problem.id, intent=problem.intent.value, query=problem.query, row=problem.to_row()),
        agent=AgentRef(name="agent", sha256="0" * 64),
        sandbox="bubblewrap",
        model="offline",
        started_at=utcnow().isoformat(),
        llm_calls=[
            LLMCallRecord(
                index=0,
                model="offline",
                request={"messages": [{"role": "user", "content": problem.query}]},
                at_s=0.1,
                latency_ms=3.0,
            )
        ],  # fmt: skip
        final_recommendation=problem.gold_product_ids(),
        termination=Termination.terminated,
    )


FOREIGN_PAGE = {"url": "https://knowledge.invalid/held-out/0123456789abcdef", "title": "Held out",
                "content": "Answer: secret-held-out-answer."}  # fmt: skip


def searched(record: EpisodeRecord, scope: str | None) -> EpisodeRecord:
    """The record with a web_search answer: ``scope`` None is a record stored before the per-problem
    knowledge filter (issue 30), whose answer could be (here: is) another problem's planted page."""
    call = ToolCallRecord(
        index=0, name="web_search", arguments={"q": "answer"}, ok=True, result=[FOREIGN_PAGE], at_s=0.1, duration_ms=1.0
    )
    return record.model_copy(update={"tool_calls": [call], "knowledge_scope": scope})


def run_episode(
    session, catalog, key: EpisodeKey, problem: Problem, coefficient: float | None, web: str | None = "none"
) -> int:
    episode = episode_rows.ensure_episode(session, key)
    outcome = score_problem(problem, problem.gold_product_ids(), catalog, mode=ScoreMode.strict)
    record = record_for(problem, key.attempt)
    if web != "none":
        record = searched(record, web)
    episode_rows.complete(session, episode.id, record, outcome)
    if coefficient is not None:
        result = JudgmentResult(level=0.9, coefficient=coefficient, explanation=f"it searched for {problem.query}")
        judgment_rows.add_version(session, episode.id, "rules", "v1", result)
    return episode.id


def build_world(store: Store, catalog, suite_dir) -> tuple[dict, dict, dict, list[Problem]]:
    path, revealed_1, revealed_2 = suite_dir
    problems = {p.id: p for p in suite_problems()}
    public = suite_problems()[:6]
    heldout = suite_problems()[-6:]
    with store.transaction() as s:
        suite = suite_rows.import_suite(s, path).suite_id
        submission_rows.ensure_miner(s, "hk-alpha", 1)
        submission_rows.ensure_miner(s, "hk-beta", 2)
        alpha = submission_rows.add_submission(s, new("hk-alpha", b"def agent_main(problem):\n    return 1\n")).id
        beta = submission_rows.add_submission(s, new("hk-beta", b"def agent_main(problem):\n    return 2\n")).id
        for number in (1, 2, 3):
            cycle_rows.start_cycle(s, number, suite, {"draw_size": 2})
            cycle_rows.begin_stage(s, number, CycleStage.qualifying)
            cycle_rows.finish_stage(
                s, number, CycleStage.qualifying, {"drawn": revealed_1 if number == 1 else revealed_2}
            )
            cycle_rows.begin_stage(s, number, CycleStage.race)
        for number in (1, 2):
            cycle_rows.begin_stage(s, number, CycleStage.done)

        def key(cycle, stage, sub, problem, attempt=0):
            return EpisodeKey(
                cycle=cycle, stage=stage, submission_id=sub, suite_id=suite, problem_id=problem.id, attempt=attempt
            )

        episodes = {
            "public": run_episode(s, catalog, key(1, EpisodeStage.qualifying, alpha, public[0]), public[0], 1.0),
            "public_shop": run_episode(s, catalog, key(1, EpisodeStage.qualifying, alpha, public[2]), public[2], 0.5),
            "retired": run_episode(
                s, catalog, key(1, EpisodeStage.race, alpha, problems[revealed_1[0]]), problems[revealed_1[0]], 0.8
            ),
            "unretired": run_episode(
                s, catalog, key(2, EpisodeStage.race, alpha, problems[revealed_2[0]]), problems[revealed_2[0]], 0.7
            ),
            "running": run_episode(s, catalog, key(3, EpisodeStage.qualifying, alpha, public[1]), public[1], None),
            "pre_filter": run_episode(
                s, catalog, key(1, EpisodeStage.qualifying, beta, public[4]), public[4], 1.0, None
            ),
            "scoped": run_episode(
                s, catalog, key(1, EpisodeStage.qualifying, beta, public[5]), public[5], 1.0, "problem"
            ),
            "heldout": run_episode(s, catalog, key(1, EpisodeStage.race, alpha, heldout[0]), heldout[0], 0.9),
        }
        pending = episode_rows.ensure_episode(s, key(3, EpisodeStage.qualifying, alpha, public[3]))
        episodes["pending"] = pending.id
        for cycle, champion, other in ((1, alpha, beta), (2, beta, alpha)):
            for submission, rank in ((champion, 1), (other, 2)):
                standing_rows.record_standing(
                    s,
                    StandingIn(
                        cycle=cycle, submission_id=submission, qualifying_score=0.5 + 0.1 * (rank == 1),
                        race_score=1.0 / rank, success_rate=1.0 / rank, mean_coefficient=0.9, rank=rank,
                        is_champion=submission == champion,
                    ),
                )  # fmt: skip
        standing_rows.record_weights(s, 2, [1, 2], [0.25, 0.75], ok=True, block=7)
    return problems, {"alpha": alpha, "beta": beta}, episodes, heldout


def new(hotkey: str, code: bytes, **fields) -> NewSubmission:
    return NewSubmission(
        hotkey=hotkey, agent_name=f"{hotkey}.py", code=code, ast_hash=hashlib.sha256(code).hexdigest(), **fields
    )


@pytest.fixture(scope="module", params=BACKENDS)
def world(request, tmp_path_factory, catalog, catalog_dir, suite_dir) -> Iterator[World]:
    with migrated(request.param, tmp_path_factory.mktemp("db")) as store:
        problems, submissions, episodes, heldout = build_world(store, catalog, suite_dir)
        settings = app_settings()
        # The test's own catalog, not the default demo/catalog under the working directory: a checkout where
        # `scripts/demo` ran has one, and the API would serve that.
        settings.catalog.path = catalog_dir
        app = create_app(settings, store=store, chain=LocalChain(store.sessions))
        with TestClient(app) as client:
            yield World(store, client, problems, submissions, episodes, heldout)


def get(world: World, path: str, status: int = 200) -> dict:
    response = world.client.get(path)
    assert response.status_code == status, response.text
    return response.json()


# --- leaderboard, cycles, submissions ------------------------------------------------------------


def test_leaderboard_shows_the_latest_ranked_cycle_its_champion_and_weights(world):
    board = get(world, "/v1/leaderboard")
    assert board["cycle"] == 2 and board["stage"] == "done"
    assert [e["submission_id"] for e in board["entries"]] == [world.submissions["beta"], world.submissions["alpha"]]
    assert board["champion"]["submission_id"] == world.submissions["beta"] and board["champion"]["uid"] == 2
    assert board["weights"]["uids"] == [1, 2] and board["weights"]["weights"] == [0.25, 0.75]
    first = get(world, "/v1/leaderboard?cycle=1")
    assert first["champion"]["hotkey"] == "hk-alpha" and first["weights"] is None
    assert get(world, "/v1/leaderboard?cycle=99", 404)["error"] == "not_found"


def test_cycles_list_their_stages_and_withhold_a_running_cycles_details(world):
    cycles = get(world, "/v1/cycles")
    assert [(c["number"], c["stage"], c["finished"]) for c in cycles] == [
        (1, "done", True), (2, "done", True), (3, "race", False)
    ]  # fmt: skip
    done = get(world, "/v1/cycles/1")
    assert [s["stage"] for s in done["stages"]] == ["intake", "qualifying", "race", "done"]
    qualifying = next(s for s in done["stages"] if s["stage"] == "qualifying")
    assert qualifying["detail"]["drawn"] and qualifying["finished_at"] is not None
    assert done["episodes"]["qualifying"]["done"] == 4 and done["episodes"]["race"]["done"] == 2
    assert [s["rank"] for s in done["standings"]] == [1, 2] and done["params"] == {"draw_size": 2}
    running = get(world, "/v1/cycles/3/stages")
    assert all(s["detail"] is None for s in running), "a running cycle's stage details may name its draw"
    assert get(world, "/v1/cycles/3")["episodes"]["qualifying"]["pending"] == 1
    assert get(world, "/v1/cycles/42", 404)["detail"] == "cycle 42 does not exist"


def test_a_submissions_results_are_split_by_intent_without_held_out_or_running_scores(world):
    alpha = world.submissions["alpha"]
    detail = get(world, f"/v1/submissions/{alpha}")
    assert detail["submission"]["hotkey"] == "hk-alpha" and detail["submission"]["uid"] == 1
    assert [s["cycle"] for s in detail["standings"]] == [1, 2] and detail["standings"][0]["is_champion"]
    results = {(r["cycle"], r["stage"]): r for r in detail["results"]}
    qualifying = results[(1, "qualifying")]
    assert {r["intent"]: r["episodes"] for r in qualifying["by_intent"]} == {"product": 1, "shop": 1}
    product = next(r for r in qualifying["by_intent"] if r["intent"] == "product")
    assert product["success_rate"] == 1.0 and product["mean_coefficient"] == 1.0 and product["judged"] == 1
    shop = next(r for r in qualifying["by_intent"] if r["intent"] == "shop")
    assert shop["mean_coefficient"] == 0.5
    assert results[(1, "race")]["total"]["episodes"] == 1, "the held-out episode counts nowhere"
    running = results[(3, "qualifying")]
    assert not running["cycle_finished"] and running["total"]["episodes"] == 2 and running["total"]["unfinished"] == 1
    assert running["total"]["successes"] is None and running["total"]["success_rate"] is None
    page = get(world, "/v1/submissions?hotkey=hk-beta")
    assert page["total"] == 1 and page["items"][0]["id"] == world.submissions["beta"]
    assert get(world, "/v1/submissions/9999", 404)["error"] == "not_found"


# --- redaction -----------------------------------------------------------------------------------


def test_public_and_retired_episodes_are_shown_whole(world):
    for name in ("public", "retired"):
        episode = get(world, f"/v1/episodes/{world.episodes[name]}")
        assert episode["visibility"] == "full" and episode["redaction"] is None
        problem = world.problems[episode["problem_id"]]
        assert episode["problem"]["query"] == problem.query and '"product_id": "1000"' in json.dumps(episode["problem"])
        assert episode["record"]["problem"]["query"] == problem.query and episode["outcome"]["success"] is True
        assert episode["judgments"][0]["explanation"].endswith(problem.query) and episode["coefficient"] is not None


def test_unretired_race_problems_show_scores_but_no_text_or_gold(world):
    episode = get(world, f"/v1/episodes/{world.episodes['unretired']}")
    problem = world.problems[episode["problem_id"]]
    assert episode["visibility"] == "scores" and "not retired" in episode["redaction"]
    assert episode["success"] is True and episode["coefficient"] == 0.7
    assert episode["problem"] is None and episode["record"] is None and episode["outcome"] is None
    assert episode["judgments"][0]["explanation"] is None
    assert problem.query not in json.dumps(episode)


def test_a_record_stored_before_the_knowledge_filter_is_withheld(world):
    """Issue 30 class 4: a public episode's record made when web_search read the whole corpus may quote
    a race-bank or held-out problem's answer page (in its tool results or in the model messages that
    quote them), so it is withheld whole; a record made under the per-problem filter is served."""
    old = get(world, f"/v1/episodes/{world.episodes['pre_filter']}")
    assert old["visibility"] == "full" and old["record"] is None and "predate" in old["redaction"]
    assert FOREIGN_PAGE["content"] not in json.dumps(old)
    page = world.client.get(f"/episodes/{world.episodes['pre_filter']}")
    assert page.status_code == 200 and FOREIGN_PAGE["content"] not in page.text
    scoped = get(world, f"/v1/episodes/{world.episodes['scoped']}")
    assert scoped["redaction"] is None and scoped["record"]["tool_calls"][0]["result"] == [FOREIGN_PAGE]


def test_an_episode_of_a_running_cycle_is_redacted(world):
    episode = get(world, f"/v1/episodes/{world.episodes['running']}")
    assert episode["visibility"] == "status" and "still running" in episode["redaction"]
    assert episode["status"] == "done" and episode["success"] is None and episode["rule"] is None
    assert episode["record"] is None and episode["problem"] is None and episode["judgments"] == []
    listed = get(world, f"/v1/submissions/{world.submissions['alpha']}/episodes?cycle=3")
    assert {e["visibility"] for e in listed["items"]} == {"status"} and listed["total"] == 2


def test_nothing_of_the_held_out_partition_is_ever_served(world):
    assert get(world, f"/v1/episodes/{world.episodes['heldout']}", 404)["error"] == "not_found"
    listed = get(world, f"/v1/submissions/{world.submissions['alpha']}/episodes")
    assert world.episodes["heldout"] not in [e["id"] for e in listed["items"]]
    assert listed["total"] == len(world.episodes) - 1 - 2  # "pre_filter" and "scoped" are beta's
    secrets = [p.query for p in world.heldout] + [p.id for p in world.heldout] + [p.cluster_id for p in world.heldout]
    paths = ["/", "/v1/leaderboard", "/v1/cycles", "/v1/submissions", "/openapi.json", "/metrics"]
    paths += ["/v1/suite", "/v1/suite/qualifying.jsonl"]
    paths += [f"/v1/cycles/{n}" for n in (1, 2, 3)] + [f"/v1/cycles/{n}/stages" for n in (1, 2, 3)]
    for sub in world.submissions.values():
        paths += [f"/v1/submissions/{sub}", f"/v1/submissions/{sub}/episodes"]
    paths += [f"/v1/episodes/{i}" for i in range(1, max(world.episodes.values()) + 2)]
    for path in paths:
        text = world.client.get(path).text
        leaked = [s for s in secrets if s in text]
        assert not leaked, f"{path} served held-out {leaked}"


# --- embargo -------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_embargo_answers_403_with_the_date_then_serves_the_source(backend, tmp_path, suite_dir):
    with migrated(backend, tmp_path) as store:
        now = utcnow()
        code = make_agent(5000)
        with store.transaction() as s:
            suite = suite_rows.import_suite(s, suite_dir[0]).suite_id
            fresh = submission_rows.add_submission(s, new("hk-fresh", b"def agent_main(p):\n    return 1\n")).id
            old = submission_rows.add_submission(s, new("hk-old", code, submitted_at=now - timedelta(days=8))).id
            reigning = submission_rows.add_submission(s, new("hk-champ", b"def agent_main(p):\n    return 3\n")).id
            challenger = submission_rows.add_submission(s, new("hk-next", b"def agent_main(p):\n    return 4\n")).id
            for number, champion in ((1, reigning), (2, challenger)):
                cycle_rows.start_cycle(s, number, suite)
                standing_rows.record_standing(
                    s, StandingIn(cycle=number, submission_id=champion, rank=1, is_champion=True)
                )
            cycle_rows.begin_stage(s, 1, CycleStage.done)
        settings = app_settings(race={"embargo_days_after_submission": 7, "embargo_cycles_after_champion": 1})
        client = TestClient(create_app(settings, store=store, chain=LocalChain(store.sessions)))

        refused = client.get(f"/v1/submissions/{fresh}/source")
        body = refused.json()
        assert refused.status_code == 403 and body["error"] == "embargoed"
        assert abs((_iso(body["embargo_until"]) - (now + timedelta(days=7))).total_seconds()) < 60
        assert body["embargo_until"][:10] in body["detail"]

        served = client.get(f"/v1/submissions/{old}/source")
        assert served.status_code == 200 and served.json()["code"].encode() == code
        assert served.json()["sha256"] == hashlib.sha256(code).hexdigest()

        champion = client.get(f"/v1/submissions/{reigning}/source").json()
        assert champion["until_cycle"] == 3 and "dethroned" in champion["detail"]  # cycle 2 crowned another
        assert client.get(f"/v1/submissions/{challenger}/source").json()["error"] == "embargoed"  # still reigning
        assert client.get(f"/v1/submissions/{reigning}").json()["embargo"]["embargoed"] is True
        with store.transaction() as s:
            cycle_rows.start_cycle(s, 3, suite)
            cycle_rows.begin_stage(s, 2, CycleStage.done)
            cycle_rows.begin_stage(s, 3, CycleStage.done)
        released = client.get(f"/v1/submissions/{reigning}/source")
        assert released.status_code == 200 and released.json()["code"] == "def agent_main(p):\n    return 3\n"
        assert client.get("/v1/submissions/777/source").status_code == 404


def _iso(value: str):
    from datetime import datetime

    return datetime.fromisoformat(value)


# --- schema, health, metrics, HTML ---------------------------------------------------------------


def test_the_openapi_schema_is_complete_and_typed(world):
    spec = get(world, "/openapi.json")
    untyped = {"/": "text/html", "/metrics": "text/plain", "/v1/suite/qualifying.jsonl": "application/x-ndjson"}
    for path, methods in spec["paths"].items():
        for method, operation in methods.items():
            ok = next(code for code in operation["responses"] if code.startswith("2"))
            content = operation["responses"][ok]["content"]
            if path in untyped:
                continue
            schema = content["application/json"]["schema"]
            assert "$ref" in schema or schema.get("type") == "array" and "$ref" in schema["items"], (path, method)
            for code, answer in operation["responses"].items():
                if code.startswith("4") and code != "422" or code == "503":
                    assert answer["content"]["application/json"]["schema"]["$ref"].endswith(("/ErrorBody", "/Health"))
    post = spec["paths"]["/v1/submissions"]["post"]
    assert "text/x-python" in post["requestBody"]["content"]
    assert {"401", "403", "409", "413", "422", "429"} <= set(post["responses"])
    components = spec["components"]["schemas"]
    for name in ("SubmissionAccepted", "EpisodeDetail", "Leaderboard", "CycleDetail", "ErrorBody", "SubmissionDetail"):
        assert all("type" in f or "$ref" in f or "anyOf" in f for f in components[name]["properties"].values()), name


def test_health_reports_the_schema_revision(world, tmp_path):
    health = get(world, "/healthz")
    assert health["status"] == "ok" and health["revision"] == head_revision() and health["up_to_date"]
    assert health["accepting_submissions"] is False  # no validator hotkey configured in this app
    from arena.store import open_store

    empty = open_store(f"sqlite:///{tmp_path / 'empty.db'}")
    try:
        with TestClient(create_app(app_settings(), store=empty, chain=LocalChain(empty.sessions))) as client:
            response = client.get("/healthz")
        assert response.status_code == 503 and response.json()["revision"] is None
        assert client.post("/v1/submissions", content=b"x").json()["error"] == "not_accepting"
    finally:
        empty.dispose()


def test_metrics_count_submissions_by_reason_episodes_by_status_and_latency(tmp_path, suite_dir):
    wallets = ensure_hotkeys(tmp_path / "wallets", "m", ["validator", "miner"])
    with migrated("sqlite", tmp_path) as store:
        chain = LocalChain(store.sessions)
        receiver = hotkey_address(wallets[0])
        chain.register(receiver, validator_permit=True)
        chain.register(hotkey_address(wallets[1]))
        with TestClient(create_app(app_settings(validator_hotkey=receiver), store=store, chain=chain)) as client:
            bad = b"def agent_main(problem):\n    return (\n"
            assert (
                client.post(
                    "/v1/submissions", content=bad, headers=signed_headers(wallets[1], bad, receiver)
                ).status_code
                == 422
            )
            good = make_agent(6000)
            assert (
                client.post(
                    "/v1/submissions", content=good, headers=signed_headers(wallets[1], good, receiver)
                ).status_code
                == 201
            )
            assert client.post("/v1/submissions", content=good).status_code == 401
            client.get("/v1/submissions/1")
            text = client.get("/metrics").text
    assert 'arena_submissions_total{outcome="accepted",reason="accepted"} 1.0' in text
    assert 'arena_submissions_total{outcome="rejected",reason="syntax"} 1.0' in text
    assert 'arena_submissions_total{outcome="rejected",reason="malformed_auth"} 1.0' in text
    assert 'arena_episodes{stage="race",status="pending"} 0.0' in text
    assert (
        'arena_http_request_duration_seconds_count{method="GET",route="/v1/submissions/{submission_id}",status="200"} 1.0'
        in text
    )
    assert 'route="/v1/submissions",status="201"' in text


def test_metrics_count_the_stores_episodes(world):
    text = world.client.get("/metrics").text
    assert 'arena_episodes{stage="race",status="done"} 3.0' in text  # retired, unretired, held-out (counted, not shown)
    assert 'arena_episodes{stage="qualifying",status="pending"} 1.0' in text


def test_the_html_leaderboard_escapes_what_miners_chose(world):
    with world.store.transaction() as s:
        sneaky = submission_rows.add_submission(s, NewSubmission(
            hotkey="hk-sneaky", agent_name="<script>alert(1)</script>.py", code=b"x = 1\n", ast_hash="sneaky"
        )).id  # fmt: skip
    page = world.client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "Cycle 2 (done)" in page.text and "hk-beta" in page.text
    assert '<svg class="icon"' in page.text and "👑" not in page.text  # the crown draws without an emoji font
    assert "<script>alert" not in page.text and "&lt;script&gt;alert(1)&lt;/script&gt;.py" in page.text
    assert f'href="/v1/submissions/{sneaky}"' in page.text  # waiting to race


# --- arena serve ---------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_arena_serve_migrates_the_database_and_serves(tmp_path):
    port = free_port()
    database = tmp_path / "served.db"
    env = {k: v for k, v in os.environ.items() if k != "ARENA_DATABASE_URL"} | {
        "ARENA_API__VALIDATOR_HOTKEY": "5Validator"
    }
    command = [sys.executable, "-c", "import typer; from arena.commands.serve import serve; typer.run(serve)"]
    # --database-url as every other command spells it; the older --host/--port still work, with a note
    flags = ["--database-url", f"sqlite:///{database}", "--host", "127.0.0.1", "--port", str(port)]
    process = subprocess.Popen([*command, *flags], cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                health = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2)
                break
            except httpx.TransportError:
                assert process.poll() is None, process.stderr.read()
                assert time.monotonic() < deadline, "arena serve did not come up"
                time.sleep(0.2)
        assert health.status_code == 200 and health.json()["validator_hotkey"] == "5Validator"
        assert health.json()["revision"] == head_revision() and database.exists()
        assert httpx.get(f"http://127.0.0.1:{port}/v1/leaderboard").json()["cycle"] is None
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=30)
    assert "database sqlite:///" in stderr and "receiver hotkey 5Validator" in stderr
    assert "--host is deprecated; use --api-host" in stderr and "--port is deprecated; use --api-port" in stderr
    assert f"listening on http://127.0.0.1:{port} " in stderr  # the start line says where to point a browser
    assert re.search(r"arena\.api\.access: GET /v1/leaderboard 200 \d+\.\d ms\n", stderr), stderr  # one line a request


def test_arena_serve_on_a_taken_port_says_so_in_one_line_with_the_fix(tmp_path):
    """uvicorn's own answer was `[Errno 98]` in a log line and exit 3; the store is not touched either."""
    from typer.testing import CliRunner

    from arena.cli import app

    database = tmp_path / "never.db"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(app, ["serve", "--api-port", str(port), "--database-url", f"sqlite:///{database}"])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: cannot listen on 127.0.0.1:{port}"), lines
    assert "in use" in lines[0] and "another --api-port" in lines[0] and "stop the process" in lines[0], lines
    assert not database.exists()


@pytest.mark.parametrize(
    ("host", "said"),
    [
        ("192.0.2.1", "192.0.2.1 is not an address of this machine; pass another --api-host"),  # TEST-NET-1
        ("nosuch.invalid", "--api-host 'nosuch.invalid' does not resolve"),
    ],
)
def test_arena_serve_on_an_address_it_cannot_bind_names_the_flag(tmp_path, host, said):
    from typer.testing import CliRunner

    from arena.cli import app

    result = CliRunner().invoke(
        app, ["serve", "--api-host", host, "--api-port", "0", "--database-url", f"sqlite:///{tmp_path / 'x.db'}"]
    )
    assert result.exit_code == 2 and said in result.stderr and len(result.stderr.strip().splitlines()) == 1, (
        result.output
    )


def test_arena_serve_fails_clearly_on_a_bad_database_url(tmp_path, monkeypatch):
    import typer
    from typer.testing import CliRunner

    from arena.commands.serve import serve

    app = typer.Typer()
    app.command()(serve)
    monkeypatch.setenv("ARENA_DATABASE_URL", "mysql://nobody@127.0.0.1/none")
    result = CliRunner().invoke(app, ["--port", "0"])  # any free port: the port is bound before the store opens
    assert result.exit_code == 2 and "unsupported database 'mysql'" in result.output


# --- the public suite ----------------------------------------------------------------------------


def test_the_public_suite_is_served_byte_for_byte_and_nothing_sealed(world, suite_dir, catalog_dir):
    path, _, _ = suite_dir
    info = get(world, "/v1/suite")
    assert info["suite_id"] == "api-v1"
    public = json.loads((path / "public" / "manifest.json").read_text())
    assert info["public"] == public and "seed" not in json.dumps(info["public"])
    assert "secret" not in json.dumps(info)  # the suite's sealed seed (a catalog's build seed is public)
    assert info["catalog"]["manifest"] == json.loads((catalog_dir / "catalog.json").read_text())
    body = world.client.get(info["qualifying_url"])
    assert body.status_code == 200 and body.content == (path / "public" / "qualifying.jsonl").read_bytes()
    assert hashlib.sha256(body.content).hexdigest() == public["qualifying"]["sha256"]
    served = json.dumps(info) + body.text
    sealed = [p for p in world.problems.values() if p.id not in body.text] + world.heldout
    assert sealed and not [p.query for p in sealed if p.query in served]
    assert "how_to_get" in info["catalog"]


def test_arena_suite_fetch_downloads_and_verifies_the_public_suite(world, suite_dir, tmp_path):
    from typer.testing import CliRunner

    from arena.cli import app
    from tests.arena.intake.test_api_submissions import live_server

    path, _, _ = suite_dir
    with live_server(world.client.app) as url:
        result = CliRunner().invoke(app, ["suite", "fetch", "--validator-url", url, "--out", str(tmp_path / "s")])
    assert result.exit_code == 0, result.output
    fetched = tmp_path / "s" / "public" / "qualifying.jsonl"
    assert fetched.read_bytes() == (path / "public" / "qualifying.jsonl").read_bytes()
    assert "run-agent" in result.stderr
    unreachable = CliRunner().invoke(app, ["suite", "fetch", "--validator-url", "http://127.0.0.1:9", "--out", "x"])
    assert unreachable.exit_code == 2 and "cannot reach the validator" in unreachable.stderr


# --- the validator's API and its endpoint ----------------------------------------------------------


def test_validator_run_api_registers_before_it_publishes_and_never_publishes_a_wildcard(suite_dir, tmp_path):
    from arena.commands.validator import start_api
    from arena.race.settings import RaceSettings
    from arena.race.validator_service import Validator

    race = RaceSettings(suite_dir=suite_dir[0], workers=1, validator_hotkey="5ValidatorOfThisTest")
    url = f"sqlite:///{tmp_path / 'validator.db'}"
    servers = []
    try:
        wildcard = Validator(ArenaSettings(), race=race, database_url=url)
        assert wildcard.chain.neurons() == []  # a fresh local chain: the hotkey holds no uid yet
        servers.append(start_api(ArenaSettings(), wildcard, "0.0.0.0", 0))
        assert [n.hotkey for n in wildcard.chain.neurons()] == ["5ValidatorOfThisTest"]  # registered first
        assert wildcard.chain.validator_endpoints() == {}  # 0.0.0.0 is no address a miner can dial
        settings = ArenaSettings(api=ApiSettings(public_url="https://validator.example.org/"))
        public = Validator(settings, race=race, database_url=url)
        servers.append(start_api(settings, public, "0.0.0.0", 0))
        assert public.chain.validator_endpoints() == {"5ValidatorOfThisTest": "https://validator.example.org"}
    finally:
        for server in servers:
            if server is not None:
                server.should_exit = True


def test_validator_run_api_on_a_taken_port_stops_with_the_fix_instead_of_racing_without_its_api(
    suite_dir, tmp_path, capsys
):
    """The API's thread used to log uvicorn's bind error and end, while the race ran on without it."""
    import typer

    from arena.commands.validator import start_api
    from arena.race.settings import RaceSettings
    from arena.race.validator_service import Validator

    race = RaceSettings(suite_dir=suite_dir[0], workers=1, validator_hotkey="5ValidatorOfThisTest")
    validator = Validator(ArenaSettings(), race=race, database_url=f"sqlite:///{tmp_path / 'validator.db'}")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(typer.Exit) as stopped:
            start_api(ArenaSettings(), validator, "127.0.0.1", port)
    assert stopped.value.exit_code == 2
    said = capsys.readouterr().err
    assert f"cannot listen on 127.0.0.1:{port}" in said and "another --api-port" in said, said


# --- bad input: every route, every parameter -------------------------------------------------------

# Values a careless or hostile client sends: out of every column's range, negative, not numbers,
# NUL and control characters, long strings.
EDGE_VALUES = ["99999999999999999999", "2147483647", "2147483648", "9223372036854775807", "9223372036854775808", "-1", "-99999999999999999999",
               "0", "1e309", "nan", "0x10", "", " ", "\x00", "%00", "../../etc/passwd", "1;DROP TABLE x", "x" * 5000]  # fmt: skip
PARAM_VALUES = st.one_of(
    st.sampled_from(EDGE_VALUES),
    st.integers(min_value=-(10**40), max_value=10**40).map(str),
    st.text(st.characters(exclude_categories=("Cs",)), max_size=200),
)


def parametrised_routes(app) -> list[tuple[str, list[str], list[str]]]:
    """(path, path parameters, query parameters) of every GET route that takes any, HTML pages included."""
    from fastapi.routing import APIRoute

    def names(dependant, kind: str) -> list[str]:
        own = [p.alias for p in getattr(dependant, kind)]
        return own + [n for sub in dependant.dependencies for n in names(sub, kind)]

    def flat(routes):  # newer FastAPI wraps an included router instead of copying its routes
        for route in routes:
            inner = getattr(route, "original_router", None)
            yield from flat(inner.routes) if inner is not None else [route]

    routes = []
    for route in flat(app.routes):
        if isinstance(route, APIRoute) and "GET" in route.methods:
            path_params, query_params = names(route.dependant, "path_params"), names(route.dependant, "query_params")
            if path_params or query_params:
                routes.append((route.path, path_params, query_params))
    return routes


def test_every_route_answers_bad_parameters_with_the_documented_error(world):
    app = world.client.app
    routes = parametrised_routes(app)
    assert len(routes) >= 10  # every id, cycle and page parameter of the API is in here
    client = TestClient(app, raise_server_exceptions=False)  # a 500 must show as a status, not an exception

    @settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)
    @given(data=st.data())
    def check(data) -> None:
        path, path_params, query_params = data.draw(st.sampled_from(routes))
        url = path
        for name in path_params:
            url = url.replace(f"{{{name}}}", quote(data.draw(PARAM_VALUES, label=name), safe="") or "0")
        query = {name: data.draw(PARAM_VALUES, label=name) for name in query_params if data.draw(st.booleans())}
        response = client.get(url, params=query)
        assert response.status_code < 500, (url, query, response.text[:300])
        if response.status_code >= 400 and not response.headers["content-type"].startswith("text/html"):
            body = response.json()  # an HTML page answers its own error page
            assert isinstance(body.get("error"), str) and isinstance(body.get("detail"), str), (url, query, body)

    check()
