"""What the command line says when something fails: one line that says what to do, and an exit code.

========  ===========================================================================
exit      when
========  ===========================================================================
0         the command did what it was asked
1         the session failed: the agent exited or answered an error, it speaks no
          protocol version this client speaks, a plugin failed, a replay went
          otherwise than its capture
2         usage: a bad option or argument, a provider no plugin provides
3         the agent's command was not found, or cannot be executed
4         the agent needs authentication first, or a login (``login``) failed
5         the capture cannot be read (missing, not UTF-8, no capture line in it)
6         an MCP server cannot be given to the agent: of a transport it does not take,
          or a stdio server's command not found on the agent's PATH
7         a ``--model``, ``--mode`` or ``--set`` the agent does not offer (the error
          lists what it offers)
8         the agent asked a question that no one may answer: ``--non-interactive
          fail``, no terminal to ask on (stdin holds the prompt), or stdin (not a
          terminal) ended before the answer; the turn was cancelled
9         ``sessions revert``: later edits touched what the turn changed (each file and
          hunk named); nothing was written
10        ``run -s NAME --busy fail``: another process drives the session
11        ``mcp --transport http``: the port cannot be listened on (another program
          holds it, or it is not allowed)
124       a turn took longer than ``--timeout``: it was cancelled (as ``timeout(1)``
          exits); or the agent did not start (answer ``initialize``, open the session)
          within ``--start-timeout``: it was stopped
129       SIGHUP (the terminal closed): the agent was killed; nothing more is printed
130       interrupted (Ctrl-C): the turn was cancelled, or the agent killed
141       stdout was closed before the output ended (``| head``); nothing is printed
143       SIGTERM: the agent was killed
========  ===========================================================================
"""

from __future__ import annotations

import json
import shlex
import signal
import sys
from typing import Any

from ..client import (
    AgentNotFoundError,
    AuthenticationRequiredError,
    ProtocolVersionError,
    StartTimeoutError,
)
from ..errors import (
    AcpAdaptersError,
    CaptureError,
    DuplicateProviderError,
    McpServerError,
    PluginError,
    PluginLoadError,
    UnknownProviderError,
)
from ..store.base import InvalidThreadName, ThreadBusy, ThreadMoved
from ..transport import ConnectionClosed, RpcError
from .entry import received_signal
from .render import printable

if sys.version_info < (3, 11):
    from exceptiongroup import BaseExceptionGroup

EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_AGENT_NOT_FOUND = 3
EXIT_AUTHENTICATION = 4
EXIT_CAPTURE = 5
EXIT_MCP_SERVER = 6
EXIT_SESSION_OPTION = 7
EXIT_QUESTION = 8
EXIT_CONFLICT = 9
#: Another owner, alive, drives the named session (``run --busy fail``).
EXIT_BUSY = 10
#: A server of the command line cannot listen on its port (``mcp --transport http``).
EXIT_LISTEN = 11
#: The code ``timeout(1)`` exits with when its command ran out of time.
EXIT_TIMEOUT = 124
#: A signal stopped the command: 128 + its number, as a shell reports a command it killed.
EXIT_HANGUP = 129  # SIGHUP
EXIT_INTERRUPTED = 130  # SIGINT
EXIT_BROKEN_PIPE = 141  # SIGPIPE
EXIT_TERMINATED = 143  # SIGTERM
#: How much of an error answer's ``data`` is shown.
DATA_CHARACTERS = 300


class Failure(AcpAdaptersError):
    """A failure the command line words itself: its one line and its exit code."""

    def __init__(self, message: str, exit_code: int = EXIT_FAILED) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class Stopped(Failure):
    """A signal ended the run: exit 128 + its number (130 SIGINT, 129 SIGHUP, 143 SIGTERM)."""

    def __init__(self, signum: int, *, killed: bool, cancelled: bool = False) -> None:
        name = signal.Signals(signum).name
        what = "interrupted" if signum == signal.SIGINT else f"stopped by {name}"
        if cancelled:
            why = "the agent ended its turn cancelled"
        elif killed:
            why = "the agent and what it started were killed"
        else:
            why = "before the session was open; the agent was stopped"
        super().__init__(f"{what}: {why}", 128 + signum)
        self.signum = signum


def unwrap(error: BaseException) -> BaseException:
    """The one error inside task groups' exception groups, if there is only one."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error


def explain(error: BaseException) -> tuple[int, str]:
    """The exit code and the one line to print for an error that ends a command.

    The line is :func:`~.render.printable`: most messages carry what an agent or a
    capture said (its stderr, its error's message, a capture's line).
    """
    code, line = _explain(unwrap(error))
    return code, printable(line)


def _explain(error: BaseException) -> tuple[int, str]:
    if isinstance(error, Failure):
        return error.exit_code, _one_line(str(error))
    taken = received_signal()
    if taken is not None:
        # A signal taken outside a run broke out as this error, whatever its form.
        name = signal.Signals(taken).name
        return 128 + taken, "interrupted" if taken == signal.SIGINT else f"stopped by {name}"
    if isinstance(error, KeyboardInterrupt) or isinstance(error.__cause__, KeyboardInterrupt):
        # Also a Ctrl-C that Python wrapped on its way (Python 3.11 wraps what
        # ``__set_name__`` raises as a class is made, as a module loads, in a RuntimeError).
        return EXIT_INTERRUPTED, "interrupted"
    if isinstance(error, UnknownProviderError):
        return EXIT_USAGE, f"{_one_line(str(error))}; `acp-adapters providers` lists them"
    if isinstance(error, AgentNotFoundError):
        return EXIT_AGENT_NOT_FOUND, _one_line(str(error))
    if isinstance(error, StartTimeoutError):
        return EXIT_TIMEOUT, (
            f"{_one_line(str(error))}; is it an ACP agent (its command, its arguments)? "
            "Give it more time with a larger --start-timeout"
        )
    if isinstance(error, AuthenticationRequiredError):
        # The answer's data may say more (claude-agent-acp: why the credentials were refused).
        cause = error.__cause__
        data = _data(cause.data) if isinstance(cause, RpcError) else ""
        return EXIT_AUTHENTICATION, (
            f"{_one_line(str(error))}"
            + (f" (data: {data})" if data else "")
            + ": give the agent its credentials (its environment "
            "variables, or its own login command), then run again"
        )
    if isinstance(error, CaptureError):
        return EXIT_CAPTURE, f"{_one_line(str(error))}: pass a capture file (.jsonl)"
    if isinstance(error, McpServerError):
        return EXIT_MCP_SERVER, (
            f"{_one_line(str(error))}; leave that server out, or change it "
            "(--mcp-config, --mcp-server)"
        )
    if isinstance(error, ProtocolVersionError):
        return EXIT_FAILED, (
            f"{_one_line(str(error))}: use a version of the agent that speaks ACP 1 or 2"
        )
    if isinstance(error, ConnectionClosed):
        status = error.exit_status
        said = _last_line(error.stderr_tail)
        return EXIT_FAILED, (
            f"the agent exited (exit status {status})"
            + (f"; its stderr ends with: {said}" if said else "")
            + "; run again with --debug to see more"
        )
    if isinstance(error, RpcError):
        data = _data(error.data)
        return EXIT_FAILED, (
            f"the agent answered an error: {_one_line(error.message)} (code {error.code})"
            + (f"; data: {data}" if data else "")
            + "; run again with --debug to see more"
        )
    if isinstance(error, PluginLoadError | PluginError | DuplicateProviderError):
        return EXIT_FAILED, (
            f"{_one_line(str(error))}; leave that plugin out with "
            "ACP_ADAPTERS_DISABLE_PLUGINS=<its name>"
        )
    if isinstance(error, ThreadBusy):
        owner = error.lease.owner
        return EXIT_BUSY, (
            f"the session is driven by {owner.describe()}: run without --busy fail to queue "
            "the prompt behind its turns, or `acp-adapters sessions send` it and "
            "`sessions follow` the session"
        )
    if isinstance(error, ThreadMoved):
        if error.driven_by is not None:
            return EXIT_BUSY, (
                f"the session {error.thread} cannot move to {error.cwd} while "
                f"{error.driven_by.describe()} drives it in {error.folder}: run it there "
                f"(--cwd {shlex.quote(error.folder)}), or move it once that run ends"
            )
        return EXIT_USAGE, (
            f"the session {error.thread} is kept for {error.folder}, not {error.cwd}: run it "
            f"there (--cwd {shlex.quote(error.folder)}), or pass --move to move it to {error.cwd}"
        )
    if isinstance(error, InvalidThreadName):
        return EXIT_USAGE, f"{_one_line(str(error))}: name the session otherwise (-s NAME)"
    if isinstance(error, AcpAdaptersError | OSError):
        return EXIT_FAILED, _one_line(str(error))
    return EXIT_FAILED, (
        f"internal error: {_one_line(repr(error))}; run again with --debug and report the traceback"
    )


def _one_line(text: str) -> str:
    return " ".join(text.split()) or "(no message)"


def _data(data: Any) -> str:
    """An error answer's ``data`` on one line, short: agents put the real reason there
    (claude-agent-acp: ``data.details``). A string as it is, else compact JSON."""
    if data is None:
        return ""
    if isinstance(data, str):
        text = data
    else:
        try:
            text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=repr)
        except (ValueError, RecursionError):
            text = repr(data)
    text = " ".join(text.split())
    return text if len(text) <= DATA_CHARACTERS else text[: DATA_CHARACTERS - 3] + "..."


#: npm's last words point to its log file; what went wrong is in the lines before.
_NPM_ERROR = "npm error"
#: How many of the last lines of an agent's stderr an error shows.
_STDERR_LINES = 3
_NPM_LOG_POINTER = "complete log of this run"


def _last_line(text: str) -> str:
    """What the end of an agent's stderr says went wrong, on one line.

    Its last lines; but an agent started through ``npx`` that never ran (a version
    not published, no network) ends with npm's pointer to its log, and the reason
    is in npm's error lines before it.
    """
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    said = [
        line.removeprefix(_NPM_ERROR).strip()
        for line in lines
        if line.startswith(_NPM_ERROR) and _NPM_LOG_POINTER not in line
    ]
    if said:
        return ("npm: " + "; ".join(said[-3:]))[:300]
    # The last lines, not only the last: a reason followed by a stack line or a link is
    # common ("Error: ANTHROPIC_API_KEY not set" / "see https://..." / "at main.js:1").
    return " | ".join(lines[-_STDERR_LINES:])[-400:] if lines else ""
