"""Hostile: allocates until the memory limit."""


def agent_main(problem):
    hoard = []
    while True:
        hoard.append(bytearray(64 * 1024 * 1024))
