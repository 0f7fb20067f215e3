"""Agents that change the workspace themselves, from their recordings alone: every change
with its true patch, whoever made it, and each turn's patch from its checkpoints.

``tests/peers/record_scenarios.py --only workspace`` records what the scripted agent
(``tests/agents/workspace_agent.py``) plays into ``data/recorded/workspace-<scenario>.jsonl``,
with the workspace before and after beside it; the live session's checks
(``client/test_workspace_agent.py``) must hold of ``project_capture`` of the recording.
"""

from __future__ import annotations

import pytest

from acp_adapters import project_capture
from acp_adapters.capture.format import capture_values
from acp_adapters.history.turn_patches import checkpointed_turn, turn_patch
from diff_helpers import apply_patch
from workspace_helpers import (
    MARK,
    NOTES,
    NOTES_TOP,
    SCENARIOS,
    check_scenario,
    recorded_files,
    recording,
)

RECORD = "python tests/peers/record_scenarios.py --agents /nonexistent --only workspace"


def _entries(name: str) -> list[dict[str, object]]:
    return [value for _, value in capture_values(recording(name)) if isinstance(value, dict)]


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_a_recording_gives_every_change_its_true_patch(name: str) -> None:
    capture = recording(name)
    if not capture.exists():
        pytest.fail(f"{capture.name} is not recorded: {RECORD}")
    before, after = recorded_files(capture)
    timeline = project_capture(capture)
    assert timeline.problems == []
    check_scenario(name, timeline.items, MARK, before, after)


def test_a_recordings_turn_patch_is_the_turns_change_alone() -> None:
    entries = _entries("user-edit-between-turns")
    (first,) = checkpointed_turn(entries, 1) or [None]
    assert first is not None
    notes = f"{MARK}/notes.txt"
    assert (first.path, first.before) == (notes, NOTES)
    assert first.after == NOTES_TOP + NOTES.split("\n", 1)[1]
    assert apply_patch(turn_patch([first]), {notes: NOTES}) == {notes: first.after}
    assert checkpointed_turn(entries, 2) == []  # the user's edit between the turns is no turn's


def test_a_recordings_turns_with_links_swapped_show_the_links_as_links() -> None:
    entries = _entries("swapped-links")
    second = {f.path: f for f in checkpointed_turn(entries, 2) or []}
    assert set(second) == {f"{MARK}/existing.txt", f"{MARK}/sub", f"{MARK}/sub/made.txt"}
    swapped = second[f"{MARK}/existing.txt"]
    assert swapped.before_state is not None
    assert swapped.after_state is not None
    assert (swapped.before_state.kind, swapped.after_state.kind) == ("file", "link")
    assert swapped.after is None  # a link has no text: its target is the state's
    patch = turn_patch(list(second.values()))
    assert "OUTSIDE" not in patch
    assert f"+++ {MARK}/sub" in patch
