"""`arena worker`: run episode and judge jobs from the PostgreSQL task queue.

Any number of workers, on any machines, pointing at the validator's
database (``ARENA_DATABASE_URL``): each needs the same catalog and the same
model servers as the validator. SIGINT/SIGTERM stop it gracefully (running
episodes finish). A SIGKILL is noticed by the validator's dispatcher once the
worker's heartbeat is ``race.stalled_worker_s`` old: it releases the dead
worker's episode leases at once, so the episodes run again on another worker
(never stored twice); the next worker to start on the host, or any worker's
housekeeping, removes the dead worker's episode folders.
"""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path
from typing import Annotated

import typer

from arena.commands.common import ConfigOption, err, fail, settings_or_fail
from arena.logs import configure_logging


def worker(
    database_url: Annotated[
        str | None,
        typer.Option("--database-url", envvar="ARENA_DATABASE_URL", help="PostgreSQL URL of the validator's store."),
    ] = None,
    concurrency: Annotated[
        int | None, typer.Option("--concurrency", min=1, help="Episodes at once (default: race.workers, at least 1).")
    ] = None,
    catalog: Annotated[
        Path | None, typer.Option("--catalog", help="Catalog index directory (default: catalog.path).")
    ] = None,
    race_config: Annotated[
        Path | None, typer.Option("--race-config", help="TOML file with the \\[race] settings (model servers, leases).")
    ] = None,
    name: Annotated[str | None, typer.Option("--name", help="Worker name in logs and the queue.")] = None,
    config: ConfigOption = None,
) -> None:
    """Run procrastinate workers for the race's episodes and judgments against ARENA_DATABASE_URL."""
    from arena.config_file import ConfigError
    from arena.race.settings import load_race_settings
    from arena.race.validator_service import ValidatorError
    from arena.store import StoreError, open_store, resolve_url, safe_url

    settings = settings_or_fail(config)
    configure_logging(settings.log_level, settings.log_format, libraries=settings.log_libraries_level)
    try:
        race = load_race_settings(race_config) if race_config is not None else settings.race
        url = resolve_url(database_url)
    except (ConfigError, StoreError) as exc:
        fail(str(exc))
    if url.get_backend_name() != "postgresql":
        fail(
            f"{safe_url(url)} is not PostgreSQL: with the embedded SQLite store the validator runs the episodes "
            f"itself; `arena worker` needs the shared PostgreSQL queue (set ARENA_DATABASE_URL)"
        )
    store = open_store(url)
    slots = concurrency or max(1, race.workers)
    label = name or f"worker-{__import__('os').getpid()}"
    try:
        asyncio.run(_serve(settings, race, store, catalog or settings.catalog.path, slots, label))
    except ValidatorError as exc:
        fail(str(exc))
    finally:
        store.dispose()
    err.print(f"worker {label} stopped")


async def _serve(settings, race, store, catalog_path: Path, concurrency: int, name: str) -> None:
    from arena.race.queues import connector_for
    from arena.race.tasks import create_task_app
    from arena.race.validator_service import widen_thread_pool, worker_context
    from arena.race.workers import run_workers
    from arena.store.resilience import retry_async

    loop = asyncio.get_running_loop()
    widen_thread_pool(loop, concurrency)
    stop = asyncio.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    context = worker_context(settings, race, store, catalog_path)
    app = create_task_app(connector_for(store.engine.url.render_as_string(hide_password=False)), context)
    await retry_async(app.open_async, what="open the task queue")
    err.print(f"worker {name}: {concurrency} slot(s) on {store.url}")
    try:
        await run_workers(app, race, concurrency=concurrency, name=name, stop=stop, context=context)
    finally:
        await app.close_async()
        await context.registry.aclose()
        await context.judge.aclose()


if __name__ == "__main__":  # `python -m arena.commands.worker`: the same as `arena worker`
    typer.run(worker)
