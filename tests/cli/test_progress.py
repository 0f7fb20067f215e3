"""The line ``run`` shows on a terminal while the agent starts, and on nothing else."""

from __future__ import annotations

import io

import anyio
import pytest

from acp_adapters.cli.progress import Progress


class _Terminal(io.StringIO):
    """A terminal's stream: written text is kept; ``drawn`` is set at the first write."""

    encoding = "utf-8"

    def __init__(self, tty: bool = True) -> None:
        super().__init__()
        self.tty = tty
        self.drawn = anyio.Event()

    def isatty(self) -> bool:
        return self.tty

    def write(self, text: str) -> int:
        self.drawn.set()
        return super().write(text)


@pytest.mark.anyio
async def test_the_line_is_drawn_then_wiped() -> None:
    stream = _Terminal()
    progress = Progress("starting claude", stream)
    async with anyio.create_task_group() as group:
        group.start_soon(progress.run)
        await stream.drawn.wait()
        progress.clear()
    text = stream.getvalue()
    assert text.startswith("\r\x1b[K⠋ starting claude…")
    assert text.endswith("\r\x1b[K")  # gone: what comes next has the line to itself
    progress.clear()  # a second clear writes nothing more
    assert stream.getvalue() == text


@pytest.mark.anyio
async def test_an_ascii_terminal_gets_ascii() -> None:
    stream = _Terminal()
    stream.encoding = "ascii"  # type: ignore[misc]
    progress = Progress("starting codex", stream)
    async with anyio.create_task_group() as group:
        group.start_soon(progress.run)
        await stream.drawn.wait()
        group.cancel_scope.cancel()
    assert stream.getvalue().startswith("\r\x1b[K| starting codex...")
    assert stream.getvalue().endswith("\r\x1b[K")  # cancelled, it wipes the line too


@pytest.mark.anyio
async def test_nothing_is_written_off_a_terminal() -> None:
    stream = _Terminal(tty=False)
    await Progress("starting claude", stream).run()  # returns at once
    assert stream.getvalue() == ""
