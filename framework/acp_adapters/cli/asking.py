"""``--approve ask``: each permission the agent asks for is asked on the terminal.

The question shows what the tool call would do, projected the way the
timeline will show it (a file change with its patch, a command, ...), then the
options the agent offered, numbered. The question and the answer go through
stderr, so that stdout keeps the timeline alone (a ``--format json`` run can be
piped). With no answer (stdin closed), the request is cancelled.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
import click

from ..permissions import PermissionDecision, PermissionQuery
from .render import INDENT, Renderer
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

    async def __call__(self, query: PermissionQuery) -> PermissionDecision | str | None:
        self.before()
        options = [o for o in query.options if isinstance(o.get("optionId"), str)]
        click.echo("", err=True)  # apart from the timeline's blocks, as they are from each other
        click.echo(self.question(query, options), err=True)
        if not options:
            click.echo("the agent offered no option: cancelled", err=True)
            return None
        answer = await anyio.to_thread.run_sync(_read_choice, len(options), abandon_on_cancel=True)
        if answer is None:
            click.echo("no answer: cancelled", err=True)
            return None
        return str(options[answer - 1]["optionId"])

    def question(self, query: PermissionQuery, options: list[dict[str, Any]]) -> str:
        """What is asked: the tool call as the timeline shows it, and the numbered options."""
        title = query.title or (query.tool_call.title if query.tool_call else None)
        lines = [click.style("? permission: ", fg="magenta", bold=True) + (title or "a tool call")]
        lines += [INDENT + line if line else "" for line in self._preview(query)]
        for number, option in enumerate(options, 1):
            kind = str(option.get("kind") or "")
            colour = "red" if kind.startswith("reject") else "green"
            name = str(option.get("name") or option["optionId"])
            lines.append(f"{INDENT}{number}) " + click.style(name, fg=colour) + f" ({kind})")
        return "\n".join(lines)

    def _preview(self, query: PermissionQuery) -> list[str]:
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


def _read_choice(count: int) -> int | None:
    """An option's number read from stdin; None at the end of input.

    Read by hand rather than with ``click.prompt``, so that the question and the
    answer both stay on stderr; an answer that did not come from a terminal is
    echoed, so that a log shows it.
    """
    while True:
        click.echo(f"Choose 1-{count}: ", nl=False, err=True)
        line = sys.stdin.readline()
        if not line:
            click.echo("", err=True)
            return None
        answer = line.strip()
        if not sys.stdin.isatty():
            click.echo(answer, err=True)
        if answer.isdigit() and 1 <= int(answer) <= count:
            return int(answer)
        click.echo(f"Answer with an option's number, 1 to {count}.", err=True)
