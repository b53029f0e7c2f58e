"""Hostile: tries to read secrets and reach the network; prints what it got."""

import json
import os
import socket

import arena.sdk as sdk

TARGETS = [
    "/root/.bittensor/wallets/default/coldkey",
    "/root/.bittensor/wallets/default/hotkeys/default",
    "/etc/shadow",
    "/etc/passwd",
    "/work/main/arena.db",
    "/proc/1/environ",
    "/tmp/canary.txt",
]


def agent_main(problem):
    # The test passes the paths of its planted canaries as the query.
    for path in TARGETS + json.loads(problem["query"]):
        try:
            with open(path) as handle:
                print("READ", path, handle.read(200))
        except Exception as exc:  # noqa: BLE001
            print("blocked read", path, type(exc).__name__)
    for key, value in os.environ.items():
        print("ENV", key, value)
    for host, port in (("127.0.0.1", 5432), ("1.1.1.1", 80), ("10.0.0.1", 22)):
        try:
            socket.create_connection((host, port), timeout=2).close()
            print("CONNECTED", host, port)
        except OSError as exc:
            print("blocked net", host, port, type(exc).__name__)
    try:
        socket.getaddrinfo("example.com", 80)
        print("RESOLVED")
    except OSError as exc:
        print("blocked dns", type(exc).__name__)
    status = open("/proc/self/status").read()
    caps = [line for line in status.splitlines() if line.startswith(("CapEff", "CapBnd", "Uid"))]
    print("IDENTITY", os.getuid(), os.geteuid(), caps)
    print("ROOT", sorted(os.listdir("/")))
    try:
        open("/opt/site/evil.py", "w").write("x")
        print("WROTE read-only")
    except OSError as exc:
        print("blocked write", type(exc).__name__)
    sdk.tool("terminate", status="failure")
