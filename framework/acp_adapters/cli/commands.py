"""The ``acp-adapters`` command: its group, the table of its commands, and how it fails.

Every command prints a timeline (or the providers) on stdout; errors go to
stderr as one line that says what to do, with an exit code of
:mod:`.errors`, and a traceback only with ``--debug``.

Each command lives in a module of its own, imported only when that command runs (or its
own ``--help`` is asked): ``acp-adapters --help`` lists them from :data:`COMMANDS`
without importing any, and ``acp-adapters providers`` loads no more than the plugins
need. The modules: ``demo_command``, ``replay_command``, ``run_command``,
``login_command``, ``providers_command``, ``registry``, ``sessions``, ``mcp_command``,
``serve_command`` and ``worker_command``; what they share is in :mod:`.options`.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import traceback
from typing import Any

import click

from .options import DEBUG, debug_option, route_logs

#: Each command: the module of this package that defines it, its name there, and its
#: short help, the first sentence of its help (``--help`` lists it, cut to the terminal's
#: width as click cuts the command's own: tests/cli/test_startup.py checks they agree).
COMMANDS: dict[str, tuple[str, str, str]] = {
    "demo": (
        "demo_command",
        "demo",
        "Replay a bundled Grok Build session and print its timeline with the patches.",
    ),
    "login": (
        "login_command",
        "login",
        "Log in to an agent with one of its login methods (or list them, or log out).",
    ),
    "mcp": (
        "mcp_command",
        "mcp",
        "Serve the threads of a store to other agents over MCP (list_threads, read_thread, "
        "list_items, read_item, turn_patch).",
    ),
    "providers": (
        "providers_command",
        "providers",
        "List the providers of the installed plugins: id, name, plugin, launch command.",
    ),
    "registry": (
        "registry",
        "registry",
        "The agents of the ACP agent registry: list, show, install, path, update.",
    ),
    "replay": (
        "replay_command",
        "replay",
        "Print the timeline of a capture (a recorded session, one JSON message a line).",
    ),
    "run": ("run_command", "run", "Send PROMPT to a live agent and print the timeline as it goes."),
    "serve": (
        "serve_command",
        "serve",
        "Show the threads of a store in the browser, live, on 127.0.0.1 (read-only).",
    ),
    "sessions": (
        "sessions",
        "sessions",
        "The named sessions of a store (`run -s NAME` makes and continues them).",
    ),
    "worker": (
        "worker_command",
        "worker",
        "Run the threads of a store: take each thread that has queued prompts and no live "
        "owner, start its agent as the thread records it, run its queue in order, keep the "
        "agent --idle seconds for more, then let the thread go.",
    ),
}


class _Group(click.Group):
    """A group whose commands load when used, and fail with one line and an exit code, not
    a traceback."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = self.commands.get(cmd_name)
        if command is None and cmd_name in COMMANDS:
            module, attribute, _ = COMMANDS[cmd_name]
            command = getattr(importlib.import_module(f".{module}", __package__), attribute)
            self.add_command(command, cmd_name)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands and their short help, as click lists them, from :data:`COMMANDS`:
        listing them imports none."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        for name in names:
            loaded = self.commands.get(name)
            # A stand-in with the table's sentence as its help: click cuts it as it would
            # cut the command's own help, whose first sentence it is.
            shown = loaded or click.Command(name, help=COMMANDS[name][2])
            if not shown.hidden:
                rows.append((name, shown.get_short_help_str(limit)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except BrokenPipeError:
            from .errors import EXIT_BROKEN_PIPE

            # The reader of stdout went away (``| head``): stop quietly, as a shell tool does.
            _discard_output(sys.stdout)
            ctx.exit(EXIT_BROKEN_PIPE)
        except (Exception, KeyboardInterrupt) as raised:
            # The messages for every error, and what they name, load on this path only.
            from ..transport import ConnectionClosed
            from .errors import explain, unwrap
            from .render import printable

            error = unwrap(raised)
            if isinstance(error, click.ClickException | click.exceptions.Exit | click.Abort):
                raise error from None
            if isinstance(error, BrokenPipeError):
                from .errors import EXIT_BROKEN_PIPE

                # The same, out of a run's task group (a line printed as the turn streams).
                _discard_output(sys.stdout)
                ctx.exit(EXIT_BROKEN_PIPE)
            code, line = explain(error)
            try:
                if ctx.meta.get(DEBUG):
                    # The messages in a traceback and the agent's stderr are the agent's words.
                    lines = traceback.format_exception(type(error), error, error.__traceback__)
                    click.echo(printable("".join(lines)), nl=False, err=True)
                    if isinstance(error, ConnectionClosed) and error.stderr_tail.strip():
                        click.echo("the agent's stderr ended with:", err=True)
                        click.echo(printable(error.stderr_tail.rstrip()), err=True)
                click.echo(click.style("Error:", fg="red", bold=True) + " " + line, err=True)
            except OSError:
                # No terminal to tell (it closed: EIO): the exit code still says it.
                _discard_output(sys.stdout)
                _discard_output(sys.stderr)
            ctx.exit(code)


def _discard_output(stream: Any) -> None:
    """Point ``stream`` at /dev/null, so that what is still buffered or written is dropped
    rather than failing again (as the interpreter flushes it at exit)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    with contextlib.suppress(OSError, ValueError):
        os.dup2(devnull, stream.fileno())
    os.close(devnull)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="acp-adapters", prog_name="acp-adapters")
@debug_option
@click.pass_context
def main(ctx: click.Context) -> None:
    """Drive coding agents that speak the Agent Client Protocol (ACP) and print their timeline.

    A timeline is what happened in a session, the same for every agent:
    messages, reasoning, plans, commands, and file changes with unified patches.

    \b
    Start with:
      acp-adapters demo                      a bundled session, replayed; no network
      acp-adapters run --provider ID PROMPT  a live session with an agent
      acp-adapters replay CAPTURE.jsonl      the timeline of a recorded session
      acp-adapters providers                 the agents this installation knows

    Colours show on a terminal only; NO_COLOR=1 turns them off. An error is one
    line on stderr and an exit code (docs/cli.md lists them); --debug adds the
    traceback.
    """
    if os.environ.get("NO_COLOR"):
        ctx.color = False
    if not ctx.meta.get(DEBUG):
        route_logs(debug=False)


__all__ = ["COMMANDS", "main"]
