"""`arena policy`: the built-in offline policy (a heuristic, OpenAI-compatible model server)."""

from __future__ import annotations

from typing import Annotated

import typer

from arena.commands.common import ConfigOption, err, fail, settings_or_fail

app = typer.Typer(help="The built-in heuristic policy (an offline stand-in for a model server).", no_args_is_help=True)


@app.command("serve")
def serve(
    host: Annotated[str, typer.Option("--host", help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="TCP port.", min=1, max=65535)] = 8100,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the policy's random choices.")] = 0,
    config: ConfigOption = None,
) -> None:
    """Serve the heuristic policy at http://HOST:PORT/v1 (model id `heuristic-policy`)."""
    import uvicorn

    from arena.policy.chat_format import MODEL_ID
    from arena.policy.server import create_policy_app

    settings = settings_or_fail(config)
    _check_port(host, port)
    err.print(
        f"serving [bold]{MODEL_ID}[/] (a heuristic, not a neural model) at http://{host}:{port}/v1 "
        f"with seed {seed}; Ctrl-C stops it"
    )
    uvicorn.run(create_policy_app(seed=seed), host=host, port=port, log_level=settings.log_level.lower())


def _check_port(host: str, port: int) -> None:
    """uvicorn only logs a taken port and exits 1; say it plainly instead, before starting."""
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        fail(f"cannot resolve --host {host!r}: {exc}")
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}")
