"""An edit that reports several fragments of one file (claude-agent-acp's ``MultiEdit``: one
``diff`` per edit, all of one path) gets one patch of that file, from all its fragments.

Placed in the file's known content, the fragments are applied in turn; with only the disk
read at completion, they are all undone, the last first, to find the file before. A patch
that claims to be the file's (any source but ``agent``) applies to the file as it was and
gives the file as it became.
"""

from __future__ import annotations

import pluggy

from diff_helpers import apply_patch

from .test_true_patches import (
    OLD,
    PATH,
    completed,
    diff,
    project,
    read,
    the_change,
    tool_call,
)

BOTH = "ONE\ntwo\nTHREE\nfour\n"
FRAGMENTS = [diff(PATH, "one", "ONE"), diff(PATH, "three", "THREE")]


def _true_or_the_agents(change: object, old: str, new: str) -> None:
    assert change.paths == (PATH,), change.paths  # type: ignore[attr-defined]
    patch = change.diff_str or ""  # type: ignore[attr-defined]
    if change.patch_source != "agent":  # type: ignore[attr-defined]
        assert patch.count(f"+++ {PATH}\n") == 1, patch
        assert apply_patch(patch, {PATH: old}) == {PATH: new}, patch


def test_two_fragments_of_one_file_placed_in_its_read_give_one_patch(
    pm: pluggy.PluginManager,
) -> None:
    change = the_change(project(*read(5, PATH, OLD), tool_call(content=FRAGMENTS), pm=pm))
    _true_or_the_agents(change, OLD, BOTH)


def test_two_fragments_of_one_file_read_at_completion_give_its_true_patch(
    pm: pluggy.PluginManager,
) -> None:
    after = {"dir": "disk", "t": 0.0, "toolCallId": "e", "path": PATH, "phase": "after"}
    change = the_change(
        project(
            tool_call(content=FRAGMENTS, status="in_progress"),
            completed("e"),
            {**after, "content": BOTH},
            pm=pm,
        )
    )
    _true_or_the_agents(change, OLD, BOTH)
