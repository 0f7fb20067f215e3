"""The ``acp-adapters`` program's entry: the command line, and an interrupt at any moment.

The commands load only after this runs (:mod:`.commands`), and loading takes a
moment: a Ctrl-C or a SIGTERM in it, or in the parsing of the arguments, ends the
program as one inside a command does, with one line and 130 or 143, never a
traceback. Inside a run, :class:`~.live.StopSignals` takes the signals over.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from types import FrameType

#: 128 + the signal's number, as a shell reports a command a signal ended.
_INTERRUPTED = 128 + signal.SIGINT
_TERMINATED = 128 + signal.SIGTERM
_HANGUP = 128 + signal.SIGHUP


class _Terminated(BaseException):
    """SIGTERM or SIGHUP outside a run: not an error of the program (nothing catches it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise(signum: int, _frame: FrameType | None) -> None:
    raise _Terminated(signum)


def main(argv: list[str] | None = None) -> None:
    """Run ``acp-adapters`` with ``argv`` (default: the program's arguments); exits."""
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _raise)
    try:
        import click

        from .commands import main as command

        try:
            # Not standalone: click would end a Ctrl-C with "Aborted!" and exit 1.
            code = command.main(args=argv, prog_name="acp-adapters", standalone_mode=False)
        except click.ClickException as error:
            error.show()
            sys.exit(error.exit_code)
        except click.Abort as abort:
            # click's word for a Ctrl-C (or the end of input) while it parsed or prompted.
            if isinstance(abort.__cause__, EOFError):
                _say("Error: the input ended")
                sys.exit(1)
            raise KeyboardInterrupt from None
    except KeyboardInterrupt:
        _say("Error: interrupted")
        sys.exit(_INTERRUPTED)
    except _Terminated as stop:
        if stop.signum == signal.SIGHUP:
            _silence()  # the terminal is gone
            sys.exit(_HANGUP)
        _say(f"Error: stopped by {signal.Signals(stop.signum).name}")
        sys.exit(_TERMINATED)
    # A command's ``ctx.exit(N)`` comes back as N; a command that returns, as None.
    sys.exit(code if isinstance(code, int) else 0)


def _say(line: str) -> None:
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(line + "\n")
        sys.stderr.flush()


def _silence() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            os.dup2(devnull, stream.fileno())
    os.close(devnull)


__all__ = ["main"]
