"""The operator guide's backup and restore, run as written against a real PostgreSQL."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess

import pytest

from arena.store.migrate import upgrade_database
from tests.arena.store.test_store import temporary_database
from tests.support.guide_blocks import REPO

GUIDE = REPO / "docs" / "operator-guide.md"


def documented(command: str) -> list[str]:
    """The guide's `command ...` line (in a shell block or inline code), as argv."""
    found = re.search(rf"^({command} .+)$|`({command} [^`]+)`", GUIDE.read_text(), re.M)
    assert found, f"docs/operator-guide.md no longer shows {command}"
    return shlex.split(found.group(1) or found.group(2))


@pytest.mark.skipif(shutil.which("pg_restore") is None, reason="the PostgreSQL client tools are not installed")
def test_the_documented_restore_into_an_empty_database_reports_no_errors(tmp_path):
    """`pg_restore --clean` drops each object before it creates it: into an empty database (a new server
    after a loss) every DROP failed, 172 errors for a good restore, unless --if-exists is given."""
    with temporary_database("postgresql", tmp_path) as live, temporary_database("postgresql", tmp_path) as empty:
        libpq = {
            name: url.replace("postgresql+psycopg://", "postgresql://", 1)
            for name, url in (("live", live), ("empty", empty))
        }
        upgrade_database(live)
        dump = tmp_path / "arena.dump"
        subprocess.run(["pg_dump", "--format=custom", "--file", str(dump), libpq["live"]], check=True, timeout=120)
        argv = [dump.as_posix() if word == "FILE" else word for word in documented("pg_restore")]
        argv = [libpq["empty"] if word == "$ARENA_DATABASE_URL" else word for word in argv]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0 and "error" not in done.stderr, done.stderr[-2000:]
        again = subprocess.run(argv, capture_output=True, text=True, timeout=300)  # over itself: the usual restore
        assert again.returncode == 0 and "error" not in again.stderr, again.stderr[-2000:]
