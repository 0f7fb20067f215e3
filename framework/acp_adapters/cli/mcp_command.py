"""``acp-adapters mcp``: serve a store's threads to other agents over MCP."""

from __future__ import annotations

from typing import Literal

import click

from ..store.base import Store
from .options import store_option
from .serving import missing_extra, serve_store


@click.command()
@store_option()
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    default="stdio",
    show_default=True,
    help="stdio, or streamable HTTP on 127.0.0.1 (path /mcp).",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8000,
    show_default=True,
    help="The HTTP port (with --transport http).",
)
def mcp(store: str | None, transport: str, port: int) -> None:
    """Serve the threads of a store to other agents over MCP (list_threads, read_thread,
    list_items, read_item, turn_patch)."""
    try:
        from ..mcp_server import create_server, run_server
    except ImportError as error:
        raise missing_extra("the MCP SDK", "mcp", error) from None
    mode: Literal["stdio", "http"] = "http" if transport == "http" else "stdio"

    def listening(url: str) -> None:
        click.echo(f"Serving MCP at {url} (on 127.0.0.1 only; Ctrl-C stops)", err=True)

    async def serve(opened: Store) -> None:
        await run_server(create_server(opened), mode, port=port, on_listening=listening)

    serve_store(store, serve)
