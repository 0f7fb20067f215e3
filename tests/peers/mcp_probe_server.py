"""A loopback MCP server with one tool, ``probe_echo``, for the real agents (``tox -e peers``).

Standard library only. Two transports:

* stdio (``python mcp_probe_server.py [--log FILE]``): newline-delimited JSON-RPC on
  stdin and stdout, as an agent starts it from ``session/new``'s ``mcpServers``;
* streamable HTTP on 127.0.0.1 (:class:`McpProbeHttpServer`, a context manager in the
  test's process): ``POST /mcp`` answers each request with one JSON body.

``probe_echo`` answers its ``text`` argument behind :data:`ECHO_PREFIX`, so a test can
tell the tool's answer from the model's arguments. Each message received is logged: to
the ``--log`` file (a JSON line each) for stdio, to :attr:`McpProbeHttpServer.received`
for HTTP.
"""

from __future__ import annotations

import json
import sys
import threading
import uuid
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

JsonObject = dict[str, Any]

TOOL = "probe_echo"
DESCRIPTION = "echoes its text"
ECHO_PREFIX = "probe echoed: "
#: The MCP versions this server speaks; it answers the client's own when it knows it.
VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
SERVER_INFO = {"name": "acp-adapters-probe", "version": "1.0.0"}

METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602


def tool_description() -> JsonObject:
    return {
        "name": TOOL,
        "description": DESCRIPTION,
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string", "description": "what to echo"}},
            "required": ["text"],
        },
    }


def answer(message: Any) -> JsonObject | None:
    """The JSON-RPC answer to one message, or None for a notification (or an answer)."""
    if not isinstance(message, dict) or "method" not in message:
        return None
    if "id" not in message:
        return None  # notifications/initialized, notifications/cancelled, ...
    method, params = message["method"], message.get("params") or {}
    reply: JsonObject = {"jsonrpc": "2.0", "id": message["id"]}
    if method == "initialize":
        asked = params.get("protocolVersion") if isinstance(params, dict) else None
        reply["result"] = {
            "protocolVersion": asked if asked in VERSIONS else VERSIONS[-2],
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": SERVER_INFO,
        }
    elif method == "ping":
        reply["result"] = {}
    elif method == "tools/list":
        reply["result"] = {"tools": [tool_description()]}
    elif method == "tools/call":
        name = params.get("name") if isinstance(params, dict) else None
        arguments = params.get("arguments") if isinstance(params, dict) else None
        text = arguments.get("text") if isinstance(arguments, dict) else None
        if name != TOOL or not isinstance(text, str):
            reply["error"] = {"code": INVALID_PARAMS, "message": f"no tool {name!r} taking text"}
        else:
            reply["result"] = {
                "content": [{"type": "text", "text": ECHO_PREFIX + text}],
                "isError": False,
            }
    elif method in ("resources/list", "prompts/list"):
        reply["error"] = {"code": METHOD_NOT_FOUND, "message": f"no {method} here"}
    else:
        reply["error"] = {"code": METHOD_NOT_FOUND, "message": f"no method {method!r}"}
    return reply


def methods_of(log: Path) -> list[str]:
    """The methods of the messages a stdio server logged (none when it never ran)."""
    if not log.exists():
        return []
    found = []
    for line in log.read_text(encoding="utf-8").splitlines():
        message = json.loads(line)
        if isinstance(message, dict) and isinstance(message.get("method"), str):
            found.append(message["method"])
    return found


def serve_stdio(log: Path | None) -> None:
    """Answer newline-delimited JSON-RPC on stdin until it ends."""
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if log is not None:
            with log.open("a", encoding="utf-8") as file:
                file.write(json.dumps(message) + "\n")
        messages = message if isinstance(message, list) else [message]
        replies = [r for r in (answer(m) for m in messages) if r is not None]
        if replies:
            out = replies if isinstance(message, list) else replies[0]
            sys.stdout.write(json.dumps(out) + "\n")
            sys.stdout.flush()


# --- streamable HTTP ------------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 60
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length > 0 else b""
        try:
            message = json.loads(raw)
        except ValueError:
            self._send(HTTPStatus.BAD_REQUEST, {"error": "not JSON"})
            return
        self.server.probe._received(message)
        messages = message if isinstance(message, list) else [message]
        replies = [r for r in (answer(m) for m in messages) if r is not None]
        headers = {}
        if any(isinstance(m, dict) and m.get("method") == "initialize" for m in messages):
            headers["Mcp-Session-Id"] = self.server.probe.session_id
        if not replies:
            self._send(HTTPStatus.ACCEPTED, None, headers)
            return
        self._send(HTTPStatus.OK, replies if isinstance(message, list) else replies[0], headers)

    def do_GET(self) -> None:
        # No stream of the server's own messages (allowed: 405), nor OAuth metadata.
        status = (
            HTTPStatus.NOT_FOUND if "well-known" in self.path else HTTPStatus.METHOD_NOT_ALLOWED
        )
        self._send(status, None)

    def do_DELETE(self) -> None:
        self._send(HTTPStatus.OK, None)

    def _send(
        self, status: HTTPStatus, payload: Any, headers: dict[str, str] | None = None
    ) -> None:
        data = b"" if payload is None else json.dumps(payload).encode()
        self.send_response(status)
        if payload is not None:
            self.send_header("Content-Type", "application/json")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64
    probe: McpProbeHttpServer


class McpProbeHttpServer:
    """The probe over streamable HTTP at :attr:`url` (``http://127.0.0.1:PORT/mcp``)."""

    def __init__(self) -> None:
        self.session_id = uuid.uuid4().hex
        #: Every JSON-RPC message received, in order.
        self.received: list[Any] = []
        self._lock = threading.Lock()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        assert self._httpd is not None, "the server is not running"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/mcp"

    @property
    def methods(self) -> list[str]:
        with self._lock:
            return [
                m["method"]
                for message in self.received
                for m in (message if isinstance(message, list) else [message])
                if isinstance(m, dict) and isinstance(m.get("method"), str)
            ]

    def _received(self, message: Any) -> None:
        with self._lock:
            self.received.append(message)

    def __enter__(self) -> McpProbeHttpServer:
        httpd = _Server(("127.0.0.1", 0), _Handler)
        httpd.probe = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = self._thread = None


def main(argv: list[str]) -> None:
    log = None
    if argv[:1] == ["--log"] and len(argv) == 2:
        log = Path(argv[1])
    elif argv:
        raise SystemExit("usage: mcp_probe_server.py [--log FILE]")
    serve_stdio(log)


if __name__ == "__main__":
    main(sys.argv[1:])
