"""What ``run`` shows while the agent starts: one line on stderr, redrawn, then wiped.

An agent started through ``npx`` may take many seconds to download and start;
a spinner and the seconds passed say the command is not stuck. Only on a
terminal: in a pipe or a log, nothing is written (no ``\\r`` in a file).
"""

from __future__ import annotations

import contextlib
import sys
import time
from typing import IO

import anyio

#: How often the line is redrawn.
FRAME_SECONDS = 0.1
_FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
_ASCII_FRAMES = "|/-\\"
#: Back to the line's start and erase it: the line goes as if it never was.
_WIPE = "\r\x1b[K"


class Progress:
    """``⠋ starting claude… 3s`` on ``stream`` (default: stderr), while :meth:`run` runs.

    :meth:`clear` wipes the line and stops it for good; it is called before anything
    else is written to the terminal (a note, an error, the timeline).
    """

    def __init__(self, label: str, stream: IO[str] | None = None) -> None:
        self.label = label
        self._stream = stream
        self._shown = False
        self._done = False

    @property
    def stream(self) -> IO[str]:
        return self._stream if self._stream is not None else sys.stderr

    def on_terminal(self) -> bool:
        try:
            return self.stream.isatty()
        except (OSError, ValueError):
            return False

    async def run(self) -> None:
        """Redraw the line until cancelled, or until :meth:`clear`; nothing off a terminal."""
        if not self.on_terminal():
            return
        encoding = (getattr(self.stream, "encoding", None) or "ascii").lower()
        unicode = encoding.replace("-", "").startswith("utf")
        frames = _FRAMES if unicode else _ASCII_FRAMES
        ellipsis = "…" if unicode else "..."
        started = time.monotonic()
        number = 0
        try:
            while not self._done:
                seconds = int(time.monotonic() - started)
                waited = f" {seconds}s" if seconds else ""
                self._write(f"{_WIPE}{frames[number % len(frames)]} {self.label}{ellipsis}{waited}")
                self._shown = True
                number += 1
                await anyio.sleep(FRAME_SECONDS)
        finally:
            self.clear()

    def clear(self) -> None:
        """Wipe the line (if it is shown) and draw it no more."""
        self._done = True
        if self._shown:
            self._shown = False
            self._write(_WIPE)

    def _write(self, text: str) -> None:
        with contextlib.suppress(OSError, ValueError):  # the terminal went away: no matter
            self.stream.write(text)
            self.stream.flush()
