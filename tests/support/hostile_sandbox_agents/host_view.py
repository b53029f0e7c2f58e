"""Hostile: looks at host-wide figures, the host's paths and libraries from inside."""

import bz2
import ctypes
import lzma
import os
import sqlite3
import ssl
import uuid
import zlib


def show(path, limit=4000):
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit).replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError as exc:
        data = f"<{type(exc).__name__}>"
    print(f"== {path}\n{data}")


def agent_main(problem):
    for path in ("/proc/meminfo", "/proc/vmstat", "/proc/loadavg", "/proc/pressure/memory", "/proc/1/cmdline"):
        show(path)
    for folder in ("/usr/lib", "/usr/lib/x86_64-linux-gnu", "/usr/lib64"):
        try:
            print("LIST", folder, sorted(os.listdir(folder)))
        except OSError as exc:
            print("LIST", folder, type(exc).__name__)
    for folder in ("/", "/dev", "/dev/shm", "/run", "/opt", "/opt/site", "/agent", "/usr/lib", "/proc"):
        try:
            with open(os.path.join(folder, "planted"), "w") as handle:
                handle.write("x")
            print("WRITABLE", folder)
        except OSError as exc:
            print("READ-ONLY", folder, type(exc).__name__)
    # The stdlib's modules that link system libraries all loaded (at the top) and work.
    assert ssl.create_default_context() and sqlite3.connect(":memory:") and ctypes.CDLL(None)
    assert zlib.compress(b"x") and lzma.compress(b"x") and bz2.compress(b"x") and uuid.uuid4()
    print("IMPORTS ok")
