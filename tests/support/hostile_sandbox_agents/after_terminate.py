"""Hostile: what an agent may still send after its own terminate (issue 30, class 3, round three).

The query (JSON) says how; each recommends ``id`` and terminates first:

- ``bloat``: model calls whose bodies are cheap to send and dear to parse (a tool schema of empty lists,
  ``body`` bytes each: json_bloat.py's body) sent on ``threads`` connections at once, again and again,
  until the sandbox is stopped. Before terminate the proxy reads at most ``REFUSED_BODIES_READ`` bodies'
  worth of requests it refuses; the refusal after terminate is another path;
- ``paths``: late calls by other spellings of the routes: a query string, a trailing slash, a doubled
  slash, a percent-encoded tool name, a NUL in the name;
- ``in_flight``: (instead of the SDK's terminate) a model call sent just before terminate, its answer
  arriving during the grace;
- ``pipelined``: (instead of the SDK's terminate) a terminate and a recommend of another product in one
  write on one connection: the recommend is read right behind the terminate.

Every answer is printed (``LATE <what> <status> <body>``); ``SENT n`` counts the late model calls answered.
"""

import http.client
import json
import socket
import threading
import time

import arena.sdk as sdk

LATE_ID = "2000"


class Raw(http.client.HTTPConnection):
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(sdk.socket_path())


def bloat_body(size: int) -> bytes:
    shell = {
        "model": sdk.model(),
        "max_tokens": 8,
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "f", "parameters": []}}],
    }
    text = json.dumps(shell)
    bloat = "[" + ",".join(["[]"] * ((size - len(text) - 8) // 3)) + "]"
    return text.replace('"parameters": []', '"parameters": ' + bloat).encode()


def post(path: str, body: bytes) -> str:
    connection = Raw("x", timeout=30)
    try:
        connection.request("POST", path, body=body, headers={"content-type": "application/json"})
        response = connection.getresponse()
        return f"{response.status} {response.read()[:160]!r}"
    except OSError as exc:
        return f"error {exc.errno}"
    finally:
        connection.close()


def bloat(spec: dict) -> None:
    body = bloat_body(spec["body"])
    sent = [0]

    def loop() -> None:
        while True:
            answer = post("/v1/chat/completions", body)
            sent[0] += 1
            if not answer.startswith("409"):
                print("LATE bloat", answer[:80], flush=True)
                if answer.startswith("error"):
                    return

    for _ in range(spec["threads"]):
        threading.Thread(target=loop, daemon=True).start()
    while True:
        time.sleep(0.2)
        print("SENT", sent[0], flush=True)


def paths(spec: dict) -> None:
    recommend = json.dumps({"product_ids": [LATE_ID]}).encode()
    chat = json.dumps({"model": sdk.model(), "messages": [{"role": "user", "content": "hi"}]}).encode()
    for what, path, body in (
        ("query", "/v1/chat/completions?x=1", chat),
        ("slash", "/v1/chat/completions/", chat),
        ("double", "//v1/chat/completions", chat),
        ("tool_query", "/tools/recommend_product?x=1", recommend),
        ("tool_encoded", "/tools/recommend%5Fproduct", recommend),
        ("tool_nul", "/tools/recommend_product%00", recommend),
    ):
        print("LATE", what, post(path, body), flush=True)


def pipelined(spec: dict) -> None:
    """Terminate and a recommend of another product in one write, on one connection: the recommend is
    read behind the terminate (the agent's own terminate here is this one)."""
    recommend = json.dumps({"product_ids": [LATE_ID]}).encode()
    terminate = json.dumps({"status": "success"}).encode()
    head = "POST {} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n"
    sock = socket.socket(socket.AF_UNIX)
    sock.connect(sdk.socket_path())
    sock.sendall(
        head.format("/tools/terminate", len(terminate)).encode()
        + terminate
        + head.format("/tools/recommend_product", len(recommend)).encode()
        + recommend
    )
    time.sleep(0.5)
    print("LATE pipelined", sock.recv(65536)[:600], flush=True)
    sock.close()


def in_flight(spec: dict) -> None:
    """A model call sent just before terminate (the test's upstream takes a second to answer), its answer read
    after: the answer was final before the model said anything."""
    got = {}

    def ask() -> None:
        body = {"model": sdk.model(), "messages": [{"role": "user", "content": "compare the widgets"}]}
        try:
            got["answer"] = sdk._request("POST", "/v1/chat/completions", body)
        except Exception as exc:
            got["answer"] = f"error {exc}"

    asker = threading.Thread(target=ask)
    asker.start()
    time.sleep(0.3)  # the call is at the proxy, forwarded, waiting on the upstream
    sdk.tool("terminate", status="success")
    print("TERMINATED", flush=True)
    asker.join()
    print("IN-FLIGHT", str(got.get("answer"))[:120], flush=True)


def agent_main(problem):
    spec = json.loads(problem["query"])
    sdk.tool("recommend_product", product_ids=[spec["id"]])
    if spec["way"] == "pipelined":
        pipelined(spec)
        return
    if spec["way"] == "in_flight":
        in_flight(spec)
        return
    sdk.tool("terminate", status="success")
    print("TERMINATED", flush=True)
    {"bloat": bloat, "paths": paths}[spec["way"]](spec)
