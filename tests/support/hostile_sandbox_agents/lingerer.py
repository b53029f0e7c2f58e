"""Hostile: the episode goes on after the answer. The query (JSON) says how:

- ``sleep``: recommend, terminate, then sleep (holding a worker for the wall clock);
- ``spin``: recommend, terminate, then burn CPU in a loop;
- ``detach``: recommend, terminate, then a forked child and a thread sleep while the main thread does too;
- ``calls``: recommend, terminate, then a model call (plain and streamed) and a tool call, each
  result printed, then return;
- ``timeout``: recommend, never terminate, sleep past the wall clock.
"""

import http.client
import json
import os
import socket
import threading
import time

import arena.sdk as sdk


class Raw(http.client.HTTPConnection):
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(sdk.socket_path())


def model_call(stream):
    body = {"model": sdk.model(), "messages": [{"role": "user", "content": "which is cheaper?"}], "max_tokens": 32}
    if stream:
        body["stream"] = True
    connection = Raw("x", timeout=60)
    connection.request("POST", "/v1/chat/completions", body=json.dumps(body).encode())
    answer = connection.getresponse()
    text = answer.read().decode(errors="replace")
    return answer.status, text[:200]


def agent_main(problem):
    spec = json.loads(problem["query"])
    way = spec["way"]
    print("BEFORE", model_call(False)[0], flush=True)  # one forwarded call before the answer
    sdk.tool("recommend_product", product_ids=[spec["id"]])
    if way == "timeout":
        time.sleep(3600)
    sdk.tool("terminate", status="success")
    print("TERMINATED", flush=True)
    if way == "sleep":
        time.sleep(3600)
    elif way == "spin":
        while True:
            pass
    elif way == "detach":
        if os.fork() == 0:
            time.sleep(3600)
            os._exit(0)
        threading.Thread(target=time.sleep, args=(3600,)).start()
        time.sleep(3600)
    elif way == "calls":
        print("MODEL", *model_call(False), flush=True)
        print("STREAM", *model_call(True), flush=True)
        try:
            sdk.tool("find_product", q="widget", page=1)
            print("TOOL ok", flush=True)
        except sdk.ToolError as exc:
            print("TOOL", exc, flush=True)
        try:
            sdk.tool("recommend_product", product_ids=["999999"])
            print("RECOMMEND ok", flush=True)
        except sdk.ToolError as exc:
            print("RECOMMEND", exc, flush=True)
