"""The replay agent's stdin and stdout, each served by a thread, so that every wait has a limit.

Reading happens on a thread of its own, so a message the client sends is taken
off the pipe while the replay writes; the main thread waits for it on a queue,
with a deadline. Writing happens on another thread, so a client that stops
reading cannot block the replay forever: :meth:`Output.flush` waits with a
limit too. Both use the file descriptors directly (no buffered file objects,
whose locks a thread still blocked in a read would hold at exit).
"""

from __future__ import annotations

import os
import queue
import threading
import time
from dataclasses import dataclass
from typing import Any

from .. import _json
from .._json import LineSplitter, LineTooLong

#: How many bytes one read takes from the client's pipe at most.
READ_BYTES = 65536


class EndOfInput:
    """The client closed the replay's stdin."""


@dataclass(frozen=True)
class NotJson:
    """A line the client sent that is not JSON."""

    text: str


END_OF_INPUT = EndOfInput()
Incoming = Any  # a parsed message (or batch), NotJson, or END_OF_INPUT


class Input:
    """The messages the client sends, one JSON value a line, as a thread reads them."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._queue: queue.Queue[Incoming] = queue.Queue()
        self.closed = False
        threading.Thread(target=self._read, name="replay-stdin", daemon=True).start()

    def _read(self) -> None:
        # Cut as the live connection cuts the agent's lines: at \n only, each chunk looked
        # at once (a 30 MiB answer in 64 KiB reads is not split again at every read).
        splitter = LineSplitter()
        while True:
            try:
                chunk = os.read(self._fd, READ_BYTES)
            except OSError:
                chunk = b""
            if not chunk:
                break
            for line in splitter.feed(chunk):
                self._put_line(line)
        for line in splitter.end():
            self._put_line(line)
        self._queue.put(END_OF_INPUT)

    def _put_line(self, line: bytes | LineTooLong) -> None:
        if isinstance(line, LineTooLong):
            self._queue.put(NotJson(f"(a line longer than {line.limit} bytes)"))
            return
        text = line.decode("utf-8", errors="replace").strip()
        if not text:
            return
        try:
            self._queue.put(_json.loads(text))
        except ValueError:
            self._queue.put(NotJson(text))

    def get(self, deadline: float | None) -> Incoming | None:
        """The next thing the client sent; None when ``deadline`` (monotonic) passed first."""
        if self.closed:
            return END_OF_INPUT
        try:
            if deadline is None:
                incoming = self._queue.get()
            else:
                incoming = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            return None
        if incoming is END_OF_INPUT:
            self.closed = True
        return incoming


class Output:
    """Lines to the client, written in order by a thread."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._queue: queue.SimpleQueue[bytes] = queue.SimpleQueue()
        self._waiting = 0
        self._lock = threading.Lock()
        self._drained = threading.Event()
        self._drained.set()
        #: The client closed its end of the pipe: what is still sent goes nowhere.
        self.broken = False
        threading.Thread(target=self._write, name="replay-stdout", daemon=True).start()

    def send(self, line: str) -> None:
        with self._lock:
            self._waiting += 1
            self._drained.clear()
        self._queue.put((line + "\n").encode("utf-8"))

    def _write(self) -> None:
        while True:
            self._write_fully(memoryview(self._queue.get()))
            with self._lock:
                self._waiting -= 1
                if self._waiting == 0:
                    self._drained.set()

    def _write_fully(self, data: memoryview) -> None:
        try:
            while data and not self.broken:
                data = data[os.write(self._fd, data) :]
        except OSError:  # the client closed its end
            self.broken = True

    def flush(self, timeout: float) -> bool:
        """Wait until every line sent is written; False when ``timeout`` seconds passed first."""
        return self._drained.wait(timeout)
