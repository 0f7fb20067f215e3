"""``acp-adapters sessions``: the named sessions (threads) of a store.

``list`` shows them, ``show NAME`` prints one's timeline, ``export NAME`` writes its event
log as a capture that ``replay`` reads, ``delete NAME`` forgets it. ``--store PATH_OR_URL``
names the store (a SQLite file, a ``postgresql://`` URL); by default the SQLite file in the
user's data folder (``ACP_ADAPTERS_STORE`` overrides it), as ``run -s NAME`` uses.
"""

from __future__ import annotations

import json
import os
from typing import Any

import anyio
import click
from pydantic import TypeAdapter

from .. import _json
from ..capture.recorder import CaptureRecorder
from ..store.base import Store, Thread
from ..store.open import default_store, open_store
from ..timeline.items import TimelineItem
from .errors import EXIT_USAGE, Failure
from .render import Renderer, printable
from .rows import dumps, item_rows

_ITEMS: TypeAdapter[TimelineItem] = TypeAdapter(TimelineItem)


def _store_option(function: Any) -> Any:
    return click.option(
        "--store",
        "store",
        metavar="PATH_OR_URL",
        help="The store: a SQLite file or a postgresql:// URL (default: a SQLite file in "
        "your data folder, or ACP_ADAPTERS_STORE).",
    )(function)


async def _thread(store: Store, name: str) -> Thread:
    found = await store.thread_named(name)
    if found is None:
        known = ", ".join(t.name for t in await store.threads() if t.name) or "none"
        raise Failure(f"the store has no session {name!r} (named ones: {known})", EXIT_USAGE)
    return found


def _run(function: Any, store: str | None, *args: Any) -> Any:
    async def go() -> Any:
        async with await open_store(store if store is not None else default_store()) as opened:
            return await function(opened, *args)

    return anyio.run(go)


@click.group()
def sessions() -> None:
    """The named sessions of a store (`run -s NAME` makes and continues them)."""


@sessions.command("list")
@_store_option
@click.option("--format", "output", type=click.Choice(["text", "json"]), default="text")
def list_sessions(store: str | None, output: str) -> None:
    """Each session: its name, provider, agent session id, turns and when it was updated."""

    async def read(opened: Store) -> list[dict[str, Any]]:
        rows = []
        for thread in await opened.threads():
            turns = await opened.turns(thread.id)
            rows.append(
                {
                    "name": thread.name,
                    "id": thread.id,
                    "provider": thread.provider,
                    "agent_session_id": thread.agent_session_id,
                    "cwd": thread.cwd,
                    "title": thread.title,
                    "turns": len(turns),
                    "updated_at": thread.updated_at,
                }
            )
        return rows

    rows = _run(read, store)
    if output == "json":
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    table = [("NAME", "PROVIDER", "TURNS", "TITLE")] + [
        (
            printable(r["name"] or r["id"]),
            printable(r["provider"]),
            str(r["turns"]),
            printable(r["title"] or ""),
        )
        for r in rows
    ]
    widths = [max(len(row[c]) for row in table) for c in range(3)]
    for row in table:
        click.echo(
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False))
            + "  "
            + row[3]
        )


@sessions.command()
@click.argument("name")
@_store_option
@click.option("--format", "output", type=click.Choice(["text", "json"]), default="text")
def show(name: str, store: str | None, output: str) -> None:
    """One session's timeline, as `run` prints it."""

    async def read(opened: Store) -> tuple[Thread, list[TimelineItem]]:
        thread = await _thread(opened, name)
        items = [_ITEMS.validate_python(item) for item in await opened.items(thread.id)]
        return thread, items

    thread, items = _run(read, store)
    rows = item_rows(items)
    if output == "json":
        click.echo(dumps(rows))
        return
    renderer = Renderer(roots=(thread.cwd, os.path.realpath(thread.cwd)))
    click.echo(f"{printable(name)}: {printable(thread.provider)}, {len(items)} items")
    if rows:
        click.echo("")
        click.echo(renderer.timeline(rows))


@sessions.command()
@click.argument("name")
@_store_option
@click.option(
    "--format",
    "output",
    type=click.Choice(["jsonl"]),
    default="jsonl",
    show_default=True,
    help="A capture: one JSON entry a line.",
)
def export(name: str, store: str | None, output: str) -> None:
    """A session's event log as a capture (its folder written <workspace>), for `replay`."""

    async def read(opened: Store) -> tuple[Thread, list[dict[str, Any]]]:
        thread = await _thread(opened, name)
        return thread, [event.entry for event in await opened.events(thread.id)]

    thread, entries = _run(read, store)
    marks = CaptureRecorder(os.devnull, workspace=thread.cwd)
    try:
        start = next((e["t"] for e in entries if isinstance(e.get("t"), int | float)), 0.0)
        for entry in entries:
            line = dict(marks.portable(entry))
            if isinstance(entry.get("t"), int | float):
                line["t"] = round(entry["t"] - start, 6)
            click.echo(_json.dumps(line))
    finally:
        marks.close()
    del output


@sessions.command()
@click.argument("name")
@_store_option
def delete(name: str, store: str | None) -> None:
    """Forget a session: its timeline, its turns and its event log (the agent's own
    session is left as it is)."""

    async def forget(opened: Store) -> None:
        await opened.delete_thread((await _thread(opened, name)).id)

    _run(forget, store)
    click.echo(f"Deleted {printable(name)}.")


__all__ = ["sessions"]
