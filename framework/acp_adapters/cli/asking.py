"""``--approve ask``: each permission the agent asks for is asked on the terminal.

The question shows what the tool call would do, projected the way the
timeline will show it (a file change with its patch, a command, ...), then the
options the agent offered, numbered. The question and the answer go through
stderr, so that stdout keeps the timeline alone (a ``--format json`` run can be
piped). With no answer (stdin closed), the request is cancelled.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

import anyio
import click

from ..plugin.permissions import ClientAction, PermissionDecision, PermissionQuery
from .render import INDENT, Renderer, printable
from .rows import item_row

if TYPE_CHECKING:
    from ..client import Session


class TerminalAsk:
    """The ``ask`` callback of :func:`acp_adapters.connect` for a person at a terminal.

    ``session`` is set once the session is open (permission requests come only
    during a turn, after that); ``before`` is called before each question, so
    that output still being streamed ends its line first.
    """

    def __init__(self, renderer: Renderer, before: Callable[[], None] = lambda: None) -> None:
        self.renderer = renderer
        self.before = before
        self.session: Session | None = None
        self._lines = _StdinLines()

    async def __call__(self, query: PermissionQuery) -> PermissionDecision | str | None:
        self.before()
        options = [o for o in query.options if isinstance(o.get("optionId"), str)]
        click.echo("", err=True)  # apart from the timeline's blocks, as they are from each other
        click.echo(self.question(query, options), err=True)
        if not options:
            click.echo("the agent offered no option: cancelled", err=True)
            return None
        answer = await self._choose(len(options))
        if answer is None:
            click.echo("no answer: cancelled", err=True)
            return None
        return str(options[answer - 1]["optionId"])

    def question(self, query: PermissionQuery, options: list[dict[str, Any]]) -> str:
        """What is asked: the tool call as the timeline shows it, and the numbered options."""
        title = query.title or (query.tool_call.title if query.tool_call else None)
        lines = [
            click.style("? permission: ", fg="magenta", bold=True)
            + (printable(title) if title else "a tool call")
        ]
        lines += [INDENT + line if line else "" for line in self._preview(query)]
        for number, option in enumerate(options, 1):
            kind = printable(str(option.get("kind") or ""))
            colour = "red" if kind.startswith("reject") else "green"
            name = printable(str(option.get("name") or option["optionId"]))
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
            lines = ["$ " + printable(action.command_line or " ".join(action.argv))]
            if action.cwd:
                lines.append("in " + printable(action.cwd))
            if action.env_names:
                lines.append("with " + ", ".join(printable(n) for n in action.env_names) + " set")
            return lines
        lines = ["write " + printable(action.path or "?")]
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
            if not sys.stdin.isatty():
                click.echo(printable(answer), err=True)
            number = _option_number(answer, count)
            if number is not None:
                return number
            click.echo(f"Answer with an option's number, 1 to {count}.", err=True)


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


class _StdinLines:
    """The lines of stdin, each read by a daemon thread when a question wants one.

    Not in a worker thread of anyio: a process waits for those before it exits, so
    an agent that exits while a question waits would leave the command blocked
    until someone types a line. A daemon thread is left behind instead. A read
    that outlives its question (the question was cancelled) is not started again:
    the next question takes its line, so that no line is lost to a second reader.
    """

    def __init__(self) -> None:
        self._reading: Future[str] | None = None

    async def next(self) -> str:
        """The next line, with its line break; ``""`` at the end of input."""
        if self._reading is None:
            self._reading = Future()
            thread = threading.Thread(
                target=_read_line, args=(self._reading,), name="stdin answer", daemon=True
            )
            thread.start()
        reading = self._reading
        # Polled: waiting on the future in a thread would be a thread to wait for again.
        while not reading.done():
            await anyio.sleep(_POLL_SECONDS)
        self._reading = None
        return reading.result()


def _read_line(into: Future[str]) -> None:
    try:
        into.set_result(sys.stdin.readline())
    except Exception as error:  # raised again in the question that waits for the line
        into.set_exception(error)
