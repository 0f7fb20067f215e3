"""``python -m acp_adapters.replay``: the replay agent (see :mod:`acp_adapters.replay.agent`)."""

from __future__ import annotations

import contextlib
import os
import signal
import sys

from .agent import main

#: Signals whose default action does not end a process: it stops, or goes on.
_NOT_ENDING = frozenset(
    getattr(signal, name)
    for name in (
        "SIGSTOP",
        "SIGTSTP",
        "SIGTTIN",
        "SIGTTOU",
        "SIGCONT",
        "SIGCHLD",
        "SIGURG",
        "SIGWINCH",
    )
    if hasattr(signal, name)
)


def run() -> None:
    code = main()
    if code < 0:
        # The capture's exit line says a signal ended the recorded agent: end the same way,
        # when that signal ends a process (one that stops it would leave the agent stopped).
        sys.stdout.flush()
        sys.stderr.flush()
        if -code not in _NOT_ENDING:
            with contextlib.suppress(ValueError, OSError):  # SIGKILL has no handler to reset
                signal.signal(-code, signal.SIG_DFL)
            with contextlib.suppress(ValueError, OSError):
                os.kill(os.getpid(), -code)
        code = 128 - code  # what a shell reports for a process a signal ended
    sys.exit(code & 0xFF)


if __name__ == "__main__":
    run()
