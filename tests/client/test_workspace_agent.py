"""Agents that change the workspace themselves, live: every change with its true patch
(from the checkpoints), whoever made it; a turn undone per hunk; links swapped after a turn
never lead a revert out.

The scripted agent on the official Python SDK (``agents/workspace_agent.py``) plays each
scenario of ``workspace_helpers.SCENARIOS``. Each session is recorded; the file changes the
live session gave must come again from ``project_capture`` of its recording.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

import acp_adapters
from acp_adapters.history.turn_patches import RevertConflict, revert_turn, thread_turn_files
from acp_adapters.store.base import Thread
from acp_adapters.store.open import open_store
from workspace_helpers import (
    NOTES,
    NOTES_TOP,
    SCENARIOS,
    USER_BOTTOM,
    WORKSPACE_AGENT,
    changes,
    check_scenario,
    portable,
    run_scenario,
    seed,
    snapshot,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


@pytest.mark.parametrize("name", list(SCENARIOS))
async def test_every_change_has_its_true_patch_live_and_from_the_recording(
    connect: Any, ws: Path, name: str
) -> None:
    capture = ws.parent / "capture.jsonl"
    seed(ws, SCENARIOS[name])
    root = str(ws.resolve())
    before = snapshot(ws, root)
    turns = await run_scenario(name, ws, connect=connect, record=capture)
    items = [item for turn in turns for item in turn.items]
    check_scenario(name, items, root, before, snapshot(ws, root))
    live = [portable(c, root) for c in changes(items)]
    recorded = acp_adapters.project_capture(capture)
    assert [portable(c, root) for c in changes(recorded.items)] == live


@asynccontextmanager
async def _kept(ws: Path, tmp_path: Path, name: str) -> AsyncIterator[tuple[Any, Thread]]:
    """Scenario ``name`` run in ``ws``, kept in a store as the thread "t"."""
    seed(ws, SCENARIOS[name])
    async with await open_store(tmp_path / "store.db") as store:
        await run_scenario(name, ws, store=store, thread="t")
        thread = await store.thread_named("t")
        assert thread is not None
        yield store, thread


async def test_a_turn_is_undone_per_hunk_keeping_the_users_edit_made_since(
    ws: Path, tmp_path: Path
) -> None:
    async with _kept(ws, tmp_path, "user-edit-between-turns") as (store, thread):
        notes = ws / "notes.txt"
        rest = NOTES.split("\n", 1)[1]
        assert notes.read_text() == NOTES_TOP + rest.replace("note 10\n", USER_BOTTOM)
        (turn_one,) = await thread_turn_files(store, thread.id, 1)
        assert (turn_one.before, turn_one.after) == (NOTES, NOTES_TOP + rest)
        assert await thread_turn_files(store, thread.id, 2) == []  # the user's edit is no turn's
        planned = await revert_turn(store, thread.id, 1, dry_run=True)
        assert planned == [str(notes.resolve())]
        assert notes.read_text().startswith(NOTES_TOP)  # a dry run writes nothing
        written = await revert_turn(store, thread.id, 1)
        assert written == [str(notes.resolve())]
        # The turn's hunk undone, the user's later edit kept.
        assert notes.read_text() == NOTES.replace("note 10\n", USER_BOTTOM)
        assert await revert_turn(store, thread.id, 1) == []  # undone already: nothing to do


async def test_a_later_edit_that_touches_the_turns_hunk_is_a_conflict_and_nothing_is_written(
    ws: Path, tmp_path: Path
) -> None:
    async with _kept(ws, tmp_path, "user-edit-between-turns") as (store, thread):
        notes = ws / "notes.txt"
        touched = notes.read_text().replace("note 2\n", "note 2, edited beside the turn's\n")
        notes.write_text(touched)
        with pytest.raises(RevertConflict) as conflict:
            await revert_turn(store, thread.id, 1)
        (one,) = conflict.value.conflicts
        assert one.path == str(notes.resolve())
        assert [hunk.header for hunk in one.hunks] == ["@@ -1,4 +1,4 @@"]
        assert "@@ -1,4 +1,4 @@" in str(conflict.value)
        assert notes.read_text() == touched


async def test_links_swapped_after_a_turn_never_lead_a_revert_out(ws: Path, tmp_path: Path) -> None:
    outside = ws.parent / "outside"
    async with _kept(ws, tmp_path, "swapped-links") as (store, thread):
        assert (ws / "sub").is_symlink()
        assert (ws / "existing.txt").is_symlink()

        def outside_untouched() -> None:
            assert sorted(p.name for p in outside.iterdir()) == ["made.txt", "secret.txt"]
            assert (outside / "made.txt").read_text() == "OUTSIDE: never written or removed\n"
            assert (outside / "secret.txt").is_fifo()

        # Turn 1 changed existing.txt, a link now: a conflict, and nothing is written (sub,
        # which it made, is a link too: beneath it, nothing is there to remove).
        with pytest.raises(RevertConflict) as conflict:
            await revert_turn(store, thread.id, 1)
        assert conflict.value.paths == [str(ws.resolve() / "existing.txt")]
        outside_untouched()
        assert (ws / "sub").is_symlink()
        assert (ws / "existing.txt").is_symlink()
        # Turn 2 swapped them: undone, the links are names, replaced and removed as names.
        written = await revert_turn(store, thread.id, 2)
        assert sorted(written) == sorted(
            str(ws.resolve() / n) for n in ("existing.txt", "sub", "sub/made.txt")
        )
        outside_untouched()
        assert not (ws / "sub").is_symlink()
        assert (ws / "sub" / "made.txt").read_text() == "made in sub\n"
        assert not (ws / "existing.txt").is_symlink()
        assert (ws / "existing.txt").read_text() == "alpha\nBETA\n"


async def test_the_folders_are_restored_to_a_checkpoint(connect: Any, ws: Path) -> None:
    seed(ws, SCENARIOS["self-write"])
    async with connect(command=WORKSPACE_AGENT, cwd=ws, policy="full-access") as session:
        taken = await session.checkpoint()
        assert taken.reason == "request"
        assert taken.files == 1
        await session.prompt("self-write")
        assert (ws / "new.txt").exists()
        marks = session.timeline.state.checkpoints
        assert [m.reason for m in marks if m.reason != "session"] == [
            "request",
            "turn_start",
            "tool_call",
            "turn_end",
        ]
        start = next(m for m in marks if m.reason == "turn_start")
        assert await session.restore(start.id, dry_run=True) == sorted(
            str(ws.resolve() / n) for n in ("existing.txt", "new.txt")
        )
        assert (ws / "new.txt").exists()
        assert len(await session.restore(start.id)) == 2
    assert not (ws / "new.txt").exists()
    assert (ws / "existing.txt").read_text() == "alpha\nbeta\n"
