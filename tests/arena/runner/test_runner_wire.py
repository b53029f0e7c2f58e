"""The episode socket's HTTP server, spoken to over a real Unix socket: raw bytes
for the protocol's edges, and the episode routes behind it with their records."""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path

import anyio
import httpx
import orjson
import pytest

from arena.runner.proxy import InferenceProxy
from arena.runner.record import EpisodeLimits, LLMCallRecord
from arena.runner.request_reader import MAX_BODY_BYTES, Request
from arena.runner.server import EpisodeSession, build_episode_handler
from arena.runner.upstreams import Upstream, UpstreamRegistry
from arena.runner.wire import EpisodeWireServer, Reply, StreamReply, WireBounds
from arena.shop.tools import ShopEnvironment

pytestmark = pytest.mark.anyio


class Served:
    """A server on a fresh socket in this event loop, and raw clients of it."""

    def __init__(self, handler, path: Path) -> None:
        self.server = EpisodeWireServer(handler)
        self.path = path

    async def __aenter__(self) -> Served:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(self.path))
        listener.listen(8)
        await self.server.start(listener)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.server.close()

    async def connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        return await asyncio.open_unix_connection(str(self.path))


async def read_response(reader: asyncio.StreamReader) -> tuple[int, dict[str, str], bytes]:
    """One response, by the framing it declares (Content-Length, chunked, or close)."""
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
    status = int(head[0].split()[1])
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in head[1:] if line)}
    if "content-length" in headers:
        return status, headers, await reader.readexactly(int(headers["content-length"]))
    if headers.get("transfer-encoding") == "chunked":
        body = b""
        while size := int((await reader.readline()).strip(), 16):
            body += await reader.readexactly(size)
            await reader.readline()
        await reader.readline()
        return status, headers, body
    return status, headers, await reader.read()


def echo(request: Request) -> Reply:
    seen = {"method": request.method, "path": request.path, "query": request.query, "body": request.body.decode(),
            "too_large": request.too_large, "host": request.headers.get("host")}  # fmt: skip
    return Reply(200, json.dumps(seen).encode(), {"x-echo": request.headers.get("x-echo", "")})


async def test_keep_alive_and_pipelined_requests_are_answered_in_order(tmp_path) -> None:
    def slow_then_fast(request: Request):
        if request.path == "/slow":

            async def later() -> Reply:
                await anyio.sleep(0.05)
                return echo(request)

            return later()
        return echo(request)

    async with Served(slow_then_fast, tmp_path / "s.sock") as served:
        reader, writer = await served.connect()
        # Three requests in one write: the slow first one must still be answered first.
        writer.write(b"POST /slow HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\none"
                     b"GET /fast?x=1 HTTP/1.1\r\nHost: b\r\n\r\n"
                     b"POST /fast HTTP/1.1\r\nHost: c\r\nContent-Length: 5\r\n\r\nthree")  # fmt: skip
        answers = [await read_response(reader) for _ in range(3)]
        assert [json.loads(body)["host"] for _, _, body in answers] == ["a", "b", "c"]
        assert [json.loads(body)["body"] for _, _, body in answers] == ["one", "", "three"]
        assert json.loads(answers[1][2])["query"] == "x=1"
        assert all(status == 200 and "connection" not in headers for status, headers, _ in answers)
        # The same connection keeps serving.
        writer.write(b"GET /again HTTP/1.1\r\n\r\n")
        assert json.loads((await read_response(reader))[2])["path"] == "/again"
        writer.close()


async def test_a_pipelining_agent_does_not_hold_the_loop(tmp_path) -> None:
    order: list[str] = []

    def handler(request: Request) -> Reply:
        order.append(request.path)
        return Reply(200, b"{}")

    async with Served(handler, tmp_path / "s.sock") as served:
        (reader_a, writer_a), (reader_b, writer_b) = await served.connect(), await served.connect()
        writer_a.write(b"GET /a HTTP/1.1\r\n\r\n" * 200)
        await writer_a.drain()
        await anyio.sleep(0)
        writer_b.write(b"GET /b HTTP/1.1\r\n\r\n")
        await read_response(reader_b)
        for _ in range(200):
            await read_response(reader_a)
        assert order.count("/a") == 200 and order.index("/b") < 199  # answered between the other's requests
        writer_a.close()
        writer_b.close()


async def test_bodies_in_pieces_chunked_and_after_100_continue(tmp_path) -> None:
    async with Served(echo, tmp_path / "s.sock") as served:
        reader, writer = await served.connect()
        for piece in (b"POST /p HTTP/1.1\r\nCont", b"ent-Length: 11\r\n\r\nhello", b" world"):
            writer.write(piece)
            await writer.drain()
            await anyio.sleep(0.01)
        assert json.loads((await read_response(reader))[2])["body"] == "hello world"

        writer.write(b"POST /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n6\r\n world\r\n"
                     b"0\r\nX-Trailer: t\r\n\r\n")  # fmt: skip
        assert json.loads((await read_response(reader))[2])["body"] == "hello world"

        writer.write(b"POST /e HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n")
        assert await reader.readuntil(b"\r\n\r\n") == b"HTTP/1.1 100 Continue\r\n\r\n"
        writer.write(b"ok")
        assert json.loads((await read_response(reader))[2])["body"] == "ok"
        writer.close()


async def test_oversized_body_is_read_dropped_and_flagged(tmp_path) -> None:
    async with Served(echo, tmp_path / "s.sock") as served:
        reader, writer = await served.connect()
        size = MAX_BODY_BYTES + 10
        writer.write(b"POST /big HTTP/1.1\r\nContent-Length: %d\r\n\r\n" % size + b"x" * size)
        status, _, body = await read_response(reader)
        assert status == 200 and json.loads(body)["too_large"] is True and json.loads(body)["body"] == ""
        writer.write(b"GET /next HTTP/1.1\r\n\r\n")  # still in step: the dropped body was consumed
        assert json.loads((await read_response(reader))[2])["path"] == "/next"
        writer.close()


@pytest.mark.parametrize(
    ("raw", "status"),
    [
        (b"GET /x HTTP/2.0\r\n\r\n", 505),
        (b"GET http://evil/x HTTP/1.1\r\n\r\n", 400),
        (b"GET  /x HTTP/1.1\r\n\r\n", 400),
        (b"GET /x HTTP/1.1\r\nBad Header: 1\r\n\r\n", 400),
        (b"GET /x HTTP/1.1\r\n folded: 1\r\n\r\n", 400),
        (b"POST /x HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!", 400),
        (b"POST /x HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400),
        (b"POST /x HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 501),
        (b"POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400),
        (b"GET /x HTTP/1.1\r\nX-Long: " + b"a" * 70_000 + b"\r\n\r\n", 431),
    ],
)
async def test_malformed_requests_get_an_error_and_the_connection_closes(tmp_path, raw: bytes, status: int) -> None:
    async with Served(echo, tmp_path / "s.sock") as served:
        reader, writer = await served.connect()
        writer.write(raw)
        got, headers, body = await read_response(reader)
        assert got == status and headers["connection"] == "close"
        assert json.loads(body)["error"]["code"] == "bad_http_request"
        assert await reader.read() == b""  # closed by the server
        writer.close()


async def test_http_1_0_is_answered_and_closed(tmp_path) -> None:
    async with Served(echo, tmp_path / "s.sock") as served:
        reader, writer = await served.connect()
        writer.write(b"GET /old HTTP/1.0\r\n\r\n")
        status, headers, body = await read_response(reader)
        assert status == 200 and headers["connection"] == "close" and json.loads(body)["path"] == "/old"
        writer.close()


async def test_handler_failures_are_500s_and_header_values_cannot_break_lines(tmp_path) -> None:
    def handler(request: Request):
        if request.path == "/boom":
            raise RuntimeError("bug")
        return echo(request)

    async with Served(handler, tmp_path / "s.sock") as served:
        reader, writer = await served.connect()
        writer.write(b"GET /boom HTTP/1.1\r\n\r\nGET /ok HTTP/1.1\r\nX-Echo: a\xe9\r\n\r\n")
        status, _, body = await read_response(reader)
        assert status == 500 and json.loads(body)["error"]["type"] == "server_error"
        status, headers, _ = await read_response(reader)
        assert status == 200 and headers["x-echo"] == "a\xe9"
        writer.close()
    injected = Reply(200, b"{}", {"x-dropped": "a\r\nset-cookie: x", "x-name": "\u2603"})

    async with Served(lambda request: injected, tmp_path / "t.sock") as served:
        reader, writer = await served.connect()
        writer.write(b"GET / HTTP/1.1\r\n\r\n")
        _, headers, _ = await read_response(reader)
        assert "set-cookie" not in headers and headers["x-dropped"] == "a  set-cookie: x" and headers["x-name"] == "?"
        writer.close()


async def test_stream_is_chunked_and_cancelled_when_the_agent_hangs_up(tmp_path) -> None:
    progress: list[str] = []

    async def events():
        try:
            yield b"data: 1\n\n"
            yield b""  # nothing to send: no empty chunk (it would end the body)
            yield b"data: 2\n\n"
            await anyio.sleep(30)  # a stalled upstream
            yield b"data: never\n\n"
        finally:
            progress.append("closed")

    async def handler(request: Request):
        return StreamReply(events(), {"cache-control": "no-cache"})

    async with Served(handler, tmp_path / "s.sock") as served:
        reader, writer = await served.connect()
        writer.write(b"GET /stream HTTP/1.1\r\n\r\n")
        head = await reader.readuntil(b"\r\n\r\n")
        assert b"transfer-encoding: chunked" in head and b"content-type: text/event-stream" in head
        assert await reader.readuntil(b"data: 2\n\n\r\n") == b"9\r\ndata: 1\n\n\r\n9\r\ndata: 2\n\n\r\n"
        writer.close()  # hang up while the upstream stalls
        with anyio.fail_after(2):
            while progress != ["closed"]:
                await anyio.sleep(0.01)


# --- the episode routes behind it ------------------------------------------------------------------


def upstream_app():
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def completions(request):
        body = await request.json()
        message = {"role": "assistant", "content": f"{len(body['messages'])} messages"}
        return JSONResponse({"id": "c", "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                             "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}})  # fmt: skip

    return Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])


@pytest.fixture
async def episode(catalog, tmp_path):
    registry = UpstreamRegistry(
        [Upstream(name="up", base_url="http://up/v1", models=["m"])], {"up": httpx.ASGITransport(app=upstream_app())}
    )
    records: list[LLMCallRecord] = []
    proxy = InferenceProxy(registry, ["m"], EpisodeLimits(), records.append, lambda: 0.5)
    session = EpisodeSession(ShopEnvironment(catalog), {"id": "p-1", "query": "q"}, "m", proxy, lambda: 0.25)
    async with Served(build_episode_handler(session), tmp_path / "arena.sock") as served:
        client = httpx.AsyncClient(transport=httpx.AsyncHTTPTransport(uds=str(served.path)), base_url="http://a")
        yield client, session, records
        await client.aclose()
    await registry.aclose()


async def test_episode_routes_answer_and_record(episode) -> None:
    client, session, records = episode
    answer = (await client.get("/episode")).json()
    assert answer["problem"] == {"id": "p-1", "query": "q"} and answer["model"] == "m"
    assert "find_product" in [tool["function"]["name"] for tool in answer["tools"]]

    hits = (await client.post("/tools/find_product", json={"q": "widget", "page": 1})).json()
    assert hits["ok"] and hits["result"] and hits["name"] == "find_product"
    bad = (await client.post("/tools/find_product", content=b"{not json")).json()
    assert not bad["ok"] and "JSON object" in bad["error"]
    unknown = (await client.post("/tools/no%20such/thing", json={})).json()
    assert not unknown["ok"] and "'no such/thing'" in unknown["error"]
    assert [(c.index, c.name, c.ok, c.at_s) for c in session.tool_calls] == [
        (0, "find_product", True, 0.25),
        (1, "find_product", False, 0.25),
        (2, "no such/thing", False, 0.25),
    ]
    assert session.tool_calls[0].result == hits["result"] and session.tool_calls[0].duration_ms > 0

    reply = await client.post("/v1/chat/completions", json={"model": "m", "messages": [{"role": "user"}]})
    assert reply.status_code == 200 and reply.json()["choices"][0]["message"]["content"] == "1 messages"
    listing = (await client.get("/v1/models")).json()
    assert [m["id"] for m in listing["data"]] == ["m"]
    assert [(r.status_code, r.usage.total_tokens) for r in records] == [(200, 5)]


async def test_episode_refusals_are_json_and_recorded(episode) -> None:
    client, session, records = episode
    for method, path, status, code in [
        ("GET", "/nowhere", 404, "not_found"),
        ("GET", "/tools/find_product", 405, "method_not_allowed"),
        ("POST", "/episode", 405, "method_not_allowed"),
        ("GET", "/v1/chat/completions", 405, "method_not_allowed"),
    ]:
        response = await client.request(method, path)
        assert (response.status_code, response.json()["error"]["code"]) == (status, code), path
    # Broken model calls are answered in OpenAI shape and recorded, like every call.
    response = await client.post("/v1/chat/completions", content=b"\xff\xfe")
    assert response.status_code == 400 and response.json()["error"]["code"] == "invalid_json"
    response = await client.post("/v1/chat/completions", content=b"x" * (MAX_BODY_BYTES + 1))
    assert response.status_code == 413 and response.json()["error"]["code"] == "request_too_large"
    assert response.headers["x-should-retry"] == "false"
    big_tool = (await client.post("/tools/find_product", content=b"x" * (MAX_BODY_BYTES + 1))).json()
    assert not big_tool["ok"]
    assert [(r.index, r.status_code) for r in records] == [(0, 400), (1, 413)]
    assert records[1].request == {"body_bytes_over": MAX_BODY_BYTES}
    assert session.tool_calls[-1].arguments == {} and not session.tool_calls[-1].ok


# --- what one agent can make the server hold -------------------------------------------------------


def bounded(limits: list[tuple[str, str]], **bounds) -> WireBounds:
    return WireBounds(on_limit=lambda name, detail: limits.append((name, detail)), **bounds)


async def test_connections_over_the_bound_are_refused_and_named(tmp_path) -> None:
    hits: list[tuple[str, str]] = []
    served = Served(echo, tmp_path / "s.sock")
    served.server = EpisodeWireServer(echo, bounded(hits, connections=3))
    async with served:
        held = [await served.connect() for _ in range(3)]
        for reader, writer in held:  # each is accepted before the next connects
            writer.write(b"GET /held HTTP/1.1\r\n\r\n")
            assert (await read_response(reader))[0] == 200
        reader, writer = await served.connect()
        status, headers, body = await read_response(reader)
        assert status == 429 and json.loads(body)["error"]["code"] == "connections"
        assert headers["connection"] == "close" and await reader.read() == b""
        assert [name for name, _ in hits] == ["connections"] and len(served.server.connections) == 3
        held[0][1].close()  # one hangs up: a new one is served again
        await held[0][1].wait_closed()
        while len(served.server.connections) > 2:
            await anyio.sleep(0.01)
        reader, writer = await served.connect()
        writer.write(b"GET /again HTTP/1.1\r\n\r\n")
        assert (await read_response(reader))[0] == 200
        for _, w in [*held[1:], (None, writer)]:
            w.close()


async def test_request_bytes_held_over_all_connections_are_bounded(tmp_path) -> None:
    """Many connections, each holding most of a body that is never finished: past the
    episode's bound the connection that brought it over is refused and closed."""
    hits: list[tuple[str, str]] = []
    bound = 256 * 1024
    served = Served(echo, tmp_path / "s.sock")
    served.server = EpisodeWireServer(echo, bounded(hits, buffered_bytes=bound))
    async with served:
        piece = 100 * 1024
        clients = []
        for _ in range(4):
            reader, writer = await served.connect()
            writer.write(b"POST /x HTTP/1.1\r\nContent-Length: %d\r\n\r\n" % (piece + 1) + b"x" * piece)
            await writer.drain()
            clients.append((reader, writer))
        # Two fit (200 KiB held); each of the next two brings it over and is refused.
        refused = [await read_response(reader) for reader, _ in clients[2:]]
        assert [(status, json.loads(body)["error"]["code"]) for status, _, body in refused] == [
            (429, "buffered_bytes"),
            (429, "buffered_bytes"),
        ]
        assert len(served.server.connections) == 2 and served.server.buffered == 2 * piece
        assert {name for name, _ in hits} == {"buffered_bytes"}
        assert served.server.buffered <= bound
        for _, writer in clients:
            writer.close()


async def test_a_body_over_its_route_limit_is_never_held(tmp_path) -> None:
    held: list[int] = []

    def handler(request: Request) -> Reply:
        return echo(request)

    def body_limit(method: str, path: str) -> int:
        return 10 if path == "/small" else 1000

    served = Served(handler, tmp_path / "s.sock")
    served.server = EpisodeWireServer(handler, WireBounds(body_limit=body_limit))
    async with served:
        reader, writer = await served.connect()
        writer.write(b"POST /small HTTP/1.1\r\nContent-Length: 500\r\n\r\n")
        for _ in range(5):
            writer.write(b"y" * 100)
            await writer.drain()
            await anyio.sleep(0.01)
            held.append(served.server.buffered)
        status, _, body = await read_response(reader)
        assert status == 200 and json.loads(body)["too_large"] is True
        assert max(held) <= 100  # dropped as it came, never accumulated
        writer.write(b"POST /big HTTP/1.1\r\nContent-Length: 500\r\n\r\n" + b"y" * 500)
        assert json.loads((await read_response(reader))[2])["too_large"] is False
        writer.close()


async def test_a_connection_that_never_reads_its_answers_is_no_longer_read(tmp_path) -> None:
    answered: list[int] = []
    reply_bytes = 32 * 1024

    def handler(request: Request) -> Reply:
        answered.append(1)
        return Reply(200, b"x" * reply_bytes)

    hits: list[tuple[str, str]] = []
    unsent = 128 * 1024
    served = Served(handler, tmp_path / "s.sock")
    served.server = EpisodeWireServer(handler, bounded(hits, unsent_bytes=unsent))
    async with served:
        reader, writer = await served.connect()
        pipelined = 2000  # 64 MB of answers if every one were answered
        writer.write(b"GET /a HTTP/1.1\r\n\r\n" * pipelined)
        with anyio.fail_after(20):
            while not hits:  # until the server stops answering on this connection
                await anyio.sleep(0.01)
        answered_then = len(answered)
        for _ in range(10):  # turns of the loop: nothing more is answered while nothing is read
            await anyio.sleep(0.01)
        assert len(answered) == answered_then
        [connection] = served.server.connections
        queued = connection._transport.get_write_buffer_size()
        # What the socket's kernel buffers took, plus the bound, plus one answer: not all 2,000.
        assert len(answered) < 200 and queued <= unsent + reply_bytes
        assert [name for name, _ in hits][:1] == ["unsent_bytes"]
        for _ in range(pipelined):  # the agent reads at last: every answer comes, in order
            status, _, body = await read_response(reader)
            assert status == 200 and len(body) == reply_bytes
        assert len(answered) == pipelined
        writer.close()


# --- tool-call bounds, recorded by name ------------------------------------------------------------


def tool_session(catalog, **limits) -> EpisodeSession:
    limits = EpisodeLimits(**limits)
    env = ShopEnvironment(catalog, max_ids=limits.tool_ids)
    return EpisodeSession(env, {"id": "p"}, "m", None, lambda: 0.0, limits)


def hits_of(session: EpisodeSession) -> dict[str, int]:
    return {hit.limit: hit.count for hit in session.limit_log.hits()}


async def test_tool_answers_over_the_result_limit_are_withheld_and_named(catalog) -> None:
    session = tool_session(catalog, tool_result_bytes=600)
    ids = ",".join(["1001"] * 20)
    big = orjson.loads(await session.call_tool("view_product_information", {"product_ids": ids}))
    assert not big["ok"] and "over the 600-byte limit" in big["error"] and big["result"] is None
    assert orjson.loads(await session.call_tool("terminate", {"status": "success"}))["ok"]
    assert [(c.name, c.refused) for c in session.tool_calls] == [("view_product_information", "tool_result_bytes"),
                                                                 ("terminate", None)]  # fmt: skip
    assert hits_of(session) == {"tool_result_bytes": 1}


async def test_the_records_share_of_tool_calls_is_bounded(catalog) -> None:
    session = tool_session(catalog, tool_record_bytes=8 * 1024)
    for _ in range(40):
        await session.call_tool("find_product", {"q": "widget", "page": 1})
    kept = [c for c in session.tool_calls if c.refused is None]
    assert kept and len(session.tool_calls) == 40 and session.tool_record_bytes <= 8 * 1024
    assert {c.refused for c in session.tool_calls[len(kept) :]} == {"tool_record_bytes"}
    assert all(c.arguments == {} for c in session.tool_calls[len(kept) :])  # refused: arguments left out
    assert hits_of(session)["tool_record_bytes"] == 40 - len(kept)


async def test_tool_calls_over_the_limit_and_after_terminate_are_refused(catalog) -> None:
    session = tool_session(catalog, tool_calls=5)
    await session.call_tool("terminate", {"status": "success"})
    big = {"q": "x" * 50_000, "page": 1}
    answers = [orjson.loads(await session.call_tool("find_product", big)) for _ in range(40)]
    assert all(not a["ok"] for a in answers)
    assert [c.refused for c in session.tool_calls] == [None] + ["terminated"] * 4
    assert hits_of(session) == {"tool_calls": 36}
    assert orjson.loads(session.refuse_body("find_product", 10))["error"] == "the episode has terminated"
    assert len(orjson.dumps([c.model_dump() for c in session.tool_calls])) < 300 * 1024


async def test_one_episodes_heavy_tool_work_does_not_stall_another(catalog) -> None:
    """Tool work runs in the pool, one call at a time per episode: the loop stays free
    and the honest episode's calls are answered while the other's run."""
    heavy = tool_session(catalog, tool_ids=50)
    honest = tool_session(catalog)
    order: list[str] = []

    async def flood() -> None:
        for _ in range(30):
            await heavy.call_tool("view_product_information", {"product_ids": ",".join(["1001"] * 50)})
            order.append("heavy")

    async def one_call() -> None:
        await honest.call_tool("find_product", {"q": "widget", "page": 1})
        order.append("honest")

    async with anyio.create_task_group() as group:
        group.start_soon(flood)
        await anyio.sleep(0)
        group.start_soon(one_call)
    assert order.index("honest") < 29 and len(heavy.tool_calls) == 30
