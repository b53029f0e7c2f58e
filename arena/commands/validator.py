"""`arena validator run`: the race, one cycle (--once) or one every cycle_length.

Local (``--local``): the chain is the LocalChain kept in the database.
Otherwise the subnet's chain through the bittensor SDK, signed by the
validator's wallet. ``neurons/validator.py`` is the same command under the
subnet's usual name, with the API served alongside.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from arena.commands.common import (
    LOCAL_HELP,
    NETWORK_HELP,
    ConfigOption,
    err,
    fail,
    ignored_network,
    out,
    settings_or_fail,
    show,
)
from arena.logs import configure_logging

app = typer.Typer(help="Run the validator's race cycle.", no_args_is_help=True)

HALTED_EXIT = 3  # `--once` on a cycle that halted: the validator could not measure, nothing was decided


@app.callback()
def validator_group() -> None:
    """The validator: the race cycle (`run`)."""


NetuidOption = Annotated[int | None, typer.Option("--netuid", min=1, help="The subnet's id (default: race.netuid).")]
NetworkOption = Annotated[str, typer.Option("--network", help=NETWORK_HELP)]
WalletName = Annotated[str, typer.Option("--wallet.name", help="Validator wallet (coldkey) name.")]
WalletHotkey = Annotated[str, typer.Option("--wallet.hotkey", help="Validator hotkey name.")]
WalletPath = Annotated[
    Path | None,
    typer.Option(
        "--wallet.path",
        help="Wallet folder (default ~/.bittensor/wallets). With --local, given: its hotkey is the validator's.",
    ),
]
DatabaseOption = Annotated[
    str | None,
    typer.Option("--database-url", envvar="ARENA_DATABASE_URL", help="The store (default sqlite:///./arena.db)."),
]
LocalOption = Annotated[bool, typer.Option("--local", help=LOCAL_HELP)]
OnceOption = Annotated[bool, typer.Option("--once", help="Run (or resume) one cycle, print it, exit.")]
SuiteOption = Annotated[Path | None, typer.Option("--suite", help="Suite directory to race (default: race.suite_dir).")]
CatalogOption = Annotated[Path | None, typer.Option("--catalog", help="Catalog index (default: catalog.path).")]
RaceConfigOption = Annotated[
    Path | None, typer.Option("--race-config", help="TOML file with the \\[race] settings (else ARENA_RACE__*).")
]
WorkersOption = Annotated[
    int | None, typer.Option("--workers", min=0, help="In-process episode workers (default: race.workers).")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print each finished cycle as one JSON object on stdout.")]
ApiOption = Annotated[bool, typer.Option("--api/--no-api", help="Serve the validator API in this process.")]
ApiHost = Annotated[str | None, typer.Option("--api-host", help="Interface the API binds (default api.host).")]
ApiPort = Annotated[
    int | None, typer.Option("--api-port", min=0, max=65535, help="Port the API listens on (default api.port).")
]


def validator_command(*, serve_api: bool, doc: str):
    """The validator command with every flag; ``arena validator run`` and ``neurons/validator.py``
    are both made here, so their flags cannot drift apart (only the --api default differs)."""

    def command(
        netuid: NetuidOption = None,
        network: NetworkOption = "finney",
        wallet_name: WalletName = "default",
        wallet_hotkey: WalletHotkey = "default",
        wallet_path: WalletPath = None,
        database_url: DatabaseOption = None,
        local: LocalOption = False,
        once: OnceOption = False,
        suite: SuiteOption = None,
        catalog: CatalogOption = None,
        race_config: RaceConfigOption = None,
        workers: WorkersOption = None,
        as_json: JsonOption = False,
        api: ApiOption = serve_api,
        api_host: ApiHost = None,
        api_port: ApiPort = None,
        config: ConfigOption = None,
    ) -> None:
        _run_validator(**locals())

    command.__doc__ = doc
    return command


run = app.command("run")(
    validator_command(
        serve_api=False,
        doc="Run the race: intake -> qualifying -> race -> judging -> scoring -> promotion -> weights, per cycle.",
    )
)


def _run_validator(
    *,
    netuid: int | None,
    network: str,
    wallet_name: str,
    wallet_hotkey: str,
    wallet_path: Path | None,
    database_url: str | None,
    local: bool,
    once: bool,
    suite: Path | None,
    catalog: Path | None,
    race_config: Path | None,
    workers: int | None,
    as_json: bool,
    api: bool,
    api_host: str | None,
    api_port: int | None,
    config: Path | None,
) -> None:
    """The command's body."""
    from sqlalchemy.exc import SQLAlchemyError

    from arena.config_file import ConfigError
    from arena.race.context import RaceError
    from arena.race.settings import load_race_settings
    from arena.race.validator_service import Validator, ValidatorError
    from arena.store import StoreError

    settings = settings_or_fail(config)
    configure_logging(settings.log_level, settings.log_format, libraries=settings.log_libraries_level)
    ignored_network(local, network)
    try:
        race = load_race_settings(race_config) if race_config is not None else settings.race
    except ConfigError as exc:
        fail(str(exc))
    updates = {"suite_dir": suite, "workers": workers, "netuid": netuid}
    race = race.model_copy(update={k: v for k, v in updates.items() if v is not None})
    chain, hotkey = None, None
    if not local:
        chain, hotkey = _bittensor_chain(network, race.netuid, wallet_name, wallet_hotkey, wallet_path)
    elif wallet_path is not None:
        hotkey = _wallet_hotkey(wallet_path, wallet_name, wallet_hotkey)
    progress = Progress(
        TextColumn("cycle {task.fields[cycle]} {task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=False,
    )
    bars: dict[tuple[int, str], TaskID] = {}

    def on_progress(update) -> None:
        key = (update.cycle, update.step)
        if key not in bars:
            bars[key] = progress.add_task(update.step, total=update.total, cycle=update.cycle)
        progress.update(bars[key], completed=update.done, total=update.total)

    try:
        validator = Validator(
            settings, race=race, database_url=database_url, chain=chain, hotkey=hotkey,
            catalog_path=catalog, on_progress=on_progress,
        )  # fmt: skip
        if api:
            bind = settings.api
            start_api(settings, validator, api_host or bind.host, bind.port if api_port is None else api_port)
        with progress:
            if once:
                report = validator.run_once()
                _print_report(report, as_json)
                if report.halt is not None:
                    # The log has the one line; the exit status tells a script the cycle decided nothing.
                    err.print(f"[red]cycle {report.cycle} halted[/] ({report.halt.kind}): {report.halt.reason}")
                    err.print(f"fix: {report.halt.fix}")
                    raise typer.Exit(HALTED_EXIT)
                return
            stop = threading.Event()
            try:
                validator.run_forever(stop, on_cycle=lambda report: _print_report(report, as_json))
            except KeyboardInterrupt:
                stop.set()
    except (ValidatorError, RaceError, StoreError, ValueError) as exc:
        fail(str(exc))
    except SQLAlchemyError as exc:
        fail(f"database: {str(exc).splitlines()[0]}")


def _bittensor_chain(network: str, netuid: int, name: str, hotkey: str, path: Path | None):
    from arena.chain.bittensor_chain import BittensorChain, ChainConfigError
    from arena.wallets import WalletError, hotkey_address, load_wallet

    try:
        wallet = load_wallet(path or Path("~/.bittensor/wallets"), name, hotkey)
        return BittensorChain(network, netuid, wallet), hotkey_address(wallet)
    except (WalletError, ChainConfigError) as exc:
        fail(str(exc))


def _wallet_hotkey(path: Path, name: str, hotkey: str) -> str:
    from arena.wallets import WalletError, hotkey_address, load_wallet

    try:
        return hotkey_address(load_wallet(path, name, hotkey))
    except WalletError as exc:
        fail(str(exc))


def start_api(settings, validator, host: str, port: int):
    """The submission API in a daemon thread of this process (when the API package is installed), then its
    endpoint on chain. The validator is prepared first: that registers it on the local chain, and a hotkey
    without a uid cannot publish. Returns the uvicorn server (None when not served)."""
    try:
        from arena.api.app import create_app
    except ImportError as exc:
        err.print(f"[yellow]API not served: {exc}[/]")
        return None
    from arena.commands.listening import listen_or_fail, server_on, url_of

    # Bound here, not in the thread: uvicorn's own bind failure would end the thread with a log line
    # while the race ran on without its API.
    sock = listen_or_fail(host, port, host_flag="--api-host", port_flag="--api-port")
    validator.prepare()
    application = create_app(settings, store=validator.store, chain=validator.chain)
    server = server_on(application, sock, log_level="warning")
    threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="arena-api", daemon=True).start()
    err.print(f"API on {url_of(sock)}", highlight=False)
    publish_api(validator.chain, validator.hotkey, settings.api.public_url, host, sock.getsockname()[1])
    return server


def publish_api(chain, hotkey: str, public_url: str | None, host: str, port: int) -> str | None:
    """Publish where miners reach the API (never a wildcard bind address); the URL published, or None."""
    from arena.api.endpoint import EndpointError, public_endpoint, publish

    try:
        url = public_endpoint(public_url, host, port)
        publish(chain, hotkey, url)
    except Exception as exc:  # publishing is a courtesy to miners; the race does not depend on it
        reason = str(exc) if isinstance(exc, EndpointError) else f"{type(exc).__name__}: {exc}"
        err.print(f"[yellow]endpoint not published: {escape(reason)}[/]")
        return None
    err.print(f"published {url} on netuid {chain.netuid} for {hotkey}", highlight=False)
    return url


def _print_report(report, as_json: bool) -> None:
    table = Table(title=f"cycle {report.cycle} standings")
    for column in ("submission", "qualifying", "race score", "success", "coefficient", "rank", "champion"):
        table.add_column(column, justify="right")

    def number(value) -> str:
        return "-" if value is None else f"{value:.3f}"

    for s in report.standings:
        table.add_row(
            str(s.submission_id), number(s.qualifying_score), number(s.race_score), number(s.success_rate),
            number(s.mean_coefficient), str(s.rank or "-"), "yes" if s.is_champion else "",
        )  # fmt: skip
    show(table, err)
    if report.weights is not None:
        pairs = ", ".join(f"{u}: {w:.4f}" for u, w in zip(report.weights.uids, report.weights.weights, strict=True))
        err.print(f"weights (uid: weight): {pairs}")
    if as_json:
        out.file.write(report.model_dump_json() + "\n")
        out.file.flush()


if __name__ == "__main__":  # `python -m arena.commands.validator run ...`: the same as `arena validator run`
    app()
