"""Logging in to an agent: its authentication methods, and the terminal logins the client runs.

An agent lists its ways to log in in its ``initialize`` answer (``authMethods``); the
schema at the pinned versions knows two kinds:

* ``agent`` (the default, when there is no ``type``): the agent logs in itself when asked
  (v1 ``authenticate``, v2 ``auth/login``);
* ``terminal``: the client runs the agent's own program again, with the method's ``args``
  and ``env``, in an interactive terminal for the user (a TUI); a zero exit status is a
  success. It is never passed to ``authenticate``, and agents list it only to a client
  that offers ``auth.terminal``, which this client does when the application gives a
  ``login`` callback to run it (:func:`run_login_here` runs it on this process's terminal).

Older agents still send ``env_var`` methods (gone from 1.21.0): the schema reads them as
``agent`` methods, and so does this client, which also checks that the variables they
name are in the agent's environment before asking.
"""

from __future__ import annotations

import shutil
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio

#: How many of an agent's methods are read, and how long their texts may be: an
#: ``initialize`` answer is the agent's to fill.
MAX_METHODS = 64
MAX_TEXT = 500
MAX_ARGS = 64


@dataclass(frozen=True)
class AuthMethod:
    """One of the agent's ways to log in, as the schema reads it."""

    id: str
    name: str
    #: ``agent``, ``terminal``, ``env_var`` (older agents), or another kind an agent named.
    type: str = "agent"
    description: str | None = None
    #: A terminal method's arguments to the agent's program, and what it adds to its
    #: environment.
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    #: An ``env_var`` method's variables (read from the agent's environment).
    vars: tuple[str, ...] = ()

    @property
    def runs_in_terminal(self) -> bool:
        return self.type == "terminal"


@dataclass(frozen=True)
class LoginCommand:
    """A terminal login to run for the user: the agent's program, its arguments and its
    environment (the agent's, with the method's on top), in the session's folder."""

    method: AuthMethod
    argv: tuple[str, ...]
    env: Mapping[str, str]
    cwd: str


#: What runs a terminal login (``connect(login=...)``): its exit status (0 is a success).
LoginCallback = Callable[[LoginCommand], Awaitable[int]]


def _text(value: Any) -> str | None:
    return value[:MAX_TEXT] if isinstance(value, str) else None


def _env(value: Any, version: int) -> dict[str, str]:
    """A terminal method's ``env``: an object of strings (v1), a list of ``{name, value}``
    (v2); what is not a string is skipped."""
    if version == 2 and isinstance(value, list):
        pairs = [
            (entry.get("name"), entry.get("value")) for entry in value if isinstance(entry, dict)
        ]
    elif version == 1 and isinstance(value, dict):
        pairs = list(value.items())
    else:
        return {}
    return {
        name: text
        for name, text in pairs[:MAX_ARGS]
        if isinstance(name, str) and name and "=" not in name and isinstance(text, str)
    }


def auth_methods(raw: Any, version: int) -> list[AuthMethod]:
    """The agent's ``authMethods`` as methods; one that cannot be read is skipped, as the
    schema's ``x-deserialize-skip-invalid-items`` says."""
    if not isinstance(raw, list):
        return []
    methods: list[AuthMethod] = []
    for entry in raw[:MAX_METHODS]:
        if not isinstance(entry, dict):
            continue
        method_id = entry.get("methodId" if version == 2 else "id", entry.get("id"))
        name = entry.get("name")
        if not (isinstance(method_id, str) and isinstance(name, str)):
            continue
        kind = entry.get("type")
        kind = kind[:MAX_TEXT] if isinstance(kind, str) else "agent"
        args = entry.get("args") if kind == "terminal" else None
        variables = entry.get("vars") if kind == "env_var" else None
        methods.append(
            AuthMethod(
                id=method_id[:MAX_TEXT],
                name=name[:MAX_TEXT],
                type=kind,
                description=_text(entry.get("description")),
                args=tuple(a for a in args[:MAX_ARGS] if isinstance(a, str))
                if isinstance(args, list)
                else (),
                env=_env(entry.get("env"), version) if kind == "terminal" else {},
                vars=tuple(
                    v["name"]
                    for v in variables[:MAX_ARGS]
                    if isinstance(v, dict) and isinstance(v.get("name"), str)
                )
                if isinstance(variables, list)
                else (),
            )
        )
    return methods


def login_command(
    method: AuthMethod, agent_command: Sequence[str], agent_env: Mapping[str, str], cwd: str
) -> LoginCommand:
    """What a terminal method runs: the agent's program with the method's arguments.

    The program is found on the agent's own ``PATH``, before the method's environment is
    added: what the agent sends may change how its program runs, not which program runs.
    """
    if not agent_command:
        raise ValueError("the agent's command is empty")
    program = shutil.which(agent_command[0], path=agent_env.get("PATH")) or agent_command[0]
    return LoginCommand(
        method=method,
        argv=(program, *agent_command[1:], *method.args),
        env={**agent_env, **method.env},
        cwd=cwd,
    )


async def run_login_here(command: LoginCommand) -> int:
    """Run a terminal login on this process's terminal (its stdin, stdout and stderr), for
    the user to answer; its exit status. What the command line's ``login`` uses."""
    process = await anyio.open_process(
        list(command.argv),
        stdin=None,
        stdout=None,
        stderr=None,
        cwd=command.cwd,
        env=dict(command.env),
    )
    async with process:
        return await process.wait()


def missing_variables(method: AuthMethod, environment: Mapping[str, str]) -> list[str]:
    """The variables an ``env_var`` method reads that the agent's environment lacks."""
    return [name for name in method.vars if name not in environment]


__all__ = [
    "AuthMethod",
    "LoginCallback",
    "LoginCommand",
    "auth_methods",
    "login_command",
    "missing_variables",
    "run_login_here",
]
