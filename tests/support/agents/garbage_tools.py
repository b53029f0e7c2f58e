"""Hostile: garbage tool calls and malformed requests on the socket."""

import http.client
import socket

import arena.sdk as sdk


class Raw(http.client.HTTPConnection):
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(sdk.socket_path())


def raw(method, path, body, headers=None):
    connection = Raw("x")
    connection.request(method, path, body=body, headers=headers or {})
    response = connection.getresponse()
    print("RAW", path, response.status, response.read()[:120])


def agent_main(problem):
    for name, args in [
        ("find_product", {"q": None, "page": "x"}),
        ("find_product", {"q": ["a"], "page": 1.5}),
        ("no_such_tool", {}),
        ("view_product_information", {"product_ids": {"$gt": 1}}),
        ("terminate", {"status": 42}),
    ]:
        try:
            sdk.tool(name, **args)
            print("accepted?!", name)
        except sdk.ToolError as exc:
            print("tool error", name, exc)
    raw("POST", "/tools/find_product", b"{not json")
    raw("POST", "/tools/find_product", b"[1,2,3]")
    raw("POST", "/v1/chat/completions", b"\xff\xfe")
    raw("GET", "/../../etc/passwd", None)
    hits = sdk.tool("find_product", q="widget", page=1)
    sdk.tool("recommend_product", product_ids=[h["product_id"] for h in hits[:1]])
    sdk.tool("terminate", status="success")
