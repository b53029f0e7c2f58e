"""Hostile: fills the private /tmp with files each below the file-size limit.
A numeric query caps the bytes (benchmarks/hostile_sandbox.py, where a bound may be off)."""

import os


def agent_main(problem):
    chunk = b"\1" * (1024 * 1024)
    written, files = 0, 0
    cap = int(problem["query"]) if problem["query"].isdigit() else float("inf")
    try:
        while written < cap:
            with open(f"/tmp/fill-{files}.bin", "wb") as handle:
                files += 1
                for _ in range(4):  # 4 MiB files: under any file-size bound the tests use
                    handle.write(chunk)
                    written += len(chunk)
    finally:
        print("WROTE", written, "FILES", files, "FREE", os.statvfs("/tmp").f_bavail)
