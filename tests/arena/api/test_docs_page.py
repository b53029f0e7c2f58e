"""``/docs`` works offline: FastAPI's Swagger UI page loaded its script and stylesheet from a CDN, so a validator
without internet showed a blank page. The page must reference nothing outside the server, serve every file it
references, and render the operations in headless Chromium with every name but loopback failing to resolve."""

from __future__ import annotations

import re
import shutil
import subprocess

import httpx
import pytest
from fastapi.testclient import TestClient

from arena.api import create_app
from arena.chain.local import LocalChain
from tests.arena.intake.test_api_submissions import app_settings, live_server, migrated

CHROMIUM = shutil.which("chromium")


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    with migrated("sqlite", tmp_path_factory.mktemp("db")) as store:
        yield create_app(app_settings(), store=store, chain=LocalChain(store.sessions))


def references(html: str) -> list[str]:
    """Every URL the page names: src and href attributes, and the schema URL handed to Swagger UI."""
    found = re.findall(r"""(?:src|href)\s*=\s*["']([^"']+)["']""", html)
    found += re.findall(r"""\burl\s*:\s*["']([^"']+)["']""", html)
    return found


def test_the_docs_page_references_only_this_server_and_serves_it_all(app):
    with TestClient(app) as client:
        page = client.get("/docs")
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        urls = references(page.text)
        assert any(u.endswith(".js") for u in urls) and any(u.endswith(".css") for u in urls), urls
        assert "/openapi.json" in urls
        for url in urls:
            assert url.startswith("/") and not url.startswith("//"), f"/docs references {url} outside this server"
            answer = client.get(url)
            assert answer.status_code == 200 and len(answer.content) > 100, url
        assert "SwaggerUIBundle" in client.get(next(u for u in urls if u.endswith(".js"))).text
        assert not re.search(r"https?://|['\"]//", page.text), "an absolute or protocol-relative URL in /docs"
        assert client.get("/docs/assets/index.html").status_code == 404  # only the files the page needs
        assert client.get("/docs/assets/..%2fpyproject.toml").status_code == 404
        assert client.get("/redoc").status_code == 404  # ReDoc loads from a CDN: not offered
    nav = TestClient(app).get("/").text
    assert '<a href="/docs">API</a>' in nav


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (scripts/test installs it)")
def test_the_docs_page_renders_the_operations_offline(app, tmp_path):
    with live_server(app) as base:
        assert httpx.get(base + "/docs").status_code == 200
        done = subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync",
             "--disable-background-networking", "--disable-component-update", f"--user-data-dir={tmp_path}",
             # offline: every name but loopback fails to resolve, so a CDN reference could not load
             "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
             "--virtual-time-budget=15000", "--dump-dom", base + "/docs"],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    assert "opblock" in dom, "Swagger UI did not render (its script did not load)"
    for path in ("/v1/leaderboard", "/v1/history", "/v1/submissions"):
        assert path in dom, path
    assert "Failed to load API definition" not in dom
