"""The honest neighbour: a few tool calls and one model call, all deterministic."""

import http.client
import json
import socket

import arena.sdk as sdk


class Raw(http.client.HTTPConnection):
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(sdk.socket_path())


def agent_main(problem):
    hits = sdk.tool("find_product", q=problem["query"], page=1)
    ids = [str(h["product_id"]) for h in hits[:3]]
    sdk.tool("view_product_information", product_ids=",".join(ids))
    body = {"model": sdk.model(), "messages": [{"role": "user", "content": problem["query"]}],
            "tools": sdk.tool_schemas(), "max_tokens": 64}  # fmt: skip
    connection = Raw("x", timeout=60)
    connection.request("POST", "/v1/chat/completions", body=json.dumps(body).encode())
    reply = json.loads(connection.getresponse().read())
    print("MODEL", json.dumps(reply["choices"][0]["message"], sort_keys=True))
    sdk.tool("recommend_product", product_ids=ids[:1])
    sdk.tool("terminate", status="success")
