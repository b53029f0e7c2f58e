"""The socket a server command listens on, bound before uvicorn starts.

uvicorn binds the port itself and answers a taken one with a log line (``[Errno 98] error while
attempting to bind``) and exit status 3 (``arena serve``), 1 (``arena policy serve``) or, in a thread
(``arena validator run --api``), nothing at all. Binding here first turns each of those into one
line with the cause and the fix, exit status 2 like every ``fail()``, before anything else starts;
and the bound socket tells the real URL (``--api-port 0`` picks a free port).
"""

from __future__ import annotations

import errno
import socket
from typing import Any

from arena.commands.common import fail

BACKLOG = 2048  # uvicorn's default: connections made before it starts wait in the queue


def listen_or_fail(host: str, port: int, *, host_flag: str, port_flag: str) -> socket.socket:
    """A listening socket on ``host:port``, or exit 2 with the cause and the flag that fixes it."""
    where = f"{host}:{port}"
    # The family as uvicorn picks it: a name ("localhost") binds IPv4, as it did when uvicorn bound it.
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn: a restart reuses a TIME_WAIT port
    try:
        sock.bind((host, port))
        sock.listen(BACKLOG)
    except socket.gaierror as exc:
        sock.close()
        fail(
            f"cannot listen on {where}: {host_flag} {host!r} does not resolve ({exc.strerror}); pass an address of this machine"
        )
    except OSError as exc:
        sock.close()
        fail(f"cannot listen on {where}: {_cause_and_fix(exc, host, port, host_flag, port_flag)}")
    return sock


def _cause_and_fix(exc: OSError, host: str, port: int, host_flag: str, port_flag: str) -> str:
    if exc.errno == errno.EADDRINUSE:
        return (
            f"the port is in use by another process; pass another {port_flag}, or stop the process listening "
            f"there (`ss -ltnp 'sport = :{port}'` names it)"
        )
    if exc.errno == errno.EACCES:
        return f"permission denied (ports below 1024 need root); pass a {port_flag} from 1024 up"
    if exc.errno == errno.EADDRNOTAVAIL:
        return (
            f"{host} is not an address of this machine; pass another {host_flag} "
            "(127.0.0.1: this machine only, 0.0.0.0: every interface)"
        )
    return f"{exc.strerror or exc}; pass another {host_flag} or {port_flag}"


def url_of(sock: socket.socket) -> str:
    """``http://HOST:PORT`` of a bound socket (the port it really got, when 0 was asked for)."""
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def server_on(app: Any, sock: socket.socket, **config: Any):
    """A uvicorn server for ``app`` that serves on ``sock``: ``server.run(sockets=[sock])`` starts it."""
    import uvicorn

    host, port = sock.getsockname()[:2]
    return uvicorn.Server(uvicorn.Config(app, host=host, port=port, **config))
