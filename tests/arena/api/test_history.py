"""The leaderboard over time: every finished cycle's ranked entrants and champion stay findable (``/v1/history``
and the front page), agents in a running cycle are listed, statuses are explained (a raced agent's "retired" is
not an error), and the history is drawn as server-side SVG.

The world, on SQLite and PostgreSQL: five finished cycles and a running sixth.
- cycle 1: alpha ranks first and is crowned; bravo second.
- cycle 2: charlie ranks first, but its lead does not clear the margin: alpha defends.
- cycle 3: halted (a sandbox fault): nobody ranked, nobody crowned.
- cycle 4: delta takes the title; alpha, dethroned, ranks second.
- cycle 5: delta defends; echo does not qualify.
- cycle 6 (running): foxtrot qualifying; golf accepted, waiting; hotel rejected at intake.
"""

from __future__ import annotations

import hashlib
import logging
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from arena.api import create_app
from arena.chain.local import LocalChain
from arena.store import Store
from arena.store import cycles as cycle_rows
from arena.store import standings as standing_rows
from arena.store import submissions as submission_rows
from arena.store import suites as suite_rows
from arena.store.models import SubmissionStatus
from arena.store.models_race import CycleStage
from arena.store.standings import StandingIn
from arena.store.submissions import NewSubmission
from tests.arena.api.test_api import suite_dir  # noqa: F401 (a fixture: a real suite, its draws recorded)
from tests.arena.api.test_dashboard import ARTIFACTS, CHROMIUM, Browser
from tests.arena.intake.test_api_submissions import BACKENDS, app_settings, live_server, migrated

HOSTILE = "<script>alert(1)</script>.py"  # bravo's name: every page and the SVG must escape it
NAMES = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel")


@dataclass
class World:
    store: Store
    client: TestClient
    ids: dict[str, int]


def build(store: Store, suite_path: Path) -> dict[str, int]:
    ids = {}
    with store.transaction() as s:
        suite = suite_rows.import_suite(s, suite_path).suite_id
        for uid, name in enumerate(NAMES, start=1):
            submission_rows.ensure_miner(s, f"hk-{name}", uid)
            code = f"def agent_main(problem):\n    return {uid}\n".encode()
            agent = HOSTILE if name == "bravo" else f"{name}.py"
            new = NewSubmission(hotkey=f"hk-{name}", agent_name=agent, code=code,
                                ast_hash=hashlib.sha256(code).hexdigest())  # fmt: skip
            ids[name] = submission_rows.add_submission(s, new).id
        for number in range(1, 7):
            cycle_rows.start_cycle(s, number, suite, {})

        def stand(cycle: int, name: str, **fields: object) -> None:
            standing_rows.record_standing(s, StandingIn(cycle=cycle, submission_id=ids[name], **fields))

        stand(1, "alpha", qualifying_score=0.7, race_score=0.8, success_rate=0.8, rank=1, is_champion=True)
        stand(1, "bravo", qualifying_score=0.6, race_score=0.5, success_rate=0.5, rank=2)
        stand(2, "charlie", qualifying_score=0.7, race_score=0.75, success_rate=0.75, rank=1)
        stand(2, "alpha", qualifying_score=0.7, race_score=0.7, success_rate=0.7, rank=2, is_champion=True)
        stand(4, "delta", qualifying_score=0.9, race_score=0.9, success_rate=0.9, rank=1, is_champion=True)
        stand(4, "alpha", qualifying_score=0.7, race_score=0.6, success_rate=0.6, rank=2)
        stand(5, "delta", qualifying_score=0.9, race_score=0.85, success_rate=0.85, rank=1, is_champion=True)
        stand(5, "echo", qualifying_score=0.1)
        halt = {"stage": "race", "kind": "sandbox", "reason": "bubblewrap failed", "submissions": [],
                "episodes": 3, "canary_failed": True, "fix": "install bubblewrap"}  # fmt: skip
        cycle_rows.halt_cycle(s, 3, halt)
        for number in range(1, 6):
            cycle_rows.begin_stage(s, number, CycleStage.done)
        standing_rows.record_weights(s, 1, [1, 2], [0.9, 0.1], ok=True, block=10)
        standing_rows.record_weights(s, 4, [1, 4], [0.5, 0.5], ok=False, message="chain busy")
        standing_rows.record_weights(s, 4, [1, 4], [0.2, 0.8], ok=True, block=40)
        for name, status in (("alpha", "retired"), ("bravo", "retired"), ("charlie", "retired"),
                             ("delta", "champion"), ("echo", "retired"), ("foxtrot", "qualifying")):  # fmt: skip
            submission_rows.set_status(s, ids[name], SubmissionStatus(status))
        submission_rows.set_status(s, ids["hotel"], SubmissionStatus.rejected, reason="syntax: line 2")
    return ids


@pytest.fixture(scope="module", params=BACKENDS)
def world(request, tmp_path_factory, suite_dir) -> Iterator[World]:  # noqa: F811 (the imported fixture)
    with migrated(request.param, tmp_path_factory.mktemp("db")) as store:
        ids = build(store, suite_dir[0])
        app = create_app(app_settings(page_size=50), store=store, chain=LocalChain(store.sessions))
        with TestClient(app) as client:
            yield World(store, client, ids)


def test_history_keeps_every_cycles_ranking_and_champion(world):
    ids = world.ids
    answer = world.client.get("/v1/history")
    assert answer.status_code == 200, answer.text
    history = answer.json()
    assert history["current_cycle"] == 6
    assert [c["cycle"] for c in history["cycles"]] == [1, 2, 3, 4, 5]  # the running cycle is no result yet
    first = history["cycles"][0]
    assert first["entries"][0]["submission_id"] == ids["alpha"] and first["entries"][0]["rank"] == 1
    assert first["champion"]["submission_id"] == ids["alpha"] and first["weights"]["uids"] == [1, 2]
    halted = history["cycles"][2]
    assert halted["halt_kind"] == "sandbox" and halted["champion"] is None and halted["entries"] == []
    assert history["cycles"][3]["weights"]["ok"] and history["cycles"][3]["weights"]["weights"] == [0.2, 0.8]
    spells = [(s["submission_id"], s["from_cycle"], s["to_cycle"], s["cycles"], s["reigning"])
              for s in history["champions"]]  # fmt: skip
    assert spells == [(ids["alpha"], 1, 2, 2, False), (ids["delta"], 4, 5, 2, True)]
    agents = {a["submission"]["id"]: a for a in history["agents"]}
    assert [a["submission"]["id"] for a in history["agents"]][:2] == [ids["delta"], ids["alpha"]]  # best first
    alpha = agents[ids["alpha"]]
    assert alpha["cycles_raced"] == [1, 2, 4] and alpha["champion_cycles"] == [1, 2]
    assert alpha["best_race_score"] == 0.8 and alpha["best_cycle"] == 1 and alpha["best_rank"] == 1
    assert agents[ids["echo"]]["cycles_raced"] == [] and agents[ids["echo"]]["best_race_score"] is None
    # a smaller window keeps the all-time record whole
    recent = world.client.get("/v1/history?limit=2").json()
    assert [c["cycle"] for c in recent["cycles"]] == [4, 5]
    assert {a["submission"]["id"] for a in recent["agents"]} == set(agents) and recent["champions"] == spells_json(
        history
    )


def spells_json(history: dict) -> list:
    return history["champions"]


def test_every_status_is_explained_and_a_raced_agent_is_no_error(world):
    ids = world.ids
    history = world.client.get("/v1/history").json()
    notes = {a["submission"]["id"]: a["status_note"] for a in history["agents"]}
    assert "ranked #1 in cycle 2" in notes[ids["charlie"]] and "alpha.py" in notes[ids["charlie"]]
    assert "races in one cycle only" in notes[ids["charlie"]]
    assert "champion in cycles 1–2" in notes[ids["alpha"]] and "dethroned in cycle 4" in notes[ids["alpha"]]
    assert "retired in qualifying (cycle 5)" in notes[ids["echo"]]
    assert "crowned in cycle 4" in notes[ids["delta"]] and "through cycle 5" in notes[ids["delta"]]
    in_cycle = {a["submission"]["id"]: a["status_note"] for a in history["in_cycle"]}
    assert in_cycle == {ids["foxtrot"]: "qualifying in cycle 6: running the public suite"}
    waiting = {a["submission"]["id"]: a["status_note"] for a in history["waiting"]}
    assert set(waiting) == {ids["golf"]} and "next cycle's intake" in waiting[ids["golf"]]
    board = world.client.get("/v1/leaderboard").json()
    assert [s["id"] for s in board["in_cycle"]] == [ids["foxtrot"]] and [s["id"] for s in board["waiting"]] == [
        ids["golf"]
    ]
    detail = world.client.get(f"/v1/submissions/{ids['charlie']}").json()
    assert detail["status_note"] == notes[ids["charlie"]]
    rejected = world.client.get(f"/v1/submissions/{ids['hotel']}").json()
    assert rejected["status_note"] == "rejected at intake: syntax: line 2"
    page = world.client.get(f"/submissions/{ids['charlie']}").text
    badge = re.search(r'<span class="badge ([a-z]+)">retired</span>', page)
    assert badge and badge.group(1) != "bad", "retired is how a raced agent ends, not an error"
    assert "ranked #1 in cycle 2" in page.split('id="status-note"')[1].split("</p>")[0]
    assert '<span class="badge bad">rejected</span>' in world.client.get(f"/submissions/{ids['hotel']}").text


def test_the_front_page_tells_the_story_over_time(world):
    ids = world.ids
    page = world.client.get("/").text.replace("<wbr>", "")  # names wrap at their parts
    all_time = page.split('id="all-time"')[1].split("</table>")[0]
    for name in ("alpha", "charlie", "delta", "echo"):
        assert f'href="/submissions/{ids[name]}">{name}.py</a>' in all_time, name
    history = page.split('id="history"')[1].split("</table>")[0]
    cycle_1 = history.split('href="/cycles/1"')[1]
    assert f'#1\n<a href="/submissions/{ids["alpha"]}">' in cycle_1.split("</tr>")[0]  # cycle 1's winner, 4 cycles on
    assert "halted: sandbox" in history
    champions = page.split('id="champions"')[1].split("</table>")[0]
    assert champions.split("<tbody>")[1].count("<tr>") == 2 and "reigning" in champions
    assert "reigning since cycle\n4 (2 cycles)" in page.split('id="champion"')[1].split("</div>")[0]
    waiting = page.split('id="waiting"')[1].split("</table>")[0]
    assert f'href="/submissions/{ids["foxtrot"]}"' in waiting and "qualifying in cycle 6" in waiting
    assert f'href="/submissions/{ids["golf"]}"' in waiting
    assert f'/submissions/{ids["hotel"]}"' not in waiting  # a rejected submission waits for nothing
    assert 'class="badge bad">retired' not in page  # retired is not drawn in the error colour


def test_the_charts_are_inline_svg_with_each_cycle_and_champion(world):
    ids = world.ids
    page = world.client.get("/").text
    scores = page.split('id="score-chart"')[1].split("</figure>")[0]
    assert "<svg" in scores and "<script" not in page and "http://" not in scores and "https://" not in scores
    titles = re.findall(r"<title>([^<]*)</title>", scores)
    assert f"cycle 1: champion alpha.py #{ids['alpha']}, race score 0.800" in titles
    assert f"cycle 2: charlie.py #{ids['charlie']}, rank 1, race score 0.750" in titles
    assert "cycle 3: halted (sandbox)" in titles
    assert f"cycle 4: champion delta.py #{ids['delta']}" in titles
    assert scores.count("<circle") == 7  # every ranked row of cycles 1-5 (echo never raced)
    assert scores.count("<polyline") == 2  # alpha's reign and delta's, each joined
    weights = page.split('id="weights-chart"')[1].split("</figure>")[0]
    assert "cycle 4: uid 4 (delta.py) 80.0%" in re.findall(r"<title>([^<]*)</title>", weights)
    assert weights.count("<rect") == 4  # cycle 1: two uids; cycle 4: two uids (the failed attempt not drawn)


def test_agent_names_are_escaped_in_the_history_and_its_pictures(world):
    page = world.client.get("/").text.replace("<wbr>", "")
    assert "<script>alert" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.split('id="score-chart"')[1].split("</figure>")[0]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.split('id="all-time"')[1]


# Monotonic in the store (rows only ever added, a done episode immutable): rate() must work on them.
COUNTERS = {"arena_submissions", "arena_episodes_started", "arena_weights_set", "arena_cycles_halted",
            "arena_episodes_finished", "arena_tool_calls", "arena_inference_calls", "arena_inference_tokens"}  # fmt: skip


def test_metrics_expose_counters_as_counters_and_the_race_state_as_gauges(world):
    from prometheus_client.parser import text_string_to_metric_families

    before = time.time()
    families = {f.name: f for f in text_string_to_metric_families(world.client.get("/metrics").text)}
    for family in families.values():
        if family.type == "counter":
            assert all(s.name.endswith(("_total", "_created")) for s in family.samples), family.name
        else:
            assert not any(s.name.endswith("_total") for s in family.samples), f"{family.name} is a {family.type}"
    for name in COUNTERS:
        assert families[name].type == "counter", (name, families[name].type)

    def value(name: str, **labels: str) -> float:
        family = families[name.removesuffix("_total")]  # a counter's family is named without it
        found = [s.value for s in family.samples if s.labels == labels and s.name == name]
        assert len(found) == 1, (name, labels, family.samples)
        return found[0]

    assert value("arena_weights_set_total", result="ok") == 2 and value("arena_weights_set_total", result="failed") == 1
    assert value("arena_cycles_halted_total", kind="sandbox") == 1
    assert families["arena_current_cycle"].type == "gauge" and value("arena_current_cycle") == 6
    assert value("arena_current_cycle_stage", stage="intake") == 1  # cycle 6 was started, nothing more
    assert value("arena_champion_submission", hotkey="hk-delta", uid="4") == world.ids["delta"]
    assert value("arena_champion_cycle") == 5 and value("arena_champion_race_score") == 0.85
    # the last successful weights: cycle 4's second attempt (the first failed)
    assert value("arena_weights_last_sent_cycle") == 4
    assert value("arena_weights_last_sent", uid="4") == 0.8 and value("arena_weights_last_sent", uid="1") == 0.2
    assert value("arena_weights_last_attempt_ok") == 1
    sent = value("arena_weights_last_sent_timestamp_seconds")
    with world.store.transaction() as s:
        stored = standing_rows.latest_weights(s, ok=True)
    assert stored is not None and stored.block == 40
    assert abs(sent - stored.sent_at.replace(tzinfo=stored.sent_at.tzinfo or UTC).timestamp()) < 1e-3
    age = value("arena_weights_last_sent_age_seconds")
    assert before - sent - 1 <= age <= time.time() - sent + 1


def test_each_request_is_one_access_line_with_its_duration_unless_turned_off(world, caplog):
    with caplog.at_level(logging.INFO, logger="arena.api.access"):
        world.client.get("/v1/history")
        world.client.get("/v1/cycles/999")
        world.client.get("/no/such%0Apath")  # decoded: a newline in the path
    lines = [r for r in caplog.records if r.name == "arena.api.access"]
    assert [r.getMessage().split(" ")[:3] for r in lines] == [
        ["GET", "/v1/history", "200"], ["GET", "/v1/cycles/999", "404"], ["GET", "/no/such\\npath", "404"],
    ]  # fmt: skip
    assert all(re.fullmatch(r"GET \S+ \d{3} \d+\.\d ms", r.getMessage()) for r in lines), lines
    assert lines[0].http["status"] == 200 and lines[0].http["ms"] >= 0  # the JSON log format's fields
    caplog.clear()
    quiet = create_app(app_settings(access_log=False), store=world.store, chain=LocalChain(world.store.sessions))
    with caplog.at_level(logging.INFO, logger="arena.api.access"), TestClient(quiet) as client:
        assert client.get("/v1/history").status_code == 200
    assert not [r for r in caplog.records if r.name == "arena.api.access"]


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (scripts/test installs it)")
def test_the_history_fits_a_phone_and_a_laptop_in_chromium(world, tmp_path):
    if world.store.engine.dialect.name != "sqlite":
        pytest.skip("the page is the same on either store: drawn once")
    app = create_app(app_settings(access_log=False), store=world.store, chain=LocalChain(world.store.sessions))
    with live_server(app) as base:
        browser = Browser(base, tmp_path)
        dom = browser.dom("/", screenshot="history")
        browser._run("/", "--window-size=1280,3200", f"--screenshot={ARTIFACTS / 'history-full.png'}")  # all of it
        for width in (390, 1280):
            measured = browser.layout("/", width, "history")
            assert measured["width"] <= width and measured["page"] <= measured["width"], (width, measured)
            assert not measured["spill"], (width, measured["spill"])
    assert dom.count("<circle") == 7 and 'id="all-time"' in dom and "<script" not in dom


def test_the_pages_all_time_table_keeps_the_best_and_links_the_rest(world, monkeypatch):
    from arena.api import dashboard

    monkeypatch.setattr(dashboard, "ALL_TIME_ROWS", 2)
    page = world.client.get("/").text.replace("<wbr>", "")
    table = page.split('id="all-time"')[1].split("</table>")[0]
    assert "The best 2 of the\n5 agents" in page and 'href="/v1/history">all of them' in page
    assert table.count('<a href="/submissions/') == 2 and "delta.py" in table and "alpha.py" in table  # the best two
    assert len(world.client.get("/v1/history").json()["agents"]) == 5
