"""`arena policy`: the built-in offline policy (a heuristic, OpenAI-compatible model server)."""

from __future__ import annotations

from typing import Annotated

import typer

from arena.commands.common import ConfigOption, err, settings_or_fail

app = typer.Typer(help="The built-in heuristic policy (an offline stand-in for a model server).", no_args_is_help=True)


@app.command("serve")
def serve(
    host: Annotated[str, typer.Option("--host", help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="TCP port.", min=1, max=65535)] = 8100,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the policy's random choices.")] = 0,
    config: ConfigOption = None,
) -> None:
    """Serve the heuristic policy at http://HOST:PORT/v1 (model id `heuristic-policy`)."""
    from arena.commands.listening import listen_or_fail, server_on, url_of
    from arena.policy.chat_format import MODEL_ID
    from arena.policy.server import create_policy_app

    settings = settings_or_fail(config)
    sock = listen_or_fail(host, port, host_flag="--host", port_flag="--port")
    err.print(
        f"serving [bold]{MODEL_ID}[/] (a heuristic, not a neural model) at {url_of(sock)}/v1 "
        f"with seed {seed}; Ctrl-C stops it"
    )
    server_on(create_policy_app(seed=seed), sock, log_level=settings.log_level.lower()).run(sockets=[sock])
