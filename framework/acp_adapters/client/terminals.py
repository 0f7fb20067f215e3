"""Terminals the client runs for an agent (ACP v1 ``terminal/*``): real processes.

A terminal is one command in a process group of its own, stdout and stderr
merged into one output. The output keeps at most ``outputByteLimit`` bytes:
past it, it is cut from the start, at a character boundary. A ``command``
sent without ``args`` that holds a whole shell line (kimi-cli sends
``echo hi; cat f``) runs through ``/bin/sh -c``. Every terminal is killed when
the session closes.
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

from ..transport import RpcError
from .workspace import INVALID_PARAMS, Workspace

#: The default output limit when the agent sets none.
DEFAULT_OUTPUT_BYTES = 1024 * 1024
_SHELL_CHARACTERS = set(";|&<>()$`\\\"' \t\n*?[]#~=%")


def argv(command: str, args: list[str] | None) -> list[str]:
    """The argument vector: ``command`` and ``args``, or a shell running ``command`` as a line."""
    if args:
        return [command, *args]
    if _SHELL_CHARACTERS & set(command):
        return ["/bin/sh", "-c", command]
    return [command]


def trimmed(output: bytes, limit: int) -> tuple[bytes, bool]:
    """The last ``limit`` bytes, starting at a character boundary; and whether it was cut."""
    if len(output) <= limit:
        return output, False
    tail = output[len(output) - limit :]
    # Drop UTF-8 continuation bytes (10xxxxxx) left from a character cut in two.
    start = 0
    while start < len(tail) and start < 4 and (tail[start] & 0xC0) == 0x80:
        start += 1
    return tail[start:], True


@dataclass
class Terminal:
    id: str
    process: Process
    limit: int
    output: bytes = b""
    truncated: bool = False
    exited: anyio.Event = field(default_factory=anyio.Event)

    def add(self, chunk: bytes) -> None:
        self.output, cut = trimmed(self.output + chunk, self.limit)
        self.truncated = self.truncated or cut

    def exit_status(self) -> dict[str, Any] | None:
        code = self.process.returncode
        if code is None:
            return None
        if code < 0:
            return {"exitCode": None, "signal": signal.Signals(-code).name}
        return {"exitCode": code, "signal": None}


class Terminals:
    """The terminals of one session."""

    def __init__(self, workspace: Workspace, task_group: TaskGroup) -> None:
        self.workspace = workspace
        self.task_group = task_group
        self._terminals: dict[str, Terminal] = {}
        self._ids = count(1)

    def _get(self, params: Any) -> Terminal:
        terminal_id = params.get("terminalId") if isinstance(params, dict) else None
        terminal = self._terminals.get(terminal_id) if isinstance(terminal_id, str) else None
        if terminal is None:
            raise RpcError(INVALID_PARAMS, f"no terminal {terminal_id!r}")
        return terminal

    async def create(self, params: Any) -> dict[str, Any]:
        if not isinstance(params, dict) or not isinstance(params.get("command"), str):
            raise RpcError(INVALID_PARAMS, "terminal/create needs a command")
        args = params.get("args")
        if args is not None and not (
            isinstance(args, list) and all(isinstance(a, str) for a in args)
        ):
            raise RpcError(INVALID_PARAMS, "args must be a list of strings")
        cwd = self.workspace.resolve(params["cwd"]) if params.get("cwd") else self.workspace.cwd
        env = dict(os.environ)
        for variable in params.get("env") or []:
            if isinstance(variable, dict) and isinstance(variable.get("name"), str):
                env[variable["name"]] = str(variable.get("value", ""))
        limit = params.get("outputByteLimit")
        limit = (
            limit
            if isinstance(limit, int) and not isinstance(limit, bool) and limit >= 0
            else DEFAULT_OUTPUT_BYTES
        )
        try:
            process = await anyio.open_process(
                argv(params["command"], args),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                cwd=cwd,
                env=env,
                start_new_session=True,
            )
        except OSError as exc:
            raise RpcError(
                INVALID_PARAMS, f"cannot run {shlex.join(argv(params['command'], args))}: {exc}"
            ) from exc
        terminal = Terminal(f"term-{next(self._ids)}", process, limit)
        self._terminals[terminal.id] = terminal
        self.task_group.start_soon(self._collect, terminal)
        return {"terminalId": terminal.id}

    async def _collect(self, terminal: Terminal) -> None:
        stream = terminal.process.stdout
        if stream is not None:
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                async for chunk in stream:
                    terminal.add(chunk)
        await terminal.process.wait()
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
        self._kill(self._get(params))
        return {}

    async def release(self, params: Any) -> dict[str, Any]:
        terminal = self._get(params)
        self._kill(terminal)
        del self._terminals[terminal.id]
        return {}

    @staticmethod
    def _kill(terminal: Terminal) -> None:
        if terminal.process.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(terminal.process.pid, signal.SIGKILL)

    async def close(self) -> None:
        """Kill every terminal and wait for each to end."""
        with anyio.CancelScope(shield=True):
            for terminal in self._terminals.values():
                self._kill(terminal)
            for terminal in self._terminals.values():
                with anyio.move_on_after(5):
                    # Exited and its output read to the end: its pipes are closed too.
                    await terminal.exited.wait()
            self._terminals.clear()
