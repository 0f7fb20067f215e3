"""``acp-adapters sessions``: the named sessions (threads) of a store.

``list`` shows them, ``show NAME`` prints one's timeline, ``send NAME PROMPT`` queues a
prompt for whoever drives it and ``follow NAME`` streams its items as they are committed,
``patch NAME`` a turn's change of the files as one patch and ``revert NAME`` undoes it,
``export NAME`` writes its event log as a capture that ``replay`` reads, ``delete NAME``
forgets it. ``--store PATH_OR_URL`` names the store (a SQLite file, a ``postgresql://``
URL); by default the SQLite file in the user's data folder (``ACP_ADAPTERS_STORE``
overrides it), as ``run -s NAME`` uses.

Only ``send`` makes a store: the others open an existing one (``open_store(create=False)``),
so that a mistyped ``--store`` is an error, not a new empty store. The default store not
made yet holds no session: ``list`` says so, the others find no session of that name.
JSON output is written as ``run``'s (:func:`~.rows.dumps`): what a terminal acts on escaped.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from typing import Any

import anyio
import click
from pydantic import TypeAdapter

from ..capture.recorder import CaptureRecorder
from ..history.turn_patches import (
    FileTurn,
    MissingEvidence,
    RevertConflict,
    revert_turn,
    thread_turn_files,
    turn_patch,
)
from ..store.base import (
    InvalidThreadName,
    QueuedPrompt,
    Store,
    StoreNotFound,
    Thread,
    check_thread_name,
)
from ..store.open import STORE_ENV, default_store, default_store_path, open_store
from ..timeline.items import TimelineItem
from .errors import EXIT_CONFLICT, EXIT_USAGE, Failure
from .options import store_option
from .render import Renderer, printable
from .rows import dumps, dumps_line, item_rows

_ITEMS: TypeAdapter[TimelineItem] = TypeAdapter(TimelineItem)


_store_option = store_option(
    "The store: a SQLite file or a postgresql:// URL (default: a SQLite file in "
    "your data folder, or ACP_ADAPTERS_STORE)."
)


async def _thread(store: Store, name: str) -> Thread:
    found = await store.thread_named(name)
    if found is None:
        known = ", ".join(t.name for t in await store.threads() if t.name) or "none"
        raise Failure(f"the store has no session {name!r} (named ones: {known})", EXIT_USAGE)
    return found


def _not_made_yet(store: str | None) -> bool:
    """Whether the store is the default one of the user's data folder, not made yet (no
    ``run -s NAME`` ran): it holds no session, which is no error."""
    return store is None and not os.environ.get(STORE_ENV) and not default_store_path().exists()


def missing_store(error: StoreNotFound, store: str | None, name: str | None) -> Failure:
    """The error of a store that is not there (a read makes none)."""
    if _not_made_yet(store):
        what = f"the store has no session {name!r}" if name is not None else str(error)
        return Failure(
            f"{what} (no session is kept yet: `run -s NAME` keeps one, in {default_store()})",
            EXIT_USAGE,
        )
    named = "--store" if store is not None else STORE_ENV
    return Failure(
        f"{error}; name an existing store with {named}, or make one with "
        "`acp-adapters run -s NAME --store PATH_OR_URL`",
        EXIT_USAGE,
    )


def _run(function: Any, store: str | None, *args: Any, name: str | None = None) -> Any:
    """``function(store, *args)`` on the store, which must exist: a command that reads
    makes no store (``name``: the session it is about, for the error)."""

    async def go() -> Any:
        try:
            opened = await open_store(store if store is not None else default_store(), create=False)
        except StoreNotFound as error:
            raise missing_store(error, store, name) from None
        async with opened:
            return await function(opened, *args)

    return anyio.run(go)


@click.group()
def sessions() -> None:
    """The named sessions of a store (`run -s NAME` makes and continues them)."""


async def queue_prompts(
    store: str | None,
    name: str,
    prompts: list[str],
    *,
    provider: str | None,
    command: list[str] | None,
    cwd: str,
    policy: Any = "ask",
    mcp_servers: Any = (),
    pm: Any = None,
) -> list[QueuedPrompt]:
    """Queue each prompt for the named session (made when new), in order."""
    from ..client.connecting import enqueue

    try:
        check_thread_name(name)
    except InvalidThreadName as error:
        raise Failure(f"{error}: name the session otherwise", EXIT_USAGE) from None
    queued = []
    async with await open_store(store if store is not None else default_store()) as opened:
        for prompt in prompts:
            queued.append(  # noqa: PERF401 (one after the other, in order)
                await enqueue(
                    opened,
                    name,
                    prompt,
                    provider=provider,
                    command=command,
                    cwd=os.path.abspath(cwd),
                    policy=policy,
                    mcp_servers=mcp_servers,
                    pm=pm,
                )
            )
    return queued


@sessions.command("send")
@click.argument("name")
@click.argument("prompt", nargs=-1, required=True)
@click.option("--provider", metavar="ID", help="The agent of a new session (a provider's).")
@click.option(
    "--command",
    "agent_command",
    metavar="CMD",
    help="The agent of a new session: its command line, instead of a provider's.",
)
@click.option(
    "--cwd",
    default=".",
    type=click.Path(exists=True, file_okay=False),
    help="The folder of a new session.",
)
@_store_option
def send(
    name: str,
    prompt: tuple[str, ...],
    provider: str | None,
    agent_command: str | None,
    cwd: str,
    store: str | None,
) -> None:
    """Queue PROMPT for the session NAME and print its id: whoever drives the session (its
    running owner, a `run -s NAME`, a worker) runs it in turn. A new NAME makes the
    session, with --provider or --command and --cwd.

    \b
    acp-adapters sessions send fix-tests --provider claude --cwd ~/project "fix the tests"
    acp-adapters sessions follow fix-tests --until-idle
    """
    import shlex

    command = shlex.split(agent_command) if agent_command is not None else None
    if provider is None and command is None:
        try:
            found = _run(lambda opened: opened.thread_named(name), store, name=name)
        except Failure:  # no store there: no session either
            found = None
        if found is None:
            raise click.UsageError(
                f'the store has no session {name!r}: make it with --provider ID or --command "CMD"'
            )
        provider = found.provider
        command = list(found.command) if found.command is not None else None
    (queued,) = anyio.run(
        lambda: queue_prompts(
            store, name, [" ".join(prompt)], provider=provider, command=command, cwd=cwd
        )
    )
    click.echo(queued.id)


@sessions.command("follow")
@click.argument("name")
@click.option(
    "--until-idle",
    is_flag=True,
    help="End once no prompt waits and no turn runs (a lost owner's turn is ended first).",
)
@click.option("--format", "output", type=click.Choice(["text", "jsonl"]), default="text")
@_store_option
def follow(name: str, until_idle: bool, output: str, store: str | None) -> None:
    """Stream the items of the session NAME as they are committed, by any process: every
    item, in order, from its first (until interrupted, or with --until-idle until its
    queue is empty and no turn runs)."""
    from ..history.following import follow_items

    async def go(opened: Store) -> None:
        thread = await _thread(opened, name)
        renderer = Renderer(roots=(thread.cwd, os.path.realpath(thread.cwd)))
        shown: dict[str, dict[str, Any]] = {}
        async for item in follow_items(opened, thread.id, until_idle=until_idle):
            if output == "jsonl":
                click.echo(dumps_line({"type": "item", **item}))  # as `run --format jsonl`
                continue
            # Text: each item once it is done (and again when it changes after).
            if item.get("status") in ("in_progress", "pending") or shown.get(item["id"]) == item:
                continue
            if shown:
                click.echo("")  # blocks apart, as `run` prints them
            shown[item["id"]] = item
            for row in item_rows([_ITEMS.validate_python(item)]):
                click.echo(renderer.block(row))

    _run(go, store, name=name)


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

    if _not_made_yet(store):
        # No `run -s NAME` ran yet: no session, and no store made for reading it.
        click.echo(
            f"Note: no session is kept yet (`run -s NAME` keeps one, in {default_store()})",
            err=True,
        )
        rows = []
    else:
        rows = _run(read, store)
    if output == "json":
        click.echo(dumps(rows))
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

    thread, items = _run(read, store, name=name)
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

    thread, entries = _run(read, store, name=name)
    marks = CaptureRecorder(os.devnull, workspace=thread.cwd)
    try:
        start = next((e["t"] for e in entries if isinstance(e.get("t"), int | float)), 0.0)
        for entry in entries:
            line = dict(marks.portable(entry))
            if isinstance(entry.get("t"), int | float):
                line["t"] = round(entry["t"] - start, 6)
            click.echo(dumps_line(line))  # a capture line, escaped as run's JSON is
    finally:
        marks.close()
    del output


async def _turn_of(opened: Store, thread: Thread, turn: int | None) -> int:
    """The turn asked for, checked; by default the thread's last."""
    turns = [t.index for t in await opened.turns(thread.id)]
    if not turns:
        raise Failure(f"the session {thread.name!r} has no turn yet", EXIT_USAGE)
    if turn is None:
        return max(turns)
    if turn not in turns:
        raise Failure(
            f"the session {thread.name!r} has no turn {turn} (its turns: 1 to {max(turns)})",
            EXIT_USAGE,
        )
    return turn


def _turn_option(function: Any) -> Any:
    return click.option(
        "--turn",
        type=click.IntRange(min=1),
        metavar="N",
        help="The turn (from 1; default: the last).",
    )(function)


def _name_in(path: str, cwd: str) -> str:
    """A path by its name in the session's folder (as it is, when it is not in it)."""
    for folder in dict.fromkeys((cwd, os.path.realpath(cwd))):
        if path.startswith(folder.rstrip("/") + "/"):
            return path[len(folder.rstrip("/")) + 1 :]
    return path


def _relative(change: FileTurn, cwd: str) -> FileTurn:
    return dataclasses.replace(change, path=_name_in(change.path, cwd))


def _file_row(change: FileTurn) -> dict[str, Any]:
    return {
        "path": change.path,
        "operation": change.operation,
        "before": change.before_state.model_dump(mode="json") if change.before_state else None,
        "after": change.after_state.model_dump(mode="json") if change.after_state else None,
        "checkpointed": change.checkpointed,
    }


@sessions.command()
@click.argument("name")
@_store_option
@_turn_option
@click.option("--format", "output", type=click.Choice(["text", "json"]), default="text")
def patch(name: str, store: str | None, turn: int | None, output: str) -> None:
    """What a turn changed in the files, as one unified patch (from its checkpoints: every
    file, whoever changed it)."""

    async def read(opened: Store) -> tuple[Thread, int, list[FileTurn]]:
        thread = await _thread(opened, name)
        index = await _turn_of(opened, thread, turn)
        try:
            return thread, index, await thread_turn_files(opened, thread.id, index)
        except MissingEvidence as error:
            raise Failure(str(error)) from None

    thread, index, files = _run(read, store, name=name)
    if output == "json":
        rows = {"turn": index, "files": [_file_row(f) for f in files], "patch": turn_patch(files)}
        click.echo(dumps_line(rows))
        return
    if not files:
        click.echo(f"turn {index} changed no file")
        return
    # The session's folder's files by their names in it: `patch -p0` applies it there.
    text = turn_patch([_relative(f, thread.cwd) for f in files])
    if sys.stdout.isatty():
        # On a terminal, the agent's text escaped (no control sequence of its reaches it).
        click.echo("\n".join(Renderer().patch(text)))
    else:
        click.echo(text, nl=False)  # piped: the patch as it is, for patch(1) or git apply


@sessions.command()
@click.argument("name")
@_store_option
@_turn_option
@click.option("--dry-run", is_flag=True, help="Say what would be written; write nothing.")
def revert(name: str, store: str | None, turn: int | None, dry_run: bool) -> None:
    """Undo what a turn changed in the files, hunk by hunk: later edits are kept; a hunk a
    later edit touched is a conflict (exit 9), and then nothing is written."""

    async def undo(opened: Store) -> tuple[Thread, int, list[str]]:
        thread = await _thread(opened, name)
        index = await _turn_of(opened, thread, turn)
        try:
            return thread, index, await revert_turn(opened, thread.id, index, dry_run=dry_run)
        except RevertConflict as error:
            lines = [
                dataclasses.replace(c, path=_name_in(c.path, thread.cwd)).describe()
                for c in error.conflicts
            ]
            raise Failure(
                f"turn {index} cannot be undone, nothing was written: " + "; ".join(lines),
                EXIT_CONFLICT,
            ) from None
        except MissingEvidence as error:
            raise Failure(str(error)) from None

    thread, index, written = _run(undo, store, name=name)
    verb = "would write" if dry_run else "wrote"
    if not written:
        click.echo(f"turn {index}: nothing to undo (the files hold what it started with)")
        return
    for path in written:
        click.echo(f"{verb} {printable(_name_in(path, thread.cwd))}")
    click.echo(f"turn {index} {'would be' if dry_run else 'is'} undone: {len(written)} files")


@sessions.command()
@click.argument("name")
@_store_option
def delete(name: str, store: str | None) -> None:
    """Forget a session: its timeline, its turns and its event log (the agent's own
    session is left as it is)."""

    async def forget(opened: Store) -> None:
        await opened.delete_thread((await _thread(opened, name)).id)

    _run(forget, store, name=name)
    click.echo(f"Deleted {printable(name)}.")


__all__ = ["sessions"]
