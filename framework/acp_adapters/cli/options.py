"""What the commands of ``acp-adapters`` share: options, the routing of the logs, the outcome.

Light on purpose: the group (:mod:`.commands`) and ``providers`` import it, and either may
be all that a run of the program loads. What only a session needs (the client, the
timeline's rows and rendering, the error messages) is imported by the function that uses
it.
"""

from __future__ import annotations

import logging
import math
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from .live import Format, Outcome
    from .render import Renderer

F = TypeVar("F", bound=Callable[..., Any])

#: Where ``--debug`` is kept, in the root context's ``meta``.
DEBUG = "acp_adapters.debug"
#: ``--format`` of the commands that print a timeline once it is complete.
FORMAT = click.Choice(["text", "json"])

#: The longest --timeout: a larger number overflows the timers it sets.
_DAY = 86400.0


class Seconds(click.FloatRange):
    """A number of seconds to wait: more than 0, a day at most, and not NaN."""

    def __init__(self) -> None:
        super().__init__(min=0, min_open=True, max=_DAY)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        seconds = super().convert(value, param, ctx)
        if math.isnan(seconds):  # NaN passes every comparison with the range's ends
            self.fail(f"{value!r} is not a number of seconds.", param, ctx)
        return seconds


SECONDS = Seconds()


#: What ``--store`` says when a command's own words do not differ.
STORE_HELP = "The store: a SQLite file or a postgresql:// URL (default: the one `run -s` uses)."


def store_option(help: str = STORE_HELP) -> Callable[[F], F]:
    """``--store PATH_OR_URL``, for the commands that read or keep sessions in a store (None:
    the default store, the one ``run -s`` uses)."""

    def add(function: F) -> F:
        return click.option("--store", "store", metavar="PATH_OR_URL", default=None, help=help)(
            function
        )

    return add


def start_timeout_option(function: F) -> F:
    """``--start-timeout SECONDS``, for the commands that start an agent (they load the
    client anyway: its default is the client's)."""
    from ..client.connecting import DEFAULT_START_TIMEOUT

    return click.option(
        "--start-timeout",
        type=SECONDS,
        default=DEFAULT_START_TIMEOUT,
        show_default=True,
        metavar="SECONDS",
        help="The longest the agent may take to start: answer initialize and open the "
        "session. Past it the agent is stopped and the run fails (exit 124).",
    )(function)


#: The package's loggers: what the connection skipped (a line that is not JSON, an
#: answer to nothing) is logged there as a warning.
_LOGGER = logging.getLogger("acp_adapters")
_OUR_HANDLERS: list[logging.Handler] = []


def route_logs(*, debug: bool) -> None:
    """Log lines go to stderr with --debug, nowhere else (not between the timeline's lines).

    Without any handler, Python would print the package's warnings to stderr itself.
    """
    while _OUR_HANDLERS:
        _LOGGER.removeHandler(_OUR_HANDLERS.pop())
    handler: logging.Handler = logging.StreamHandler(sys.stderr) if debug else logging.NullHandler()
    handler.setFormatter(logging.Formatter("%(name)s: %(levelname)s: %(message)s"))
    _LOGGER.addHandler(handler)
    _OUR_HANDLERS.append(handler)


def _set_debug(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        ctx.find_root().meta[DEBUG] = True
        route_logs(debug=True)


def debug_option(function: F) -> F:
    """``--debug``, taken by the group and by every command alike."""
    return click.option(
        "--debug",
        is_flag=True,
        expose_value=False,
        is_eager=True,
        callback=_set_debug,
        help="On an error, show the traceback (and the agent's stderr).",
    )(function)


def print_outcome(outcome: Outcome, output: Format, renderer: Renderer, *, body: bool) -> None:
    """The timeline as JSON, the summary object (jsonl: the lines before it were written as
    they came), or (text) its blocks if ``body``, the summary line and what the agent
    reported of the session."""
    from .errors import explain
    from .render import printable, session_line, summary
    from .rows import dumps, dumps_line

    for warning in outcome.skipped:
        click.echo(f"Note: capture {printable(warning)}", err=True)
    if outcome.ended:
        ended = printable(outcome.ended)
        click.echo(f"Note: the recorded session ended with an error: {ended}", err=True)
    if output == "json":
        click.echo(dumps(outcome.rows))
        return
    if output == "jsonl":
        ending = outcome.ending()
        code, line = explain(ending) if ending is not None else (0, None)
        click.echo(dumps_line(outcome.summary_object(code, line)))
        return
    if body and outcome.rows:
        click.echo(renderer.timeline(outcome.rows))
        click.echo("")
    click.echo(
        summary(
            outcome.rows,
            provider=outcome.provider,
            version=outcome.version,
            stop_reason=outcome.stop_reason,
        )
    )
    reported = session_line(outcome.session) if outcome.session is not None else None
    if reported:
        click.echo(reported)


__all__ = [
    "DEBUG",
    "FORMAT",
    "SECONDS",
    "Seconds",
    "debug_option",
    "print_outcome",
    "route_logs",
    "start_timeout_option",
]
