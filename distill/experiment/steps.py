"""Steps cached by their inputs: a step whose inputs did not change since it finished is not run again.

A step's key is the sha256 of its inputs (its config section and the keys of the steps it reads), so
changing one stage's learning rate re-runs that stage, its evaluation and the report, and nothing before.
``DIR/steps/NAME/done.json`` (key, result, seconds) is written last: a step killed half way has none and
runs again from the start, in a clean directory.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

DONE = "done.json"


class StepResult(BaseModel):
    name: str
    key: str
    seconds: float
    result: dict[str, Any]
    cached: bool = False


def step_key(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]


class Steps:
    def __init__(self, root: Path, log: Callable[[str], None] = print) -> None:
        self.root = root / "steps"
        self.root.mkdir(parents=True, exist_ok=True)
        self.log = log
        self.done: dict[str, StepResult] = {}

    def dir(self, name: str) -> Path:
        return self.root / name

    def run(self, name: str, key: str, work: Callable[[Path], dict[str, Any]]) -> StepResult:
        folder = self.dir(name)
        marker = folder / DONE
        if marker.is_file():
            try:
                previous = StepResult.model_validate_json(marker.read_text())
            except ValueError:
                previous = None
            if previous is not None and previous.key == key:
                self.log(f"[{name}] cached ({previous.seconds:.0f} s when it ran)")
                result = previous.model_copy(update={"cached": True})
                self.done[name] = result
                return result
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        self.log(f"[{name}] running")
        started = time.perf_counter()
        payload = work(folder)
        result = StepResult(name=name, key=key, seconds=time.perf_counter() - started, result=payload)
        marker.write_text(result.model_dump_json(indent=2) + "\n")
        self.log(f"[{name}] done in {result.seconds:.0f} s")
        self.done[name] = result
        return result
