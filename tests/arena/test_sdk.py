"""The agent's SDK against the real episode server on a Unix socket (outside the
sandbox: the sandboxed runs are tests/arena/runner/test_sandbox.py and tests/arena/runner/test_runner_llm.py)."""

from __future__ import annotations

import asyncio
import os
import socket
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

import arena.sdk as sdk
from arena.runner.record import EpisodeLimits
from arena.runner.server import EpisodeSession, build_episode_handler
from arena.runner.wire import EpisodeWireServer
from arena.shop.tools import ShopEnvironment


class EpisodeThread:
    """The episode server in a thread with its own event loop, as the validator runs it."""

    def __init__(self, catalog, path, limits: EpisodeLimits | None = None) -> None:
        self.session = EpisodeSession(
            ShopEnvironment(catalog), {"id": "p-1", "query": "q"}, "m", None, lambda: 0.0, limits=limits
        )
        self.server = EpisodeWireServer(build_episode_handler(self.session))
        self.path = path
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def __enter__(self) -> EpisodeThread:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(self.path))
        listener.listen(16)
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self.server.start(listener), self.loop).result(10)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self.server.close(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)


@pytest.fixture
def episode(catalog, tmp_path, monkeypatch):
    path = tmp_path / "arena.sock"
    monkeypatch.setenv("ARENA_SOCKET", str(path))
    monkeypatch.setattr(sdk, "_episode_cache", None)
    monkeypatch.setattr(sdk, "_channels", type(sdk._channels)())  # no connection left from another test
    with EpisodeThread(catalog, path) as served:
        yield served


def test_the_agent_contract_over_one_kept_alive_connection(episode) -> None:
    assert sdk.problem() == {"id": "p-1", "query": "q"} and sdk.model() == "m"
    assert "find_product" in [schema["function"]["name"] for schema in sdk.tool_schemas()]
    hits = sdk.tool("find_product", q="widget", page=1)
    assert hits and {"product_id", "title", "price"} <= set(hits[0])
    sdk.tool("recommend_product", product_ids=hits[0]["product_id"])
    with pytest.raises(sdk.ToolError, match="status"):
        sdk.tool("terminate", status="maybe")
    # A name that cannot stand in a request line as it is still arrives whole.
    with pytest.raises(sdk.ToolError, match="unknown tool"):
        sdk.tool("a b\r\nx/\u2603")
    sdk.tool("terminate", status="success")
    assert [call.name for call in episode.session.tool_calls][-2:] == ["a b\r\nx/\u2603", "terminate"]
    assert episode.server.accepted == 1  # every call above went over one connection


def test_threads_and_forked_children_get_their_own_connections(episode) -> None:
    sdk.tool("find_product", q="widget", page=1)
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda i: sdk.tool("find_product", q="widget", page=i % 2 + 1), range(16)))
    assert all(isinstance(result, list) for result in results)
    pid = os.fork()
    if pid == 0:  # the child must not write into the parent's connection
        try:
            sdk.tool("find_product", q="gadget", page=1)
            os._exit(0)
        except BaseException:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    sdk.tool("find_product", q="widget", page=2)  # the parent's connection is still in step
    assert len(episode.session.tool_calls) == 19
    assert all(call.ok for call in episode.session.tool_calls)


def test_errors_are_arena_connection_errors(episode, tmp_path, monkeypatch) -> None:
    with pytest.raises(sdk.ArenaConnectionError, match="answered 404"):
        sdk._request("GET", "/nowhere")
    assert sdk.problem()["id"] == "p-1"  # an error answer leaves the connection usable
    monkeypatch.setattr(sdk, "_channels", type(sdk._channels)())
    monkeypatch.setenv("ARENA_SOCKET", str(tmp_path / "missing.sock"))
    with pytest.raises(sdk.ArenaConnectionError, match="cannot reach the arena socket"):
        sdk.tool("find_product", q="x", page=1)


def test_a_server_that_went_away_is_an_error_not_a_hang(episode) -> None:
    sdk.tool("find_product", q="widget", page=1)
    asyncio.run_coroutine_threadsafe(episode.server.close(), episode.loop).result(10)
    with pytest.raises((OSError, sdk.ArenaConnectionError)):  # a refused write or a closed read, as timing has it
        sdk.tool("find_product", q="widget", page=1)
    with pytest.raises(sdk.ArenaConnectionError, match="cannot reach"):
        sdk.tool("find_product", q="widget", page=1)  # the broken connection was dropped, not reused


def test_openai_client_takes_the_callers_options_over_its_defaults() -> None:
    """Any keyword the agent passes wins over the SDK's defaults (max_retries=0 was passed twice: a TypeError)."""
    client = sdk.openai_client(max_retries=0)
    assert client.max_retries == 0 and str(client.base_url) == "http://arena.sandbox/v1/"
    client = sdk.openai_client(max_retries=3, api_key="mine", timeout=12.0)
    assert client.max_retries == 3 and client.api_key == "mine"
    assert client._client.timeout.read == 12.0  # the socket transport's client took the caller's timeout


def test_openai_client_outlasts_the_episode_and_the_proxy(catalog, tmp_path, monkeypatch) -> None:
    """The experiment gives the proxy 900 s a call and an episode 1800 s: the agent's client must not
    give up first (a fixed 300 s did, and a slow validator was scored as the student's crash)."""
    path = tmp_path / "arena.sock"
    monkeypatch.setenv("ARENA_SOCKET", str(path))
    monkeypatch.setattr(sdk, "_episode_cache", None)
    monkeypatch.setattr(sdk, "_channels", type(sdk._channels)())
    limits = EpisodeLimits(wall_s=1800.0, llm_call_timeout_s=900.0)
    with EpisodeThread(catalog, path, limits):
        timeout = sdk.openai_client()._client.timeout
        assert min(timeout.read, timeout.connect, timeout.write) > limits.wall_s > limits.llm_call_timeout_s
        assert sdk.openai_client(timeout=5.0)._client.timeout.read == 5.0  # the agent's own choice wins
    monkeypatch.setattr(sdk, "_episode_cache", None)
    long_call = EpisodeLimits(wall_s=60.0, llm_call_timeout_s=600.0)
    with EpisodeThread(catalog, tmp_path / "second.sock", long_call):
        monkeypatch.setenv("ARENA_SOCKET", str(tmp_path / "second.sock"))
        monkeypatch.setattr(sdk, "_channels", type(sdk._channels)())
        assert sdk.openai_client()._client.timeout.read > long_call.llm_call_timeout_s
