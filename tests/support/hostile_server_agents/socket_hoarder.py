"""Hostile: more connections than allowed, then many connections each holding all but
one byte of a large model-call body."""

import json
import socket
import time

import arena.sdk as sdk


def hold(count, head, body_bytes):
    held, broken = [], 0
    for _ in range(count):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(5)
        try:
            sock.connect(sdk.socket_path())
            sock.sendall(head)
            if body_bytes:
                sock.sendall(b"x" * body_bytes)
        except OSError:
            broken += 1
        held.append(sock)
    return held, broken


def release(held):
    for sock in held:
        sock.close()
    time.sleep(0.2)  # the server sees the hang-ups before the next connection


def agent_main(problem):
    spec = json.loads(problem["query"])
    # Idle connections, each in the middle of a request head.
    held, broken = hold(spec["connections"], b"POST /v1/chat/completions HTTP/1.1\r\n", 0)
    time.sleep(spec["hold_s"] / 2)
    print("IDLE", len(held), "BROKEN", broken)
    release(held)
    body = spec["body"]
    held, broken = hold(
        spec["connections"], b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: %d\r\n\r\n" % body, body - 1
    )
    time.sleep(spec["hold_s"] / 2)
    print("HELD", len(held), "BROKEN", broken)
    release(held)
    sdk.tool("terminate", status="failure")
