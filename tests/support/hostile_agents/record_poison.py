"""Hostile: poison in every field of its record the agent writes, sent as raw bytes (no SDK encoding).

- tool names: a NUL, a lone surrogate's UTF-8 bytes, invalid UTF-8, percent-encoded in the path;
- tool arguments: NUL in values and keys, two keys that become one once cleaned, the largest unsigned
  64-bit integer (over int64), integers orjson reads as floats, -0.0, nesting just under, at and over the
  record's depth bound (64 from the record's root), a malformed body;
- the recommendation and the terminate status with a NUL;
- model requests (refused: no upstream is allowed here) whose keys and model name hold a NUL;
- stdout and stderr: a NUL and bytes that are not UTF-8.
"""

import socket
import sys

import arena.sdk as sdk


def post(path: str, body: bytes) -> bytes:
    sock = socket.socket(socket.AF_UNIX)
    sock.connect(sdk.socket_path())
    head = f"POST {path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
    sock.sendall(head.encode() + b"connection: close\r\n\r\n" + body)
    answer = b""
    while chunk := sock.recv(65536):
        answer += chunk
    sock.close()
    return answer.split(b"\r\n", 1)[0]


def nested(levels: int) -> bytes:
    return b'{"d":' * levels + b'"bottom"' + b"}" * levels


def agent_main(problem):
    for path in ("/tools/find%00product", "/tools/%ED%A0%80", "/tools/%FF%FE"):
        post(path, b'{"q": "widget"}')
    arguments = (
        b'{"q": "wid\\u0000get", "k\\u0000": 1, "k\\u0000\\u0000": [1, "\\u0000"], "a\\u0000": 1, "a\\u0000": 2, '
        b'"u64": 18446744073709551615, "over": 18446744073709551616, "under": -9223372036854775809, '
        b'"negzero": -0.0, "tiny": 1e-400, "page": 1}'
    )
    post("/tools/find_product", arguments)
    for levels in (58, 59, 60, 61, 62, 250):  # the record adds its own levels above the arguments
        post("/tools/find_product", b'{"q": "widget", "filters": ' + nested(levels) + b"}")
    post("/tools/find_product", b'{"q": "widget", "broken": ')  # malformed
    for body in (
        b'{"model": "heuristic-policy\\u0000", "messages": [{"role": "user", "content": "hi\\u0000"}]}',
        b'{"model": "m", "\\u0000": 1, "messages\\u0000": [], "max_tokens": 18446744073709551615}',
    ):
        post("/v1/chat/completions", body)
    post("/tools/recommend_product", b'{"product_ids": ["1001\\u0000", "1001"]}')
    sys.stdout.buffer.write(b"out\x00put \xff\xfe \xed\xa0\x80\nPOISONED\n")
    sys.stdout.flush()
    sys.stderr.buffer.write(b"err\x00 \xc3\x28\n")
    sys.stderr.flush()
    post("/tools/terminate", b'{"status": "success\\u0000"}')
