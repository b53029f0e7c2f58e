"""The dashboard in a real browser: `arena demo` populates a SQLite store once, `arena serve` serves it on
loopback, and headless Chromium (Debian's `chromium`) loads every page; the tests read the rendered DOM and
save screenshots under test-artifacts/dashboard/."""

from __future__ import annotations

import html as html_lib
import json
import os
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

REPO = Path(__file__).resolve().parents[3]
ARENA = str(Path(sys.executable).with_name("arena"))
ARTIFACTS = REPO / "test-artifacts" / "dashboard"
CHROMIUM = shutil.which("chromium")

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is not installed (scripts/test installs it)"
)


class Browser:
    """Headless Chromium driven through its command line: a fresh profile per page, no network beyond loopback."""

    def __init__(self, base: str, profiles: Path) -> None:
        self.base = base
        self.profiles = profiles
        self.runs = 0

    def _run(self, path: str, *flags: str) -> str:
        self.runs += 1
        profile = self.profiles / f"profile-{self.runs}"
        command = [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile}",
            "--window-size=1366,900",
            *flags,
            self.base + path,
        ]
        done = subprocess.run(command, capture_output=True, text=True, timeout=90)
        assert done.returncode == 0, f"chromium failed on {path}: {done.stderr[-2000:]}"
        return done.stdout

    def dom(self, path: str, screenshot: str | None = None) -> str:
        """The page's DOM after it rendered; with ``screenshot`` also a PNG of the laptop-sized viewport."""
        if screenshot:
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            shot = ARTIFACTS / f"{screenshot}.png"
            shot.unlink(missing_ok=True)
            self._run(path, f"--screenshot={shot}")
            assert shot.is_file() and shot.stat().st_size > 5_000, f"no screenshot of {path}"
        return self._run(path, "--dump-dom")

    def layout(self, path: str, width: int, screenshot: str) -> dict:
        """The page rendered in a frame ``width`` px wide (headless windows have a minimum width), measured by a
        script the test adds to a copy of the served HTML (the page has no script and inline CSS only, so the copy
        renders as the page does); the frame's report is copied to the outer page's DOM. Plus a screenshot."""
        html = httpx.get(self.base + path, timeout=30).text
        assert "</body>" in html
        self.runs += 1
        frame = html_lib.escape(html.replace("</body>", MEASURE + "</body>"), quote=True)
        copy = self.profiles / f"layout-{self.runs}.html"
        copy.write_text(
            f'<!doctype html><html><body style="margin:0"><iframe style="border:0;width:{width}px;height:900px" '
            "onload=\"document.body.setAttribute('data-layout',this.contentDocument.body.getAttribute('data-layout'))\" "
            f'srcdoc="{frame}"></iframe></body></html>'
        )
        size = f"--window-size={width + 40},920"
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shot = ARTIFACTS / f"{screenshot}-{width}.png"
        shot.unlink(missing_ok=True)
        dom = self._file(copy, size, f"--screenshot={shot}", "--dump-dom")  # one run: the DOM and the picture
        assert shot.is_file() and shot.stat().st_size > 5_000, f"no screenshot of {path} at {width} px"
        found = re.search(r'<body[^>]*data-layout="([^"]*)"', dom)
        assert found, f"the measuring script did not run on {path}"
        return json.loads(html_lib.unescape(found.group(1)))

    def _file(self, copy: Path, *flags: str) -> str:
        base, self.base = self.base, ""
        try:
            return self._run(copy.as_uri(), *flags)
        finally:
            self.base = base


# Widths and boxes that spill past the viewport; a box inside a .scroll container scrolls there, not the page.
MEASURE = """<script>(function(){var w=document.documentElement.clientWidth,spill=[];
document.querySelectorAll("body *").forEach(function(e){var r=e.getBoundingClientRect();
if(r.right>w+1&&!(e.parentElement&&e.parentElement.closest(".scroll")))spill.push(e.tagName+"#"+e.id+"."+e.className)});
function box(sel){var e=document.querySelector(sel);if(!e)return null;var r=e.getBoundingClientRect();
return {left:r.left,right:r.right,scroll:e.scrollWidth,client:e.clientWidth}}
document.body.setAttribute("data-layout",JSON.stringify({width:w,page:document.documentElement.scrollWidth,
spill:spill.slice(0,20),header:box("body > header"),standings:box("#standings"),hotkey:box("#hotkey")}))})();</script>"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def served(demo_world, tmp_path_factory):
    """The session's demo race (a SQLite file, tests/conftest.py), served by `arena serve` on a loopback port."""
    root = demo_world
    database = root / "arena.db"
    env = os.environ | {"ARENA_DATABASE_URL": f"sqlite:///{database}", "ARENA_API__VALIDATOR_HOTKEY": "5Validator"}
    port = free_port()
    server = subprocess.Popen(
        [ARENA, "serve", "--api-host", "127.0.0.1", "--api-port", str(port)],
        cwd=root,
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(base + "/healthz", timeout=2)
                break
            except httpx.TransportError:
                assert server.poll() is None, server.stderr.read()
                assert time.monotonic() < deadline, "arena serve did not come up"
                time.sleep(0.2)
        yield {"base": base, "database": database, "browser": Browser(base, tmp_path_factory.mktemp("browser"))}
    finally:
        server.terminate()
        server.communicate(timeout=30)


def api(served, path: str):
    answer = httpx.get(served["base"] + path, timeout=30)
    assert answer.status_code == 200, (path, answer.text)
    return answer.json()


def rows(database: Path, sql: str, *args) -> list[tuple]:
    with sqlite3.connect(database) as db:
        return db.execute(sql, args).fetchall()


def test_leaderboard_shows_the_champion_and_success_apart_from_the_coefficient(served):
    board = api(served, "/v1/leaderboard")
    dom = served["browser"].dom("/", screenshot="leaderboard")
    assert board["champion"] is not None and board["entries"], "the demo ranks a cycle and crowns a champion"
    assert "<h1>Leaderboard</h1>" in dom
    champion = dom.split('id="champion"')[1].split("</div>")[0]
    assert board["champion"]["agent_name"] in champion
    assert f'href="/cycles/{board["cycle"]}"' in dom and f"Cycle {board['cycle']} (done)" in dom
    standings = dom.split('id="standings"')[1].split("</table>")[0].replace("<wbr>", "")  # names wrap at their parts
    for entry in board["entries"]:
        assert f'href="/submissions/{entry["submission_id"]}">{entry["agent_name"]}</a>' in standings
        if entry["success_rate"] is not None:
            assert f"{100 * entry['success_rate']:.1f}%" in standings
        if entry["mean_coefficient"] is not None:
            assert f"{entry['mean_coefficient']:.3f}" in standings
    assert "success" in standings and "judge coefficient" in standings
    if board["weights"]:
        assert 'id="weights"' in dom and f"uid {board['weights']['uids'][0]}" in dom


def test_cycle_page_shows_stages_and_progress(served):
    cycle = api(served, "/v1/cycles/1")
    dom = served["browser"].dom("/cycles/1", screenshot="cycle")
    stages = dom.split('id="stages"')[1].split("</table>")[0]
    for stage in cycle["stages"]:
        assert f"<td>{stage['stage']}</td>" in stages
    progress = dom.split('id="progress"')[1].split("</table>")[0]
    for stage, counts in cycle["episodes"].items():
        total = sum(counts.values())
        if total:
            finished = counts.get("done", 0) + counts.get("failed", 0)
            assert f"<td>{stage}</td>" in progress and f"{finished} / {total}" in progress
    assert "/cycles/999" not in dom
    missing = served["browser"].dom("/cycles/999")
    assert 'id="error"' in missing and "cycle 999 does not exist" in missing


def test_submission_page_shows_results_per_intent_and_keeps_the_source_embargoed(served):
    detail = api(served, "/v1/submissions/1")
    dom = served["browser"].dom("/submissions/1", screenshot="submission")
    assert detail["submission"]["agent_name"] in dom and detail["submission"]["hotkey"] in dom
    results = dom.split("Results per intent")[1].split("<h2>")[0]
    for stage in detail["results"]:
        for intent in stage["by_intent"]:
            assert f"<td>{intent['intent']}</td>" in results
    assert detail["embargo"]["embargoed"], "a fresh demo submission is embargoed"
    assert "source embargoed" in dom and 'id="source-embargoed"' in dom and 'id="source"' not in dom
    code = rows(served["database"], "select code from submissions where id = 1")
    marker = next(line for line in bytes(code[0][0]).decode().splitlines() if line.startswith("def "))
    assert marker not in dom  # not a line of the agent leaks while embargoed
    episodes = api(served, "/v1/submissions/1/episodes")["items"]
    for episode in episodes:
        assert f'href="/episodes/{episode["id"]}"' in dom


def public_episode(database: Path) -> int:
    found = rows(
        database,
        "select e.id from episodes e join problems p on p.suite_id = e.suite_id and p.problem_id = e.problem_id "
        "where p.partition = 'public' and e.status = 'done' and e.record is not null order by e.id limit 1",
    )
    assert found, "the demo qualifies on the public suite"
    return found[0][0]


def test_episode_viewer_shows_the_trajectory_step_by_step(served):
    episode_id = public_episode(served["database"])
    detail = api(served, f"/v1/episodes/{episode_id}")
    record = detail["record"]
    dom = served["browser"].dom(f"/episodes/{episode_id}", screenshot="episode")
    assert 'id="redaction"' not in dom
    assert detail["problem"]["query"].replace("'", "&#39;") in dom or detail["problem"]["query"] in dom
    trajectory = dom.split('id="trajectory"')[1]
    assert trajectory.count('class="step llm') == len(record["llm_calls"])
    assert trajectory.count('class="step tool') == len(record["tool_calls"])
    for call in record["tool_calls"]:
        assert f"tool {call['name']}" in trajectory
    reasoning = next(c["response"]["reasoning_content"] for c in record["llm_calls"] if c["response"])
    assert reasoning.split("'")[0] in trajectory
    prompt = sum(c["usage"]["prompt_tokens"] for c in record["llm_calls"])
    assert f"{prompt} prompt" in dom.split('id="tokens"')[1]
    answer = dom.split('id="answer"')[1].split("</table>")[0]
    for position in detail["outcome"]["details"]:
        assert position["gold_product_id"] in answer
    for recommended in record["final_recommendation"] or []:
        assert recommended in answer
    judgment = detail["judgments"][-1]
    assert judgment["explanation"].split("(")[0].strip() in dom
    verdict = rows(served["database"], "select destination from export_verdicts where episode_id = ?", str(episode_id))
    assert verdict, "the demo exports its corpus from the store"
    assert f"put it in\n<b>{verdict[-1][0]}</b>" in dom or f"<b>{verdict[-1][0]}</b>" in dom.split('id="verdict"')[1]


def hidden_episode(database: Path) -> tuple[int, dict]:
    """An episode (cycle finished) on a race-bank problem no draw has retired: stored as the race stores one,
    with the problem and its gold inside the record, so the page has something it must withhold. (The demo's
    own race episodes are on clusters the ledger retired after the race: those are public by the rule.)"""
    with sqlite3.connect(database) as db:
        suite_id, problem_id, row = db.execute(
            "select suite_id, problem_id, row from problems where partition = 'race_bank' "
            "and problem_id not in (select problem_id from episodes) order by problem_id limit 1"
        ).fetchone()
        template = db.execute(
            "select cycle, submission_id, record, outcome, created_at, finished_at from episodes "
            "where stage = 'race' and status = 'done' order by id limit 1"
        ).fetchone()
        row = json.loads(row)
        record = json.loads(template[2])
        record["problem"] = {"id": problem_id, "intent": row["intent"], "query": row["query"], "row": row}
        cursor = db.execute(
            "insert into episodes (cycle, stage, submission_id, suite_id, problem_id, attempt, status, claims, "
            "record, outcome, success, rule, created_at, finished_at) "
            "values (?, 'race', ?, ?, ?, 0, 'done', 1, ?, ?, 0, 0.0, ?, ?)",
            (template[0], template[1], suite_id, problem_id, json.dumps(record), template[3], *template[4:]),
        )
        return cursor.lastrowid, row


def test_episode_viewer_redacts_a_hidden_race_problem(served):
    episode_id, row = hidden_episode(served["database"])
    assert api(served, f"/v1/episodes/{episode_id}")["visibility"] == "scores"
    dom = served["browser"].dom(f"/episodes/{episode_id}", screenshot="episode-redacted")
    assert 'id="redaction"' in dom and "hidden race_bank partition" in dom
    assert row["query"][:40] not in dom
    golds = row["reward"] if isinstance(row["reward"], list) else [row["reward"]]
    for gold in golds:
        assert gold["product_id"] not in dom  # neither the gold answer nor the trajectory that would name it
    assert 'id="trajectory"' not in dom and 'id="answer"' not in dom and 'id="verdict"' not in dom
    assert "rule score" in dom  # scores of a finished cycle stay visible
    unknown = served["browser"].dom("/episodes/987654")
    assert "episode 987654 does not exist" in unknown


def test_pages_escape_what_miners_chose_and_release_source_after_the_embargo(served):
    database = served["database"]
    # an old submission with a hostile name: its embargo (days after submission) ran out long ago
    with sqlite3.connect(database) as db:
        hotkey = db.execute("select hotkey from submissions where id = 2").fetchone()[0]
        db.execute(
            "update submissions set agent_name = ?, submitted_at = ?, embargo_until = NULL where id = 2",
            ("<script>alert(1)</script>.py", "2020-01-01 00:00:00.000000"),
        )
    champion = api(served, "/v1/leaderboard")["champion"]["submission_id"]
    if champion == 2:
        pytest.skip("submission 2 reigns: its embargo is the champion's rule, not the days rule")
    detail = api(served, "/v1/submissions/2")
    assert not detail["embargo"]["embargoed"], detail["embargo"]
    dom = served["browser"].dom("/submissions/2", screenshot="submission-released")
    assert "<script>alert" not in dom and "&lt;script&gt;alert(1)&lt;/script&gt;.py" in dom
    assert "source released" in dom and hotkey in dom
    code = bytes(rows(database, "select code from submissions where id = 2")[0][0]).decode()
    source = dom.split('id="source"')[1].split("</pre>")[0]
    first = next(line for line in code.splitlines() if line.startswith("def "))
    assert first.replace(">", "&gt;").replace("<", "&lt;") in source


def scrape(served) -> dict[str, float]:
    text = httpx.get(served["base"] + "/metrics", timeout=30).text
    return {
        name: float(value)
        for name, value in (line.rsplit(" ", 1) for line in text.splitlines() if line and not line.startswith("#"))
    }


def test_metrics_cover_episodes_tools_tokens_judge_queue_and_weights(served):
    database = served["database"]
    records = [json.loads(r[0]) for r in rows(database, "select record from episodes where status = 'done'")]
    first, second = scrape(served), scrape(served)
    moving = ("http_request", "_age_seconds")  # this scrape's own requests; the clock (the last weights' age)
    stable = {k: v for k, v in first.items() if not any(m in k for m in moving)}
    assert stable == {k: v for k, v in second.items() if not any(m in k for m in moving)}  # no record counted twice
    assert second["arena_current_cycle"] == rows(database, "select max(number) from cycles")[0][0]
    sent = rows(database, "select cycle from weights_sent where ok order by id desc limit 1")
    if sent:
        assert second["arena_weights_last_sent_cycle"] == sent[0][0]
        assert second["arena_weights_last_sent_age_seconds"] >= 0
    terminations = {}
    for record in records:
        terminations[record["termination"]] = terminations.get(record["termination"], 0) + 1
    for termination, n in terminations.items():
        assert second[f'arena_episodes_finished_total{{termination="{termination}"}}'] == n
    assert second["arena_episode_duration_seconds_count"] == len(records)
    tools = {}
    for record in records:
        for call in record["tool_calls"]:
            key = f'arena_tool_calls_total{{result="{"ok" if call["ok"] else "error"}",tool="{call["name"]}"}}'
            tools[key] = tools.get(key, 0) + 1
    assert tools and all(second[key] == n for key, n in tools.items())
    calls = [call for record in records for call in record["llm_calls"]]
    assert second['arena_inference_tokens_total{kind="prompt"}'] == sum(c["usage"]["prompt_tokens"] for c in calls)
    assert second['arena_inference_tokens_total{kind="completion"}'] == sum(
        c["usage"]["completion_tokens"] for c in calls
    )
    assert second["arena_inference_latency_seconds_count"] == len(calls)
    judged = dict(rows(database, "select status, count(*) from judgments group by status"))
    assert second['arena_judgments{status="done"}'] == judged.get("done", 0) > 0
    assert second['arena_judgments{status="failed"}'] == judged.get("failed", 0)
    pending = rows(database, "select count(*) from episodes where status = 'pending' and stage = 'race'")[0][0]
    assert second['arena_queue_depth{stage="race"}'] == pending
    assert (
        second['arena_weights_set_total{result="ok"}']
        == rows(database, "select count(*) from weights_sent where ok")[0][0]
    )
    for status, n in rows(database, "select status, count(*) from submissions group by status"):
        assert second[f'arena_submissions_by_status{{status="{status}"}}'] == n


def running_cycle_with_standings(database: Path) -> int:
    """A cycle still racing, with the qualifying standings a running cycle already holds."""
    with sqlite3.connect(database) as db:
        number, suite_id, started = db.execute(
            "select number + 1, suite_id, started_at from cycles order by number desc limit 1"
        ).fetchone()
        db.execute(
            "insert into cycles (number, suite_id, stage, started_at, params) values (?, ?, 'race', ?, '{}')",
            (number, suite_id, started),
        )
        db.execute(
            "insert into standings (cycle, submission_id, qualifying_score, is_champion) values (?, 1, 0.5, 0)",
            (number,),
        )
    return number


def crashed_episode(database: Path) -> int:
    """A finished episode whose agent crashed: its record is stored (status done), its termination says crash."""
    with sqlite3.connect(database) as db:
        template = db.execute(
            "select cycle, stage, submission_id, suite_id, problem_id, record, created_at, finished_at from episodes "
            "where stage = 'qualifying' and status = 'done' and submission_id = 1 order by id limit 1"
        ).fetchone()
        record = json.loads(template[5]) | {"termination": "crash", "error": "ZeroDivisionError: division by zero"}
        cursor = db.execute(
            "insert into episodes (cycle, stage, submission_id, suite_id, problem_id, attempt, status, claims, "
            "record, success, rule, created_at, finished_at) values (?, ?, ?, ?, ?, 1, 'done', 1, ?, 0, 0.0, ?, ?)",
            (*template[:5], json.dumps(record), *template[6:]),
        )
        return cursor.lastrowid


def test_pages_fit_a_phone_and_a_laptop_and_say_what_users_misread(served):
    database, browser = served["database"], served["browser"]
    ranked = api(served, "/v1/leaderboard")["cycle"]
    running = running_cycle_with_standings(database)
    crashed = crashed_episode(database)
    board = api(served, "/v1/leaderboard")
    assert board["cycle"] == ranked != running  # the running cycle's qualifying standings are no ranking
    dom = browser.dom("/")
    ranked_panel = dom.split('id="ranked-cycle"')[1].split("</div>")[0]
    assert f"Cycle {ranked} (done)" in ranked_panel and f"/cycles/{running}" not in ranked_panel
    assert f'href="/cycles/{running}"' in dom.split('id="current-cycle"')[1].split("</div>")[0]
    assert "\U0001f451" not in dom and "<svg" in dom.split('id="standings"')[1]  # the crown draws without a font

    summary = next(e for e in api(served, "/v1/submissions/1/episodes?limit=500")["items"] if e["id"] == crashed)
    assert summary["status"] == "done" and summary["termination"] == "crash"
    assert api(served, f"/v1/episodes/{crashed}")["termination"] == "crash"
    page = browser.dom("/submissions/1")
    episodes = page.split('id="episodes"')[1].split("</table>")[0]
    assert "<th>termination</th>" in episodes
    row = episodes.split(f'href="/episodes/{crashed}"')[1].split("</tr>")[0]
    assert ">crash</td>" in row
    dated = next(
        e["submission_id"]
        for e in board["entries"]
        if (embargo := api(served, f"/v1/submissions/{e['submission_id']}")["embargo"])["embargoed"]
        and embargo["until"]
    )  # embargoed by the days rule: the one text that carries a date
    embargo = browser.dom(f"/submissions/{dated}").split('id="source-embargoed"')[1].split("</p>")[0]
    assert not re.search(r"\d{2}:\d{2}:\d{2}\.\d+", embargo), embargo  # no raw ISO microseconds
    assert len(re.findall(r"\d{4}-\d{2}-\d{2}", embargo)) == 1, embargo  # the date said once
    hotkey = api(served, "/v1/submissions/1")["submission"]["hotkey"]
    assert f'title="{hotkey}"' in page.split('id="hotkey"')[1].split("</div>")[0]

    for width in (390, 1280):
        for path, name in (("/", "leaderboard"), ("/cycles", "cycles"), (f"/cycles/{ranked}", "cycle"),
                           ("/submissions/1", "submission"), (f"/episodes/{public_episode(database)}", "episode")):  # fmt: skip
            measured = browser.layout(path, width, name)
            assert measured["width"] <= width and measured["page"] <= measured["width"], (path, width, measured)
            assert not measured["spill"], (path, width, measured["spill"])
            header = measured["header"]
            assert header["scroll"] <= header["client"], (path, width, header)
            if measured["standings"]:
                assert measured["standings"]["right"] <= measured["width"], (path, width, measured["standings"])
            if measured["hotkey"]:
                assert measured["hotkey"]["right"] <= measured["width"], (path, width, measured["hotkey"])
