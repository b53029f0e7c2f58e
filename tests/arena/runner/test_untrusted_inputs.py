"""Whatever an agent sends, the episode server answers: property tests over every tool,
the socket's request reader, the episode routes and the proxy's admission. Any bytes
or any JSON give a result or a structured error, the call is recorded, never a 500."""

from __future__ import annotations

import asyncio
import socket

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.runner.budgets import Admission, Budget, Call
from arena.runner.limits import LimitLog
from arena.runner.record import EpisodeLimits
from arena.runner.request_reader import BadRequest, Request, RequestReader
from arena.runner.server import EpisodeSession, build_episode_handler
from arena.runner.upstreams import CallFailure, Upstream, UpstreamRegistry
from arena.runner.wire import Reply
from arena.shop.tools import KNOWLEDGE_TOOLS, TOOL_SCHEMAS, ShopEnvironment

EXAMPLES = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

# JSON as orjson reads it off the socket: integers within 64 bits, no NaN.
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False)
    | st.text(max_size=40)
)
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=10), inner, max_size=5), max_leaves=15)  # fmt: skip
tool_names = st.sampled_from([*TOOL_SCHEMAS, "", "no_such_tool"]) | st.text(max_size=20)


@st.composite
def tool_arguments(draw, name: str) -> object:
    """Mostly objects with the tool's own argument names (so the tools' bodies are reached),
    holding any JSON: digits, odd digits ("²"), 5000-digit strings, lists, nesting."""
    properties = list(TOOL_SCHEMAS.get(name, {}).get("parameters", {}).get("properties", {}))
    tricky = st.sampled_from(["²", "1" * 5000, "0", "-1", " 1", "1,2,,3", "1001", "nan", "1e999", "-", "--"])
    values = json_values | tricky | st.lists(st.text(max_size=5) | st.integers(0, 2**63), max_size=80)
    keys = st.sampled_from(properties) if properties else st.text(max_size=8)
    if draw(st.booleans()):
        return draw(json_values)
    return draw(st.dictionaries(keys | st.text(max_size=8), values, max_size=len(properties) + 1))


@pytest.fixture(scope="module")
def knowledge_env_factory(catalog, tmp_path_factory):
    from arena.shop.knowledge import KnowledgeDocument, LocalKnowledgeBase, build_knowledge_index

    folder = tmp_path_factory.mktemp("knowledge")
    build_knowledge_index(
        [KnowledgeDocument(doc_id="1", url="https://k/1", title="Widgets", content="widget news")], folder
    )
    knowledge = LocalKnowledgeBase(folder)
    return lambda: ShopEnvironment(catalog, knowledge=knowledge, allowed=KNOWLEDGE_TOOLS, max_ids=10)


@EXAMPLES
@given(data=st.data())
def test_every_tool_answers_any_arguments(knowledge_env_factory, data) -> None:
    env = knowledge_env_factory()
    for _ in range(3):  # a few calls on one environment: state (terminate) carries over
        name = data.draw(tool_names)
        arguments = data.draw(tool_arguments(name))
        result = env.call(name, arguments)
        assert result.ok or result.error, result
        orjson.dumps(result.model_dump())  # what is recorded can be written
        if result.refused == "tool_ids":
            assert "at most 10 product ids" in result.error


def test_the_pages_that_used_to_raise(catalog) -> None:
    env = ShopEnvironment(catalog)
    for page in ("²", "1" * 5000, "٣", 10**30, -(10**30)):
        result = env.call("find_product", {"q": "widget", "page": page})
        assert result.error or result.notice, page
    assert env.call("find_product", {"q": "widget", "page": "2"}).ok


# --- the request reader --------------------------------------------------------------------------

request_lines = st.sampled_from(
    [b"GET /episode HTTP/1.1", b"POST /tools/find_product HTTP/1.1", b"POST /v1/chat/completions HTTP/1.0",
     b"PUT / HTTP/2", b"GET http://x/ HTTP/1.1", b""]
) | st.binary(max_size=40)  # fmt: skip
header_lines = st.sampled_from(
    [b"Content-Length: 5", b"Content-Length: 99999999999999999999", b"Content-Length: \xc2\xb2",
     b"Content-Length: -1", b"Transfer-Encoding: chunked", b"Expect: 100-continue", b"Connection: close",
     b"Content-Length: 3", b"X: \xff\xfe"]
) | st.binary(max_size=30)  # fmt: skip


@st.composite
def raw_requests(draw) -> bytes:
    head = b"\r\n".join([draw(request_lines), *draw(st.lists(header_lines, max_size=4))]) + b"\r\n\r\n"
    body = draw(st.binary(max_size=60) | st.sampled_from([b"5\r\nhello\r\n0\r\n\r\n", b"zz\r\n", b"1" * 5000]))
    return draw(st.sampled_from([head + body, body + head, head])) + draw(st.binary(max_size=20))


@EXAMPLES
@given(raw=raw_requests(), cuts=st.lists(st.integers(min_value=0, max_value=200), max_size=4))
def test_the_request_reader_takes_any_bytes(raw: bytes, cuts: list[int]) -> None:
    reader = RequestReader(lambda method, path: 64)
    buffer = bytearray()
    pieces = [raw[a:b] for a, b in zip([0, *sorted(cuts)], [*sorted(cuts), len(raw)], strict=True)]
    for piece in pieces:
        buffer += piece
        while True:
            try:
                request = reader.read(buffer)
            except BadRequest as bad:
                assert 400 <= bad.status < 600 and str(bad)
                return  # the server answers and closes
            if request is None:
                break
            assert isinstance(request, Request) and len(request.body) <= 64
            assert not request.too_large or request.body == b""
        assert reader.held <= 64 + len(piece)


# --- the episode routes --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def loop():
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


def answer(loop, handler, request: Request) -> Reply:
    reply = handler(request)
    if not isinstance(reply, Reply):
        reply = loop.run_until_complete(reply)
    return reply


bodies = st.binary(max_size=80) | json_values.map(orjson.dumps) | st.sampled_from([b"", b"{}", b'{"page": "\xc2\xb2"}'])


@EXAMPLES
@given(
    name=tool_names,
    body=bodies | st.builds(lambda a: orjson.dumps(a), tool_arguments("find_product")),
    too_large=st.booleans(),
)
def test_the_tool_route_records_every_call_and_never_fails(catalog, loop, name, body, too_large) -> None:
    from urllib.parse import quote

    log = LimitLog(lambda: 0.0)
    limits = EpisodeLimits(tool_calls=3)
    session = EpisodeSession(ShopEnvironment(catalog), {"id": "p"}, "m", None, lambda: 0.0, limits, log)
    handler = build_episode_handler(session)
    for _ in range(4):  # the fourth is over the call limit: refused, counted, not recorded
        request = Request("POST", "/tools/" + quote(name), "", {}, b"" if too_large else body, too_large)
        reply = answer(loop, handler, request)
        assert reply.status_code == 200
        answered = orjson.loads(reply.body)
        assert answered["ok"] or answered["error"]
    assert len(session.tool_calls) == 3 and log.count("tool_calls") == 1
    assert [call.index for call in session.tool_calls] == [0, 1, 2]
    if too_large:
        assert {call.refused for call in session.tool_calls} == {"tool_body_bytes"}


# --- the proxy's admission -----------------------------------------------------------------------

chat_bodies = st.fixed_dictionaries(
    {},
    optional={
        "model": st.sampled_from(["m", "other", ""]) | json_values,
        "messages": st.lists(st.dictionaries(st.sampled_from(["role", "content"]), json_values), max_size=3)
        | json_values,
        "stream": json_values,
        "stream_options": json_values,
        "n": json_values,
        "max_tokens": json_values,
        "max_completion_tokens": json_values,
        "temperature": json_values,
        "user": json_values,
    },
)


@EXAMPLES
@given(body=chat_bodies | json_values, as_bytes=st.booleans(), raw=st.binary(max_size=50))
def test_admission_admits_or_refuses_any_body(body, as_bytes: bool, raw: bytes) -> None:
    registry = UpstreamRegistry([Upstream(name="up", base_url="http://up/v1", models=["m"])])
    limits = EpisodeLimits(prompt_tokens=2000, completion_tokens=100)
    admission = Admission(registry, ["m", "other"], Budget(limits))
    for sent in (orjson.dumps(body) if as_bytes else body, raw):
        call = Call(index=0, at_s=0.0, started=0.0, deadline=1.0)
        try:
            plan = admission.admit(call, sent)
        except CallFailure as refusal:
            assert 400 <= refusal.status < 500 and refusal.message
            orjson.dumps(refusal.body())
            continue
        assert plan.payload["model"] == "m" and isinstance(plan.payload["messages"], list)
        assert call.reserved <= 100 and call.reserved_prompt <= 2000
        orjson.dumps(call.request)


# --- the real socket ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def socket_server(catalog, loop, tmp_path_factory):
    """One episode server on a real Unix socket (test-sized bounds), for every example."""
    from arena.runner.server import build_episode_server

    limits = EpisodeLimits(tool_body_bytes=256, llm_body_bytes=512, connections=4, tool_calls=10_000)
    session = EpisodeSession(ShopEnvironment(catalog), {"id": "p"}, "m", None, lambda: 0.0, limits)
    session.proxy = _NoUpstream()
    server = build_episode_server(session)
    path = tmp_path_factory.mktemp("sock") / "arena.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(8)
    loop.run_until_complete(server.start(listener))
    yield path, session
    loop.run_until_complete(server.close())


class _NoUpstream:
    """The proxy's two entry points, answering as a refusing proxy would (no upstream here)."""

    def chat_completions(self, body):
        return Reply(429, b'{"error": {"code": "test"}}')

    def refuse_oversized(self, limit):
        return Reply(413, b'{"error": {"code": "request_too_large"}}')

    async def models(self):
        return {"object": "list", "data": []}


@EXAMPLES
@given(raw=raw_requests() | st.binary(max_size=300), tail=st.sampled_from([b"", b"GET /episode HTTP/1.1\r\n\r\n"]))
def test_the_socket_answers_any_bytes_without_a_500(socket_server, loop, raw: bytes, tail: bytes) -> None:
    path, session = socket_server

    async def exchange() -> bytes:
        reader, writer = await asyncio.open_unix_connection(str(path))
        writer.write(raw + tail)
        await writer.drain()
        writer.write_eof()  # the server takes the end of what we send as a hang-up and closes
        answer = await reader.read()
        writer.close()
        return answer

    answer = loop.run_until_complete(asyncio.wait_for(exchange(), 30))
    statuses = [int(line.split()[1]) for line in answer.split(b"\r\n") if line.startswith(b"HTTP/1.1 ")]
    assert 500 not in statuses and all(100 <= status < 600 for status in statuses)
