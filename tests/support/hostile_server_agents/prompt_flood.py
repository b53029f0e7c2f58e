"""Hostile: many concurrent model calls, each with a large prompt, against the prompt budget."""

import http.client
import json
import socket
import threading

import arena.sdk as sdk


class Raw(http.client.HTTPConnection):
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(sdk.socket_path())


def agent_main(problem):
    spec = json.loads(problem["query"])
    prompt = "," * spec["prompt_chars"]  # one token a byte: the prompt bound is nearly exact
    body = json.dumps({"model": sdk.model(), "max_tokens": 8, "messages": [{"role": "user", "content": prompt}]})
    statuses = []
    barrier = threading.Barrier(spec["calls"])

    def one():
        connection = Raw("x", timeout=60)
        barrier.wait()
        try:
            connection.request("POST", "/v1/chat/completions", body=body.encode())
            response = connection.getresponse()
            response.read()
            statuses.append(response.status)
        except OSError:
            statuses.append("refused")

    threads = [threading.Thread(target=one) for _ in range(spec["calls"])]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print("STATUSES", sorted(statuses, key=str))
    sdk.tool("terminate", status="failure")
