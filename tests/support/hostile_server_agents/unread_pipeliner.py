"""Hostile: one connection pipelines thousands of requests and never reads an answer."""

import json
import socket
import time

import arena.sdk as sdk


def agent_main(problem):
    spec = json.loads(problem["query"])
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(spec["hold_s"] / 2)
    sock.connect(sdk.socket_path())
    sent = 0
    request = b"GET /episode HTTP/1.1\r\n\r\n"
    try:
        for _ in range(spec["requests"] // 100):
            sock.sendall(request * 100)
            sent += 100
    except OSError:
        pass  # the server stopped reading: our own buffer is full
    time.sleep(spec["hold_s"] / 2)
    print("SENT", sent)
    sock.close()
    sdk.tool("terminate", status="failure")
