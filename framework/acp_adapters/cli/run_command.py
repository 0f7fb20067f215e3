"""``acp-adapters run``: a live session with a provider's agent or any ACP agent's command."""

from __future__ import annotations

import os
import shlex
import sys
from functools import partial
from typing import Any

import anyio
import click

from ..plugin.manager import get_plugin_manager
from ..plugin.permissions import Policy, PolicyName
from ..plugin.providers import ProviderRegistry
from ..plugin.rules import RulesError, load_rules
from .asking import NonInteractive
from .errors import EXIT_USAGE, Failure
from .live import Format, record_path, run_session
from .mcp_servers import servers_of_options
from .options import SECONDS, debug_option, print_outcome, start_timeout_option
from .registry import ensure_installed
from .render import Renderer
from .sessions import queue_prompts
from .settings import Settings, parse_setting

#: ``run`` streams: it also writes a JSON line per change (``jsonl``).
RUN_FORMAT = click.Choice(["text", "json", "jsonl"])


def _settings(_ctx: click.Context, _param: click.Parameter, values: tuple[str, ...]) -> Any:
    """``--set KEY=VALUE``, each as a (key, value) pair; a usage error if it is not."""
    return tuple(parse_setting(value) for value in values)


def _terminal(stream: Any) -> bool:
    """Whether ``stream`` is a terminal (a person types, or reads)."""
    try:
        return bool(stream.isatty())
    except (OSError, ValueError, AttributeError):
        return False


@click.command()
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
    type=SECONDS,
    metavar="SECONDS",
    help="The longest a turn may take: past it the turn is cancelled and the run fails (exit 124).",
)
@start_timeout_option
@click.option(
    "--non-interactive",
    type=click.Choice(["deny", "fail"]),
    help="Ask nothing: reject what would be asked (deny), or cancel the turn and fail "
    "(fail, exit 8).",
)
@click.option(
    "--format", "output", type=RUN_FORMAT, default="text", show_default=True, help="Output format."
)
@debug_option
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
    print_outcome(outcome, output, renderer, body=False)
    ending = outcome.ending()
    if ending is not None:
        raise ending


__all__ = ["run"]
