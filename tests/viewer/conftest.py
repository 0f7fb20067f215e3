"""The viewer's fixtures: a store the fake agent filled."""

from __future__ import annotations

from pathlib import Path

import pytest

from .serving import edit_turn


@pytest.fixture
def db(workspace: Path, tmp_path: Path) -> Path:
    """A store with one thread, "t": a turn of the fake agent that edits two files."""
    path = tmp_path / "store.db"
    edit_turn(path, workspace, "edit")
    return path
