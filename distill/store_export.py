"""The corpus exported from the store, with the run and every episode's verdict recorded back in it.

What ``arena export --database-url`` and ``arena demo`` both do: the API shows, for any episode, where
the latest finished export put it and why (``arena.store.exports.latest_verdict``). A run without a
finish time is one that failed part way; the API never reads its verdicts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from distill.export import run_export
from distill.export_model import EpisodeVerdict, ExportConfig, ExportSummary
from distill.importers import store_items

if TYPE_CHECKING:
    from arena.store.db import Store

VERDICT_BATCH = 500  # verdicts per transaction: a large store's export never holds one transaction open


def export_store(store: Store, config: ExportConfig, *, batch_size: int = 500) -> ExportSummary:
    """Export the done episodes ``config.selection`` names, streamed ``batch_size`` at a time, and record
    the run, its verdicts and its funnel in the same store."""
    from arena.store.exports import add_verdicts, finish_export_run, start_export_run

    with store.transaction() as session:
        run_id = start_export_run(session, str(config.out), config.model_dump(mode="json"))
    batch: list[dict] = []

    def flush() -> None:
        with store.transaction() as session:
            add_verdicts(session, run_id, batch)
        batch.clear()

    def on_verdict(verdict: EpisodeVerdict) -> None:
        batch.append(verdict.model_dump(mode="json"))
        if len(batch) >= VERDICT_BATCH:
            flush()

    selection = config.selection
    items = store_items(store, cycles=selection.cycles, suites=selection.suites, batch_size=batch_size)
    summary = run_export(items, config, on_verdict=on_verdict)
    flush()
    with store.transaction() as session:
        finish_export_run(session, run_id, summary.funnel.model_dump())
    return summary
