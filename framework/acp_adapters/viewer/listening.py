"""The viewer served over HTTP on 127.0.0.1 only, by uvicorn, as ``acp-adapters mcp --transport
http`` serves the MCP server: the socket bound first, so that a port that is taken is an
error of its own."""

from __future__ import annotations

import socket
from collections.abc import Callable

from starlette.types import ASGIApp

from ..errors import ListenError


async def serve_app(
    app: ASGIApp, *, port: int = 8765, on_listening: Callable[[str], None] | None = None
) -> None:
    """Serve ``app`` at ``http://127.0.0.1:port/`` (port 0: one the system picks) until
    cancelled, ``on_listening`` called with the URL once it listens.

    :raises ListenError: the port cannot be listened on (taken, or not allowed).
    """
    import uvicorn

    listening = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listening.bind(("127.0.0.1", port))
        listening.listen(128)
    except OSError as error:
        listening.close()
        raise ListenError(
            f"cannot listen on 127.0.0.1:{port}: {error.strerror or error}", port=port
        ) from None
    with listening:
        config = uvicorn.Config(
            app,
            log_level="warning",
            access_log=False,
            lifespan="on",
            # A browser that leaves a live thread is let go at once.
            timeout_graceful_shutdown=1,
        )
        if on_listening is not None:
            on_listening(f"http://127.0.0.1:{listening.getsockname()[1]}/")
        await uvicorn.Server(config).serve(sockets=[listening])
