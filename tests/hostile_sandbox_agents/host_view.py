"""Hostile: looks at host-wide figures and the host's paths from inside."""


def show(path, limit=4000):
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit).replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError as exc:
        data = f"<{type(exc).__name__}>"
    print(f"== {path}\n{data}")


def agent_main(problem):
    for path in ("/proc/meminfo", "/proc/vmstat", "/proc/loadavg", "/proc/pressure/memory", "/proc/1/cmdline"):
        show(path)
    import os

    for folder in ("/usr/lib", "/usr/lib/x86_64-linux-gnu", "/usr/lib64"):
        try:
            print("LIST", folder, sorted(os.listdir(folder)))
        except OSError as exc:
            print("LIST", folder, type(exc).__name__)
    import ssl  # noqa: E401, F401 - the stdlib's linked modules load

    print("IMPORTS ok")
