"""Logging for the long-running processes (validator, workers, API).

``json`` format writes one JSON object per line with the ids an operator
greps for — episode, submission, cycle, hotkey — whenever a log call passes
them in ``extra``; ``text`` is the same line for people.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime

CONTEXT_KEYS = ("episode_id", "submission_id", "cycle", "stage", "hotkey", "termination", "worker")


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        line.update({key: getattr(record, key) for key in CONTEXT_KEYS if hasattr(record, key)})
        if hasattr(record, "http"):  # an access line's fields (arena.api.metrics.access), for log queries
            line["http"] = record.http
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str)


class TextFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        context = " ".join(f"{key}={getattr(record, key)}" for key in CONTEXT_KEYS if hasattr(record, key))
        text = super().format(record)
        return f"{text} [{context}]" if context else text


# Libraries that log a line per job, request or connection at INFO: a validator's cycle
# would drown in them ("procrastinate.jobs: Deferred 1 job" 130 times a cycle).
LIBRARIES = ("procrastinate", "httpx", "httpcore", "psycopg", "alembic", "uvicorn", "asyncio", "urllib3",
             "bittensor", "websockets", "filelock", "datasets", "transformers")  # fmt: skip


def configure_logging(level: str = "INFO", fmt: str = "text", stream=None, *, libraries: str = "WARNING") -> None:
    """The root at ``level``; the chatty libraries at ``libraries`` (never more verbose than ``level``)."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    quiet = max(logging.getLevelName(level.upper()), logging.getLevelName(libraries.upper()))
    for name in LIBRARIES:
        logging.getLogger(name).setLevel(quiet)
