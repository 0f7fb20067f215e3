"""``acp-adapters run``: one prompt to a live agent, its timeline printed as it goes.

In text mode the agent's messages and thoughts are written as they stream in,
and every other item is printed once it is done (completed, failed or
cancelled); what is still open when the turn ends is printed then, in order.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import click
import pluggy

from ..client import AgentNotFoundError, connect
from ..errors import AcpAdaptersError
from ..permissions import PolicyName
from ..timeline.items import TimelineItem
from .asking import TerminalAsk
from .errors import EXIT_AGENT_NOT_FOUND, Failure
from .render import INDENT, STREAMED_KINDS, Renderer, printable
from .rows import dumps, item_row, item_rows

Format = Literal["text", "json"]
_DONE = ("completed", "failed", "cancelled")


@dataclass
class Outcome:
    """What a session or a replay gave: its rows, and what the summary line says."""

    rows: list[dict[str, Any]]
    provider: str
    version: int
    stop_reason: str | None
    #: A replay whose capture's session failed as recorded: how it ended.
    ended: str | None = None
    #: A replay's capture lines that were left out, each with its line number and why.
    skipped: list[str] = field(default_factory=list)


class StreamPrinter:
    """Prints a turn's items as they change: streamed text as it comes, other blocks when done.

    A streamed message looks the same as its block would: its header, then its
    text indented, trailing line breaks left out.
    """

    def __init__(self, renderer: Renderer) -> None:
        self.renderer = renderer
        self.printed: set[str] = set()
        self._blocks = 0
        # The item whose text is being written, how much of each text is out, the line
        # breaks held back (shown only once more text follows them), and whether the
        # cursor is at the start of a line.
        self._streaming: str | None = None
        self._shown: dict[str, int] = {}
        self._held = 0
        self._line_open = False

    def change(self, item: TimelineItem) -> None:
        row = item_row(item)
        if row["kind"] in STREAMED_KINDS:
            self._stream(row)
        elif row["status"] in _DONE and row["id"] not in self.printed:
            self._print(row)

    def finish(self, items: Sequence[TimelineItem]) -> None:
        """The turn ended: print what was not printed yet, in timeline order."""
        for row in item_rows(list(items)):
            if row["kind"] in STREAMED_KINDS and row["id"] in self._shown:
                if len(row["text"] or "") > self._shown[row["id"]]:
                    self._stream(row, final=True)
            elif row["id"] not in self.printed:
                self._print(row)
        self.end_stream()

    def end_stream(self) -> None:
        """End the line of the text being streamed, if any (before another block or a question)."""
        if self._line_open:
            click.echo("")
        self._streaming, self._held, self._line_open = None, 0, False

    def _print(self, row: dict[str, Any]) -> None:
        self.end_stream()
        self._separate()
        click.echo(self.renderer.block(row))
        self.printed.add(row["id"])

    def _separate(self) -> None:
        if self._blocks:
            click.echo("")
        self._blocks += 1

    def _stream(self, row: dict[str, Any], *, final: bool = False) -> None:
        key, text = row["id"], row["text"] or ""
        if self._streaming != key:
            again = key in self._shown
            self.end_stream()
            self._separate()
            header = self.renderer.header(row)
            click.echo(header + (click.style("  (continued)", dim=True) if again else ""))
            self._streaming = key
            self.printed.add(key)
        shown, end = self._shown.get(key, 0), len(text)
        if not final and text and "\ud800" <= text[-1] <= "\udbff":
            # Half of a character an agent split between two chunks (a JavaScript string
            # cut by length): shown once its other half has come.
            end -= 1
        self._shown[key] = end
        self._write(text[shown:end], dim=row["kind"] == "reasoning")

    def _write(self, new: str, *, dim: bool) -> None:
        for number, piece in enumerate(new.split("\n")):
            if number:
                self._held += 1
            if not piece:
                continue
            if not self._line_open or self._held:
                # The held breaks end the open line (or, first thing, make blank lines).
                click.echo("\n" * self._held + INDENT, nl=False)
                self._held, self._line_open = 0, True
            piece = printable(piece)
            click.echo(click.style(piece, dim=True) if dim else piece, nl=False)


async def run_session(
    *,
    pm: pluggy.PluginManager | None = None,
    provider: str | None,
    command: list[str] | None,
    cwd: str,
    approve: PolicyName,
    record: str | None,
    prompt: str,
    output: Format,
) -> Outcome:
    """Open a session, send the prompt, and return its timeline (printed as it goes in text)."""
    folder = os.path.abspath(cwd)
    renderer = Renderer(roots=(folder, os.path.realpath(folder)))
    printer = StreamPrinter(renderer) if output == "text" else None
    ask = TerminalAsk(renderer, before=printer.end_stream if printer else lambda: None)
    try:
        async with connect(
            provider,
            folder,
            command=command,
            policy=approve,
            ask=ask if approve == "ask" else None,
            record=record,
            pm=pm,
        ) as session:
            ask.session = session
            if printer is None:
                try:
                    await session.prompt(prompt)
                except AcpAdaptersError:
                    # What came before the failure is the caller's as well, as in text.
                    click.echo(dumps(item_rows(session.timeline.items)))
                    raise
            else:
                try:
                    async for change in session.stream_prompt(prompt):
                        printer.change(change.item)
                finally:
                    # What came before a failure stays on the screen.
                    printer.finish(session.timeline.items)
            timeline = session.timeline
            stop_reason = session.projector.state.turn_state.stop_reason
    except AgentNotFoundError as error:
        if not command:
            raise
        raise Failure(
            f"cannot start the agent ({shlex.join(command)}): {command[0]!r} was not found; "
            'install it, or pass another --command "CMD ARGS"',
            EXIT_AGENT_NOT_FOUND,
        ) from error
    return Outcome(
        rows=item_rows(timeline.items),
        provider=timeline.provider.id,
        version=timeline.version,
        stop_reason=stop_reason,
    )


def record_path(record: str | None) -> str | None:
    """``--record FILE`` as an absolute path (the agent runs in the session's folder)."""
    return str(Path(record).resolve()) if record else None
