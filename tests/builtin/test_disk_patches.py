"""True patches from the disk: reads around an edit turn an agent's fragment into the file's patch.

A live client reads each file an edit names as the tool call starts and as it
completes. The agent may be quicker than the first read, or the first read may
catch the file half written: whatever the timing, the patch is the file's.
"""

from __future__ import annotations

from typing import Any

import pluggy
import pytest
from hypothesis import given
from hypothesis import strategies as st

from acp_adapters import FileChangeItem, Hooks, ProviderRegistry, get_plugin_manager
from acp_adapters.projection.projector import Projector
from diff_helpers import apply_patch

PATH = "/ws/notes.txt"
OLD = "one\ntwo\nbeta\nfour\nfive\n"
NEW = "one\ntwo\nBETA changed\nfour\nfive\n"
TRUE_PATCH = (
    f"--- {PATH}\n+++ {PATH}\n@@ -1,5 +1,5 @@\n one\n two\n-beta\n+BETA changed\n four\n five\n"
)


def _edit(
    pm: pluggy.PluginManager, before: str | None, after: str | None, old: str = "beta"
) -> Any:
    projector = Projector(Hooks(pm), ProviderRegistry.collect(pm).get("acp"))
    fragment = {"type": "diff", "path": PATH, "oldText": old, "newText": "BETA changed"}
    start = {"sessionUpdate": "tool_call", "toolCallId": "e", "title": "edit", "kind": "edit"}
    projector.notification(
        {"sessionId": "s", "update": {**start, "status": "pending", "content": [fragment]}}, 1.0
    )
    if before is not None:
        projector.disk_observed("e", PATH, before, after=False, at=1.0)
    done = {"sessionUpdate": "tool_call_update", "toolCallId": "e", "status": "completed"}
    projector.notification({"sessionId": "s", "update": done}, 2.0)
    if after is not None:
        projector.disk_observed("e", PATH, after, after=True, at=2.0)
    (change,) = [i for i in projector.timeline() if isinstance(i, FileChangeItem)]
    return change


@pytest.mark.parametrize(
    ("first_read", "why"),
    [
        (OLD, "the first read saw the old file"),
        (NEW, "the agent wrote before the first read"),
        ("", "the first read caught the file truncated, before the write"),
        ("one\ntwo\nBE", "the first read caught the file half written"),
    ],
)
def test_the_true_patch_whatever_the_first_read_saw(
    pm: pluggy.PluginManager, first_read: str, why: str
) -> None:
    change = _edit(pm, first_read, NEW)
    assert change.patch_source == "disk", why
    assert change.diff_str == TRUE_PATCH, why


def test_only_the_read_at_completion(pm: pluggy.PluginManager) -> None:
    assert _edit(pm, None, NEW).diff_str == TRUE_PATCH


def test_a_fragment_found_twice_keeps_the_agents_patch(pm: pluggy.PluginManager) -> None:
    twice = "beta\nbeta\nBETA changed\n"
    change = _edit(pm, twice, twice)
    assert change.patch_source == "agent"
    assert change.patch_note is not None


@given(
    head=st.text(alphabet="ab\n", max_size=30),
    tail=st.text(alphabet="ab\n", max_size=30),
    cut=st.integers(min_value=0, max_value=80),
    old=st.sampled_from(["beta", "beta\n", "x"]),
)
def test_the_patch_applied_to_the_old_file_gives_the_new_one(
    head: str, tail: str, cut: int, old: str
) -> None:
    """Whatever a torn first read holds, the patch rebuilds the file from the old one."""
    pm = get_plugin_manager(load_entrypoints=False, environ={})
    before, after = f"{head}{old}{tail}", f"{head}BETA changed{tail}"
    change = _edit(pm, after[:cut], after, old=old)
    assert change.patch_source == "disk"
    assert change.diff_str is not None
    assert apply_patch(change.diff_str, {PATH: before}) == {PATH: after}


@pytest.mark.parametrize("ending", ["failed", "completed"])
def test_an_empty_old_file_the_disk_shows_absent_is_a_creation(
    pm: pluggy.PluginManager, ending: str
) -> None:
    """An agent that says oldText "" for a file it creates (Grok Build's write does)."""
    projector = Projector(Hooks(pm), ProviderRegistry.collect(pm).get("acp"))
    diff = {"type": "diff", "path": PATH, "oldText": "", "newText": "brand new\n"}
    start = {"sessionUpdate": "tool_call", "toolCallId": "w", "title": "write", "kind": "edit"}
    projector.notification(
        {"sessionId": "s", "update": {**start, "status": "pending", "content": [diff]}}, 1.0
    )
    projector.disk_observed("w", PATH, None, after=False, at=1.0)  # no such file yet
    refusal = [{"type": "content", "content": {"type": "text", "text": "rejected"}}]
    end: dict[str, Any] = {"sessionUpdate": "tool_call_update", "toolCallId": "w", "status": ending}
    if ending != "completed":
        end["content"] = refusal  # the refusal's text replaces the diff
    projector.notification({"sessionId": "s", "update": end}, 2.0)
    if ending == "completed":
        projector.disk_observed("w", PATH, "brand new\n", after=True, at=2.0)
    (change,) = [i for i in projector.timeline() if isinstance(i, FileChangeItem)]
    assert change.status == ending
    assert change.operations == {PATH: "add"}
    assert change.diff_str == f"--- /dev/null\n+++ {PATH}\n@@ -0,0 +1,1 @@\n+brand new\n"
    assert change.patch_source == "disk"
