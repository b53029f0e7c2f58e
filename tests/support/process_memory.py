"""This process's memory as the kernel reports it, for the hostile tests and benchmarks that bound the
validator's growth while an attacker runs: the current RSS, and the peak since the last reset."""

from __future__ import annotations

from pathlib import Path


def status_bytes(field: str) -> int:
    """A ``/proc/self/status`` size field (``VmRSS``, ``VmHWM``, ...) in bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise LookupError(f"no {field} in /proc/self/status")


def reset_peak() -> None:
    Path("/proc/self/clear_refs").write_text("5")  # VmHWM restarts from the current RSS


def peak_since_reset() -> int:
    """The peak RSS since the last reset, and a new reset."""
    peak = status_bytes("VmHWM")
    reset_peak()
    return peak
