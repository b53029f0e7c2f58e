"""The guides run as written: each role's pages, block by block, in a fresh checkout, in the guides' order.

The blocks come from tests/support/guide_blocks.py (the markers `background`, `skip`, `synopsis` are explained
there). A terminal here is what a new user has: a fresh folder laid out like a clone (the checkout's
tracked files, `../shared` beside it), `arena` on the PATH, none of this machine's ARENA_* settings, and
the exports and `cd` of one block still in force in the next. The only changes to what the guides say
are the substitutions each role declares (a throwaway database for the guides' PostgreSQL URL, free
ports for the documented ones); each must apply, so a guide that changes its URL fails here.

- operator: docs/operator-guide.md's local rehearsal on PostgreSQL, two `arena worker` processes and
  `arena serve` in the background, one full cycle ending in weights on the local chain;
- miner: against that validator, docs/miner-guide*.md: fetch the public suite, write and run an agent,
  register on the local chain, submit, then the operator's next cycle races it;
- researcher: from the demo's store (the shared `demo_world`), docs/researcher-guide.md and
  docs/training.md: export in jsonl, parquet and hf, load each with `datasets`, the shipped tiny recipe to
  its report.md, and the held-out evaluation of its checkpoint.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from arena.runner.sandbox import bubblewrap_path
from tests.support.guide_blocks import REPO, Block, all_shell_blocks, page_blocks

pytestmark = pytest.mark.skipif(bubblewrap_path() is None, reason="the guides' agents run in bubblewrap")

BIN = Path(sys.executable).parent
OPERATOR = ["docs/operator-guide.md"]
MINER = ["docs/miner-guide.md", "docs/miner-guide-agents.md", "docs/miner-guide-submit.md"]
RESEARCHER = ["docs/researcher-guide.md", "docs/training.md"]
ROLES = {"operator": OPERATOR, "miner": MINER, "researcher": RESEARCHER}
GUIDE_DATABASE = "postgresql://arena:rehearsal@127.0.0.1:5432/arena"  # what the operator and miner guides name
GUIDE_SUBMISSION = 3  # the id docs/miner-guide-submit.md shows: the miner's, after the operator's two
READY_S = 300  # a hang guard only: readiness is a server answering, never an elapsed time


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def fresh_checkout(folder: Path) -> Path:
    """``folder/checkout``: the checkout's tracked top-level entries (linked, not copied) and nothing it
    built, with ``folder/shared`` as its ``../shared``."""
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    root = folder / "checkout"
    root.mkdir()
    for name in sorted({line.split("/")[0] for line in tracked.splitlines()}):
        (root / name).symlink_to(REPO / name)
    (folder / "shared").symlink_to(REPO.parent / "shared")
    return root


class Terminal:
    """One user's shell: blocks run in order, each with the exports and working folder the last one left."""

    def __init__(self, root: Path, substitutions: dict[str, str] | None = None, name: str = "terminal"):
        self.root = root
        self.state = root.parent / f"{name}.env"  # one per user: two may share a checkout
        self.substitutions = substitutions or {}
        self.applied: set[str] = set()
        self.outputs: list[tuple[Block, str]] = []  # each block run, with what it printed (stdout and stderr)
        self.background: list[tuple[Block, subprocess.Popen, Path]] = []
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
        self.env |= {"PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "COLUMNS": "200"}
        self.state.write_text(f"cd {root}\n")

    def _text(self, text: str) -> str:
        for documented, here in self.substitutions.items():
            if documented in text:
                self.applied.add(documented)
                text = text.replace(documented, here)
        return text

    def _script(self, block: Block, save: bool) -> Path:
        body = self._text(block.text)
        if block.lang == "python":
            source = self.root.parent / f"block-{block.line}.py"
            source.write_text(body)
            body = f"python {source}\n"
        script = self.root.parent / f"block-{Path(block.page).stem}-{block.line}.sh"
        lines = ["set -e -o pipefail", f"source {self.state}", body]
        if save:  # what the next block starts from: this one's exports and folder
            lines.append(
                f'{{ export -p; printf "cd %q\\n" "$PWD"; }} > {self.state}.new && mv {self.state}.new {self.state}'
            )
        script.write_text("\n".join(lines) + "\n")
        return script

    def run(self, block: Block) -> str:
        log = self.root.parent / f"block-{Path(block.page).stem}-{block.line}.log"
        with log.open("w") as handle:
            done = subprocess.run(["bash", str(self._script(block, save=True))], env=self.env, stdout=handle,
                                  stderr=subprocess.STDOUT, timeout=1200)  # fmt: skip
        output = log.read_text()
        if done.returncode != 0:
            pytest.fail(f"{block.where} failed (exit {done.returncode}):\n{block.text}\n--- output:\n{output[-4000:]}")
        self.outputs.append((block, output))
        return output

    def start(self, block: Block) -> None:
        log = self.root.parent / f"background-{Path(block.page).stem}-{block.line}.log"
        process = subprocess.Popen(["bash", str(self._script(block, save=False))], env=self.env,
                                   stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
        self.background.append((block, process, log))
        url = self._text(block.note)
        if not url:
            return
        deadline = time.monotonic() + READY_S
        while True:
            try:
                httpx.get(url, timeout=5)
                return
            except httpx.TransportError:
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"{block.where}: {url} never answered:\n{block.text}\n{log.read_text()[-3000:]}")
                time.sleep(0.2)

    def follow(self, pages: list[str]) -> None:
        """Every block of ``pages`` that runs, in order; a dead background process fails the next block."""
        for page in pages:
            for block in page_blocks(page):
                if block.lang not in ("bash", "python") or block.kind in ("skip", "synopsis"):
                    continue
                for started, process, log in self.background:
                    assert process.poll() is None, f"{started.where} died:\n{log.read_text()[-3000:]}"
                if block.kind == "background":
                    self.start(block)
                else:
                    self.run(block)

    def output_of(self, command: str) -> str:
        """What the last block run holding ``command`` (the start of one of its lines) printed."""
        for block, output in reversed(self.outputs):
            if any(c.startswith(command) for c in block.commands()):
                return output
        raise AssertionError(f"no block with {command!r} ran")

    def close(self) -> None:
        for _block, process, _log in self.background:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for _block, process, _log in self.background:
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()

    def check_substitutions(self) -> None:
        unused = set(self.substitutions) - self.applied
        assert not unused, f"the guides no longer say {sorted(unused)}: update the substitutions"


def test_every_shell_block_is_run_by_a_guide_test_or_marked():
    """A new unmarked command on a page no role follows would never run: it must be marked, or followed."""
    followed = {page for pages in ROLES.values() for page in pages}
    unmarked = [b.where for b in all_shell_blocks() if b.kind in ("run", "background") and b.page not in followed]
    assert not unmarked, (
        f"blocks that no guide test runs: mark them (tests/support/guide_blocks.py) or follow the page: {unmarked}"
    )
    for block in all_shell_blocks():
        if block.kind == "skip":
            assert block.note, f"{block.where}: a skipped block says why"


@contextmanager
def empty_postgres() -> Iterator[tuple[dict[str, str], str]]:
    """What the operator guide's first block makes on a stock PostgreSQL, once per run under fresh names: the
    guide's role and database (``arena``, ``arena``) become new ones, dropped afterwards. The guide's
    ``sudo -u postgres`` (peer login as the superuser) is the tests' superuser over TCP here (trust auth).
    Returns the substitutions and the database's URL."""
    from sqlalchemy.engine import make_url

    from tests.arena.store.test_store import ADMIN_URL, postgres_admin

    admin = postgres_admin()  # fails (ARENA_REQUIRE_POSTGRES=1) or skips with the reason when unreachable
    server = make_url(ADMIN_URL)
    tag = secrets.token_hex(5)
    role, database = f"arena_guide_{tag}", f"arena_guide_{tag}"
    login = f"--host {server.host} --port {server.port or 5432} --username {server.username}"
    url = f"postgresql://{role}:rehearsal@{server.host}:{server.port or 5432}/{database}"
    substitutions = {
        "sudo -u postgres psql": f"psql {login} --dbname {server.database}",
        "sudo -u postgres createdb": f"createdb {login}",
        "ROLE arena LOGIN": f"ROLE {role} LOGIN",
        "--owner arena arena": f"--owner {role} {database}",
        GUIDE_DATABASE: url,
    }
    try:
        yield substitutions, url
    finally:
        with admin.connect() as connection:
            connection.exec_driver_sql(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
            connection.exec_driver_sql(f'DROP ROLE IF EXISTS "{role}"')
        admin.dispose()


@pytest.fixture(scope="module")
def rehearsal(tmp_path_factory):
    """The operator's local rehearsal, as docs/operator-guide.md writes it, from an empty PostgreSQL server (no
    role, no database); its servers stay up for the miner."""
    folder = tmp_path_factory.mktemp("operator")
    with empty_postgres() as (substitutions, url):
        port = free_port()
        substitutions |= {"127.0.0.1:8000": f"127.0.0.1:{port}", "--api-port 8000": f"--api-port {port}"}
        terminal = Terminal(fresh_checkout(folder), substitutions)
        try:
            terminal.follow(OPERATOR)
            terminal.check_substitutions()
            yield terminal, url, port, substitutions
        finally:
            terminal.close()


def test_the_operator_guide_rehearses_a_validator_to_its_weights(rehearsal):
    terminal, url, _port, _substitutions = rehearsal
    cycle = terminal.output_of("arena validator run --local --once")
    assert "cycle 1 standings" in cycle and "weights (uid: weight)" in cycle, cycle[-3000:]
    weights = terminal.output_of("arena subnets weights")
    assert "netuid 15 weights" in weights and "no validator has set weights yet" not in weights, weights
    from arena.store import episodes as episode_rows
    from arena.store import open_store

    store = open_store(url)
    with store.transaction() as session:
        episodes = episode_rows.list_episodes(session, cycle=1)
    store.dispose()
    # Every episode ran, on the `arena worker` processes (the validator ran none: --workers 0).
    assert episodes and all(e.status.value == "done" for e in episodes)
    assert None not in {e.worker_id for e in episodes} and len({e.worker_id for e in episodes}) <= 2
    # The subnet owner registered first: uid 0, the burn uid, is the owner's hotkey, not the validator's, so
    # the burn share the weights set on uid 0 is not paid to the validator itself.
    registered = terminal.output_of("arena wallet create --wallet.name owner")
    assert "owner/default" in registered and re.search(r"owner/default \(\w+\) registered as uid 0\b", registered)
    assert re.search(r"validator/default \(\w+\) registered as uid [1-9]", registered), registered
    from arena.chain.local import LocalChain

    store = open_store(url)
    neurons = {n.uid: n for n in LocalChain(store.sessions, 15).neurons()}
    (validator,) = [n for n in neurons.values() if n.validator_permit]
    sent = LocalChain(store.sessions, 15).weights(validator.hotkey)
    store.dispose()
    assert validator.uid != 0 and neurons[0].hotkey != validator.hotkey and sent is not None and sent.ok, sent
    assert "up to date" in terminal.output_of("arena db current")
    assert list(terminal.root.glob("arena-*.dump"))  # the backup's pg_dump


def test_the_miner_guide_fetches_runs_submits_and_races(rehearsal):
    """The chain a newcomer follows: the operator's guide (the fixture), then the miner's against that
    validator, in the same checkout folder, so the miner's paths must not collide with the operator's."""
    operator, url, port, substitutions = rehearsal
    operators = ("catalog", "suite", "wallets", "problems.jsonl", "race.toml")
    before = files_of(operator.root, operators)
    terminal = Terminal(operator.root, {GUIDE_DATABASE: substitutions[GUIDE_DATABASE],
                                        "127.0.0.1:8000": f"127.0.0.1:{port}"}, name="miner")  # fmt: skip
    try:
        terminal.follow(MINER)
    finally:
        terminal.close()
    terminal.check_substitutions()
    assert (terminal.root / "miner" / "suite" / "public" / "qualifying.jsonl").is_file()
    # What fetch says to build is the guide's next line: the catalog beside the miner's suite, not the operator's.
    fetched = terminal.output_of("arena suite fetch")
    assert "arena catalog build --synthetic 2000 --seed 7 --out miner/catalog" in fetched, fetched
    after = files_of(operator.root, operators)
    assert after == before, f"the miner guide changed the operator's {sorted(set(after) ^ set(before))}"
    printed = terminal.output_of("arena submit my_agent.py").splitlines()
    submitted = json.loads(next(line for line in printed if line.startswith('{"agent"')))  # --json's one object
    (receipt,) = submitted["receipts"]
    assert receipt["accepted"], receipt
    submission = receipt["submission_id"]
    assert submission == GUIDE_SUBMISSION, "docs/miner-guide-submit.md shows the wrong submission id"
    shown = terminal.output_of("arena submissions show")
    assert f"submission {submission}: my_agent" in shown and "accepted" in shown, shown
    assert "waiting for their first cycle:" in shown and f"{submission} (my_agent" in shown, shown

    # The operator's next cycle, as the operator guide runs it: the new submission races.
    cycle = next(b for b in page_blocks(OPERATOR[0]) if any("validator run --local --once" in c for c in b.commands()))
    output = operator.run(cycle)
    assert "cycle 2 standings" in output, output[-3000:]
    detail = httpx.get(f"http://127.0.0.1:{port}/v1/submissions/{submission}", timeout=30).json()
    assert detail["standings"] and detail["standings"][0]["cycle"] == 2, detail
    assert {r["stage"] for r in detail["results"]} >= {"qualifying"}, detail
    # The miner's terminal views, piped as a script reads them: the raced submission and the standings.
    api = f"http://127.0.0.1:{port}"
    shown = json.loads(arena("submissions", "show", str(submission), "--validator-url", api, "--json"))
    assert [s["cycle"] for s in shown["standings"]] == [2] and shown["episodes"]["total"] > 0, shown
    assert {o["stage"] for o in shown["episodes"]["outcomes"]} >= {"qualifying"}, shown
    board = json.loads(arena("leaderboard", "--validator-url", api, "--json"))
    assert board["cycle"] == 2 and submission in {e["submission_id"] for e in board["entries"]}, board
    page = httpx.get(f"{api}/", timeout=30).text
    assert f'href="/submissions/{submission}"' in page  # the front page links the raced submission
    # ... with its history: the all-time record names the cycle it raced, and the page draws the chart.
    history = httpx.get(f"{api}/v1/history", timeout=30).json()
    (record,) = (a for a in history["agents"] if a["submission"]["id"] == submission)
    assert record["cycles_raced"] == [2] and record["best_race_score"] is not None, record
    assert "<svg" in page, page[-2000:]


def files_of(root: Path, names: tuple[str, ...]) -> dict[str, int]:
    """Every file under ``names`` in ``root`` with its modification time (wallets: the miner adds its own)."""
    found = {}
    for name in names:
        top = root / name
        for path in [top, *top.rglob("*")] if top.is_dir() else [top]:
            if path.is_file() and not (name == "wallets" and "miners" in path.parts):
                found[str(path.relative_to(root))] = path.stat().st_mtime_ns
    return found


def arena(*args: str) -> str:
    """`arena ARGS` with stdout piped (what a script reads), failing the test on a non-zero exit."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    done = subprocess.run([str(BIN / "arena"), *args], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_researcher_guide_exports_loads_trains_and_evaluates(demo_world, tmp_path):
    pytest.importorskip("trl")
    root = fresh_checkout(tmp_path)
    # What `scripts/demo` leaves in the checkout (the shared demo run): its store and its demo/ folder.
    for database in demo_world.glob("arena.db*"):  # with its -wal and -shm, if SQLite left them
        shutil.copy2(database, root / database.name)
    shutil.copytree(demo_world / "demo", root / "demo", symlinks=True)
    port = free_port()
    terminal = Terminal(root, {"127.0.0.1:8001": f"127.0.0.1:{port}", "--port 8001": f"--port {port}"})
    try:
        terminal.follow(RESEARCHER)
    finally:
        terminal.close()
    terminal.check_substitutions()
    loaded = terminal.output_of("import datasets")
    assert "DatasetDict" in loaded and "train" in loaded
    check_the_formats_agree(root / "corpus")
    report = (root / "runs" / "tiny" / "report.md").read_text()
    for stage in ("sft", "teacher-sft", "rft", "kto", "grpo"):
        assert f"| {stage} |" in report, report
    assert "skipped: no successful rollout" in report and "loss.png" in report
    assert (root / "runs" / "tiny" / "loss.png").read_bytes()[:4] == b"\x89PNG"
    stages = json.loads((root / "runs" / "tiny" / "report.json").read_text())["stages"]
    for stage in (s for s in stages if s["stage"] in ("sft", "teacher-sft", "kto")):
        assert stage["losses"] and stage["losses"][0][1] > 0, stage  # a loss of 0: no token was trained on
    for before, after in zip(stages, stages[1:], strict=False):  # each from the last one's (a skipped one's: its input)
        assert after["model_in"] == before["model_out"]
    metrics = json.loads((root / "runs" / "tiny" / "heldout" / "metrics.json").read_text())
    assert metrics["n_problems"] > 0 and 0.0 <= metrics["asr"] <= 1.0
    # The served checkpoint answered through the race's proxy: real completions with token usage, no crash.
    for line in (root / "runs" / "tiny" / "heldout" / "records.jsonl").read_text().splitlines():
        record = json.loads(line)["record"]
        calls = record["llm_calls"]
        assert calls and calls[0]["status_code"] == 200 and calls[0]["usage"]["completion_tokens"] > 0
        assert record["termination"] in ("returned", "terminated")


def check_the_formats_agree(corpus: Path) -> None:
    """The export the guide made, in every format, row for row: one schema for every split (docs/corpus.md)."""
    import datasets

    splits = [n for n in ("train", "eval", "subtask", "rejected") if (corpus / f"{n}.jsonl").is_file()]
    assert "train" in splits and "subtask" in splits
    parquet = datasets.load_dataset("parquet", data_files={n: str(corpus / f"{n}.parquet") for n in splits})
    on_disk = datasets.load_from_disk(str(corpus / "hf" / "trajectories"))
    for name in splits:
        n = len((corpus / f"{name}.jsonl").read_text().splitlines())
        assert parquet[name].num_rows == on_disk[name].num_rows == n
    row = parquet["train"][0]
    assert {g["name"] for g in row["metadata"]["gates"]} >= {"reasoning", "format"}
    assert row["messages"][0]["role"] == "system" and row["tools"][0]["function"]["name"]
    kto = datasets.load_from_disk(str(corpus / "hf" / "kto"))["train"]
    assert kto.num_rows == len((corpus / "kto.jsonl").read_text().splitlines()) > 0
