"""A TCP socket listening on 127.0.0.1 only, for the servers the package runs over HTTP (the
MCP server's ``http`` transport, the thread viewer).

The socket is bound before the server starts: a port that is taken is an error of its own
(uvicorn would log it and exit the process), and port 0 has its number at once.
"""

from __future__ import annotations

import socket

from ..errors import ListenError

#: The only address the package's servers listen on: no other machine reaches them.
LOOPBACK = "127.0.0.1"


def loopback_socket(port: int) -> socket.socket:
    """A socket listening on ``127.0.0.1:port`` (0: a port the system picks).

    :raises ListenError: the port cannot be listened on (taken, or not allowed).
    """
    listening = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listening.bind((LOOPBACK, port))
        listening.listen(128)
    except OSError as error:
        listening.close()
        raise ListenError(
            f"cannot listen on {LOOPBACK}:{port}: {error.strerror or error}", port=port
        ) from None
    return listening


def socket_url(listening: socket.socket, path: str = "/") -> str:
    """The URL of a server on ``listening``, at ``path``."""
    return f"http://{LOOPBACK}:{listening.getsockname()[1]}{path}"
