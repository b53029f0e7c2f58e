"""Sandbox uids are leased host-wide: never shared by two live runners, freed when a holder dies."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from arena.runner.uids import FIRST_AGENT_UID, UidLease, UidsExhausted


def test_leases_are_distinct_and_reusable(tmp_path):
    leases = [UidLease(tmp_path, slots=8) for _ in range(8)]
    uids = {lease.uid for lease in leases}
    assert len(uids) == 8 and all(FIRST_AGENT_UID <= uid < FIRST_AGENT_UID + 8 for uid in uids)
    with pytest.raises(UidsExhausted):
        UidLease(tmp_path, slots=8)
    leases[3].release()
    assert UidLease(tmp_path, slots=8).uid == leases[3].uid


def test_another_process_never_gets_a_held_uid_and_a_killed_holder_frees_it(tmp_path):
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
                import sys, time
                from pathlib import Path
                from arena.runner.uids import UidLease
                lease = UidLease(Path({str(tmp_path)!r}), slots=1)
                print(lease.uid, flush=True)
                time.sleep(60)
            """),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        held = int(holder.stdout.readline())
        with pytest.raises(UidsExhausted):
            UidLease(tmp_path, slots=1)  # the other process holds the only uid
    finally:
        holder.kill()  # SIGKILL: no cleanup code runs
        holder.wait()
    assert UidLease(tmp_path, slots=1).uid == held
