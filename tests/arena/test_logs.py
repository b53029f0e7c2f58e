"""Structured logs: the ids an operator greps for come out as JSON fields."""

from __future__ import annotations

import io
import json
import logging

from arena.logs import configure_logging


def test_json_logs_carry_episode_and_submission_ids():
    stream = io.StringIO()
    configure_logging("INFO", "json", stream=stream)
    try:
        logging.getLogger("arena.race.tasks").info(
            "episode %d stored", 7, extra={"episode_id": 7, "submission_id": 3, "cycle": 2, "termination": "returned"}
        )
        logging.getLogger("arena.api").debug("not shown at INFO")
    finally:
        configure_logging("WARNING", "text")
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert len(lines) == 1
    line = lines[0]
    assert line["message"] == "episode 7 stored" and line["level"] == "INFO" and line["logger"] == "arena.race.tasks"
    assert (line["episode_id"], line["submission_id"], line["cycle"], line["termination"]) == (7, 3, 2, "returned")


def test_text_logs_append_the_ids():
    stream = io.StringIO()
    configure_logging("INFO", "text", stream=stream)
    try:
        logging.getLogger("arena.api").info("submission 5 accepted", extra={"submission_id": 5, "hotkey": "5Fabc"})
    finally:
        configure_logging("WARNING", "text")
    assert stream.getvalue().rstrip().endswith("submission 5 accepted [submission_id=5 hotkey=5Fabc]")


def test_library_chatter_stays_out_of_an_info_log_unless_asked():

    for libraries, shown in (("WARNING", False), ("INFO", True)):
        stream = io.StringIO()
        configure_logging("INFO", "text", stream, libraries=libraries)
        logging.getLogger("procrastinate.jobs").info("Deferred 1 job")
        logging.getLogger("procrastinate.jobs").warning("a job failed")
        logging.getLogger("arena.race.validator_service").info("cycle 1 finished")
        text = stream.getvalue()
        assert ("Deferred 1 job" in text) is shown
        assert "a job failed" in text and "cycle 1 finished" in text
    configure_logging("INFO", "text", io.StringIO())
