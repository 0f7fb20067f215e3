"""``acp-adapters login``: log in to an agent with one of its login methods, or list them.

The agent is started as for ``run`` (no session is opened), its ``authMethods`` are
read, and the chosen method is used: an ``agent`` method is asked of the agent, a
``terminal`` method runs the agent's own program with the method's arguments on this
terminal, for the user to answer (the client offers ``auth.terminal``, so agents list
such methods to it).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

import click
import pluggy

from ..client import AuthMethod, Session, connect, run_login_here
from ..client.auth import missing_variables
from ..client.connecting import DEFAULT_START_TIMEOUT, Timeouts
from ..errors import AcpAdaptersError, CapabilityError
from ..transport import RpcError
from .errors import EXIT_AUTHENTICATION, EXIT_USAGE, Failure
from .render import printable


@dataclass
class LoginOutcome:
    """What ``login`` found and did: the agent's methods, and the one used (if any)."""

    agent: str
    methods: list[AuthMethod]
    used: AuthMethod | None = None
    logged_out: bool = False


def choose(methods: Sequence[AuthMethod], method_id: str | None) -> AuthMethod:
    """The method to log in with: the one named, else the only one, else the only terminal
    one. :class:`Failure` (usage) naming the methods when none of that picks one."""
    listed = ", ".join(f"{m.id} ({m.type})" for m in methods)
    if method_id is not None:
        for method in methods:
            if method.id == method_id:
                return method
        raise Failure(
            f"the agent has no login method {method_id!r}; it lists: {listed or 'none'}",
            EXIT_USAGE,
        )
    if len(methods) == 1:
        return methods[0]
    terminals = [m for m in methods if m.runs_in_terminal]
    if len(terminals) == 1:
        return terminals[0]
    raise Failure(f"pass --method ID, one of: {listed}", EXIT_USAGE)


async def log_in(
    *,
    pm: pluggy.PluginManager | None,
    provider: str | None,
    command: list[str] | None,
    cwd: str,
    method_id: str | None,
    list_only: bool,
    logout: bool,
    start_timeout: float | None = DEFAULT_START_TIMEOUT,
) -> LoginOutcome:
    """Start the agent, read its login methods, and log in with one (or out, or list).

    :raises Failure: no method to use (usage), or the login failed (authentication).
    """
    async with connect(
        provider,
        os.path.abspath(cwd),
        command=command,
        pm=pm,
        policy="read-only",
        new_session=False,
        login=run_login_here,
        timeouts=Timeouts(start=start_timeout),
    ) as session:
        outcome = LoginOutcome(agent=_agent_name(session), methods=list(session.login_methods))
        if list_only:
            return outcome
        if logout:
            await session.logout()
            outcome.logged_out = True
            return outcome
        if not outcome.methods:
            return outcome
        method = choose(outcome.methods, method_id)
        missing = missing_variables(method, session.agent.agent_env)
        if missing:
            # Said to a person at a shell: the variables come from its environment.
            names = ", ".join(printable(name) for name in missing)
            raise Failure(
                f"the login method {printable(method.id)!r} reads {names} from the "
                f"environment: set {'it' if len(missing) == 1 else 'them'} (export "
                f"{printable(missing[0])}=...), then run again",
                EXIT_AUTHENTICATION,
            )
        if method.runs_in_terminal:
            click.echo(f"Running the login of {outcome.agent} ({method.name}) ...", err=True)
        try:
            await session.authenticate(method.id)
        except RpcError as error:
            raise Failure(
                f"the agent refused the login {method.id!r}: {printable(error.message)}",
                EXIT_AUTHENTICATION,
            ) from error
        except CapabilityError:
            raise
        except AcpAdaptersError as error:  # a terminal login failed, a variable is missing
            raise Failure(printable(str(error)), EXIT_AUTHENTICATION) from error
        outcome.used = method
        return outcome


def _agent_name(session: Session) -> str:
    info = session.agent_info
    name = info.get("title") or info.get("name")
    return printable(name)[:100] if isinstance(name, str) and name else session.provider.id


def report(outcome: LoginOutcome) -> str:
    """What ``login`` prints: the methods (listed), or what it did."""
    if outcome.logged_out:
        return f"Logged out of {outcome.agent}."
    if outcome.used is not None:
        return f"Logged in to {outcome.agent} with {printable(outcome.used.name)}."
    if not outcome.methods:
        return f"{outcome.agent} lists no login method: it needs none, or logs in on its own."
    rows = [("ID", "TYPE", "NAME")] + [
        (printable(m.id), m.type, printable(m.name)) for m in outcome.methods
    ]
    widths = [max(len(row[column]) for row in rows) for column in range(2)]
    return "\n".join(
        f"{row[0].ljust(widths[0])}  {row[1].ljust(widths[1])}  {row[2]}" for row in rows
    )
