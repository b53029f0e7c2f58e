"""The sandbox's entry point: load the agent file and call ``agent_main``.

Runs inside the sandbox as ``python -I -S boot.py AGENT_FILE``; the site
folder with the allowed packages and the SDK are put on ``sys.path`` here
because ``-I -S`` ignores every environment path on purpose. Exit codes tell
the runner how it ended; the record is still written by the validator.

The status channel (a pipe whose descriptor is in ``ARENA_STATUS_FD``) tells
the runner two things no agent output can: that the interpreter and boot
started (so a sandbox that died before is the validator's fault, not the
agent's), and that the agent is done. At the end boot reports its exit code
and then waits, still inside the except block that caught the agent's error,
so the processes, descriptors and address-space peak of the agent are still
there when the runner takes its last measurement; the runner then kills the
sandbox. The agent may write to the channel too: that can only make the runner
measure and end its episode early.

Only ``os`` and ``sys`` are imported before the agent runs (both are loaded by the
interpreter anyway): ``importlib.util`` and ``traceback`` pull in contextlib, re,
enum and tokenize, several milliseconds of every episode's start
(benchmarks/episode.py), so the agent file is compiled and run here directly and
``traceback`` is imported only when there is an error to print.
"""

import os
import sys

EXIT_OK = 0
EXIT_CRASH = 3
EXIT_NO_ENTRY = 4
EXIT_MEMORY = 5

sys.path[:0] = ["/opt/sdk", "/opt/site"]
STATUS_FD = int(os.environ.get("ARENA_STATUS_FD") or -1)


def report(line: str) -> None:
    if STATUS_FD >= 0:
        try:
            os.write(STATUS_FD, line.encode() + b"\n")
        except OSError:
            pass  # the agent closed it: the runner falls back to the exit status


def end(code: int) -> int:
    """Report the end, then wait for the runner's last measurement and its kill."""
    sys.stdout.flush()
    sys.stderr.flush()
    if STATUS_FD >= 0:
        import time

        report(f"exit {code}")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # the runner kills well before this
            time.sleep(0.05)
    return code


def load_agent(agent_file: str) -> object:
    """The agent file run as the module ``agent`` (in ``sys.modules``, with its ``__file__``,
    so pickling, dataclasses and tracebacks find it), as ``importlib`` would load it."""
    with open(agent_file, "rb") as handle:
        source = handle.read()
    module = type(sys)("agent")
    module.__file__ = agent_file
    sys.modules["agent"] = module
    exec(compile(source, agent_file, "exec", dont_inherit=True), module.__dict__)  # noqa: S102 - it is the agent
    return module


def main(agent_file: str, sdk_root: str | None = None) -> int:
    if sdk_root:  # unsafe (no-sandbox) mode points at the runtime folder instead
        sys.path[:0] = [f"{sdk_root}/sdk", f"{sdk_root}/site"]
    try:
        import arena.sdk as sdk

        problem = sdk.problem()
        module = load_agent(agent_file)
        entry = getattr(module, "agent_main", None)
        if not callable(entry):
            print("arena: the agent file defines no agent_main(problem)", file=sys.stderr)
            return EXIT_NO_ENTRY
        entry(problem)
        return end(EXIT_OK)
    except MemoryError:
        print("arena: MemoryError", file=sys.stderr)
        return end(EXIT_MEMORY)
    except BaseException:  # noqa: BLE001 - everything an agent raises is a recorded crash
        import traceback

        traceback.print_exc(limit=20)
        return end(EXIT_CRASH)


if __name__ == "__main__":
    if STATUS_FD >= 0:
        os.set_inheritable(STATUS_FD, False)  # programs the agent runs do not get it
    report("started")
    sys.stdout.flush()
    code = main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
    sys.stdout.flush()
    sys.stderr.flush()
    # os._exit: an agent's leftover non-daemon threads must not keep the sandbox alive.
    os._exit(code)
