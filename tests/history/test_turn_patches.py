"""A turn's file changes as one patch, and a turn undone, from a thread's evidence (the disk
reads around its edits, the writes the client served): only where every file still holds
what the turn left."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

import acp_adapters
from acp_adapters.history.turn_patches import (
    MissingEvidence,
    RevertConflict,
    revert_turn,
    thread_turn_files,
    turn_patch,
)
from acp_adapters.store.open import open_store
from diff_helpers import apply_patch

pytestmark = pytest.mark.anyio

FAKE = Path(__file__).resolve().parents[1] / "agents" / "fake_agent.py"


async def edited(workspace: Path, db: Path, **kwargs: Any) -> str:
    async with acp_adapters.connect(
        command=[sys.executable, str(FAKE), "edit", str(workspace)],
        cwd=workspace,
        policy="full-access",
        store=db,
        thread="t",
        **kwargs,
    ) as session:
        await session.prompt("edit")
        assert session.thread is not None
        return session.thread.id


async def test_a_turns_patch_leads_from_its_files_before_to_after(
    workspace: Path, tmp_path: Path
) -> None:
    db = tmp_path / "store.db"
    thread_id = await edited(workspace, db)
    async with await open_store(db) as store:
        files = await thread_turn_files(store, thread_id, 1)
    by_name = {Path(f.path).name: f for f in files}
    assert by_name["existing.txt"].before == "alpha\nbeta\n"
    assert by_name["existing.txt"].after == "alpha\nBETA changed\n"
    assert by_name["new.txt"].before is None
    assert by_name["new.txt"].after == "brand new\n"
    patch = turn_patch(files)
    old = {f.path: f.before for f in files if f.before is not None}
    assert apply_patch(patch, old) == {f.path: f.after for f in files}


async def test_revert_puts_the_files_back_and_refuses_what_changed_since(
    workspace: Path, tmp_path: Path
) -> None:
    db = tmp_path / "store.db"
    thread_id = await edited(workspace, db)
    existing, created = workspace / "existing.txt", workspace / "new.txt"
    async with await open_store(db) as store:
        existing.write_text("someone else's edit\n")
        with pytest.raises(RevertConflict) as conflict:
            await revert_turn(store, thread_id, 1)
        assert conflict.value.paths == [str(existing)]
        assert created.read_text() == "brand new\n"  # nothing was written
        existing.write_text("alpha\nBETA changed\n")  # as the turn left it
        written = await revert_turn(store, thread_id, 1)
        assert sorted(written) == sorted([str(existing), str(created)])
        assert existing.read_text() == "alpha\nbeta\n"
        assert not created.exists()
        # Undone already: the files hold the before, and there is nothing to write.
        assert await revert_turn(store, thread_id, 1) == []


async def test_without_whole_texts_the_turn_cannot_be_undone(
    workspace: Path, tmp_path: Path
) -> None:
    db = tmp_path / "store.db"
    thread_id = await edited(workspace, db, disk_patches=False)
    async with await open_store(db) as store:
        with pytest.raises(MissingEvidence) as missing:
            await revert_turn(store, thread_id, 1)
    assert str(workspace.resolve() / "existing.txt") in missing.value.paths or any(
        p.endswith("existing.txt") for p in missing.value.paths
    )
