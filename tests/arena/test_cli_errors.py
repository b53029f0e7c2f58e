"""A failing command says what went wrong in one line, with the fix; the traceback only with --debug."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from arena.errors import one_line_error

ARENA = str(Path(sys.executable).parent / "arena")


def arena(*args: str, env: dict | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    environment = {**os.environ, "COLUMNS": "100", **(env or {})}
    environment.pop("ARENA_DEBUG", None)
    return subprocess.run([ARENA, *args], capture_output=True, text=True, env=environment, cwd=cwd, timeout=120)


@pytest.mark.parametrize(
    ("value", "iso"), [("300", "PT5M"), ("90.5", "PT1M30.5S"), ("PT2H", "PT2H"), ("1:00:00", "PT1H")]
)
def test_a_duration_setting_takes_seconds_or_iso_8601(value, iso):
    done = arena("config", "show", "--json", env={"ARENA_RACE__CYCLE_LENGTH": value})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["race"]["cycle_length"] == iso


def test_a_bad_setting_is_one_line_naming_the_variable():
    done = arena("config", "show", env={"ARENA_RACE__CYCLE_LENGTH": "five minutes"})
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "ARENA_RACE__CYCLE_LENGTH" in lines[0] and "'five minutes'" in lines[0]


def test_an_unreachable_database_is_one_line_and_debug_shows_the_traceback(tmp_path):
    url = "postgresql://127.0.0.1:1/nothing"
    done = arena("export", "--database-url", url, "--out", "corpus", cwd=tmp_path)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Connection refused" in lines[0] and "--debug" in lines[0]
    debug = arena("--debug", "export", "--database-url", url, "--out", "corpus", cwd=tmp_path)
    assert debug.returncode != 0 and "Traceback" in debug.stderr and len(debug.stderr.splitlines()) > 20


def test_a_bug_says_it_is_one():
    line, code = one_line_error(ZeroDivisionError("division by zero"))
    assert code == 1 and "This is a bug" in line and "--debug" in line
    line, code = one_line_error(FileNotFoundError(2, "No such file or directory"))
    assert code == 2 and "No such file" in line


@pytest.mark.parametrize(
    ("missing", "fix"),
    [
        ("role", 'Fix: create the role: sudo -u postgres psql -c "CREATE ROLE nobody_here_42 LOGIN'),
        ("database", "Fix: create the database: sudo -u postgres createdb --owner ROLE nowhere_db_42"),
    ],
)
def test_db_upgrade_on_an_empty_postgresql_names_the_step_that_creates_what_is_missing(missing, fix):
    """A new operator's first `arena db upgrade` against a stock PostgreSQL: the role or the database does not
    exist yet. The line names the step (the operator guide's first block), not only PostgreSQL's complaint."""
    from sqlalchemy.engine import make_url

    from tests.arena.store.test_store import ADMIN_URL, postgres_admin

    postgres_admin().dispose()  # fails (ARENA_REQUIRE_POSTGRES=1) or skips with the reason when unreachable
    server = make_url(ADMIN_URL)
    user, database = ("nobody_here_42", server.database) if missing == "role" else (server.username, "nowhere_db_42")
    url = f"postgresql://{user}@{server.host}:{server.port or 5432}/{database}"
    done = arena("db", "upgrade", "--database-url", url)
    assert done.returncode == 2 and done.stdout == ""
    (line,) = done.stderr.strip().splitlines()
    assert "does not exist" in line and fix in line and "docs/operator-guide.md" in line, line
