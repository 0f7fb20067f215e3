"""An agent's process: started in a process group of its own, its stderr kept, closed cleanly.

Closing goes from polite to certain: close its stdin (an ACP agent exits at end
of input), wait; terminate the process group, wait; kill the process group. The
group takes along whatever the agent started, so no orphan is left.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections import deque
from collections.abc import Mapping, Sequence

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream, Process

#: How much of the agent's stderr is kept (its end).
DEFAULT_STDERR_BYTES = 64 * 1024


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


class AgentProcess:
    """A started agent process and its three streams."""

    def __init__(self, process: Process, stderr: StderrRing) -> None:
        self.process = process
        self.stderr = stderr

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
        process = await anyio.open_process(
            list(command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=dict(env) if env is not None else None,
            start_new_session=True,
        )
        return cls(process, StderrRing(stderr_bytes))

    @property
    def stdout(self) -> ByteReceiveStream:
        assert self.process.stdout is not None
        return self.process.stdout

    @property
    def stdin(self) -> ByteSendStream:
        assert self.process.stdin is not None
        return self.process.stdin

    @property
    def exit_status(self) -> int | None:
        return self.process.returncode

    async def collect_stderr(self) -> None:
        """Keep the end of stderr until the agent closes it (run in a task)."""
        stream = self.process.stderr
        if stream is None:
            return
        try:
            async for chunk in stream:
                self.stderr.add(chunk)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            return

    def _signal_group(self, signum: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signum)

    async def close(self, *, grace: float = 2.0) -> int | None:
        """Close stdin, wait; terminate the group, wait; kill the group. Returns the exit status."""
        with anyio.CancelScope(shield=True):
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                await self.stdin.aclose()
            for signum in (signal.SIGTERM, signal.SIGKILL):
                with anyio.move_on_after(grace):
                    await self.process.wait()
                    break
                self._signal_group(signum)
            else:
                await self.process.wait()
            # Whatever the agent started and left running goes with it.
            self._signal_group(signal.SIGKILL)
        return self.process.returncode
