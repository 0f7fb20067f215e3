"""A thread viewer in the browser (``acp-adapters serve``): an ASGI app that draws a store's
threads from the wire projection (:func:`~acp_adapters.wire.wire_snapshot`, then live wire
deltas over server-sent events), served on 127.0.0.1 only.

Needs Starlette and uvicorn: ``pip install 'acp-adapters[serve]'``.
"""

from __future__ import annotations

from .app import Stopping, create_app
from .listening import serve_app

__all__ = ["Stopping", "create_app", "serve_app"]
