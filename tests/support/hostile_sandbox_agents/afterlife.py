"""Hostile: the answer is changed after terminate, from processes the agent set loose. The query (JSON) says how:

- ``daemon``: recommend, terminate, then a double-forked child in a session of its own, deaf to SIGTERM
  and SIGHUP, keeps recommending another product while agent_main returns at once;
- ``child_terminates``: a forked child calls terminate while the parent lives on and recommends another
  product, then sleeps (it never calls terminate itself).

Every answer a call got is printed (``LATE ok`` / ``LATE refused``).
"""

import json
import os
import signal
import time

import arena.sdk as sdk

LATE_ID = "2000"


def late_recommendations(times: int, pause_s: float) -> None:
    for _ in range(times):
        try:
            sdk.tool("recommend_product", product_ids=[LATE_ID])
            print("LATE ok", flush=True)
        except Exception as exc:
            print("LATE refused", str(exc)[:100], flush=True)
        time.sleep(pause_s)


def agent_main(problem):
    spec = json.loads(problem["query"])
    sdk.tool("recommend_product", product_ids=[spec["id"]])
    if spec["way"] == "child_terminates":
        pid = os.fork()
        if pid == 0:
            sdk.tool("terminate", status="success")
            os._exit(0)
        os.waitpid(pid, 0)
        late_recommendations(3, 0.1)
        time.sleep(3600)
        return
    sdk.tool("terminate", status="success")
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            signal.signal(signal.SIGHUP, signal.SIG_IGN)
            late_recommendations(100, 0.2)
        os._exit(0)
