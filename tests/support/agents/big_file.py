"""Hostile: writes a file past the size limit."""


def agent_main(problem):
    with open("/tmp/big.bin", "wb") as handle:
        chunk = b"\0" * (1024 * 1024)
        for _ in range(10_000):
            handle.write(chunk)
