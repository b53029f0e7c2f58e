"""Every record the runner accepts can be stored: the one boundary between agent-written content and the store.

The record carries what the agent wrote (tool-call arguments, the messages it sent the model, its
recommendation, its stdout and stderr) and what came back to it. The store keeps the record as JSON on
SQLite and as JSONB on PostgreSQL, and some values that Python and JSON accept are refused there: a
U+0000 (PostgreSQL: 22P05 untranslatable character) or a lone surrogate (not UTF-8 at all), structures
deeper than the JSON encoder's recursion limit (orjson stops at 255 levels, both backends), integers
outside 64 bits (orjson), non-finite floats (JSONB), and documents over JSONB's 255 MiB. A refused
record would leave a finished episode unstorable; one submission could then hold a cycle open.

``make_storable`` rewrites the whole record once, as the runner writes it, so that whatever the agent
did, the record stores and reads back the same on every backend:

- U+0000 and lone surrogates (in strings and in keys) become U+FFFD;
- a container nested deeper than ``EpisodeLimits.record_depth`` (counted from the record's root) is
  replaced by a short marker string;
- an integer outside the signed 64-bit range becomes its decimal string; a NaN or infinity, null;
- a record whose JSON is over ``EpisodeLimits.record_bytes`` has its longest strings cut until it fits, then
  (many short strings) its largest lists and objects below the record's own structure.

What was changed is named in ``EpisodeRecord.limits_hit`` (``record_text``, ``record_depth``,
``record_numbers``, ``record_bytes``), with a count and the first place it happened, so a reader knows
the record is not verbatim there. The scorer and the judge read the record after this boundary.
"""

from __future__ import annotations

from arena.runner.record import EpisodeRecord, LimitHit
from arena.storable import Changes, storable_json

_CONTENT_DEPTH = 3  # record -> tool_calls -> [i] -> arguments: containers from here on are the agent's content


def make_storable(record: EpisodeRecord) -> EpisodeRecord:
    """The record, rewritten where a backend would refuse it, with each kind of change in ``limits_hit``."""
    changes = Changes()
    clean = storable_json(record, max_depth=record.limits.record_depth, max_bytes=record.limits.record_bytes,
                          content_depth=_CONTENT_DEPTH, changes=changes)  # fmt: skip
    if not changes.counts:
        return record
    stored = EpisodeRecord.model_validate(clean)
    at_s = stored.usage.wall_s  # found after the run, as the record was written
    for kind, count in changes.counts.items():
        stored.limits_hit.append(LimitHit(limit=kind, count=count, first_at_s=at_s, detail=changes.first[kind][:500]))
    return stored


__all__ = ["make_storable", "storable_json"]
