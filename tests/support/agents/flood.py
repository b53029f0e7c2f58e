"""Hostile: floods stdout."""

import sys


def agent_main(problem):
    line = "x" * 4095 + "\n"
    while True:
        sys.stdout.write(line)
