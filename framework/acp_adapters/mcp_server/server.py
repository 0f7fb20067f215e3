"""The MCP server: a store's threads, read by another agent through four tools.

``list_threads``, ``read_thread`` (the timeline text, a page at a time), ``list_items`` (their
ids), ``read_item`` (one
item in full, its patch included) and ``turn_patch`` (a turn's file changes as one patch).
Arguments are checked against each tool's input schema by the SDK; an unknown thread or item,
or a turn the evidence cannot patch, is a tool error (``is_error``) naming it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

import anyio
import pluggy
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field, TypeAdapter

from ..diff import DEFAULT_MAX_EDITS
from ..history.turn_patches import MissingEvidence, thread_turn_files
from ..history.turn_patches import turn_patch as _turn_patch
from ..plugin.manager import get_plugin_manager
from ..plugin.providers import Provider, ProviderRegistry
from ..projection.text import DEFAULT_MAX_CHARS, timeline_text
from ..store.base import Store, Thread, ThreadNotFound
from ..timeline.items import TimelineItem
from ..transport.listening import loopback_socket, socket_url

#: The most characters one ``read_thread`` page may hold.
MAX_CHARS_LIMIT = 200_000

_ITEMS: TypeAdapter[TimelineItem] = TypeAdapter(TimelineItem)

INSTRUCTIONS = (
    "Read the threads (agent sessions) kept in an acp-adapters store: list_threads, then "
    "read_thread page by page (offset, next_offset), list_items and read_item for one item "
    "in full, turn_patch for what a turn did to the files."
)


def create_server(store: Store, *, pm: pluggy.PluginManager | None = None) -> MCPServer[Any]:
    """An MCP server reading ``store`` (open; the caller closes it)."""
    pm = pm or get_plugin_manager()
    registry = ProviderRegistry.collect(pm)
    # WARNING: the SDK logs its lifecycle at INFO to the process's stderr, between the
    # command line's own lines.
    server: MCPServer[Any] = MCPServer(
        name="acp-adapters", instructions=INSTRUCTIONS, log_level="WARNING"
    )

    async def find(thread: str) -> Thread:
        named = await store.thread_named(thread)
        if named is not None:
            return named
        try:
            return await store.thread(thread)
        except ThreadNotFound:
            raise ToolError(f"no thread has the id or name {thread!r}") from None

    def provider_of(thread: Thread) -> Provider | None:
        try:
            return registry.get(thread.provider)
        except Exception:  # a provider whose plugin is not installed here
            return None

    @server.tool()
    async def list_threads() -> dict[str, Any]:
        """Every thread of the store, the most recently updated first: its id, name, provider,
        title, agent session id, number of turns and when it was last updated (seconds since
        the epoch)."""
        rows = [
            {
                "id": thread.id,
                "name": thread.name,
                "provider": thread.provider,
                "title": thread.title,
                "agent_session_id": thread.agent_session_id,
                "turns": len(await store.turns(thread.id)),
                "updated_at": thread.updated_at,
            }
            for thread in await store.threads()
        ]
        return {"threads": rows}

    @server.tool()
    async def read_thread(
        thread: Annotated[str, Field(description="The thread's id or name.")],
        offset: Annotated[
            int, Field(ge=0, description="Where the page starts, in characters of the text.")
        ] = 0,
        max_chars: Annotated[
            int,
            Field(ge=1, le=MAX_CHARS_LIMIT, description="The most characters the page holds."),
        ] = DEFAULT_MAX_CHARS,
    ) -> dict[str, Any]:
        """One page of a thread's timeline as text (messages, commands and their output, file
        changes and their patches). Read on from ``next_offset`` while ``truncated``."""
        found = await find(thread)
        items = [_ITEMS.validate_python(item) for item in await store.items(found.id)]
        page = timeline_text(
            items, provider=provider_of(found), offset=offset, max_chars=max_chars, pm=pm
        )
        return {
            "thread": found.id,
            "text": page.text,
            "offset": page.offset,
            "next_offset": page.next_offset,
            "truncated": page.truncated,
            "total_chars": page.total_chars,
        }

    @server.tool()
    async def list_items(
        thread: Annotated[str, Field(description="The thread's id or name.")],
    ) -> dict[str, Any]:
        """The items of a thread, in timeline order: each one's id (for ``read_item``),
        ordinal, turn, kind, status and title."""
        found = await find(thread)
        rows = [
            {
                "id": item.get("id"),
                "ordinal": item.get("ordinal"),
                "turn": item.get("turn"),
                "kind": item.get("kind"),
                "status": item.get("status"),
                "title": item.get("title"),
            }
            for item in await store.items(found.id)
        ]
        return {"thread": found.id, "items": rows}

    @server.tool()
    async def read_item(
        thread: Annotated[str, Field(description="The thread's id or name.")],
        item_id: Annotated[str, Field(description="The item's id.")],
    ) -> dict[str, Any]:
        """One item of a thread in full, as JSON (a file change with its ``diff_str``)."""
        found = await find(thread)
        for item in await store.items(found.id):
            if item.get("id") == item_id:
                return {"item": item}
        raise ToolError(f"thread {thread!r} has no item {item_id!r}")

    @server.tool()
    async def turn_patch(
        thread: Annotated[str, Field(description="The thread's id or name.")],
        turn: Annotated[int, Field(ge=1, description="The turn's number, from 1.")],
    ) -> dict[str, Any]:
        """What a turn did to the files, as one unified patch (each file from the turn's
        start checkpoint to its end; a file rewritten past the edit cap has a line saying
        its patch was left out), with each file's operation."""
        found = await find(thread)
        turns = await store.turns(found.id)
        if not any(t.index == turn for t in turns):
            raise ToolError(f"thread {thread!r} has no turn {turn} (it has {len(turns)})")
        try:
            files = await thread_turn_files(store, found.id, turn)
        except MissingEvidence as error:
            raise ToolError(str(error)) from None
        # Off the event loop, and capped: one client's large patch never stalls another.
        text = await anyio.to_thread.run_sync(
            lambda: _turn_patch(files, max_edits=DEFAULT_MAX_EDITS)
        )
        return {
            "patch": text,
            "files": [f.path for f in files],
            "operations": {f.path: f.operation for f in files},
        }

    return server


async def run_server(
    server: MCPServer[Any],
    transport: Literal["stdio", "http"] = "stdio",
    *,
    port: int = 8000,
    on_listening: Callable[[str], None] | None = None,
) -> None:
    """Serve over stdio, or streamable HTTP on 127.0.0.1:``port`` (path ``/mcp``; port 0: one
    the system picks), ``on_listening`` called with the server's URL once it listens.

    :raises ListenError: the port cannot be listened on (taken, or not allowed).
    """
    if transport == "stdio":
        await server.run_stdio_async()
        return
    import uvicorn

    listening = loopback_socket(port)  # a port that is taken fails here, with its reason
    with listening:
        app = server.streamable_http_app(host="127.0.0.1")
        # Its own log stays quiet: a request's line is not the operator's business here.
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
        if on_listening is not None:
            on_listening(socket_url(listening, "/mcp"))
        await uvicorn.Server(config).serve(sockets=[listening])


__all__ = ["MAX_CHARS_LIMIT", "create_server", "run_server"]
