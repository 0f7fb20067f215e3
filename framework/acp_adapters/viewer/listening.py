"""The viewer served over HTTP on 127.0.0.1 only, by uvicorn, as ``acp-adapters mcp --transport
http`` serves the MCP server: the socket bound first, so that a port that is taken is an
error of its own."""

from __future__ import annotations

from collections.abc import Callable
from types import FrameType

import uvicorn
from starlette.types import ASGIApp

from ..transport.listening import loopback_socket, socket_url
from .app import Stopping


class _Server(uvicorn.Server):
    """uvicorn's server, which also tells the app's event streams to end when it stops (else
    it would wait for each browser that follows a thread, then cancel it)."""

    def __init__(self, config: uvicorn.Config, stopping: Stopping | None) -> None:
        super().__init__(config)
        self.stopping = stopping

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if self.stopping is not None:
            self.stopping.set()
        super().handle_exit(sig, frame)


async def serve_app(
    app: ASGIApp,
    *,
    port: int = 8765,
    on_listening: Callable[[str], None] | None = None,
    stopping: Stopping | None = None,
) -> None:
    """Serve ``app`` at ``http://127.0.0.1:port/`` (port 0: one the system picks) until
    SIGINT or SIGTERM, ``on_listening`` called with the URL once it listens, ``stopping``
    (the one the app was made with) set as soon as a signal asks the server to stop.

    :raises ListenError: the port cannot be listened on (taken, or not allowed).
    """
    listening = loopback_socket(port)  # a port that is taken fails here, with its reason
    with listening:
        config = uvicorn.Config(
            app,
            log_level="warning",
            access_log=False,
            lifespan="on",
            # The event streams end within a second (stopping): this is a bound, no more.
            timeout_graceful_shutdown=5,
        )
        if on_listening is not None:
            on_listening(socket_url(listening))
        await _Server(config, stopping).serve(sockets=[listening])
