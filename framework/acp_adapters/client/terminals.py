"""Terminals the client runs for an agent (ACP v1 ``terminal/*``): real processes.

A terminal is one command in a process group of its own, stdout and stderr
merged into one output. The output keeps at most ``outputByteLimit`` bytes, and
never more than :data:`MAX_OUTPUT_BYTES` (16 MiB) whatever the agent asks: past
it, it is cut from the start, at a character boundary. A ``command`` sent
without ``args`` that holds a whole shell line (kimi-cli sends
``echo hi; cat f``) runs through ``/bin/sh -c``. A command, argument,
cwd or environment variable that cannot be given to a process (a NUL character, a
variable name that is empty or holds ``=``) is invalid params.

What runs is what the user's ``PATH`` finds: a program named without a ``/`` is looked up
in the absolute folders of this process's ``PATH`` (its relative entries, read from the cwd
the agent picks, are left out, of the command's own ``PATH`` too) and run by its absolute
path; one named by a path is read from the cwd. A variable of the agent's ``env`` that
would change which program runs or load code into it (``PATH``, the loader's ``LD_*``, the
shells' ``BASH_ENV``, ...: :func:`~acp_adapters.runtime.commands.changes_what_runs`) is
refused (forbidden): a rule or a person judged the command by its program's name, and that
program is the one that runs. A program that is not found is invalid params.

A terminal's command has exited when its process has, even while what it left
running in the background holds the output open: ``terminal/wait_for_exit``
answers then, once what the command wrote before it exited has been read. The
output still grows with what the background writes, until the terminal is killed
or released.

Killing or releasing a terminal kills its whole process group, also once its
command has exited, and on Linux what the command detached from the group too
(``setsid``, a double fork: the command is the root of a
:class:`~acp_adapters.transport.families.ProcessFamily`); this side of the output
is then closed, so nothing more is read. When the session closes, every terminal
is killed, new ones are refused, and the close waits at most
:data:`CLOSE_WAIT_SECONDS` in all for them. A session has at most
``max_terminals`` terminals at once (64 by default); past it ``terminal/create``
is refused until the agent releases one.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
from dataclasses import dataclass, field
from itertools import count
from typing import Any

import anyio
from anyio.abc import Process, TaskGroup

from ..runtime.commands import changes_what_runs, command_argv, find_program, user_path
from ..transport import RpcError
from ..transport.families import ProcessFamily, end_families, processes_visible
from ..transport.process import WatchedStream
from .workspace import FORBIDDEN, INVALID_PARAMS, Workspace

#: The default output limit when the agent sets none.
DEFAULT_OUTPUT_BYTES = 1024 * 1024
#: The most output a terminal keeps, whatever ``outputByteLimit`` the agent asks for.
MAX_OUTPUT_BYTES = 16 * 1024 * 1024
#: How long closing the session waits, in all, for its killed terminals' output to end.
CLOSE_WAIT_SECONDS = 5.0
#: How many terminals a session may have at once by default (created, not yet released).
DEFAULT_MAX_TERMINALS = 64
#: Once the command has exited, how long its output's reader must have waited for more
#: (what the command wrote before it exited is read by then) when the end does not come.
SETTLE_SECONDS = 0.05
#: How long, at most, the exit waits for that.
SETTLE_MOST_SECONDS = 1.0
#: How long a killed or released terminal's output may take to end before this side of
#: it is closed (something that escaped the kill holds it).
STOP_READING_SECONDS = 0.5


def _partial_character(data: bytes | bytearray) -> int:
    """How many bytes at the start of ``data`` are left from a character cut in two."""
    # UTF-8 continuation bytes are 10xxxxxx.
    start = 0
    while start < len(data) and start < 4 and (data[start] & 0xC0) == 0x80:
        start += 1
    return start


def trimmed(output: bytes, limit: int) -> tuple[bytes, bool]:
    """The last ``limit`` bytes, starting at a character boundary; and whether it was cut."""
    if len(output) <= limit:
        return output, False
    tail = output[len(output) - limit :]
    return tail[_partial_character(tail) :], True


def signal_name(number: int) -> str:
    """The name of signal ``number``: ``SIGKILL``, or ``SIG40`` for one Python does not name."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"SIG{number}"


def _process_text(value: str, what: str) -> str:
    """``value`` if a process can be given it; else invalid params naming ``what``."""
    if "\x00" in value:
        raise RpcError(INVALID_PARAMS, f"{what} holds a NUL character")
    try:
        os.fsencode(value)
    except UnicodeEncodeError:
        raise RpcError(INVALID_PARAMS, f"{what} cannot be passed to a process") from None
    return value


def agent_variables(variables: object) -> dict[str, str]:
    """The agent's ``env`` entries of a ``terminal/create``, checked.

    :raises RpcError: invalid params for a name or value a process cannot be given;
        forbidden for a variable that would change which program runs or load code into
        it (:func:`~acp_adapters.runtime.commands.changes_what_runs`): ``PATH`` (but for
        the user's own value, which changes nothing), the loader's, the shells' startup
        variables. What runs is the program the user's ``PATH`` finds, the one a rule or
        a person judged by its name.
    """
    found: dict[str, str] = {}
    for variable in variables if isinstance(variables, list) else []:
        if not isinstance(variable, dict) or not isinstance(variable.get("name"), str):
            continue
        name = variable["name"]
        if not name or "=" in name or "\x00" in name:
            raise RpcError(INVALID_PARAMS, f"invalid environment variable name {name!r}")
        _process_text(name, f"environment variable name {name!r}")
        value = str(variable.get("value", ""))
        found[name] = _process_text(value, f"the value of environment variable {name}")
        if changes_what_runs(name) and not (
            name == "PATH" and value in (os.environ.get("PATH"), user_path())
        ):
            raise RpcError(
                FORBIDDEN,
                f"the agent may not set {name[:100]!r}: it changes which program runs, or "
                "loads code into it; a command runs the program the user's PATH finds",
            )
    return found


def _environment(variables: object) -> dict[str, str]:
    """This process's environment with the agent's ``env`` entries on top, and the user's
    ``PATH`` without its relative entries (read from the cwd, which the agent picks)."""
    env = {**os.environ, **agent_variables(variables)}
    path = user_path()
    if path is not None:
        env["PATH"] = path
    return env


def _program(command: list[str], cwd: str | os.PathLike[str]) -> list[str]:
    """``command`` with its program as the absolute path it runs: what the user's ``PATH``
    finds for a name (never the agent's, never a relative entry), a path read from ``cwd``.

    :raises RpcError: invalid params when there is no such program.
    """
    program = find_program(command[0], cwd, user_path())
    if program is None:
        where = "no such executable file" if "/" in command[0] else "not found on the user's PATH"
        raise RpcError(INVALID_PARAMS, f"cannot run {command[0][:200]!r}: {where}")
    return [program, *command[1:]]


@dataclass
class Terminal:
    id: str
    process: Process
    limit: int
    family: ProcessFamily
    stream: WatchedStream
    # Cut from the front in place: a bytearray does that without copying what it keeps.
    output: bytearray = field(default_factory=bytearray)
    truncated: bool = False
    #: The command has exited (its exit status is known) and what it wrote has been read.
    exited: anyio.Event = field(default_factory=anyio.Event)
    #: The process group has been killed, or was found empty: it is never signalled again,
    #: since once empty its id may be given to an unrelated process.
    group_ended: bool = False

    def add(self, chunk: bytes) -> None:
        self.output += chunk
        excess = len(self.output) - self.limit
        if excess > 0:
            del self.output[:excess]
            del self.output[: _partial_character(self.output)]
            self.truncated = True

    def exit_status(self) -> dict[str, Any] | None:
        code = self.process.returncode
        if code is None:
            return None
        if code < 0:
            return {"exitCode": None, "signal": signal_name(-code)}
        return {"exitCode": code, "signal": None}


class Terminals:
    """The terminals of one session."""

    def __init__(
        self,
        workspace: Workspace,
        task_group: TaskGroup,
        *,
        max_terminals: int = DEFAULT_MAX_TERMINALS,
    ) -> None:
        self.workspace = workspace
        self.task_group = task_group
        self.max_terminals = max_terminals
        self._terminals: dict[str, Terminal] = {}
        self._starting = 0  # created, their process not started yet
        self._ids = count(1)
        self._closing = False

    def _get(self, params: Any) -> Terminal:
        terminal_id = params.get("terminalId") if isinstance(params, dict) else None
        terminal = self._terminals.get(terminal_id) if isinstance(terminal_id, str) else None
        if terminal is None:
            raise RpcError(INVALID_PARAMS, f"no terminal {terminal_id!r}")
        return terminal

    def _refuse_if_closing(self) -> None:
        if self._closing:
            raise RpcError(FORBIDDEN, "the session is closing: no new terminals")

    async def create(self, params: Any) -> dict[str, Any]:
        self._refuse_if_closing()
        if len(self._terminals) + self._starting >= self.max_terminals:
            raise RpcError(
                FORBIDDEN, f"too many terminals (limit {self.max_terminals}): release one first"
            )
        if not isinstance(params, dict) or not isinstance(params.get("command"), str):
            raise RpcError(INVALID_PARAMS, "terminal/create needs a command")
        args = params.get("args")
        if args is not None and not (
            isinstance(args, list) and all(isinstance(a, str) for a in args)
        ):
            raise RpcError(INVALID_PARAMS, "args must be a list of strings")
        command = command_argv(_process_text(params["command"], "the command"), args)
        for arg in args or []:
            _process_text(arg, "an argument")
        asked_cwd = params.get("cwd")
        if isinstance(asked_cwd, str):
            _process_text(asked_cwd, "the cwd")
        cwd = self.workspace.resolve(asked_cwd) if asked_cwd else self.workspace.cwd
        # The variables first: a refused one is said whether or not the program exists.
        variables = _environment(params.get("env"))
        command = _program(command, cwd)
        family = ProcessFamily()
        # The mark goes on top of the agent's variables: it cannot take it off.
        env = family.environment(variables)
        limit = params.get("outputByteLimit")
        limit = (
            min(limit, MAX_OUTPUT_BYTES)
            if isinstance(limit, int) and not isinstance(limit, bool) and limit >= 0
            else DEFAULT_OUTPUT_BYTES
        )
        self._starting += 1
        try:
            process = await anyio.open_process(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                cwd=cwd,
                env=env,
                start_new_session=True,
            )
        except OSError as exc:
            raise RpcError(INVALID_PARAMS, f"cannot run {shlex.join(command)}: {exc}") from exc
        finally:
            self._starting -= 1
        family.started(process.pid)
        assert process.stdout is not None
        terminal = Terminal(
            f"term-{next(self._ids)}", process, limit, family, WatchedStream(process.stdout)
        )
        self.task_group.start_soon(self._read, terminal)
        self.task_group.start_soon(self._collect, terminal)
        if self._closing:
            # The close began while the process started: it has not seen this one.
            with anyio.CancelScope(shield=True):
                await self._end([terminal], within=CLOSE_WAIT_SECONDS)
            self._refuse_if_closing()
        self._terminals[terminal.id] = terminal
        return {"terminalId": terminal.id}

    @staticmethod
    async def _read(terminal: Terminal) -> None:
        """Keep the output until its end, or until this side of it is closed."""
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            async for chunk in terminal.stream:
                terminal.add(chunk)

    @staticmethod
    async def _collect(terminal: Terminal) -> None:
        """The command's exit: its status, once what it wrote before exiting is read."""
        await terminal.process.wait()
        terminal.family.collected()
        # Its end, or the reader waiting for more: what the command wrote is in.
        await terminal.stream.settle(quiet=SETTLE_SECONDS, most=SETTLE_MOST_SECONDS)
        if not terminal.group_ended:
            # Nothing left in the group now means nothing to kill later.
            try:
                os.killpg(terminal.process.pid, 0)
            except ProcessLookupError:
                terminal.group_ended = True
            except PermissionError:
                pass
        terminal.exited.set()

    async def output(self, params: Any) -> dict[str, Any]:
        terminal = self._get(params)
        result: dict[str, Any] = {
            "output": terminal.output.decode("utf-8", errors="replace"),
            "truncated": terminal.truncated,
        }
        if terminal.exited.is_set():
            result["exitStatus"] = terminal.exit_status()
        return result

    async def wait_for_exit(self, params: Any) -> dict[str, Any]:
        terminal = self._get(params)
        await terminal.exited.wait()
        return terminal.exit_status() or {"exitCode": None, "signal": None}

    async def kill(self, params: Any) -> dict[str, Any]:
        await self._end([self._get(params)], within=STOP_READING_SECONDS)
        return {}

    async def release(self, params: Any) -> dict[str, Any]:
        terminal = self._get(params)
        del self._terminals[terminal.id]
        await self._end([terminal], within=STOP_READING_SECONDS)
        return {}

    async def _end(self, terminals: list[Terminal], *, within: float) -> None:
        """Kill the terminals' process groups and what their commands detached, wait
        ``within`` seconds in all for their commands to exit and their output to end, and
        stop reading the output that something (that escaped the kill) still holds."""
        for terminal in terminals:
            self._kill_group(terminal)
        await end_families([terminal.family for terminal in terminals])
        with anyio.move_on_after(within):
            for terminal in terminals:
                await terminal.exited.wait()
                await terminal.stream.ended.wait()
        with anyio.move_on_after(1):
            for terminal in terminals:
                if not terminal.stream.ended.is_set():
                    # Closes this side of the pipe: its holder gets SIGPIPE, not a reader.
                    await terminal.process.aclose()

    @staticmethod
    def _kill_group(terminal: Terminal) -> None:
        """Kill the terminal's process group, even when its command has exited: what it
        started in the background is still in the group."""
        if terminal.group_ended:
            return
        if terminal.process.returncode is not None and processes_visible():
            # Its command is collected, so the group's number is held by its members
            # only: those are found one by one, each checked (end_families), instead.
            return
        try:
            os.killpg(terminal.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            terminal.group_ended = True
        except PermissionError:
            pass  # nothing in the group could be signalled; leave it to be tried again
        else:
            terminal.group_ended = True

    async def close(self) -> None:
        """Refuse new terminals, kill every terminal, and wait for them all in one bound."""
        self._closing = True
        with anyio.CancelScope(shield=True):
            terminals = list(self._terminals.values())
            self._terminals.clear()
            await self._end(terminals, within=CLOSE_WAIT_SECONDS)
