"""``python -m acp_adapters.replay``: the replay agent (see :mod:`acp_adapters.replay.agent`)."""

from __future__ import annotations

import contextlib
import os
import signal
import sys

from .agent import main


def run() -> None:
    code = main()
    if code < 0:
        # The capture's exit line says a signal ended the recorded agent: end the same way.
        sys.stdout.flush()
        sys.stderr.flush()
        with contextlib.suppress(ValueError, OSError):  # SIGKILL has no handler to reset
            signal.signal(-code, signal.SIG_DFL)
        with contextlib.suppress(ValueError, OSError):
            os.kill(os.getpid(), -code)
        code = 128 - code  # a signal that does not end a process
    sys.exit(code)


if __name__ == "__main__":
    run()
