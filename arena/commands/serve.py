"""`arena serve`: the validator's HTTP API (submissions, leaderboard, cycles, episodes) with uvicorn.

The database is ``--database-url`` or ``ARENA_DATABASE_URL`` (default ``sqlite:///./arena.db``),
brought to the latest schema first unless ``api.apply_migrations`` is off.
Everything else is the ``[api]`` settings group (``ARENA_API__*``).
"""

from __future__ import annotations

from typing import Annotated

import typer

from arena.commands.common import ConfigOption, deprecated, err, fail, settings_or_fail


def serve(
    api_host: Annotated[
        str | None, typer.Option("--api-host", help="Interface to bind (default api.host, 127.0.0.1).")
    ] = None,
    api_port: Annotated[
        int | None, typer.Option("--api-port", min=0, max=65535, help="Port to listen on (default api.port, 8000).")
    ] = None,
    database_url: Annotated[
        str | None,
        typer.Option("--database-url", envvar="ARENA_DATABASE_URL", help="The store (default sqlite:///./arena.db)."),
    ] = None,
    host: Annotated[str | None, typer.Option("--host", hidden=True, help="Deprecated: --api-host.")] = None,
    port: Annotated[int | None, typer.Option("--port", min=0, max=65535, hidden=True, help="Deprecated.")] = None,
    access_log: Annotated[
        bool | None,
        typer.Option(
            "--access-log/--no-access-log",
            help="One stderr line per request: method, path, status, ms (api.access_log).",
        ),
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Serve the validator API: signed submissions, leaderboard (also as HTML at /), cycles, episodes, /metrics.

    --api-host/--api-port are spelled as in `arena validator run --api`; the older --host/--port still work."""
    if host is not None:
        deprecated("--host", "--api-host")
        api_host = api_host or host
    if port is not None:
        deprecated("--port", "--api-port")
        api_port = port if api_port is None else api_port
    from sqlalchemy.exc import SQLAlchemyError

    from arena.api import ApiSetupError, create_app
    from arena.commands.listening import listen_or_fail, server_on, url_of
    from arena.store.db import StoreError, open_store
    from arena.store.migrate import current_revision, head_revision, upgrade_database

    settings = settings_or_fail(config)
    if access_log is not None:
        settings = settings.model_copy(update={"api": settings.api.model_copy(update={"access_log": access_log})})
    api = settings.api
    # Bound first: a taken port fails in one line before the store is opened or migrated.
    sock = listen_or_fail(
        api_host or api.host,
        api.port if api_port is None else api_port,
        host_flag="--api-host",
        port_flag="--api-port",
    )
    try:
        store = open_store(database_url)
        if api.apply_migrations:
            upgrade_database(store.engine)
        elif current_revision(store.engine) != head_revision():
            fail(f"{store.url} is not at schema revision {head_revision()}: run `arena db upgrade`")
        app = create_app(settings, store=store)
    except (StoreError, ApiSetupError) as exc:
        fail(str(exc))
    except SQLAlchemyError as exc:
        fail(f"database: {str(getattr(exc, 'orig', None) or exc).strip().splitlines()[0]}")
    hotkey = app.state.context.validator_hotkey
    err.print(
        f"database {store.url}; chain {api.chain} (netuid {api.netuid}); "
        + (f"receiver hotkey {hotkey}" if hotkey else "no validator hotkey: submissions answer 503"),
        highlight=False,
    )
    from arena.logs import configure_logging

    configure_logging(settings.log_level, settings.log_format, libraries=settings.log_libraries_level)
    url = url_of(sock)
    err.print(
        f"listening on {url} (dashboard {url}/, API {url}/v1/..., metrics {url}/metrics; "
        f"access log {'on' if api.access_log else 'off'}); Ctrl-C stops it",
        highlight=False,
    )
    # log_config=None: uvicorn keeps the handlers configured above (JSON lines when log_format is json).
    # access_log=False: the app logs each request itself, with its duration (api.access_log).
    server_on(app, sock, log_config=None, access_log=False).run(sockets=[sock])
