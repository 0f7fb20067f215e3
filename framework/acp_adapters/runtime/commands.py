"""The command a ``terminal/create`` request runs, as an argument vector and as one line.

A ``command`` sent without ``args`` that holds a whole shell line (kimi-cli sends
``echo hi; cat f``) runs through ``/bin/sh -c``. The client that runs it and the
timeline that shows it read the request the same way, here.

What runs is what the user's ``PATH`` finds (:func:`find_program`, :func:`user_path`): a
command's program by name is looked up in the absolute folders of this process's ``PATH``,
never the agent's, and run by its absolute path; and the variables that would change
which program runs, or load code into it (:func:`changes_what_runs`), are not the agent's
to set.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
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


# --- what runs ------------------------------------------------------------------------------

#: Variables that decide which program a name runs, or load code into a program or into
#: the shell that runs a line, whatever the program: the dynamic loader's (``LD_*``,
#: ``DYLD_*``, glibc's ``GCONV_PATH``), the shells' startup files and options (``BASH_ENV``,
#: ``ENV``; ``HOME`` and ``ZDOTDIR``, where a login shell's files are; ``SHELLOPTS``,
#: ``BASHOPTS`` and ``PS4``, which with ``xtrace`` runs a substitution) and exported bash
#: functions (``BASH_FUNC_echo%%`` is an ``echo`` of the agent's). ``PATH`` is one too.
STARTUP_VARIABLES = frozenset(
    {"PATH", "BASH_ENV", "ENV", "HOME", "ZDOTDIR", "SHELLOPTS", "BASHOPTS", "PS4", "GCONV_PATH"}
)
STARTUP_PREFIXES = ("LD_", "DYLD_", "BASH_FUNC_")


def changes_what_runs(name: str) -> bool:
    """Whether an environment variable ``name`` is one of those that decide what runs
    (:data:`STARTUP_VARIABLES`, :data:`STARTUP_PREFIXES`)."""
    return name in STARTUP_VARIABLES or name.startswith(STARTUP_PREFIXES)


def user_path(environ: Mapping[str, str] | None = None) -> str | None:
    """The user's ``PATH`` (this process's, or ``environ``'s) without its relative entries
    (``bin``, ``.``, an empty one): those are read from the folder a command runs in, which
    the agent picks and writes to. None when it has no ``PATH``."""
    path = (os.environ if environ is None else environ).get("PATH")
    if path is None:
        return None
    return os.pathsep.join(entry for entry in path.split(os.pathsep) if os.path.isabs(entry))


def find_program(program: str, cwd: str | os.PathLike[str], path: str | None) -> str | None:
    """The file ``program`` runs, as an absolute path: a name with a ``/`` read from ``cwd``
    (as the system reads it), a bare name looked up in ``path`` (the absolute folders of
    the user's ``PATH``: :func:`user_path`; the system's default ones when there is none).
    None when there is no such executable file."""
    if "/" in program:
        found = os.path.normpath(os.path.join(os.fspath(cwd), program))
        return found if os.path.isfile(found) and os.access(found, os.X_OK) else None
    if not program:
        return None
    for folder in (os.defpath if path is None else path).split(os.pathsep):
        candidate = os.path.join(folder, program)
        if os.path.isabs(folder) and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def program_word(line: str) -> str:
    """The first word of a command line, as a shell reads it (quotes taken off): the program
    it runs, or an assignment (``PATH=bin``) before it."""
    try:
        words = shlex.split(line, comments=False)
    except ValueError:  # an open quote: the words as they stand
        words = line.split()
    return words[0] if words else ""
