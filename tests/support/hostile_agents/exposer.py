"""Hostile: looks at everything the sandbox shows it and reports where hidden problem content turns up.

``NEEDLES`` (the problem's content id, gold ids, gold titles, hidden reward values) is filled
in by tests/arena/runner/test_hostile_integrity.py; a real agent does not have them, which is the point:
this probe checks that none of them is anywhere it could look. It reports through tool calls
the validator records (the ``exfiltrate`` tool does not exist; the call is recorded anyway).
"""

import json
import os
import re

import arena.sdk as sdk

NEEDLES = {}  # replaced by the test: {"hex": [...], "digits": [...], "text": [...], "foreign": [...]}
# Generic and odd web_search queries besides the problem's own: a planted page of another problem
# (named by ``NEEDLES["foreign"]``) must answer none of them.
WEB_QUERIES = ("the", "answer question reference note", "record of the answer", "", "*", "kb", "knowledge invalid")
SKIP_NAMES = ("/proc", "/sys", "/dev")
# Host read-only system folders: their names are checked, their bytes are the host's own libraries.
NAMES_ONLY = ("/usr/lib", "/usr/lib64", "/opt/python/lib")
HEX_RUN = re.compile(rb"[0-9a-f]{10,}")
DIGIT_RUN = re.compile(rb"(?<![0-9])[0-9]{6,11}(?![0-9])")


def windows(text, size=10):
    return {text[i : i + size] for i in range(len(text) - size + 1)}


def finder(needles):
    hex_windows = set()
    for value in needles["hex"]:
        hex_windows |= windows(value)
    digits = set(needles["digits"])
    texts = [t.encode() for t in needles["text"]]

    def hits(data):
        found = set()
        for run in HEX_RUN.findall(data):
            run = run.decode()
            found |= {w for w in windows(run) if w in hex_windows}
        found |= {d.decode() for d in DIGIT_RUN.findall(data) if d.decode() in digits}
        found |= {t.decode() for t in texts if t in data}
        return sorted(found)

    return hits


def read(path, limit=8 * 1024 * 1024):
    try:
        with open(path, "rb") as handle:
            return handle.read(limit)
    except OSError as exc:
        return f"<{type(exc).__name__}>".encode()


def agent_main(problem):
    hits_of = finder(NEEDLES)
    report = {"hits": {}, "scanned_files": 0, "scanned_bytes": 0, "names": 0}
    me = os.path.realpath(__file__)
    # 1. Every answer that is not a tool result: the episode, the model list, the environment, /proc/self.
    raw = {
        "episode": sdk._request("GET", "/episode"),
        "models": sdk._request("GET", "/v1/models"),
        "environ": dict(os.environ),
        "argv": list(__import__("sys").argv),
        "cwd": os.getcwd(),
    }
    for name in ("environ", "cmdline", "mountinfo", "status", "cgroup", "maps", "limits", "stat"):
        raw[f"/proc/self/{name}"] = read(f"/proc/self/{name}").decode("latin-1")
    # 2. Every file and folder name under /, and the bytes of every file outside the host's own libraries.
    for top, folders, files in os.walk("/"):
        folders[:] = [f for f in folders if os.path.join(top, f) not in SKIP_NAMES]
        for name in folders + files:
            path = os.path.join(top, name)
            report["names"] += 1
            for hit in hits_of(path.encode()):
                report["hits"].setdefault(hit, []).append(f"name {path}")
            if name not in files or path == me or path.startswith(NAMES_ONLY) or not os.path.isfile(path):
                continue
            data = read(path)
            report["scanned_files"] += 1
            report["scanned_bytes"] += len(data)
            for hit in hits_of(data):
                report["hits"].setdefault(hit, []).append(path)
    # 3. The error texts of bad tool calls (tool results for its own queries are legitimately the catalog's).
    errors = {}
    for name, args in (
        ("recommend_product", {"product_ids": "0"}),
        ("view_product_information", {"product_ids": ""}),
        ("find_product", {"q": problem["query"], "page": 99}),
        ("find_product", {"page": "x"}),
        ("no_such_tool", {}),
        ("web_search", {"q": problem["query"]}),
    ):
        answer = sdk._request("POST", f"/tools/{name}", args)
        errors[name + json.dumps(args)] = answer.get("error")
    raw["tool_errors"] = errors
    hits = sdk.tool("find_product", q=problem["query"], page=1)
    sdk.tool("view_product_information", product_ids=",".join(h["product_id"] for h in hits[:5]))
    for source, value in raw.items():
        for hit in hits_of(json.dumps(value, ensure_ascii=False).encode()):
            report["hits"].setdefault(hit, []).append(source)
    # 4. web_search answers (its own problem's page may hold its own answer): no other problem's page.
    web = {
        q: sdk._request("POST", "/tools/web_search", {"q": q, "max_results": 20})
        for q in (problem["query"], *WEB_QUERIES)
    }
    web_text = json.dumps(web, ensure_ascii=False)
    report["foreign_checked"] = len(NEEDLES["foreign"])
    report["foreign_hits"] = {n: "web_search" for n in NEEDLES["foreign"] if n in web_text}
    for source, value in raw.items():
        for needle in NEEDLES["foreign"]:
            if needle in json.dumps(value, ensure_ascii=False):
                report["foreign_hits"][needle] = source
    report["self_hits"] = len(hits_of(read(me)))  # the scanner works: its own file holds every needle
    sdk._request("POST", "/tools/exfiltrate", {"raw": raw, "report": report})
    sdk.tool("terminate", status="success")
