"""A tiny HTTP server on 127.0.0.1 for the tests, serving files the test adds.

    with LoopbackServer() as server:
        server.add("/agent.tar.gz", body, etag='"v1"')
        url = server.url("/agent.tar.gz")
        ...
        assert [r.path for r in server.requests] == ["/agent.tar.gz"]

Each file can carry an ``ETag`` and a ``Last-Modified`` (a conditional request that matches
is answered 304), and can misbehave on purpose: ``truncate_at`` announces the whole
``Content-Length`` but closes after that many bytes, ``omit_length`` sends no
``Content-Length`` (the body ends when the connection closes), ``delay`` waits before the
answer, ``gate`` (a ``threading.Event``) holds the answer until the test sets it, and
``drip`` sends the body one byte at a time, that many seconds apart (the status line and
headers too with ``drip_headers``). Nothing here sleeps
past the server's close: leaving the ``with`` block releases every held answer.
"""

from __future__ import annotations

import contextlib
import email.utils
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import NamedTuple

__all__ = ["LoopbackServer", "Request", "Served"]


class Request(NamedTuple):
    """One request the server received: its path (with the query) and its headers."""

    path: str
    headers: dict[str, str]


@dataclass
class Served:
    """A file the server serves, and how it (mis)behaves; see :meth:`LoopbackServer.add`."""

    body: bytes
    status: int = 200
    etag: str | None = None
    last_modified: str | None = None
    content_type: str = "application/octet-stream"
    headers: Mapping[str, str] = field(default_factory=dict)
    truncate_at: int | None = None
    omit_length: bool = False
    delay: float | None = None
    gate: threading.Event | None = None
    drip: float | None = None
    drip_headers: bool = False


class LoopbackServer:
    """An HTTP/1.0 server on ``127.0.0.1`` (a free port), run in a thread while in a ``with``."""

    def __init__(self) -> None:
        self._files: dict[str, Served] = {}
        self._requests: list[Request] = []
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._seen = threading.Condition(self._lock)
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    # -- the test's side ------------------------------------------------------------------

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    def url(self, path: str) -> str:
        """The ``http://127.0.0.1:PORT`` URL of ``path`` (which starts with ``/``)."""
        return f"http://127.0.0.1:{self.port}{path}"

    def add(
        self,
        path: str,
        body: bytes,
        *,
        status: int = 200,
        etag: str | None = None,
        last_modified: str | None = None,
        content_type: str = "application/octet-stream",
        headers: Mapping[str, str] | None = None,
        truncate_at: int | None = None,
        omit_length: bool = False,
        delay: float | None = None,
        gate: threading.Event | None = None,
        drip: float | None = None,
        drip_headers: bool = False,
    ) -> str:
        """Serve ``body`` at ``path`` (replacing what was there) and return its URL.

        ``etag`` / ``last_modified`` (an HTTP date; see :meth:`http_date`) are sent and
        honoured in ``If-None-Match`` / ``If-Modified-Since``. ``status`` and ``headers``
        shape the answer (say 302 with a ``Location``). The misbehaviours are described in
        the module's docstring.
        """
        served = Served(
            body,
            status=status,
            etag=etag,
            last_modified=last_modified,
            content_type=content_type,
            headers=dict(headers or {}),
            truncate_at=truncate_at,
            omit_length=omit_length,
            delay=delay,
            gate=gate,
            drip=drip,
            drip_headers=drip_headers,
        )
        with self._lock:
            self._files[path] = served
        return self.url(path)

    def remove(self, path: str) -> None:
        """Stop serving ``path`` (it answers 404 from now on)."""
        with self._lock:
            self._files.pop(path, None)

    @property
    def requests(self) -> list[Request]:
        """A copy of the requests received so far, in order."""
        with self._lock:
            return list(self._requests)

    def requests_for(self, path: str) -> list[Request]:
        """The requests received so far for ``path``."""
        return [r for r in self.requests if r.path == path]

    def wait_for_requests(self, count: int, timeout: float = 30.0) -> bool:
        """Wait until ``count`` requests have arrived; false when ``timeout`` passed first."""
        with self._seen:
            return self._seen.wait_for(lambda: len(self._requests) >= count, timeout)

    @staticmethod
    def http_date(timestamp: float) -> str:
        """``timestamp`` (seconds since the epoch) as an HTTP date, for ``last_modified``."""
        return email.utils.formatdate(timestamp, usegmt=True)

    def __enter__(self) -> LoopbackServer:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._closing.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join()

    # -- the server's side ----------------------------------------------------------------

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                server._serve(self)

            def do_HEAD(self) -> None:
                server._serve(self, head=True)

        return Handler

    def _wait(self, seconds: float) -> None:
        self._closing.wait(seconds)

    def _serve(self, handler: BaseHTTPRequestHandler, *, head: bool = False) -> None:
        with self._seen:
            self._requests.append(Request(handler.path, dict(handler.headers.items())))
            self._seen.notify_all()
            served = self._files.get(handler.path.split("?", 1)[0]) or self._files.get(handler.path)
        with contextlib.suppress(ConnectionError, TimeoutError):
            if served is None:
                handler.send_error(404)
                return
            if served.delay:
                self._wait(served.delay)
            if served.gate is not None:
                while not served.gate.wait(0.05) and not self._closing.is_set():
                    pass
            if self._closing.is_set():
                return
            if served.status == 200 and self._not_modified(handler, served):
                handler.send_response(304)
                self._validators(handler, served)
                handler.end_headers()
                return
            handler.send_response(served.status)
            handler.send_header("Content-Type", served.content_type)
            if not served.omit_length:
                handler.send_header("Content-Length", str(len(served.body)))
            self._validators(handler, served)
            for name, value in served.headers.items():
                handler.send_header(name, value)
            if served.drip and served.drip_headers:
                handler.send_header("X-Padding", "p" * 1000)
                raw_head = b"".join(getattr(handler, "_headers_buffer", [])) + b"\r\n"
                handler._headers_buffer = []  # type: ignore[attr-defined]
                if not self._drip(handler, raw_head, served.drip):
                    return
            else:
                handler.end_headers()
            if head:
                return
            body = served.body
            if served.truncate_at is not None:
                body = body[: served.truncate_at]
            if served.drip:
                if not self._drip(handler, body, served.drip):
                    return
            else:
                handler.wfile.write(body)
            handler.wfile.flush()
            handler.close_connection = True

    def _drip(self, handler: BaseHTTPRequestHandler, data: bytes, seconds: float) -> bool:
        """Write ``data`` a byte at a time; false when the server closed meanwhile."""
        for index in range(len(data)):
            handler.wfile.write(data[index : index + 1])
            handler.wfile.flush()
            self._wait(seconds)
            if self._closing.is_set():
                return False
        return True

    @staticmethod
    def _validators(handler: BaseHTTPRequestHandler, served: Served) -> None:
        if served.etag is not None:
            handler.send_header("ETag", served.etag)
        if served.last_modified is not None:
            handler.send_header("Last-Modified", served.last_modified)

    @staticmethod
    def _not_modified(handler: BaseHTTPRequestHandler, served: Served) -> bool:
        if_none_match = handler.headers.get("If-None-Match")
        if if_none_match is not None:
            if served.etag is None:
                return False
            tags = [t.strip() for t in if_none_match.split(",")]
            weakless = served.etag.removeprefix("W/")
            return "*" in tags or any(t.removeprefix("W/") == weakless for t in tags)
        if_modified_since = handler.headers.get("If-Modified-Since")
        if if_modified_since is not None and served.last_modified is not None:
            try:
                since = email.utils.parsedate_to_datetime(if_modified_since)
                modified = email.utils.parsedate_to_datetime(served.last_modified)
            except (TypeError, ValueError):
                return False
            return modified <= since
        return False
