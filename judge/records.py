"""Reading episode records and labelled records from JSONL, failing on the first bad line
with the file, the line and the reason (nothing is skipped silently)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from arena.jsonl import json_lines
from arena.runner.record import EpisodeRecord
from judge.rubric import Level


class RecordFileError(ValueError):
    pass


class LabelledEpisode(BaseModel):
    """One line of a labelled set: a record and the level a person gave it."""

    model_config = ConfigDict(extra="forbid")

    case: str = Field(min_length=1)  # a short name: what the trajectory is an example of
    gold: Level
    note: str = ""  # why this level
    source: str = "built"  # "built" (judge/calibration/labelset.py) or "runner" (captured from a real episode run)
    record: EpisodeRecord


def _rows(path: Path) -> Iterator[tuple[int, Any]]:
    try:
        for number, row in json_lines(path):
            if isinstance(row, ValueError):
                raise RecordFileError(f"{path}:{number}: not valid JSON ({row})")
            yield number, row
    except OSError as exc:
        raise RecordFileError(f"{path}: cannot read it ({exc.strerror or exc})") from None


def _problem(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(map(str, first["loc"])) or "(top)"
    more = f" (+{exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{where}: {first['msg']}{more}"


def load_records(*paths: Path) -> list[EpisodeRecord]:
    """Episode records, one JSON object per line (what ``arena run-agent --out`` writes)."""
    records = []
    for path in paths:
        for number, row in _rows(Path(path)):
            try:
                records.append(EpisodeRecord.model_validate(row))
            except ValidationError as exc:
                raise RecordFileError(f"{path}:{number}: not an episode record: {_problem(exc)}") from None
    return records


def load_labels(path: Path) -> list[LabelledEpisode]:
    labels = []
    seen: dict[str, int] = {}
    for number, row in _rows(Path(path)):
        try:
            label = LabelledEpisode.model_validate(row)
        except ValidationError as exc:
            raise RecordFileError(f"{path}:{number}: not a labelled episode: {_problem(exc)}") from None
        episode = label.record.episode_id
        if episode in seen:
            raise RecordFileError(
                f"{path}:{number}: episode {episode} is labelled twice (first on line {seen[episode]})"
            )
        seen[episode] = number
        labels.append(label)
    if not labels:
        raise RecordFileError(f"{path}: no labelled episodes in it")
    return labels


def write_labels(labels: list[LabelledEpisode], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for label in labels:
            handle.write(label.model_dump_json(exclude_defaults=False) + "\n")
