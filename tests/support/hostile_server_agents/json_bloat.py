"""Hostile: model calls whose bodies are cheap to send and dear to parse, sent again after every refusal.

Each body is ``body`` bytes of a chat request whose tool schema (agent data, passed as it is) is a list
of empty lists: 3 bytes of JSON each, a Python object each once parsed (4 MiB: 1.4 M objects, about a
CPU-second of the validator's). ``calls`` such calls, one after the other, for ``model``; each answer's
status and error code is printed (``ANSWERS``).
"""

import http.client
import json
import socket

import arena.sdk as sdk


class Raw(http.client.HTTPConnection):
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(sdk.socket_path())


def agent_main(problem):
    spec = json.loads(problem["query"])
    shell = {
        "model": spec.get("model") or sdk.model(),
        "max_tokens": 8,
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "f", "parameters": []}}],
    }
    text = json.dumps(shell)
    bloat = "[" + ",".join(["[]"] * ((spec["body"] - len(text) - 8) // 3)) + "]"
    body = text.replace('"parameters": []', '"parameters": ' + bloat).encode()
    answers = []
    for _ in range(spec["calls"]):
        connection = Raw("x", timeout=60)
        try:
            connection.request("POST", "/v1/chat/completions", body=body)
            response = connection.getresponse()
            error = (json.loads(response.read() or b"{}").get("error") or {}).get("code")
            answers.append(f"{response.status}:{error}")
        except OSError as exc:
            answers.append(f"error:{exc.errno}")
        connection.close()
    print("BODY", len(body), "ANSWERS", *answers, flush=True)
    sdk.tool("terminate", status="failure")
