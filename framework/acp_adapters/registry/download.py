"""Downloads from the network with a size cap and an overall deadline, over HTTPS only.

Everything here treats the network as hostile: the size cap is enforced while the body
is read (never more than ``max_bytes + 1`` bytes are taken), the deadline bounds the whole
transfer (a server that sends one byte a second does not get to keep us), a body shorter
than its ``Content-Length`` is an error and never a short result, and only ``https://``
URLs are fetched (redirects included). Plain ``http://`` is accepted for the loopback
hosts ``127.0.0.1``, ``localhost`` and ``[::1]`` only when the caller asks for it (the
tests serve from a loopback server).

This module uses the standard library's ``urllib`` and imports nothing of the registry
package, so the registry's modules can import it.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import os
import socket
import ssl
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from email.message import Message
from pathlib import Path
from typing import IO, Any

from acp_adapters.errors import AcpAdaptersError

__all__ = [
    "LOOPBACK_HOSTS",
    "DownloadError",
    "FetchResult",
    "Progress",
    "download_to",
    "fetch",
]

#: ``(done_bytes, total_bytes or None when the server did not say)``, called as bytes arrive.
Progress = Callable[[int, "int | None"], None]

#: The hosts for which ``http://`` is accepted when ``allow_loopback_http`` is true.
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})

_CHUNK = 64 * 1024


class DownloadError(AcpAdaptersError):
    """Raised by :func:`fetch` and :func:`download_to` when a download fails or is refused.

    The message names the URL and the reason: too large, truncated (fewer bytes than the
    ``Content-Length``), timed out, not HTTPS, an HTTP error status, a failed connection.
    ``url`` is the URL asked for and ``reason`` the reason alone. Callers may sort by how
    the reason starts, and these beginnings are kept: ``too large``, ``truncated``,
    ``timed out after``, ``not HTTPS``, ``redirected to``, ``not a valid URL``, ``HTTP <status>``,
    ``connection failed``, ``connection lost``.
    """

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"download of {_shown(url)} failed: {reason}")
        self.url = url
        self.reason = reason


@dataclass(frozen=True)
class FetchResult:
    """What :func:`fetch` got.

    ``body`` is ``None`` exactly when ``not_modified`` is true (the server answered 304 to
    a conditional request); ``etag`` and ``last_modified`` are the response's validators,
    to send back as ``If-None-Match`` / ``If-Modified-Since`` next time.
    """

    body: bytes | None
    status: int
    etag: str | None
    last_modified: str | None
    not_modified: bool


def fetch(
    url: str,
    *,
    max_bytes: int,
    timeout: float,
    headers: Mapping[str, str] | None = None,
    allow_loopback_http: bool = False,
    progress: Progress | None = None,
) -> FetchResult:
    """Fetch ``url`` into memory and return a :class:`FetchResult`.

    ``max_bytes`` caps the body: a larger ``Content-Length`` is refused before reading, and
    the body is read to at most ``max_bytes + 1`` bytes, a body over the cap being refused.
    ``timeout`` (seconds) bounds the whole request, connection and body together.
    ``headers`` are sent as given (for instance ``If-None-Match`` or ``If-Modified-Since``
    for a conditional request; a 304 answer gives ``not_modified=True`` and ``body=None``).
    Only ``https://`` URLs are fetched, and ``http://`` to ``127.0.0.1``, ``localhost`` or
    ``[::1]`` when ``allow_loopback_http`` is true; redirects are held to the same rule.
    ``progress(done_bytes, total_bytes_or_None)`` is called as the body arrives.

    Raises :class:`DownloadError` naming the URL and the reason.
    """
    chunks: list[bytes] = []
    outcome = _transfer(
        url,
        chunks.append,
        max_bytes=max_bytes,
        timeout=timeout,
        headers=headers,
        allow_loopback_http=allow_loopback_http,
        progress=progress,
        conditional=True,
    )
    if outcome.not_modified:
        return FetchResult(None, outcome.status, outcome.etag, outcome.last_modified, True)
    return FetchResult(b"".join(chunks), outcome.status, outcome.etag, outcome.last_modified, False)


def download_to(
    url: str,
    dest: Path,
    *,
    max_bytes: int,
    timeout: float,
    allow_loopback_http: bool = False,
    progress: Progress | None = None,
) -> tuple[Path, str, int]:
    """Download ``url`` into the file ``dest``, streaming, and return ``(dest, sha256_hex, size)``.

    The caps and the URL rule are those of :func:`fetch` (``max_bytes`` for the body,
    ``timeout`` seconds for the whole transfer, HTTPS only but for loopback HTTP when
    ``allow_loopback_http``); the sha256 is of the bytes written. ``dest`` is created or
    overwritten; on any failure it is removed and :class:`DownloadError` is raised, naming
    the URL and the reason.
    """
    digest = hashlib.sha256()
    size = 0
    try:
        with open(dest, "wb") as out:

            def sink(chunk: bytes) -> None:
                nonlocal size
                digest.update(chunk)
                out.write(chunk)
                size += len(chunk)

            _transfer(
                url,
                sink,
                max_bytes=max_bytes,
                timeout=timeout,
                headers=None,
                allow_loopback_http=allow_loopback_http,
                progress=progress,
                conditional=False,
            )
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(dest)
        raise
    return dest, digest.hexdigest(), size


# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Outcome:
    status: int
    etag: str | None
    last_modified: str | None
    not_modified: bool


def _shown(url: str) -> str:
    """The URL as shown in a message: credentials dropped, control characters escaped."""
    try:
        parts = urllib.parse.urlsplit(url)
        if parts.username is not None or parts.password is not None:
            host = parts.hostname or ""
            if ":" in host:
                host = f"[{host}]"
            if parts.port is not None:
                host = f"{host}:{parts.port}"
            url = urllib.parse.urlunsplit(parts._replace(netloc=host))
    except ValueError:
        pass
    return "".join(c if c.isprintable() and c != "\\" else repr(c)[1:-1] for c in url)


def _refusal(url: str, allow_loopback_http: bool) -> str | None:
    """Why ``url`` may not be fetched, or ``None`` when it may."""
    try:
        parts = urllib.parse.urlsplit(url)
        host = parts.hostname
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError as exc:
        return f"not a valid URL ({exc})"
    scheme = parts.scheme.lower()
    if scheme == "https" and host:
        return None
    if scheme == "http" and allow_loopback_http and host in LOOPBACK_HOSTS:
        return None
    if allow_loopback_http:
        return "not HTTPS (plain http:// is accepted only for 127.0.0.1, localhost and [::1])"
    return "not HTTPS (only https:// URLs are downloaded)"


def _is_loopback(url: str) -> bool:
    try:
        return urllib.parse.urlsplit(url).hostname in LOOPBACK_HOSTS
    except ValueError:
        return False


class _CheckedRedirects(urllib.request.HTTPRedirectHandler):
    """Follows a redirect only to a URL that passes the same rule as the first one."""

    def __init__(self, original: str, allow_loopback_http: bool) -> None:
        self._original = original
        self._allow_loopback_http = allow_loopback_http

    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: IO[bytes],
        code: int,
        msg: str,
        headers: http.client.HTTPMessage,
        newurl: str,
    ) -> urllib.request.Request | None:
        refusal = _refusal(newurl, self._allow_loopback_http)
        if refusal is not None:
            with contextlib.suppress(Exception):
                fp.close()
            raise DownloadError(self._original, f"redirected to {_shown(newurl)}: {refusal}")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


class _Watchdog:
    """Shuts the transfer's sockets down at the deadline, whatever call is blocked on them.

    A socket timeout bounds one read; a server sending a byte at a time (headers or body)
    would get past it. The watchdog's timer ends the transfer as a whole: every socket the
    transfer opens is registered, and shut down when the time is up.
    """

    def __init__(self, seconds: float) -> None:
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self.expired = False
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def __enter__(self) -> _Watchdog:
        self._timer.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._timer.cancel()

    def register(self, sock: socket.socket) -> socket.socket:
        with self._lock:
            self._sockets.append(sock)
            if self.expired:
                self._shut(sock)
        return sock

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            for sock in self._sockets:
                self._shut(sock)

    @staticmethod
    def _shut(sock: socket.socket) -> None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)

    def connection_class(
        self, base: type[http.client.HTTPConnection]
    ) -> type[http.client.HTTPConnection]:
        """``base`` with its TCP socket registered as soon as it is connected (before TLS)."""
        watchdog = self

        class Watched(base):  # type: ignore[valid-type,misc]
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, **kwargs)

                def create_connection(*a: Any, **k: Any) -> socket.socket:
                    return watchdog.register(socket.create_connection(*a, **k))

                # What HTTPConnection.connect calls to open its TCP connection.
                self._create_connection = create_connection

        return Watched


class _WatchedHTTP(urllib.request.HTTPHandler):
    def __init__(self, watchdog: _Watchdog) -> None:
        super().__init__()
        self._watchdog = watchdog

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(self._watchdog.connection_class(http.client.HTTPConnection), req)


class _WatchedHTTPS(urllib.request.HTTPSHandler):
    def __init__(self, watchdog: _Watchdog) -> None:
        self._verified = ssl.create_default_context()  # certificates and host name checked
        super().__init__(context=self._verified)
        self._watchdog = watchdog

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        connection = self._watchdog.connection_class(http.client.HTTPSConnection)
        return self.do_open(connection, req, context=self._verified)


def _header(headers: Message | None, name: str) -> str | None:
    if headers is None:
        return None
    value = headers.get(name)
    return str(value) if value is not None else None


def _transfer(
    url: str,
    sink: Callable[[bytes], object],
    *,
    max_bytes: int,
    timeout: float,
    headers: Mapping[str, str] | None,
    allow_loopback_http: bool,
    progress: Progress | None,
    conditional: bool,
) -> _Outcome:
    if max_bytes < 0:
        raise ValueError("max_bytes must be >= 0")
    if not timeout > 0:
        raise ValueError("timeout must be > 0")
    refusal = _refusal(url, allow_loopback_http)
    if refusal is not None:
        raise DownloadError(url, refusal)

    sent = {"Accept-Encoding": "identity", "User-Agent": "acp-adapters"}
    sent.update(headers or {})
    request = urllib.request.Request(url, headers=sent)
    with _Watchdog(timeout) as watchdog:
        handlers: list[urllib.request.BaseHandler] = [
            _CheckedRedirects(url, allow_loopback_http),
            _WatchedHTTP(watchdog),
            _WatchedHTTPS(watchdog),
        ]
        if _is_loopback(url):
            handlers.append(urllib.request.ProxyHandler({}))  # never send loopback to a proxy
        opener = urllib.request.build_opener(*handlers)
        timed_out = f"timed out after {timeout:g} s"
        try:
            return _read(
                opener, request, url, sink, watchdog, max_bytes, timeout, progress, conditional
            )
        except DownloadError:
            if watchdog.expired:
                raise DownloadError(url, timed_out) from None
            raise
        except TimeoutError:
            raise DownloadError(url, timed_out) from None


def _read(
    opener: urllib.request.OpenerDirector,
    request: urllib.request.Request,
    url: str,
    sink: Callable[[bytes], object],
    watchdog: _Watchdog,
    max_bytes: int,
    timeout: float,
    progress: Progress | None,
    conditional: bool,
) -> _Outcome:
    # Whatever fails once the watchdog has shut the sockets is reported as the timeout.
    try:
        response = opener.open(request, timeout=timeout)  # the socket's: connect, each read
    except urllib.error.HTTPError as exc:
        with contextlib.closing(exc):
            if exc.code == 304 and conditional and not watchdog.expired:
                return _Outcome(
                    304,
                    _header(exc.headers, "ETag"),
                    _header(exc.headers, "Last-Modified"),
                    True,
                )
            raise DownloadError(url, f"HTTP {exc.code} {exc.reason}".rstrip()) from None
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, TimeoutError):
            raise exc.reason from None
        raise DownloadError(url, f"connection failed: {exc.reason}") from None
    except TimeoutError:
        raise
    except (OSError, http.client.HTTPException) as exc:
        raise DownloadError(url, f"connection failed: {exc}") from None

    with response:
        status = int(response.status)
        etag = _header(response.headers, "ETag")
        last_modified = _header(response.headers, "Last-Modified")
        total: int | None = None
        length = _header(response.headers, "Content-Length")
        if length is not None and length.strip().isdigit():
            total = int(length.strip())
        if total is not None and total > max_bytes:
            raise DownloadError(
                url, f"too large: the server announces {total} bytes, the limit is {max_bytes}"
            )
        done = 0
        if progress is not None:
            progress(0, total)
        while True:
            try:
                chunk = response.read1(min(_CHUNK, max_bytes + 1 - done))
            except TimeoutError:
                raise
            except http.client.IncompleteRead as exc:
                got = done + len(exc.partial)
                raise DownloadError(
                    url, f"truncated: the connection closed after {got} bytes"
                ) from None
            except (OSError, http.client.HTTPException) as exc:
                raise DownloadError(url, f"connection lost after {done} bytes: {exc}") from None
            if not chunk:
                break
            done += len(chunk)
            if done > max_bytes:
                raise DownloadError(url, f"too large: more than the limit of {max_bytes} bytes")
            sink(chunk)
            if progress is not None:
                progress(done, total)
        if watchdog.expired:  # the end of the body may be the watchdog's doing
            raise DownloadError(url, "timed out")
        if total is not None and done < total:
            raise DownloadError(
                url, f"truncated: received {done} of the {total} bytes announced (Content-Length)"
            )
    return _Outcome(status, etag, last_modified, False)
