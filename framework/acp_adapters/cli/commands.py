"""The ``acp-adapters`` command: its group, its commands, and how it fails.

Every command prints a timeline (or the providers) on stdout; errors go to
stderr as one line that says what to do, with an exit code of
:mod:`.errors`, and a traceback only with ``--debug``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import shlex
import sys
import traceback
from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

import anyio
import click

from ..capture.format import WORKSPACE_MARK
from ..client.session import DEFAULT_START_TIMEOUT
from ..plugin.manager import get_plugin_manager
from ..plugin.permissions import Policy, PolicyName
from ..plugin.providers import ProviderRegistry
from ..plugin.rules import RulesError, load_rules
from ..replay import DEFAULT_TIMEOUT
from ..transport import ConnectionClosed
from .asking import NonInteractive
from .errors import EXIT_BROKEN_PIPE, EXIT_USAGE, Failure, explain, unwrap
from .live import Format, Outcome, record_path, run_session
from .login import log_in, report
from .mcp import servers_of_options
from .mcp_command import mcp
from .registry import ensure_installed, no_launch_note, registry
from .render import Renderer, printable, session_line, summary
from .replaying import Match, demo_capture, replay_live, replay_offline
from .rows import dumps, dumps_line
from .sessions import queue_prompts, sessions
from .settings import Settings, parse_setting
from .worker_command import worker

F = TypeVar("F", bound=Callable[..., Any])

_DEBUG = "acp_adapters.debug"
_FORMAT = click.Choice(["text", "json"])
#: ``run`` streams: it also writes a JSON line per change (``jsonl``).
_RUN_FORMAT = click.Choice(["text", "json", "jsonl"])

#: The longest --timeout: a larger number overflows the timers it sets.
_DAY = 86400.0


class _Seconds(click.FloatRange):
    """A number of seconds to wait: more than 0, a day at most, and not NaN."""

    def __init__(self) -> None:
        super().__init__(min=0, min_open=True, max=_DAY)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        seconds = super().convert(value, param, ctx)
        if math.isnan(seconds):  # NaN passes every comparison with the range's ends
            self.fail(f"{value!r} is not a number of seconds.", param, ctx)
        return seconds


_SECONDS = _Seconds()


def _start_timeout_option(function: F) -> F:
    return click.option(
        "--start-timeout",
        type=_SECONDS,
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


def _route_logs(*, debug: bool) -> None:
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
        ctx.find_root().meta[_DEBUG] = True
        _route_logs(debug=True)


def _debug_option(function: F) -> F:
    return click.option(
        "--debug",
        is_flag=True,
        expose_value=False,
        is_eager=True,
        callback=_set_debug,
        help="On an error, show the traceback (and the agent's stderr).",
    )(function)


class _Group(click.Group):
    """A group whose commands fail with one line and an exit code, not a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except BrokenPipeError:
            # The reader of stdout went away (``| head``): stop quietly, as a shell tool does.
            _discard_output(sys.stdout)
            ctx.exit(EXIT_BROKEN_PIPE)
        except (Exception, KeyboardInterrupt) as raised:
            error = unwrap(raised)
            if isinstance(error, click.ClickException | click.exceptions.Exit | click.Abort):
                raise error from None
            code, line = explain(error)
            try:
                if ctx.meta.get(_DEBUG):
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
@_debug_option
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
    if not ctx.meta.get(_DEBUG):
        _route_logs(debug=False)


def _print_outcome(outcome: Outcome, output: Format, renderer: Renderer, *, body: bool) -> None:
    """The timeline as JSON, the summary object (jsonl: the lines before it were written as
    they came), or (text) its blocks if ``body``, the summary line and what the agent
    reported of the session."""
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


@main.command()
@click.option(
    "--format", "output", type=_FORMAT, default="text", show_default=True, help="Output format."
)
@_debug_option
def demo(output: Format) -> None:
    """Replay a bundled Grok Build session and print its timeline with the patches.

    The session (one prompt: a new README written with permission, an edit of
    config.py, a patch over app.py that adds greeting.py) is played by the replay
    agent, a real subprocess speaking ACP, in a temporary folder seeded with the
    files the session started from; this client answers it as the session's
    client did. No network, no credentials, no agent to install.
    """
    with demo_capture() as capture:
        outcome = anyio.run(partial(replay_live, capture, provider=None, match="exact"))
    if output == "text":
        click.echo(
            click.style("Replaying a recorded Grok Build session", bold=True)
            + " (the replay agent, as a subprocess, in a temporary folder)\n"
        )
    _print_outcome(outcome, output, Renderer(roots=(WORKSPACE_MARK,)), body=True)
    if output == "text":
        click.echo(
            "\nNext: a live session, with an agent of `acp-adapters providers`:\n"
            '  acp-adapters run --provider grok --approve ask "your prompt"'
        )


@main.command()
@click.argument("capture", type=click.Path(dir_okay=True, path_type=str))
@click.option(
    "--provider",
    metavar="ID",
    help="Read the traffic as this provider's (default: the one claiming the agent's name).",
)
@click.option(
    "--format", "output", type=_FORMAT, default="text", show_default=True, help="Output format."
)
@click.option(
    "--offline",
    is_flag=True,
    help="Project the capture without any process (no replay agent, no folder).",
)
@click.option(
    "--match",
    type=click.Choice(["exact", "methods"]),
    default="exact",
    show_default=True,
    help="How the replay agent checks this client's messages against the capture's: "
    "whole messages, or methods only.",
)
@click.option(
    "--timeout",
    type=_SECONDS,
    default=DEFAULT_TIMEOUT,
    show_default=True,
    metavar="SECONDS",
    help="How long the replay agent waits for a message the capture says comes next.",
)
@_debug_option
def replay(
    capture: str,
    provider: str | None,
    output: Format,
    offline: bool,
    match: Match,
    timeout: float,
) -> None:
    """Print the timeline of a capture (a recorded session, one JSON message a line).

    By default the capture is replayed live: the replay agent plays the agent's
    side as a subprocess, and this client plays the client's side, in a
    temporary folder seeded with the files the session started from, with
    permission requests answered as they were. --offline projects the capture
    without any process instead. `run --record FILE` writes captures.
    """
    if offline:
        outcome = replay_offline(capture, provider=provider)
    else:
        outcome = anyio.run(
            partial(replay_live, capture, provider=provider, match=match, timeout=timeout)
        )
    _print_outcome(outcome, output, Renderer(roots=(WORKSPACE_MARK,)), body=True)


def _settings(_ctx: click.Context, _param: click.Parameter, values: tuple[str, ...]) -> Any:
    """``--set KEY=VALUE``, each as a (key, value) pair; a usage error if it is not."""
    return tuple(parse_setting(value) for value in values)


def _terminal(stream: Any) -> bool:
    """Whether ``stream`` is a terminal (a person types, or reads)."""
    try:
        return bool(stream.isatty())
    except (OSError, ValueError, AttributeError):
        return False


@main.command()
@click.argument("prompt", nargs=-1)
@click.option("--provider", metavar="ID", help="The agent to start (see `acp-adapters providers`).")
@click.option(
    "--command",
    "agent_command",
    metavar='"CMD ARGS"',
    help="The agent's command line, instead of the provider's (run in the session's folder).",
)
@click.option(
    "--cwd",
    type=click.Path(exists=True, file_okay=False, path_type=str),
    default=".",
    show_default=True,
    help="The session's folder: the agent reads and writes only inside it.",
)
@click.option(
    "--approve",
    type=click.Choice(["ask", "read-only", "workspace-write", "full-access"]),
    default="ask",
    show_default=True,
    help="How permission requests are answered: ask on the terminal, or by this policy.",
)
@click.option(
    "--rules",
    "rules_file",
    metavar="FILE",
    help="Permission rules (JSON, or TOML for a .toml file) read before the --approve "
    "policy: the first that matches a request allows, rejects or asks about it.",
)
@click.option(
    "--record",
    metavar="FILE",
    type=click.Path(dir_okay=False, path_type=str),
    help="Write the session's traffic to FILE, a capture that `replay` plays.",
)
@click.option(
    "--mcp-config",
    "mcp_configs",
    metavar="FILE",
    multiple=True,
    help='MCP servers for the agent: a JSON file of {"mcpServers": {NAME: ...}}, the '
    "format of Claude Code, Cursor and Zed (repeatable).",
)
@click.option(
    "--mcp-server",
    "mcp_servers",
    metavar="NAME=CMD|URL",
    multiple=True,
    help='An MCP server for the agent: "NAME=CMD ARGS" (stdio, split as a shell would) or '
    "NAME=http(s)://... (HTTP) (repeatable).",
)
@click.option(
    "--resume",
    "resume",
    metavar="ID",
    help="Go on with an earlier session of the agent (its own id): resumed when it can, "
    "else loaded (its history replayed, and shown).",
)
@click.option(
    "-s",
    "--session",
    "thread",
    metavar="NAME",
    help="A named session kept in the store: made on first use, and gone on with after "
    "(its agent session resumed, else loaded; its timeline continued).",
)
@click.option(
    "--store",
    "store",
    metavar="PATH_OR_URL",
    help="The store for -s: a SQLite file or a postgresql:// URL (default: a SQLite file "
    "in your data folder, or ACP_ADAPTERS_STORE).",
)
@click.option(
    "--busy",
    type=click.Choice(["queue", "fail"]),
    default="queue",
    show_default=True,
    help="When another process drives the -s session: queue the prompt behind its turns and "
    "print the turn as it lands (queue), or exit 10 naming it (fail).",
)
@click.option(
    "--move",
    is_flag=True,
    help="Go on with the -s session in --cwd though it was kept for another folder: it "
    "moves there (without it, that is a usage error naming both folders).",
)
@click.option(
    "--no-wait",
    is_flag=True,
    help="With -s: queue the prompts for whoever drives the session (a running owner, a "
    "worker), print their ids and exit.",
)
@click.option(
    "--prompt",
    "prompts",
    metavar="TEXT",
    multiple=True,
    help="A prompt, instead of the words: repeated, each is a turn of the one session, in order.",
)
@click.option(
    "--model",
    metavar="ID",
    help="The model: the value of the agent's model option (a config option of category model).",
)
@click.option("--mode", metavar="ID", help="The session's mode, one of the modes the agent offers.")
@click.option(
    "--set",
    "values",
    metavar="KEY=VALUE",
    multiple=True,
    callback=_settings,
    help="Set a config option the agent offers: one of its choices, or true/false for a "
    "boolean (repeatable, set in order).",
)
@click.option(
    "--timeout",
    type=_SECONDS,
    metavar="SECONDS",
    help="The longest a turn may take: past it the turn is cancelled and the run fails (exit 124).",
)
@_start_timeout_option
@click.option(
    "--non-interactive",
    type=click.Choice(["deny", "fail"]),
    help="Ask nothing: reject what would be asked (deny), or cancel the turn and fail "
    "(fail, exit 8).",
)
@click.option(
    "--format", "output", type=_RUN_FORMAT, default="text", show_default=True, help="Output format."
)
@_debug_option
def run(
    prompt: tuple[str, ...],
    provider: str | None,
    agent_command: str | None,
    cwd: str,
    approve: PolicyName,
    rules_file: str | None,
    record: str | None,
    mcp_configs: tuple[str, ...],
    mcp_servers: tuple[str, ...],
    resume: str | None,
    thread: str | None,
    store: str | None,
    busy: str,
    move: bool,
    no_wait: bool,
    prompts: tuple[str, ...],
    model: str | None,
    mode: str | None,
    values: tuple[tuple[str, str], ...],
    timeout: float | None,
    start_timeout: float,
    non_interactive: NonInteractive | None,
    output: Format,
) -> None:
    """Send PROMPT to a live agent and print the timeline as it goes.

    The agent is a provider's (--provider) or any ACP agent's command line
    (--command); with both, the provider's plugin reads the traffic of that
    command. The prompt is the words given, each --prompt in turn (one
    session, a turn each), or stdin when there are none; on a terminal,
    without any, prompts are read one a line until an empty line.
    --model, --mode and --set set the session up before the first prompt,
    checked against what the agent offers. With --approve ask, each
    permission is asked on the terminal, with the patch (or the command) the
    tool call would apply (from the terminal when stdin holds the prompt);
    --non-interactive asks nothing. --rules FILE decides first: the first
    rule that matches a request allows, rejects or asks about it, and
    --approve decides what no rule matches. --mcp-config and --mcp-server
    give the agent MCP servers, sent with session/new.

    \b
    acp-adapters run --provider claude --approve workspace-write "add a README"
    acp-adapters run --provider claude --model opus --mode plan "plan the refactor"
    acp-adapters run --provider claude --rules rules.toml "fix the tests"
    acp-adapters run --command "python my_agent.py" --prompt "hello" --prompt "again"
    acp-adapters run --provider codex --non-interactive fail --timeout 600 --format jsonl "go"
    acp-adapters run --provider claude --mcp-config .mcp.json "list the issues"
    """
    if provider is None and agent_command is None:
        raise click.UsageError('pass --provider ID or --command "CMD ARGS"')
    try:
        command = shlex.split(agent_command) if agent_command is not None else None
    except ValueError as error:  # an unterminated quote, a trailing backslash
        raise Failure(
            f"--command is not a command line ({error}): {agent_command}; quote it as a "
            'shell would, --command "CMD ARGS"',
            EXIT_USAGE,
        ) from None
    if command is not None and not command:
        raise click.UsageError("--command is empty")
    servers = servers_of_options(mcp_configs, mcp_servers)
    try:
        rules = load_rules(rules_file) if rules_file is not None else ()
    except RulesError as error:
        raise Failure(f"--rules {error}", EXIT_USAGE) from None
    words = " ".join(prompt)
    if words and prompts:
        raise click.UsageError("give the prompt as words or with --prompt, not both")
    if any(not text.strip() for text in prompts):
        raise click.UsageError("--prompt is empty")
    texts = [words] if words else list(prompts)
    from_stdin = interactive = False
    if not texts:
        if not _terminal(sys.stdin):
            text = sys.stdin.read().strip()
            texts, from_stdin = ([text] if text else []), True
        elif _terminal(sys.stdout):
            interactive = True  # a person at a terminal: a prompt a line
    if not texts and not interactive:
        raise click.UsageError("give a prompt: acp-adapters run ... PROMPT")
    pm = get_plugin_manager()
    if no_wait:
        if thread is None:
            raise click.UsageError("--no-wait queues for a named session: pass -s NAME")
        if not texts:
            raise click.UsageError("--no-wait takes its prompts as words or --prompt")
        for queued in anyio.run(
            partial(
                queue_prompts,
                store,
                thread,
                texts,
                provider=provider,
                command=command,
                cwd=cwd,
                policy=Policy(name=approve, rules=rules),
                mcp_servers=servers,
                pm=pm,
            )
        ):
            click.echo(queued.id)
        return
    if command is None and provider is not None:
        chosen = ProviderRegistry.collect(pm).get(provider)
        if (
            chosen.launch is None
            and provider.startswith("registry:")
            and ensure_installed(provider)
        ):
            # A registry binary installed just now: its provider has a launch now.
            chosen = ProviderRegistry.collect(pm).get(provider)
        if chosen.launch is None:
            raise Failure(
                f'provider {chosen.id!r} has no launch command: pass --command "CMD ARGS"',
                EXIT_USAGE,
            )
        # The provider's own command, spelled out, so that an error can name it.
        command = [chosen.launch.command, *chosen.launch.args]
        label = f"starting {chosen.name}"
    else:
        assert command is not None
        shown = shlex.join(command)
        label = f"starting {shown if len(shown) <= 60 else shown[:57] + '...'}"
    outcome = anyio.run(
        partial(
            run_session,
            pm=pm,
            provider=provider,
            command=command,
            cwd=cwd,
            approve=Policy(name=approve, rules=rules),
            record=record_path(record),
            prompt=texts,
            output=output,
            mcp_servers=servers,
            settings=Settings(model=model, mode=mode, values=values),
            timeout=timeout,
            non_interactive=non_interactive,
            interactive=interactive,
            questions_from_terminal=from_stdin,
            label=label,
            resume=resume,
            thread=thread,
            store=store,
            busy="fail" if busy == "fail" else "queue",
            move=move,
            start_timeout=start_timeout,
        )
    )
    folder = os.path.abspath(cwd)
    renderer = Renderer(roots=(folder, os.path.realpath(folder)))
    if output == "text":
        click.echo("")
    _print_outcome(outcome, output, renderer, body=False)
    ending = outcome.ending()
    if ending is not None:
        raise ending


@main.command()
@click.option("--provider", metavar="ID", help="The agent to start (see `acp-adapters providers`).")
@click.option(
    "--command",
    "agent_command",
    metavar='"CMD ARGS"',
    help="The agent's command line, instead of the provider's.",
)
@click.option(
    "--cwd",
    type=click.Path(exists=True, file_okay=False, path_type=str),
    default=".",
    show_default=True,
    help="The folder the agent (and a terminal login) runs in.",
)
@click.option("--method", "method_id", metavar="ID", help="The login method to use (see --list).")
@click.option("--list", "list_only", is_flag=True, help="List the agent's login methods only.")
@click.option("--logout", is_flag=True, help="Log out instead (when the agent offers it).")
@_start_timeout_option
@_debug_option
def login(
    provider: str | None,
    agent_command: str | None,
    cwd: str,
    method_id: str | None,
    list_only: bool,
    logout: bool,
    start_timeout: float,
) -> None:
    """Log in to an agent with one of its login methods (or list them, or log out).

    The agent is started, its login methods are read from its initialize
    answer, and the one named by --method is used: without --method, its only
    method, or its only terminal method. A terminal method runs the agent's
    own program with the method's arguments here, on this terminal, for you
    to answer; an agent method asks the agent to log in.

    \b
    acp-adapters login --provider claude --list
    acp-adapters login --provider claude --method claude-login
    acp-adapters login --command "my-agent --acp" --logout
    """
    if provider is None and agent_command is None:
        raise click.UsageError('pass --provider ID or --command "CMD ARGS"')
    if list_only and logout:
        raise click.UsageError("--list and --logout do not go together")
    try:
        command = shlex.split(agent_command) if agent_command is not None else None
    except ValueError as error:
        raise Failure(f"--command is not a command line ({error})", EXIT_USAGE) from None
    if command is not None and not command:
        raise click.UsageError("--command is empty")
    outcome = anyio.run(
        partial(
            log_in,
            pm=get_plugin_manager(),
            provider=provider,
            command=command,
            cwd=cwd,
            method_id=method_id,
            list_only=list_only,
            logout=logout,
            start_timeout=start_timeout,
        )
    )
    click.echo(report(outcome))


@main.command()
@click.option(
    "--format", "output", type=_FORMAT, default="text", show_default=True, help="Output format."
)
@_debug_option
def providers(output: Format) -> None:
    """List the providers of the installed plugins: id, name, plugin, launch command.

    ACP_ADAPTERS_PLUGINS and ACP_ADAPTERS_DISABLE_PLUGINS choose the plugins loaded.
    """
    registry = ProviderRegistry.collect(get_plugin_manager())
    found = sorted(registry, key=lambda p: p.id)
    if output == "json":
        click.echo(
            json.dumps(
                [
                    {
                        "id": p.id,
                        "name": p.name,
                        "plugin": p.plugin,
                        "command": [p.launch.command, *p.launch.args] if p.launch else None,
                        "env": dict(p.launch.env) if p.launch else {},
                        "agent_names": list(p.agent_names),
                        "protocol_version": p.protocol_version,
                        "env_needs": list(p.env_needs),
                        "description": p.description,
                    }
                    for p in found
                ],
                indent=2,
                ensure_ascii=False,
            )
        )
        return
    table = [("ID", "NAME", "PLUGIN", "COMMAND")]
    for p in found:
        launch = (
            shlex.join([p.launch.command, *p.launch.args])
            if p.launch
            else no_launch_note(p.id) or "(use --command)"
        )
        table.append((p.id, p.name, p.plugin or "?", launch))
    widths = [max(len(row[column]) for row in table) for column in range(3)]
    for number, row in enumerate(table):
        line = "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False))
        line += "  " + row[3]
        click.echo(click.style(line, bold=True) if number == 0 else line)


main.add_command(registry)
main.add_command(sessions)
main.add_command(mcp)
main.add_command(worker)

__all__ = ["main"]
