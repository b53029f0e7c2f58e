"""Hostile: creates empty files (no bytes at all) until /tmp refuses."""

import os


def agent_main(problem):
    created = 0
    try:
        os.mkdir("/tmp/many")
        while True:
            open(f"/tmp/many/{created}", "w").close()
            created += 1
    finally:
        print("CREATED", created)
