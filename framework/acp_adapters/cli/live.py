"""``acp-adapters run``: prompts to a live agent, its timeline printed as it goes.

The prompts are turns of one session, in order (or typed, one a line, on a
terminal). Before the first, the session is set up (:mod:`.settings`); each
turn may be bounded (``--timeout``). In text mode the agent's messages and
thoughts are written as they stream in, and every other item is printed once
it is done (completed, failed or cancelled); what is still open when the turn
ends is printed then, in order. ``jsonl`` writes each change as a line
(:mod:`.jsonl`); ``json`` prints the rows once the run ends.

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
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import anyio
import click
import pluggy

from ..client import (
    AgentNotFoundError,
    ItemChange,
    McpServer,
    Session,
    SessionChange,
    connect,
)
from ..client.connecting import DEFAULT_START_TIMEOUT, Busy, Persistence, Timeouts
from ..client.guest import GuestSession
from ..errors import AcpAdaptersError
from ..plugin.permissions import Policy, PolicyName
from ..store.open import default_store
from ..timeline.items import TimelineItem
from .asking import Lines, NonInteractive, NoQuestions, TerminalAsk, terminal_lines
from .entry import take_pending, take_signals
from .errors import (
    EXIT_AGENT_NOT_FOUND,
    EXIT_FAILED,
    EXIT_TIMEOUT,
    EXIT_USAGE,
    Failure,
    Stopped,
    explain,
)
from .jsonl import JsonlWriter, summary_object
from .progress import Progress
from .render import INDENT, STREAMED_KINDS, Renderer, printable
from .rows import dumps, dumps_line, item_row, item_rows
from .settings import Settings, apply_settings, legacy_models

Format = Literal["text", "json", "jsonl"]
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
    #: What the agent reported of a live session (:meth:`Timeline.session_json`).
    session: dict[str, Any] | None = None
    #: What cut a turn short, once it was cancelled and its end printed (a --timeout, a
    #: question under --non-interactive fail): the run ends with it.
    failure: Failure | None = None

    def ending(self) -> Failure | None:
        """The error the command ends with once the outcome is printed, if any."""
        if self.failure is not None:
            return self.failure
        if self.interrupted is not None:
            return Stopped(self.interrupted, killed=False, cancelled=True)
        return None

    def summary_object(self, exit_code: int = 0, error: str | None = None) -> dict[str, Any]:
        """The last line of ``--format jsonl`` (:func:`.jsonl.summary_object`)."""
        return summary_object(
            self.rows,
            provider=self.provider,
            version=self.version,
            stop_reason=self.stop_reason,
            session=self.session,
            exit_code=exit_code,
            error=error,
        )


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
    the start, and so does a SIGINT while no turn runs (at the prompt of the interactive
    loop, while the session is set up). ``before`` is called before a note is written (to
    end a streamed line).
    """

    def __init__(self, before: Callable[[], None] = lambda: None) -> None:
        self.before = before
        self.session: Session | None = None
        #: Whether a turn runs (a first SIGINT cancels it, rather than stopping the run).
        self.in_turn = False
        #: The signal that cancelled the turn (a first SIGINT).
        self.interrupted: int | None = None
        #: The signal that stopped the run: the agent was killed.
        self.stopped: int | None = None

    async def watch(self, run: anyio.CancelScope) -> None:
        """Until ``run`` is cancelled: take the signals, and cancel ``run`` to stop."""
        try:
            await self._watch(run)
        finally:
            take_signals()  # the program's own again, for what is printed after the run

    async def _watch(self, run: anyio.CancelScope) -> None:
        with anyio.open_signal_receiver(*_SIGNALS) as received:
            missed = take_pending()
            if missed is not None:
                # Taken before this watcher, and lost on its way (see take_pending).
                if missed == signal.SIGHUP:
                    _silence()
                await self._stop(run, missed)
                return
            async with anyio.create_task_group() as waiting:
                async for signum in received:
                    if (
                        signum == signal.SIGINT
                        and self.interrupted is None
                        and self.session is not None
                        and self.in_turn
                    ):
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
    prompt: str | Sequence[str] = (),
    output: Format,
    mcp_servers: Sequence[McpServer] = (),
    settings: Settings | None = None,
    timeout: float | None = None,
    non_interactive: NonInteractive | None = None,
    interactive: bool = False,
    questions_from_terminal: bool = False,
    label: str | None = None,
    resume: str | None = None,
    thread: str | None = None,
    store: str | None = None,
    busy: Busy = "queue",
    move: bool = False,
    start_timeout: float | None = DEFAULT_START_TIMEOUT,
) -> Outcome:
    """Open a session (``resume``: that earlier one, resumed or loaded; ``thread``: the named
    session of the store, made or gone on with), send the prompts, one turn each, and
    return its timeline (printed as it goes in text and jsonl).

    ``prompt`` is one prompt or several, sent in order; with ``interactive``, more are read
    from stdin after them, one a line, until an empty line or the end of input.
    ``settings`` (the model, the mode, config options) are set before the first prompt.
    ``timeout`` bounds each turn: past it the turn is cancelled, and the outcome's
    ``failure`` says so (exit 124). ``mcp_servers`` go to the agent with ``session/new``.

    ``approve`` is the policy's name, or a policy with rules: questions are asked on the
    terminal under ``ask``, or when a rule asks, their answers read from stdin, or from
    the terminal with ``questions_from_terminal`` (stdin holds the prompt; without a
    terminal, a question fails the run as ``--non-interactive fail`` does).
    ``non_interactive`` asks no one: ``deny`` rejects, ``fail`` cancels the turn (exit 8).
    ``start_timeout`` bounds the agent's start (``initialize`` and the session's opening):
    past it the agent is stopped and the run fails (exit 124).
    ``label`` is what starts, for the progress line on a terminal. ``busy``: when another
    process drives ``thread``, queue the prompts behind its turns (each followed in the store
    as it lands, printed as if run here), or fail (:class:`~acp_adapters.store.ThreadBusy`).
    ``move``: ``thread`` kept for another folder moves to ``cwd`` (else it is refused).

    :raises Stopped: a signal stopped the run (the agent was killed).
    """
    policy = Policy.of(approve)
    folder = os.path.abspath(cwd)
    renderer = Renderer(roots=(folder, os.path.realpath(folder)))
    printer = StreamPrinter(renderer) if output == "text" else None
    jsonl = JsonlWriter() if output == "jsonl" else None
    progress = Progress(printable(label)) if label else None

    def before() -> None:
        """Before a note, a question or a prompt: the progress line goes, a streamed line ends."""
        if progress is not None:
            progress.clear()
        if printer is not None:
            printer.end_stream()

    stdin = Lines()
    terminal: Lines | None = None
    questions: TerminalAsk | NoQuestions | None = None
    if non_interactive is not None:
        questions = NoQuestions(non_interactive)
    elif _asks(policy):
        if questions_from_terminal:
            terminal = terminal_lines()
            questions = (
                TerminalAsk(renderer, before=before, lines=terminal)
                if terminal is not None
                else NoQuestions("fail", "there is no terminal to ask on (stdin holds the prompt)")
            )
        else:
            questions = TerminalAsk(renderer, before=before, lines=stdin)
    signals = StopSignals(before=before)
    # The models an agent of before config options lists, for the error of --model.
    listed: list[str] = []

    def observe(direction: str, message: Any) -> None:
        if direction == "in" and not listed and isinstance(message, dict):
            listed.extend(legacy_models(message.get("result")))

    wants_models = settings is not None and settings.model is not None
    prompts = [prompt] if isinstance(prompt, str) else list(prompt)
    started = time.time()
    outcome: Outcome | None = None
    # Whether the rows (json) or the summary (jsonl) of a run that failed are out.
    printed = False
    try:
        async with anyio.create_task_group() as run:
            run.start_soon(signals.watch, run.cancel_scope)
            if progress is not None:
                run.start_soon(progress.run)
            try:
                async with connect(
                    provider,
                    folder,
                    command=command,
                    policy=policy,
                    ask=questions,
                    record=record,
                    pm=pm,
                    mcp_servers=mcp_servers,
                    observe=observe if wants_models else None,
                    session_id=resume,
                    timeouts=Timeouts(start=start_timeout),
                    **_kept(thread, store, busy, move),
                ) as session:
                    signals.session = session
                    skipped_before = len(session.problems)
                    if questions is not None:
                        questions.session = session
                    try:
                        if settings is not None:
                            await apply_settings(session, settings, listed_models=listed)
                        before()
                        if jsonl is not None:
                            jsonl.session("opened", session.timeline.session_json())
                            for item in session.timeline.items:
                                # A loaded session's history, as the agent replayed it; of a
                                # named session what this run added as it opened (a notice:
                                # moved, a lost session renewed), its earlier turns written
                                # by their own runs.
                                if thread is None or (item.created_at or 0) >= started:
                                    jsonl.item(item)
                        elif printer is not None and session.timeline.items:
                            printer.finish(session.timeline.items)
                        failure = await _turns(
                            session,
                            prompts,
                            printer=printer,
                            jsonl=jsonl,
                            signals=signals,
                            timeout=timeout,
                            questions=questions,
                            more=stdin if interactive else None,
                            before=before,
                        )
                    except BaseException as error:
                        # What came before a failure (or a stop) is the caller's as well.
                        before()
                        printed = True
                        with contextlib.suppress(OSError):
                            _print_failed(session, output, jsonl, error, signals)
                        raise
                    outcome = _outcome(
                        session, signals, failure or _dropped(session, skipped_before)
                    )
            except AgentNotFoundError as error:
                if not command:
                    raise
                why = "was not found"
                if error.reason == "not executable":
                    cause = error.__cause__
                    said = cause.strerror if isinstance(cause, OSError) else None
                    if isinstance(cause, FileNotFoundError):
                        said = "the interpreter its #! line names was not found"
                    why = f"cannot be executed ({(said or 'not a program').lower()})"
                raise Failure(
                    f"cannot start the agent ({shlex.join(command)}): {command[0]!r} {why}; "
                    'install it, or pass another --command "CMD ARGS"',
                    EXIT_AGENT_NOT_FOUND,
                ) from error
            finally:
                before()
                run.cancel_scope.cancel()  # the turns are over: stop watching the signals
    except Exception as error:
        # A signal stopped the run: the agent's failure that came of it (its requests
        # failed as it was killed) is not the run's.
        if signals.stopped is None:
            if not printed:  # no session was opened: a script still reads how it ended
                with contextlib.suppress(OSError):
                    _print_unopened(output, provider, error)
            raise
    finally:
        if terminal is not None:
            terminal.close()
    if signals.stopped is not None:
        stop = Stopped(signals.stopped, killed=signals.session is not None)
        with contextlib.suppress(OSError):
            if outcome is not None:
                # The agent ended its turn (cancelled) before it was killed: the output is
                # what a run that ended so prints, its ending the stop.
                _print_stopped(outcome, output, stop)
            elif not printed:
                _print_unopened(output, provider, stop)
        raise stop
    assert outcome is not None  # only a stop cancels the run
    return outcome


def _kept(
    thread: str | None, store: str | None, busy: Busy = "queue", move: bool = False
) -> dict[str, Any]:
    """``connect``'s store arguments for ``-s NAME`` (``--store``, else the default store;
    ``busy``: what another owner driving it does; ``move``: the session moves to this run's
    folder)."""
    if thread is None:
        return {}
    store = store if store is not None else default_store()
    return {"store": store, "thread": thread, "persistence": Persistence(busy=busy, move=move)}


def _asks(policy: Policy) -> bool:
    """Whether questions of the session go to the terminal: its policy, or a rule, asks."""
    return policy.name == "ask" or any(rule.decision == "ask" for rule in policy.rules)


def _outcome(session: Session, signals: StopSignals, failure: Failure | None) -> Outcome:
    timeline = session.timeline
    return Outcome(
        rows=item_rows(timeline.items),
        provider=timeline.provider.id,
        version=timeline.version,
        stop_reason=session.projector.state.turn_state.stop_reason,
        interrupted=signals.interrupted,
        session=timeline.session_json(),
        failure=failure,
    )


#: What the connection drops of an agent's message: it is missing from the timeline.
_DROPPED = ("line_too_long", "too_many_elements", "too_deep")


def _dropped(session: Session, before: int) -> Failure | None:
    """The run's error when the agent sent a message the connection dropped during the
    run (over the line limit, too many values): its output printed, the run fails."""
    dropped = [p for p in session.problems[before:] if p.kind in _DROPPED]
    if not dropped:
        return None
    what = "; ".join(dict.fromkeys(f"{p.kind.replace('_', ' ')}: {p.detail}" for p in dropped))
    many = f"{len(dropped)} messages" if len(dropped) > 1 else "a message"
    return Failure(
        f"the agent sent {many} over this client's limits ({what}): dropped, so the "
        "timeline misses what it said; the limits are connect(limits=Limits(...))",
        EXIT_FAILED,
    )


def _print_stopped(outcome: Outcome, output: Format, stop: Stopped) -> None:
    """The rows (json), or the summary with the stop's code (jsonl), of a stopped run whose
    turn had ended; text printed its items as they came."""
    if output == "json":
        click.echo(dumps(outcome.rows))
    elif output == "jsonl":
        code, line = explain(stop)
        click.echo(dumps_line(outcome.summary_object(code, line)))


def _print_unopened(output: Format, provider: str | None, error: BaseException) -> None:
    """What json and jsonl print when no session was opened: no rows, and (jsonl) a summary
    that says how the run ended (text: the error line says it)."""
    if output == "json":
        click.echo(dumps([]))
    elif output == "jsonl":
        code, line = explain(error)
        unopened = summary_object(
            [], provider=provider, version=None, stop_reason=None, session=None
        )
        click.echo(dumps_line({**unopened, "exit_code": code, "error": line}))


def _print_failed(
    session: Session,
    output: Format,
    jsonl: JsonlWriter | None,
    error: BaseException,
    signals: StopSignals,
) -> None:
    """A run that fails still prints what came before: the rows (json), the summary with
    the error (jsonl); text has printed them as they came."""
    if output == "json":
        click.echo(dumps(item_rows(session.timeline.items)))
    elif jsonl is not None:
        # Cancelled by a signal's stop: the error is the stop's.
        ending = Stopped(signals.stopped, killed=True) if signals.stopped is not None else error
        code, line = explain(ending)
        jsonl.line(_outcome(session, signals, None).summary_object(code, line))


async def _turns(
    session: Session,
    prompts: Sequence[str],
    *,
    printer: StreamPrinter | None,
    jsonl: JsonlWriter | None,
    signals: StopSignals,
    timeout: float | None,
    questions: TerminalAsk | NoQuestions | None,
    more: Lines | None,
    before: Callable[[], None],
) -> Failure | None:
    """Each prompt a turn, in order, then (``more``) those read from stdin; the failure
    that ended a turn early (a timeout, a question under ``fail``), which ends the run."""
    texts = list(prompts)
    if more is not None:
        click.echo(
            click.style("Type a prompt, then Enter; an empty line or Ctrl-D ends.", dim=True),
            err=True,
        )
    turns = 0
    while True:
        if texts:
            text: str | None = texts.pop(0)
        elif more is not None:
            if turns:
                click.echo("", err=True)  # the prompt apart from the turn's last block
            text = await _read_prompt(more, before)
        else:
            text = None
        if text is None:
            return None
        signals.in_turn = True
        turns += 1
        try:
            failure = await _turn(
                session,
                text,
                printer=printer,
                jsonl=jsonl,
                timeout=timeout,
                questions=questions,
                before=before,
            )
        finally:
            signals.in_turn = False
        if failure is not None or signals.interrupted is not None:
            return failure  # a turn cut short, or cancelled by Ctrl-C, ends the run


async def _read_prompt(lines: Lines, before: Callable[[], None]) -> str | None:
    """The next prompt typed (stderr shows ``> ``); None at an empty line or the end."""
    before()
    click.echo(click.style("> ", bold=True), nl=False, err=True)
    line = await lines.next()
    if not line:
        click.echo("", err=True)  # Ctrl-D: what comes next starts a line of its own
    text = line.strip()
    return text or None


async def _turn(
    session: Session,
    prompt: str,
    *,
    printer: StreamPrinter | None,
    jsonl: JsonlWriter | None,
    timeout: float | None,
    questions: TerminalAsk | NoQuestions | None,
    before: Callable[[], None],
) -> Failure | None:
    """Send the prompt and wait for the turn's end, printing it as it goes (text, jsonl).

    Past ``timeout``, or once a question came that no one may answer (``--non-interactive
    fail``, no terminal, the answers' input ended), the turn
    is cancelled and its end waited for (:data:`CANCEL_WAIT_SECONDS` at most, then the
    agent is killed): what ended it is returned.
    """

    turns: set[int] = set()

    def show(change: ItemChange | SessionChange) -> None:
        if isinstance(change, ItemChange):
            turns.add(change.item.turn)
        if jsonl is not None:
            jsonl.change(change)
        elif printer is not None and isinstance(change, ItemChange):
            printer.change(change.item)

    stream = session.stream_prompt(prompt, session_events=True)
    ended = False
    try:
        with anyio.CancelScope() as watching:
            if timeout is not None:
                watching.deadline = anyio.current_time() + timeout
            if questions is not None:
                questions.on_fail = watching.cancel
            async for change in stream:
                show(change)
            ended = True
        asked = questions.failure() if questions is not None else None
        if ended and asked is None:
            return None
        stopped = False
        if not ended:
            with contextlib.suppress(AcpAdaptersError):
                await session.cancel()
            with anyio.move_on_after(CANCEL_WAIT_SECONDS) as waiting:
                async for change in stream:
                    show(change)
            if waiting.cancelled_caught:
                before()
                with contextlib.suppress(OSError):
                    click.echo("The agent did not end its turn: stopping it", err=True)
                await session.kill()
                stopped = True
        if asked is not None:
            return asked
        assert timeout is not None  # nothing else cancels the watching
        return Failure(
            f"the turn took longer than --timeout {timeout:g}s: it was cancelled"
            + ("; the agent did not end it and was stopped" if stopped else "")
            + "; give it more time with a larger --timeout",
            EXIT_TIMEOUT,
        )
    finally:
        if questions is not None:
            questions.on_fail = lambda: None
        await stream.aclose()
        if jsonl is not None:
            with contextlib.suppress(OSError):
                jsonl.turn_ended(session.timeline.items)
        if printer is not None:
            items = session.timeline.items
            if isinstance(session, GuestSession):
                # Its timeline holds the owner's turns too: what is left of its own.
                items = [item for item in items if item.turn in turns]
            # What came before a failure stays on the screen.
            with contextlib.suppress(OSError):
                printer.finish(items)


def record_path(record: str | None) -> str | None:
    """``--record FILE`` as an absolute path (the agent runs in the session's folder).

    :raises Failure: its folder does not exist (none is made: a mistyped path would make a
        tree of folders wherever it points).
    """
    if not record:
        return None
    path = Path(record).resolve()
    if not path.parent.is_dir():
        raise Failure(
            f"--record {record}: its folder {path.parent} does not exist; make it first, "
            "or record into another folder",
            EXIT_USAGE,
        )
    return str(path)
