"""``acp-adapters login``: log in to an agent with one of its login methods."""

from __future__ import annotations

import shlex
from functools import partial

import anyio
import click

from ..plugin.manager import get_plugin_manager
from .errors import EXIT_USAGE, Failure
from .login import log_in, report
from .options import debug_option, start_timeout_option


@click.command()
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
@start_timeout_option
@debug_option
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


__all__ = ["login"]
