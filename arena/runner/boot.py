"""The sandbox's entry point: load the agent file and call ``agent_main``.

Runs inside the sandbox as ``python -I -S boot.py AGENT_FILE``; the site
folder with the allowed packages and the SDK are put on ``sys.path`` here
because ``-I -S`` ignores every environment path on purpose. Exit codes tell
the runner how it ended; the record is still written by the validator.
"""

import importlib.util
import sys
import traceback

EXIT_OK = 0
EXIT_CRASH = 3
EXIT_NO_ENTRY = 4
EXIT_MEMORY = 5

sys.path[:0] = ["/opt/sdk", "/opt/site"]


def main(agent_file: str, sdk_root: str | None = None) -> int:
    if sdk_root:  # unsafe (no-sandbox) mode points at the runtime folder instead
        sys.path[:0] = [f"{sdk_root}/sdk", f"{sdk_root}/site"]
    try:
        import arena.sdk as sdk

        problem = sdk.problem()
        spec = importlib.util.spec_from_file_location("agent", agent_file)
        if spec is None or spec.loader is None:
            print(f"arena: cannot load {agent_file}", file=sys.stderr)
            return EXIT_NO_ENTRY
        module = importlib.util.module_from_spec(spec)
        sys.modules["agent"] = module
        spec.loader.exec_module(module)
        entry = getattr(module, "agent_main", None)
        if not callable(entry):
            print("arena: the agent file defines no agent_main(problem)", file=sys.stderr)
            return EXIT_NO_ENTRY
        entry(problem)
        return EXIT_OK
    except MemoryError:
        print("arena: MemoryError (the memory limit was reached)", file=sys.stderr)
        return EXIT_MEMORY
    except BaseException:  # noqa: BLE001 - everything an agent raises is a recorded crash
        traceback.print_exc(limit=20)
        return EXIT_CRASH


if __name__ == "__main__":
    sys.stdout.flush()
    code = main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
    sys.stdout.flush()
    sys.stderr.flush()
    # os._exit: an agent's leftover non-daemon threads must not keep the sandbox alive.
    import os

    os._exit(code)
