"""The experiment's arena episodes, kept as the race keeps them: in the store, then exported from it.

The race writes each episode and each judgment version to the store (SQLite by default, PostgreSQL
in production), and a researcher's corpus is exported from there (``arena export --database``).
The experiment's arena step does the same, so the corpus its student trains on went through the
same tables, the same problem-place join (cluster and partition from the imported suite, never from
the record) and the same export source (``distill.importers.store_items``) as a subnet's corpus.

Each reference agent is stored as a submission of its own (hotkey ``reference-<agent>``), and each
run of the step is a new cycle, so a shared PostgreSQL store can hold several experiments.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.runner.record import EpisodeRecord
from judge.verdict import JudgmentOutcome, JudgmentPending

REFERENCE_HOTKEY = "reference-{agent}"


@dataclass(frozen=True)
class AgentEpisodes:
    agent: str
    code: bytes
    records: list[EpisodeRecord]


def default_url(folder: Path) -> str:
    return f"sqlite:///{(folder / 'arena.db').resolve()}"


def store_race(url: str, suite_dir: Path, runs: list[AgentEpisodes], outcomes: list[JudgmentOutcome]) -> dict[str, Any]:
    """Store every episode and its judgment (pending ones stay pending: the export's reasoning gate
    drops them); the cycle number and the counts."""
    from arena.intake.copies import fingerprint, minhash_bytes
    from arena.store import cycles as cycle_rows
    from arena.store import episodes as episode_rows
    from arena.store import open_store
    from arena.store import submissions as submission_rows
    from arena.store import suites as suite_rows
    from arena.store.episodes import EpisodeKey
    from arena.store.migrate import upgrade_database
    from arena.store.models_race import EpisodeStage
    from arena.store.submissions import NewSubmission
    from judge.stored_episodes import add_judgment

    judged = {outcome.episode_id: outcome for outcome in outcomes}
    upgrade_database(url)
    store = open_store(url)
    try:
        with store.transaction() as session:
            suite = suite_rows.import_suite(session, suite_dir)
            latest = cycle_rows.latest_cycle(session)
            cycle = (latest.number if latest else 0) + 1
            cycle_rows.start_cycle(session, cycle, suite.suite_id, {"experiment": True})
            stored = pending = 0
            for run in runs:
                prints = fingerprint(run.code)
                submission = submission_rows.add_submission(
                    session,
                    NewSubmission(
                        hotkey=REFERENCE_HOTKEY.format(agent=run.agent), agent_name=f"{run.agent}.py", code=run.code,
                        ast_hash=prints.ast_hash, minhash=minhash_bytes(prints.minhash),
                    ),
                )  # fmt: skip
                keys = [
                    EpisodeKey(cycle=cycle, stage=EpisodeStage.race, submission_id=submission.id,
                                    suite_id=suite.suite_id, problem_id=record.problem.id, attempt=record.attempt)
                    for record in run.records
                ]  # fmt: skip
                for info, record in zip(episode_rows.ensure_episodes(session, keys), run.records, strict=True):
                    episode_rows.complete(session, info.id, record, record.outcome)
                    stored += 1
                    outcome = judged.get(record.episode_id)
                    if outcome is not None:
                        add_judgment(session, info.id, outcome)
                        pending += isinstance(outcome, JudgmentPending)
    finally:
        store.dispose()
    return {"cycle": cycle, "suite_id": suite.suite_id, "episodes": stored, "judgments_pending": pending}
