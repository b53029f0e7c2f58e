"""Hostile: creates empty files (no bytes at all) until /tmp refuses (or a numeric query's cap)."""

import os


def agent_main(problem):
    created = 0
    cap = int(problem["query"]) if problem["query"].isdigit() else float("inf")
    try:
        os.mkdir("/tmp/many")
        while created < cap:
            open(f"/tmp/many/{created}", "w").close()
            created += 1
    finally:
        print("CREATED", created)
