"""The command a ``terminal/create`` request runs, as an argument vector and as one line.

A ``command`` sent without ``args`` that holds a whole shell line (kimi-cli sends
``echo hi; cat f``) runs through ``/bin/sh -c``. The client that runs it and the
timeline that shows it read the request the same way, here.
"""

from __future__ import annotations

import shlex
from typing import Any

_SHELL_CHARACTERS = set(";|&<>()$`\\\"' \t\n*?[]#~=%")


def command_argv(command: str, args: list[str] | None) -> list[str]:
    """The argument vector: ``command`` and ``args``, or a shell running ``command`` as a line."""
    if args:
        return [command, *args]
    if _SHELL_CHARACTERS & set(command):
        return ["/bin/sh", "-c", command]
    return [command]


def command_line(params: Any) -> str | None:
    """What a ``terminal/create`` request runs, as one line: the shell line it sent, or its
    command and arguments shell-quoted. None when it names no command."""
    command = params.get("command") if isinstance(params, dict) else None
    if not isinstance(command, str):
        return None
    args = params.get("args")
    words = [a for a in args if isinstance(a, str)] if isinstance(args, list) else []
    if not words:
        return command if _SHELL_CHARACTERS & set(command) else shlex.quote(command)
    return shlex.join([command, *words])
