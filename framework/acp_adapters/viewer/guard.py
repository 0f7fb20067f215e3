"""What every answer of the viewer goes through: the ``Host`` and ``Origin`` checks (a page of
another site, or a DNS name rebound to 127.0.0.1, is refused) and the headers that keep any
text of an agent from running as script (a strict Content-Security-Policy)."""

from __future__ import annotations

import re

from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: The names this server answers to: the loopback addresses and ``localhost``, with any port
#: (as the MCP server's HTTP transport allows them).
LOCAL_HOST = re.compile(r"(?:127\.0\.0\.1|localhost|\[::1\])(?::[0-9]{1,5})?")

#: No script but the app's own file, no inline script or style attribute, no plugin, no frame,
#: no form sent anywhere, nothing fetched from elsewhere.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)

SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-resource-policy", b"same-origin"),
)


def refusal(headers: Headers) -> tuple[int, str] | None:
    """Why a request is refused (its status and a line), or None when it may be answered:
    a ``Host`` that is not a local name is 421; an ``Origin`` other than the page's own
    (``http://`` and that ``Host``) is 403."""
    host = headers.get("host")
    if host is None or LOCAL_HOST.fullmatch(host) is None:
        return 421, "Invalid Host header"
    origin = headers.get("origin")
    if origin is not None and origin != f"http://{host}":
        return 403, "Invalid Origin header"
    return None


class Guard:
    """ASGI middleware: refuses what :func:`refusal` refuses, and adds
    :data:`SECURITY_HEADERS` to every answer."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        refused = refusal(Headers(scope=scope))
        if refused is not None:
            status, text = refused
            await PlainTextResponse(text, status_code=status)(scope, receive, secured)
            return
        await self.app(scope, receive, secured)
