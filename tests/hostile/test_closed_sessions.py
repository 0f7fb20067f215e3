"""A closed session's timeline is what it was when it closed, whatever the agent sends after.

The agent (``agents/after_close.py``) keeps sending updates, a permission request and a
command for a session the client closed: they are dropped (and listed in
``session.problems`` as ``closed_session``), live and in the recording's projection alike.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_adapters import connect, project_capture

pytestmark = pytest.mark.anyio

AGENT = Path(__file__).parent / "agents" / "after_close.py"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def command(*flags: str) -> list[str]:
    return [sys.executable, str(AGENT), *flags]


def shown(session: Any) -> list[dict[str, Any]]:
    """The session's timeline as the application reads it: its items (times aside: a
    recording keeps its own clock)."""
    return untimed(session.timeline.items)


def untimed(items: Any) -> list[dict[str, Any]]:
    return [
        {
            k: v
            for k, v in item.model_dump(mode="json").items()
            if k not in ("created_at", "updated_at")
        }
        for item in items
    ]


def said(session: Any) -> str:
    """What the agent's items of the session say (their texts and titles), as one string."""
    return " ".join(
        str(getattr(item, field, ""))
        for item in session.timeline.items
        for field in ("text", "title")
    )


def late_problems(session: Any) -> list[str]:
    return [p.detail for p in session.problems if p.kind == "closed_session"]


@pytest.mark.parametrize("flags", [("close",), ()], ids=["session-close", "cancel-only"])
async def test_updates_for_a_closed_session_leave_its_timeline_as_it_was(
    tmp_path: Path, flags: tuple[str, ...]
) -> None:
    record, workspace = tmp_path / "session.jsonl", tmp_path / "ws"
    workspace.mkdir()
    with anyio.fail_after(30):
        async with connect(command=command(*flags), cwd=workspace, record=record) as first:
            second = await first.agent.new_session()
            await first.prompt("hello")
            before = shown(first)
            assert "live text" in said(first)
            await first.close()
            # The second session's turn makes the agent write to the closed one again; its
            # answer comes after all of that, so every late message has been read by then.
            await second.prompt("go")
            assert "marker" in said(second)
            assert "late" not in said(second)
            assert shown(first) == before
            assert first.closed
            dropped = late_problems(first)
            assert any("session/update" in d for d in dropped)
            assert any("session/request_permission" in d for d in dropped)
            assert any("terminal/create" in d for d in dropped)
    assert shown(first) == before
    recorded = record.read_text(encoding="utf-8")
    assert "late text 4" in recorded  # the agent did send them
    replayed = project_capture(record, session_id=first.session_id)
    assert untimed(replayed.items) == before


async def test_what_comes_after_the_block_ends_is_dropped_too(tmp_path: Path) -> None:
    """The session closes as ``async with`` ends (``session/close``): what the agent writes
    while it is shut down is read, and dropped."""
    record, workspace = tmp_path / "session.jsonl", tmp_path / "ws"
    workspace.mkdir()
    with anyio.fail_after(30):
        async with connect(command=command("close"), cwd=workspace, record=record) as session:
            await session.prompt("hello")
            before = shown(session)
    assert "late text 4" in record.read_text(encoding="utf-8")
    assert shown(session) == before
    replayed = project_capture(record, session_id=session.session_id)
    assert untimed(replayed.items) == before
