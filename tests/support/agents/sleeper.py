"""Hostile: waits forever without using CPU (only the wall clock stops it)."""

import time


def agent_main(problem):
    while True:
        time.sleep(1)
