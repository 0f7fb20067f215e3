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


class _Terminated(BaseException):
    """SIGTERM or SIGHUP outside a run: not an error of the program (nothing catches it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


#: The signals taken here (outside a run, which watches its own): whatever error they
#: break out as (a C extension may wrap the KeyboardInterrupt in an error of its own), the
#: program ends as the signal does.
_received: list[int] = []
#: Those not yet seen by a run's watcher of the signals (:func:`take_pending`).
_pending: list[int] = []


def received_signal() -> int | None:
    """The first signal the program took outside a run (SIGINT, SIGTERM, SIGHUP), if any."""
    return _received[0] if _received else None


def take_pending() -> int | None:
    """The first signal taken here since the last call, if any. A run's watcher asks as it
    starts: Python drops what a handler raises while a finalizer (``__del__``, a weakref's
    callback) runs, and a Ctrl-C taken then would otherwise be lost."""
    first = _pending[0] if _pending else None
    _pending.clear()
    return first


def _raise(signum: int, _frame: FrameType | None) -> None:
    _received.append(signum)
    _pending.append(signum)
    raise _Terminated(signum)


def _interrupt(signum: int, _frame: FrameType | None) -> None:
    _received.append(signum)
    _pending.append(signum)
    raise KeyboardInterrupt


#: Whether the program's entry took the signals (not so for a program that calls the
#: commands itself, a test's CliRunner).
_taking: list[bool] = []


def take_signals() -> None:
    """The program's own handlers of SIGINT, SIGTERM and SIGHUP, again: a run that watched
    the signals itself gives them back as the default actions (asyncio's way), and a
    signal while the run's output is printed would end the program without a word."""
    if not _taking:
        return
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _raise)
    # Python's own handler does the same, but asyncio's runner replaces that one (and only
    # that one) with its own, which cancels the main task: a Ctrl-C in the moment before a
    # run watches the signals (:class:`~.live.StopSignals`) would be taken as a cancel.
    signal.signal(signal.SIGINT, _interrupt)


def main(argv: list[str] | None = None) -> None:
    """Run ``acp-adapters`` with ``argv`` (default: the program's arguments); exits."""
    _taking.append(True)
    take_signals()
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
    except BaseException as error:
        stop = _signal_of(error)
        if stop is None and _received:
            stop = signal.Signals(_received[0])
        if stop is None:
            raise
        if stop == signal.SIGHUP:
            _silence()  # the terminal is gone
        else:
            what = "interrupted" if stop == signal.SIGINT else f"stopped by {stop.name}"
            _say(f"Error: {what}")
        _exit_now(128 + stop)
    # A command's ``ctx.exit(N)`` comes back as N; a command that returns, as None.
    sys.exit(code if isinstance(code, int) else 0)


def _signal_of(error: BaseException) -> signal.Signals | None:
    """The signal that ended the program as ``error`` (a KeyboardInterrupt, a SIGTERM or
    SIGHUP raised here), also inside the exception group of a task group it broke."""
    if isinstance(error, KeyboardInterrupt) or isinstance(error.__cause__, KeyboardInterrupt):
        return signal.SIGINT
    if isinstance(error, _Terminated):
        return signal.Signals(error.signum)
    inner = getattr(error, "exceptions", None)  # an exception group
    if isinstance(inner, tuple):
        for one in inner:
            found = _signal_of(one)
            if found is not None:
                return found
    return None


def _exit_now(code: int) -> None:
    """Exit with ``code``, what is written flushed. Not through ``sys.exit``: an interrupt
    that went through ``exec`` (a dataclass being made as a module loaded) leaves CPython
    sure it was never handled, and it would exit by SIGINT instead of with ``code``."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


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
