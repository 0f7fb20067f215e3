"""``acp-adapters run``: one prompt to a live agent, its timeline printed as it goes.

In text mode the agent's messages and thoughts are written as they stream in,
and every other item is printed once it is done (completed, failed or
cancelled); what is still open when the turn ends is printed then, in order.

Signals end the session, never leaving the agent behind (:class:`StopSignals`):
SIGTERM and SIGHUP cancel the turn and kill the agent at once; a first SIGINT
(Ctrl-C) cancels the turn and gives the agent :data:`CANCEL_WAIT_SECONDS` to end
it, a second one kills it.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import anyio
import click
import pluggy

from ..client import AgentNotFoundError, McpServer, Session, connect
from ..errors import AcpAdaptersError
from ..plugin.permissions import Policy, PolicyName
from ..timeline.items import TimelineItem
from .asking import TerminalAsk
from .errors import EXIT_AGENT_NOT_FOUND, Failure, Stopped
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
    #: The signal (SIGINT) that cancelled the turn, which the agent then ended.
    interrupted: int | None = None


#: How long the first Ctrl-C waits for the agent to end its turn before it is killed.
CANCEL_WAIT_SECONDS = 5.0
_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class StopSignals:
    """What SIGINT, SIGTERM and SIGHUP do to a run (watched in a task, :meth:`watch`).

    SIGTERM and SIGHUP cancel the turn, kill the agent (its process group and what
    it detached) and stop: a terminal that closes sends SIGHUP, and the agent, in
    a session of its own, would not get it. After SIGHUP nothing more is printed
    (the terminal is gone). A first SIGINT sends ``session/cancel`` and waits
    :data:`CANCEL_WAIT_SECONDS` for the agent to end its turn; a second one, or
    the end of the wait, kills it. Before the session is open, any of them stops
    the start. ``before`` is called before a note is written (to end a streamed line).
    """

    def __init__(self, before: Callable[[], None] = lambda: None) -> None:
        self.before = before
        self.session: Session | None = None
        #: The signal that cancelled the turn (a first SIGINT).
        self.interrupted: int | None = None
        #: The signal that stopped the run: the agent was killed.
        self.stopped: int | None = None

    async def watch(self, run: anyio.CancelScope) -> None:
        """Until ``run`` is cancelled: take the signals, and cancel ``run`` to stop."""
        with anyio.open_signal_receiver(*_SIGNALS) as received:
            async with anyio.create_task_group() as waiting:
                async for signum in received:
                    if signum == signal.SIGINT and self.interrupted is None and self.session:
                        self.interrupted = signum
                        self._note(
                            "Interrupted: the turn is being cancelled "
                            "(Ctrl-C again stops the agent now)"
                        )
                        await self._cancel()
                        waiting.start_soon(self._stop_after, run, CANCEL_WAIT_SECONDS, signum)
                        continue
                    if signum == signal.SIGHUP:
                        _silence()
                    await self._stop(run, signum)
                    return

    async def _stop_after(self, run: anyio.CancelScope, seconds: float, signum: int) -> None:
        await anyio.sleep(seconds)
        self._note("The agent did not end its turn: stopping it")
        await self._stop(run, signum)

    async def _stop(self, run: anyio.CancelScope, signum: int) -> None:
        self.stopped = signum
        # Shielded: the turn may end meanwhile (the agent took the cancel), and the
        # run's end cancels this task; the agent is killed all the same.
        with anyio.CancelScope(shield=True):
            if self.session is not None:
                if self.interrupted is None:
                    await self._cancel()
                await self.session.kill()
        run.cancel()

    def _note(self, text: str) -> None:
        with contextlib.suppress(OSError):
            self.before()
            click.echo(text, err=True)

    async def _cancel(self) -> None:
        """``session/cancel``, bounded (the session waits a second at most to send it)."""
        assert self.session is not None
        with contextlib.suppress(AcpAdaptersError):
            await self.session.cancel()


def _silence() -> None:
    """The terminal is gone: what is still written goes nowhere, rather than failing."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
        with contextlib.suppress(OSError, ValueError):
            os.dup2(devnull, stream.fileno())
    os.close(devnull)


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
    approve: PolicyName | Policy,
    record: str | None,
    prompt: str,
    output: Format,
    mcp_servers: Sequence[McpServer] = (),
) -> Outcome:
    """Open a session, send the prompt, and return its timeline (printed as it goes in text).

    ``mcp_servers`` go to the agent with ``session/new``. ``approve`` is the policy's name,
    or a policy with rules: questions are asked on the terminal under ``ask``, or when a
    rule asks.

    :raises Stopped: a signal stopped the run (the agent was killed).
    """
    policy = approve if isinstance(approve, Policy) else Policy(name=approve)
    folder = os.path.abspath(cwd)
    renderer = Renderer(roots=(folder, os.path.realpath(folder)))
    printer = StreamPrinter(renderer) if output == "text" else None
    ask = TerminalAsk(renderer, before=printer.end_stream if printer else lambda: None)
    signals = StopSignals(before=ask.before)
    outcome: Outcome | None = None
    try:
        async with anyio.create_task_group() as run:
            run.start_soon(signals.watch, run.cancel_scope)
            try:
                async with connect(
                    provider,
                    folder,
                    command=command,
                    policy=policy,
                    ask=ask if _asks(policy) else None,
                    record=record,
                    pm=pm,
                    mcp_servers=mcp_servers,
                ) as session:
                    signals.session = ask.session = session
                    try:
                        await _turn(session, prompt, printer)
                    except BaseException:
                        if printer is None:
                            # What came before a failure (or a stop) is the caller's as
                            # well, as in text.
                            with contextlib.suppress(OSError):
                                click.echo(dumps(item_rows(session.timeline.items)))
                        raise
                    timeline = session.timeline
                    outcome = Outcome(
                        rows=item_rows(timeline.items),
                        provider=timeline.provider.id,
                        version=timeline.version,
                        stop_reason=session.projector.state.turn_state.stop_reason,
                        interrupted=signals.interrupted,
                    )
            except AgentNotFoundError as error:
                if not command:
                    raise
                raise Failure(
                    f"cannot start the agent ({shlex.join(command)}): {command[0]!r} was not "
                    'found; install it, or pass another --command "CMD ARGS"',
                    EXIT_AGENT_NOT_FOUND,
                ) from error
            finally:
                run.cancel_scope.cancel()  # the turn is over: stop watching the signals
    except Exception:
        # A signal stopped the run: the agent's failure that came of it (its requests
        # failed as it was killed) is not the run's.
        if signals.stopped is None:
            raise
    if signals.stopped is not None:
        raise Stopped(signals.stopped, killed=signals.session is not None)
    assert outcome is not None  # only a stop cancels the run
    return outcome


def _asks(policy: Policy) -> bool:
    """Whether questions of the session go to the terminal: its policy, or a rule, asks."""
    return policy.name == "ask" or any(rule.decision == "ask" for rule in policy.rules)


async def _turn(session: Session, prompt: str, printer: StreamPrinter | None) -> None:
    """Send the prompt and wait for the turn's end, printing it as it goes (text)."""
    if printer is None:
        await session.prompt(prompt)
        return
    try:
        async for change in session.stream_prompt(prompt):
            printer.change(change.item)
    finally:
        # What came before a failure stays on the screen.
        with contextlib.suppress(OSError):
            printer.finish(session.timeline.items)


def record_path(record: str | None) -> str | None:
    """``--record FILE`` as an absolute path (the agent runs in the session's folder)."""
    return str(Path(record).resolve()) if record else None
