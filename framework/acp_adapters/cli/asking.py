"""``--approve ask``: each permission the agent asks for is asked on the terminal.

The question shows what the tool call would do, projected the way the
timeline will show it (a file change with its patch, a command, ...), then the
options the agent offered, numbered. The question and the answer go through
stderr, so that stdout keeps the timeline alone (a ``--format json`` run can be
piped). With no answer (stdin closed), the request is cancelled.

The answers are read from stdin, unless stdin holds the prompt: then from the
terminal (:func:`terminal_lines`). Where no one may be asked (``--non-interactive``,
or no terminal), :class:`NoQuestions` answers instead: ``deny`` rejects, ``fail``
cancels the turn and fails the run.
"""

from __future__ import annotations

import contextlib
import re
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import IO, TYPE_CHECKING, Any, Literal

import anyio
import click

from ..plugin.permissions import ClientAction, PermissionDecision, PermissionQuery
from .errors import EXIT_QUESTION, Failure
from .render import INDENT, Renderer, printable, single_line
from .rows import item_row

if TYPE_CHECKING:
    from ..client import Session


class TerminalAsk:
    """The ``ask`` callback of :func:`acp_adapters.connect` for a person at a terminal.

    ``session`` is set once the session is open (permission requests come only
    during a turn, after that); ``before`` is called before each question, so
    that output still being streamed ends its line first. The answers are the
    lines of ``lines`` (default: stdin's).
    """

    def __init__(
        self,
        renderer: Renderer,
        before: Callable[[], None] = lambda: None,
        lines: Lines | None = None,
    ) -> None:
        self.renderer = renderer
        self.before = before
        self.session: Session | None = None
        self._lines = lines if lines is not None else Lines()
        #: The first question that found the answers' input ended, not a terminal: no one
        #: can answer it (a CI job's ``< /dev/null``), and the run fails as under
        #: ``--non-interactive fail``.
        self.failed: PermissionQuery | None = None
        #: Called once, when that question comes (the run cancels the turn).
        self.on_fail: Callable[[], None] = lambda: None

    async def __call__(self, query: PermissionQuery) -> PermissionDecision | str | None:
        self.before()
        options = [o for o in query.options if isinstance(o.get("optionId"), str)]
        click.echo("", err=True)  # apart from the timeline's blocks, as they are from each other
        click.echo(self.question(query, options), err=True)
        if not options:
            click.echo("the agent offered no option: cancelled", err=True)
            return None
        answer = await self._choose(len(options)) if self.failed is None else None
        if answer is None:
            click.echo("no answer: cancelled", err=True)
            if not self._lines.is_terminal() and self.failed is None:
                self.failed = query
                self.on_fail()
            return None
        return str(options[answer - 1]["optionId"])

    def failure(self) -> Failure | None:
        """The run's error, once a question found the input of the answers ended."""
        if self.failed is None:
            return None
        return question_failure(self.failed, "its answers' input (stdin) ended")

    def question(self, query: PermissionQuery, options: list[dict[str, Any]]) -> str:
        """What is asked: the tool call as the timeline shows it, and the numbered options.

        The title and each option are one line each whatever the agent put in them (a line
        break in an option's name could otherwise forge a "2) Reject" line of its own), an
        option's kind and colour are those of its real kind (one of the schema's, else
        said to be unknown), and a name is cut short enough that the terminal does not wrap
        it into a line that reads as another option.
        """
        title = query.title or (query.tool_call.title if query.tool_call else None)
        lines = [
            click.style("? permission: ", fg="magenta", bold=True)
            + (one_line(title, TITLE_CHARS) if title else "a tool call")
        ]
        lines += [INDENT + line if line else "" for line in self._preview(query)]
        for number, option in enumerate(options, 1):
            kind = option.get("kind")
            colour = _KIND_COLOURS.get(kind) if isinstance(kind, str) else None
            if colour is None:
                # Not a kind of the schema: it allows or rejects only as the agent says.
                said = f"'{kind}'" if isinstance(kind, str) else repr(kind)
                kind, colour = "unknown kind " + one_line(said, KIND_CHARS), "yellow"
            name = one_line(str(option.get("name") or option["optionId"]), NAME_CHARS)
            lines.append(f"{INDENT}{number}) " + click.style(name, fg=colour) + f" ({kind})")
        return "\n".join(lines)

    def _preview(self, query: PermissionQuery) -> list[str]:
        action = query.action
        if action is not None:
            return self._action_preview(action)
        session, call = self.session, query.tool_call
        if session is None or call is None:
            return []
        try:
            item = session.hooks.project_tool_call(
                session.provider, call, session.projector.state.view()
            )
        except Exception:  # a preview is a courtesy: a plugin failing here must not block
            return []
        return self.renderer.body(item_row(item))

    def _action_preview(self, action: ClientAction) -> list[str]:
        """What the client would do: the command line, where, with which variables; or the
        file it would write, with the patch."""
        if action.kind == "command":
            # Each on one line: a line break in them would forge a line of the menu.
            lines = ["$ " + single_line(action.command_line or " ".join(action.argv))]
            if action.cwd:
                lines.append("in " + single_line(action.cwd))
            if action.env_names:
                names = ", ".join(single_line(n) for n in action.env_names)
                lines.append("with " + names + " set")
            return lines
        lines = ["write " + single_line(action.path or "?")]
        if action.patch:
            lines += self.renderer.patch(action.patch)
        return lines

    async def _choose(self, count: int) -> int | None:
        """An option's number read from stdin; None at the end of input.

        Read by hand rather than with ``click.prompt``, so that the question and the
        answer both stay on stderr; an answer that did not come from a terminal is
        echoed, so that a log shows it.
        """
        while True:
            click.echo(f"Choose 1-{count}: ", nl=False, err=True)
            try:
                line = await self._lines.next()
            except BaseException:
                # The question was given up (the agent went away): what stderr says
                # next starts a line of its own.
                click.echo("", err=True)
                raise
            if not line:
                click.echo("", err=True)
                return None
            answer = line.strip()
            if not self._lines.is_terminal():
                click.echo(printable(answer), err=True)
            number = _option_number(answer, count)
            if number is not None:
                return number
            click.echo(f"Answer with an option's number, 1 to {count}.", err=True)


#: The colour of each kind of option the schema has: what a kind is shown as.
_KIND_COLOURS = {
    "allow_once": "green",
    "allow_always": "green",
    "reject_once": "red",
    "reject_always": "red",
}
#: How much of an option's name and unknown kind, and of the question's title, the menu shows.
NAME_CHARS = 80
KIND_CHARS = 60
TITLE_CHARS = 200
#: What :func:`printable` leaves as it is but that starts a new line (or moves along it) on a
#: terminal or in a reader: escaped too in what must stay on one line.
_LINE_BREAKS = {"\n": "\\n", "\t": "\\t", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def one_line(text: str, limit: int) -> str:
    """The agent's ``text`` as one line of at most ``limit`` characters: controls escaped as
    :func:`printable` escapes them, line breaks and tabs too, runs of spaces made one (they
    would pad a forged line onto the terminal's next row), a long one cut with ``…``."""
    shown = printable(_SPACES.sub(" ", text[: limit * 8]))
    for char, escape in _LINE_BREAKS.items():
        shown = shown.replace(char, escape)
    return shown if len(shown) <= limit else shown[: limit - 1] + "\u2026"


_SPACES = re.compile(" {2,}")


def _option_number(answer: str, count: int) -> int | None:
    """The number ``answer`` gives in ASCII digits, if it is between 1 and ``count``."""
    # isdecimal() alone takes other scripts' digits ("٣"), and int() refuses a number
    # thousands of digits long.
    if not (answer.isascii() and answer.isdecimal()):
        return None
    try:
        number = int(answer)
    except ValueError:
        return None
    return number if 1 <= number <= count else None


#: How often a question looks whether its answer came (a person types slower).
_POLL_SECONDS = 0.05


class Lines:
    """The lines of a stream (default: stdin, as it is when read), each read by a daemon
    thread when a question (or the next prompt) wants one.

    Not in a worker thread of anyio: a process waits for those before it exits, so
    an agent that exits while a question waits would leave the command blocked
    until someone types a line. A daemon thread is left behind instead. A read
    that outlives its question (the question was cancelled) is not started again:
    the next question takes its line, so that no line is lost to a second reader.
    """

    def __init__(self, stream: IO[str] | None = None) -> None:
        self._stream = stream
        self._reading: Future[str] | None = None

    @property
    def stream(self) -> IO[str]:
        return self._stream if self._stream is not None else sys.stdin

    def is_terminal(self) -> bool:
        """Whether a person types the lines (else an answer is echoed, for a log to show)."""
        try:
            return self.stream.isatty()
        except (OSError, ValueError):
            return False

    async def next(self) -> str:
        """The next line, with its line break; ``""`` at the end of input."""
        if self._reading is None:
            self._reading = Future()
            thread = threading.Thread(
                target=_read_line,
                args=(self.stream, self._reading),
                name="answer reader",
                daemon=True,
            )
            thread.start()
        reading = self._reading
        # Polled: waiting on the future in a thread would be a thread to wait for again.
        while not reading.done():
            await anyio.sleep(_POLL_SECONDS)
        self._reading = None
        return reading.result()

    def close(self) -> None:
        """Close a stream of its own (the terminal), unless a read still waits on it (the
        daemon thread keeps it then, until the process ends)."""
        if self._stream is not None and (self._reading is None or self._reading.done()):
            with contextlib.suppress(OSError):
                self._stream.close()


#: The terminal the answers are read from when stdin holds the prompt.
TERMINAL = "/dev/tty"


def terminal_lines() -> Lines | None:
    """The lines of the terminal (:data:`TERMINAL`), for answers when stdin holds the
    prompt; None when there is none (no controlling terminal: a service, a CI job)."""
    try:
        stream = open(TERMINAL, encoding=sys.stdin.encoding or "utf-8", errors="replace")  # noqa: SIM115
    except OSError:
        return None
    return Lines(stream)


NonInteractive = Literal["deny", "fail"]


class NoQuestions:
    """The ``ask`` callback where no one may be asked: ``deny`` rejects what would be asked
    (the agent's reject option, else the request is cancelled); ``fail`` cancels the
    request, calls :attr:`on_fail` (the run cancels the turn) and keeps the question, for
    :meth:`failure` to word.

    ``why`` says why no one is asked, for the error.
    """

    def __init__(
        self, mode: NonInteractive, why: str = "--non-interactive fail asks no one"
    ) -> None:
        self.mode = mode
        self.why = why
        self.session: Session | None = None
        #: The first question that came under ``fail``.
        self.failed: PermissionQuery | None = None
        #: Called once, when the first question comes under ``fail``.
        self.on_fail: Callable[[], None] = lambda: None

    async def __call__(self, query: PermissionQuery) -> PermissionDecision | str | None:
        if self.mode == "deny":
            return reject_option(query.options)
        if self.failed is None:
            self.failed = query
            self.on_fail()
        return None

    def failure(self) -> Failure | None:
        """The run's error, once a question came under ``fail``."""
        if self.failed is None:
            return None
        return question_failure(self.failed, self.why)


def question_failure(query: PermissionQuery, why: str) -> Failure:
    """The error of a run that met a question no one may answer (exit 8)."""
    title = query.title or (query.tool_call.title if query.tool_call else None)
    what = f"permission for {title!r}" if title else "a permission"
    return Failure(
        f"the agent asked {what}, and {why}: the request and the turn were "
        "cancelled; decide it with --approve or --rules, or --non-interactive deny",
        EXIT_QUESTION,
    )


def reject_option(options: Sequence[dict[str, Any]]) -> str | None:
    """The option that rejects once (else always) of a question; None if it has none."""
    for kind in ("reject_once", "reject_always"):
        for option in options:
            if option.get("kind") == kind and isinstance(option.get("optionId"), str):
                return str(option["optionId"])
    return None


def _read_line(stream: IO[str], into: Future[str]) -> None:
    try:
        into.set_result(stream.readline())
    except Exception as error:  # raised again in the question that waits for the line
        into.set_exception(error)
