"""The agent's process: started in a family of its own, its three streams, its closing.

The agent is started as the root of a :class:`~acp_adapters.transport.families.ProcessFamily`
(what it starts, even detached, is found and killed with it: :mod:`.families`). Closing
the agent goes from polite to certain: close its stdin (an ACP agent exits at end of
input), wait; terminate its process group, wait; kill the group; then the rest of the
family. Its exit is watched on its own (:meth:`AgentProcess.watch_exit`): a process it
left behind can hold its stdout open long after it exited, so the end of stdout does
not say it has gone.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections import deque
from collections.abc import Mapping, Sequence

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream, Process

from .families import ProcessFamily, end_families, family_members, processes_visible

#: How much of the agent's stderr is kept (its end).
DEFAULT_STDERR_BYTES = 64 * 1024
#: How long, once the agent has exited, its pipes may stay quiet before they are
#: closed although their end has not come (a process it started holds them open).
EXIT_QUIET_SECONDS = 0.3
#: How long, once it has exited, its pipes are read at most before they are closed.
EXIT_OUTPUT_SECONDS = 5.0


class StderrRing:
    """The last ``limit`` bytes an agent wrote to stderr."""

    def __init__(self, limit: int = DEFAULT_STDERR_BYTES) -> None:
        self.limit = limit
        self._chunks: deque[bytes] = deque()
        self._size = 0

    def add(self, chunk: bytes) -> None:
        self._chunks.append(chunk)
        self._size += len(chunk)
        while self._size > self.limit and self._chunks:
            first = self._chunks[0]
            excess = self._size - self.limit
            if len(first) <= excess:
                self._chunks.popleft()
                self._size -= len(first)
            else:
                self._chunks[0] = first[excess:]
                self._size -= excess

    def text(self) -> str:
        return b"".join(self._chunks).decode("utf-8", errors="replace")


#: How long closing the agent waits, for each of its pipes, for what is left in it to be read.
CLOSE_OUTPUT_SECONDS = 0.5


class WatchedStream(ByteReceiveStream):
    """A pipe's read end that knows whether it ended, and whether its reader is waiting.

    Once the process that wrote to it has exited, the pipe's end may never come (a
    process it started holds it open): :meth:`settle` says when what the process
    wrote before it exited has been read, so that its reader can be stopped.
    """

    def __init__(self, stream: ByteReceiveStream) -> None:
        self.stream = stream
        #: A reader waits for data (nothing the pipe held is left unread), since when.
        self.waiting_since: float | None = None
        self.ended = anyio.Event()

    async def receive(self, max_bytes: int = 65536) -> bytes:
        self.waiting_since = time.monotonic()
        try:
            chunk = await self.stream.receive(max_bytes)
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self.ended.set()
            raise
        finally:
            self.waiting_since = None
        return chunk

    async def aclose(self) -> None:
        self.ended.set()
        await self.stream.aclose()

    def _quiet_for(self, seconds: float) -> bool:
        since = self.waiting_since
        return since is not None and time.monotonic() - since >= seconds

    async def settle(self, *, quiet: float, most: float) -> None:
        """Return at the end of the stream; or once its reader has waited ``quiet`` seconds
        for data that did not come; or after ``most`` seconds at most."""
        with anyio.move_on_after(most):
            while not self.ended.is_set() and not self._quiet_for(quiet):
                with anyio.move_on_after(quiet / 4):
                    await self.ended.wait()


class AgentProcess:
    """A started agent process, its three streams and its family."""

    def __init__(
        self, process: Process, stderr: StderrRing, family: ProcessFamily | None = None
    ) -> None:
        self.process = process
        self.stderr = stderr
        self.family = family or ProcessFamily()
        assert process.stdout is not None
        assert process.stderr is not None
        self._stdout = WatchedStream(process.stdout)
        self._stderr = WatchedStream(process.stderr)

    @classmethod
    async def start(
        cls,
        command: Sequence[str],
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        stderr_bytes: int = DEFAULT_STDERR_BYTES,
    ) -> AgentProcess:
        """Start ``command``; :class:`FileNotFoundError` when it does not exist."""
        family = ProcessFamily()
        process = await anyio.open_process(
            list(command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=family.environment(os.environ if env is None else env),
            start_new_session=True,
        )
        family.started(process.pid)
        return cls(process, StderrRing(stderr_bytes), family)

    @property
    def stdout(self) -> ByteReceiveStream:
        return self._stdout

    @property
    def stdin(self) -> ByteSendStream:
        assert self.process.stdin is not None
        return self.process.stdin

    @property
    def exit_status(self) -> int | None:
        return self.process.returncode

    @property
    def stderr_ended(self) -> anyio.Event:
        """Set once stderr has been read to its end (or closed here)."""
        return self._stderr.ended

    async def collect_stderr(self) -> None:
        """Keep the end of stderr until the agent closes it (run in a task)."""
        try:
            async for chunk in self._stderr:
                self.stderr.add(chunk)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            return

    async def watch_exit(self) -> None:
        """Wait for the agent to exit; then, once what it wrote before it exited has been
        read, close this side of its pipes if something it started still holds them open:
        their readers end then, as at the end of the output (run in a task)."""
        await self.process.wait()
        self.family.collected()
        await self._finish_pipes()

    async def _finish_pipes(self, most: float = EXIT_OUTPUT_SECONDS) -> None:
        """Once the pipes are read to their end, or to what the agent wrote before it
        exited (``most`` seconds at most for each): close this side of those still held
        open."""
        for stream in (self._stdout, self._stderr):
            await stream.settle(quiet=EXIT_QUIET_SECONDS, most=most)
        if self._stdout.ended.is_set() and self._stderr.ended.is_set():
            return
        with anyio.CancelScope(shield=True):
            await self._stdout.aclose()
            await self._stderr.aclose()
            # The pipes themselves, not only their readers: a transport left open would
            # be collected unclosed, and the holder gets SIGPIPE rather than a reader.
            await self.process.aclose()

    def _signal_group(self, signum: int) -> None:
        # Only while the agent is not collected: until then its id, hence its group's
        # number, cannot have been given to another process.
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signum)

    async def close(self, *, grace: float = 2.0) -> int | None:
        """Close stdin, wait; terminate the group, wait; kill the group; then kill the rest
        of its family. ``grace`` 0 kills at once. Returns the exit status."""
        with anyio.CancelScope(shield=True):
            # What descends from the agent only by its parents is found only while it runs.
            # (Read off the event loop: /proc holds every process of the machine, and a
            # process closing hundreds of sessions would stall the others for seconds.)
            known = (
                await anyio.to_thread.run_sync(family_members, [self.family])
                if self.process.returncode is None
                else {}
            )
            # A full pipe (an agent that stopped reading) does not make this wait.
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                await self.stdin.aclose()
            signals = (signal.SIGTERM, signal.SIGKILL) if grace > 0 else (signal.SIGKILL,)
            for signum in signals:
                with anyio.move_on_after(grace):
                    await self.process.wait()
                    break
                self._signal_group(signum)
            else:
                await self.process.wait()
            self.family.collected()
            # What it started and left running goes with it: in its group (found by
            # /proc on Linux, else signalled as a group) or detached from it.
            if processes_visible():
                await end_families([self.family], known=known)
            else:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(self.process.pid, signal.SIGKILL)
            # Closing: what is left in the pipes gets a moment to be read, if anything still
            # reads it (a session cancelled by a timeout does not), and no more.
            await self._finish_pipes(most=CLOSE_OUTPUT_SECONDS)
        return self.process.returncode
