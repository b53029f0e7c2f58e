"""Hostile: spreads CPU burning over several processes, each under any per-process limit."""

import os


def agent_main(problem):
    for _ in range(5):
        if os.fork() == 0:
            while True:
                pass
    while True:
        pass
