"""Every live session of the test suite is recorded, and its recording projected offline
must give the timeline the live session showed (ids and all; times aside).

:func:`install` wraps :func:`acp_adapters.connect` for the whole test run: a session
opened without ``record=`` is recorded into a temporary file; when its block ends
without an error, :func:`acp_adapters.project_capture` reads the recording with the
session's provider and plugin manager, and the two timelines are compared item by
item, the live one with its folders written as the recording writes them. A session
whose recording does not project to its timeline fails the test that ran it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import acp_adapters
import acp_adapters.client
import acp_adapters.client.session
from acp_adapters.capture.recorder import CaptureRecorder

# Taken now: a test may replace tempfile's names to watch what a replay makes.
_make_folder = tempfile.mkdtemp
_remove_folder = shutil.rmtree

#: Fields that say when, not what: a recording keeps its own clock.
_TIMES = ("created_at", "updated_at")
#: How many sessions were checked (the suite's own check that the wrapper ran).
checked: list[str] = []


def _items(timeline: acp_adapters.Timeline, portable: Any) -> list[dict[str, Any]]:
    return [
        {k: v for k, v in portable(item.model_dump(mode="json")).items() if k not in _TIMES}
        for item in timeline
    ]


def install() -> None:
    """Wrap ``connect`` where the package and its command line find it."""
    original = acp_adapters.client.connecting.connect

    @asynccontextmanager
    async def connect(*args: Any, **kwargs: Any) -> AsyncIterator[acp_adapters.Session]:
        scratch = None
        if kwargs.get("record") is None:
            scratch = _make_folder(prefix="acp-live-")
            kwargs["record"] = Path(scratch) / "session.jsonl"
        try:
            async with original(*args, **kwargs) as session:
                yield session
            _check(session, Path(kwargs["record"]), kwargs.get("pm"), kwargs.get("env"))
        finally:
            if scratch is not None:
                _remove_folder(scratch, ignore_errors=True)

    acp_adapters.client.connecting.connect = connect  # type: ignore[assignment]
    acp_adapters.client.connect = connect  # type: ignore[attr-defined]


def _check(session: acp_adapters.Session, record: Path, pm: Any, env: Any) -> None:
    if not record.exists():
        return  # the application moved its recording away: nothing to compare
    home = (env or {}).get("HOME") or os.environ.get("HOME")
    marks = CaptureRecorder(os.devnull, workspace=session.workspace.cwd, agent_home=home)
    try:
        # Every session of the connection (the first one even without an id: a session
        # that never opened still has its timeline).
        for number, one in enumerate(session.agent.sessions):
            if number and one.session_id is None:
                continue
            _compare(one, record, pm, marks, first=number == 0)
    finally:
        marks.close()


def _compare(
    session: acp_adapters.Session, record: Path, pm: Any, marks: CaptureRecorder, *, first: bool
) -> None:
    live = _items(session.timeline, marks.portable)
    offline = acp_adapters.project_capture(
        record,
        provider=session.provider.id,
        pm=pm,
        session_id=None if first else session.session_id,
    )
    replayed = _items(offline, lambda value: value)
    if live != replayed:
        for number, (one, other) in enumerate(zip(live, replayed, strict=False)):
            if one != other:
                raise AssertionError(
                    f"the recording of session {session.session_id!r} projects to another "
                    f"timeline: item {number} is\n  live:     {one}\n  recorded: {other}"
                )
        raise AssertionError(
            f"the recording of session {session.session_id!r} projects to {len(replayed)} "
            f"items, the live session showed {len(live)}"
        )
    checked.append(session.session_id or "")
