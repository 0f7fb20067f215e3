"""An MCP server that lets other agents read a store's threads (``acp-adapters mcp``).

Needs the official MCP SDK: ``pip install 'acp-adapters[mcp]'``.
"""

from __future__ import annotations

from .server import MAX_CHARS_LIMIT, create_server, run_server

__all__ = ["MAX_CHARS_LIMIT", "create_server", "run_server"]
