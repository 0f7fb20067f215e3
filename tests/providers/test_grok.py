"""The Grok plugin: stale first reports, repeated reports, files a write creates."""

from __future__ import annotations

import pytest

import acp_adapters_grok
from acp_adapters import DiffV1, Hooks, ProviderRegistry, project_capture
from acp_adapters.runtime import Reducer
from acp_adapters.testing import plugin_manager, provider, session, tool_call

SYNTHETIC = __import__("pathlib").Path(__file__).parent.parent / "data" / "synthetic"


@pytest.fixture
def hooks() -> Hooks:
    return Hooks(plugin_manager(acp_adapters_grok))


def test_registers_the_grok_provider(hooks: Hooks) -> None:
    grok = ProviderRegistry.collect(hooks.pm).for_agent("grok")
    assert (grok.id, grok.protocol_version) == ("grok", 1)
    assert grok.launch is not None
    assert grok.launch.args[-2:] == ("agent", "stdio")


#: Grok Build 1.0.41's initialize answer, cut short: no agentInfo, x.ai's _meta keys.
GROK_INITIALIZE = {
    "protocolVersion": 1,
    "agentCapabilities": {"loadSession": True, "_meta": {"x.ai/fs_notify": True}},
    "authMethods": [{"id": "xai.api_key", "name": "xai.api_key"}],
    "_meta": {"grokShell": True, "agentVersion": "1.0.41", "x.ai/pluginDirs": True},
}


@pytest.mark.parametrize(
    ("result", "identified"),
    [
        (GROK_INITIALIZE, "grok"),
        ({"protocolVersion": 1, "_meta": {"x.ai/fs_notify": True}}, "grok"),
        ({"agentCapabilities": {"_meta": {"x.ai/hooks": {}}}}, "grok"),
        ({"protocolVersion": 1, "_meta": {"agentVersion": "1.0.41"}}, None),
        ({"_meta": ["x.ai/fs_notify"]}, None),
        ({"_meta": {1: True}, "agentCapabilities": "none"}, None),
        ({}, None),
    ],
)
def test_grok_build_is_known_by_its_initialize_answer(
    hooks: Hooks, result: dict[str, object], identified: str | None
) -> None:
    assert hooks.identify_agent(result) == identified


def test_a_stale_empty_file_claim_is_not_shown_as_a_whole_file_addition(hooks: Hooks) -> None:
    state = session()
    Reducer(state).apply_file_read("/ws/n.txt", "alpha\nbeta\n")
    stale = [{"type": "diff", "path": "/ws/n.txt", "oldText": "", "newText": "alpha\nBETA\n"}]
    call = tool_call(kind="edit", status="pending", content=stale, state=state)
    item = hooks.project_file_change(provider("grok"), call, state.view())
    assert (item.diff_str, item.diff_omitted_reason) == (None, "no_diff")
    fixed = [
        {
            "type": "diff",
            "path": "/ws/n.txt",
            "oldText": "alpha\nbeta\n",
            "newText": "alpha\nBETA\n",
        }
    ]
    call = tool_call(status="completed", content=fixed, state=state)
    item = hooks.project_file_change(provider("grok"), call, state.view())
    assert item.diff_str == "--- /ws/n.txt\n+++ /ws/n.txt\n@@ -1,2 +1,2 @@\n alpha\n-beta\n+BETA\n"


def test_the_last_report_of_a_path_wins(hooks: Hooks) -> None:
    state = session()
    reports = [
        {"type": "diff", "path": "/ws/a", "oldText": "", "newText": "whole\nfile\n"},
        {"type": "diff", "path": "/ws/a", "oldText": "whole\nfile\n", "newText": "whole\nFILE\n"},
    ]
    call = tool_call(kind="edit", content=reports, state=state)
    item = hooks.project_file_change(provider("grok"), call, state.view())
    assert item.diff_str == "--- /ws/a\n+++ /ws/a\n@@ -1,2 +1,2 @@\n whole\n-file\n+FILE\n"
    builtin = hooks.project_file_change(provider("acp"), call, state.view())
    assert builtin.diff_str != item.diff_str  # the built-in shows both reports


def test_a_write_that_creates_a_file_is_an_add(hooks: Hooks) -> None:
    state = session()
    Reducer(state).apply_file_read("/ws/new.txt", None)
    write = [{"type": "diff", "path": "/ws/new.txt", "oldText": "", "newText": "hi\n"}]
    call = tool_call(kind="edit", content=write, state=state)
    item = hooks.project_file_change(provider("grok"), call, state.view())
    assert item.operations == {"/ws/new.txt": "add"}
    assert item.diff_str == "--- /dev/null\n+++ /ws/new.txt\n@@ -0,0 +1,1 @@\n+hi\n"


def test_grok_fixes_its_diffs_not_whole_items(hooks: Hooks) -> None:
    """Its quirks are fixed in normalize_diff_content; the built-in builds the item."""
    assert not hasattr(acp_adapters_grok, "project_file_change")
    state = session()
    Reducer(state).apply_file_read("/ws/new.txt", None)
    reports = [
        {"type": "diff", "path": "/ws/new.txt", "oldText": "", "newText": "first\n"},
        {"type": "diff", "path": "/ws/new.txt", "oldText": "", "newText": "hi\n"},
    ]
    call = tool_call(kind="edit", content=reports, state=state)
    (fixed,) = hooks.normalize_diff_content(provider("grok"), call, call.content, state.view())
    assert isinstance(fixed, DiffV1)
    assert (fixed.old_text, fixed.new_text) == (None, "hi\n")
    other = hooks.normalize_diff_content(provider("acp"), call, call.content, state.view())
    assert other is call.content


def test_a_stale_report_leaves_the_other_files_patch(hooks: Hooks) -> None:
    state = session()
    Reducer(state).apply_file_read("/ws/n.txt", "alpha\n")
    reports = [
        {"type": "diff", "path": "/ws/n.txt", "oldText": "", "newText": "ALPHA\n"},
        {"type": "diff", "path": "/ws/m.txt", "oldText": "m\n", "newText": "M\n"},
    ]
    call = tool_call(kind="edit", content=reports, state=state)
    item = hooks.project_file_change(provider("grok"), call, state.view())
    assert item.operations == {"/ws/n.txt": "modify", "/ws/m.txt": "modify"}
    assert item.diff_str == "--- /ws/m.txt\n+++ /ws/m.txt\n@@ -1,1 +1,1 @@\n-m\n+M\n"


def test_a_grok_fragment_takes_the_true_patch_from_the_disk(hooks: Hooks) -> None:
    """search_replace reports the replaced strings; a live client's disk reads show the file."""
    state = session()
    reducer = Reducer(state)
    start = {"toolCallId": "g", "title": "search_replace", "kind": "edit", "status": "pending"}
    reducer.apply_notification(
        {"sessionId": "s", "update": {"sessionUpdate": "tool_call", **start}}
    )
    reducer.apply_disk_snapshot("g", "/ws/f.txt", "alpha\nbeta\n", after=False)
    reducer.apply_disk_snapshot("g", "/ws/f.txt", "alpha\nBETA\n", after=True)
    fragment = [{"type": "diff", "path": "/ws/f.txt", "oldText": "beta", "newText": "BETA"}]
    end = {"toolCallId": "g", "status": "completed", "content": fragment}
    reducer.apply_notification(
        {"sessionId": "s", "update": {"sessionUpdate": "tool_call_update", **end}}
    )
    item = hooks.project_file_change(provider("grok"), state.tool_calls["g"], state.view())
    assert item.patch_source == "disk"
    assert item.diff_str == "--- /ws/f.txt\n+++ /ws/f.txt\n@@ -1,2 +1,2 @@\n alpha\n-beta\n+BETA\n"


@pytest.mark.parametrize(
    "name",
    [
        "grok-search-replace-v1",
        "grok-stale-report-v1",
        "grok-apply-patch-v1",
        "grok-write-new-file-v1",
    ],
)
def test_each_grok_session_ends_with_the_final_patch(name: str) -> None:
    timeline = project_capture(SYNTHETIC / f"{name}.jsonl", pm=plugin_manager(acp_adapters_grok))
    (change,) = timeline.of_kind("file_change")
    assert change.status == "completed"
    assert change.diff_str is not None
    # never a stale whole-file addition of a file that had content
    assert "@@ -0,0 " not in change.diff_str or name in (
        "grok-write-new-file-v1",
        "grok-apply-patch-v1",
    )
    (approval,) = timeline.of_kind("approval_request")
    assert [o["kind"] for o in approval.options] == [
        "allow_once",
        "allow_always",
        "reject_once",
        "reject_always",
    ]


@pytest.mark.parametrize("scenario", ["rejected-permission", "cancelled-turn", "crash-mid-turn"])
def test_a_write_of_a_new_file_that_never_happened_shows_the_creation_it_proposed(
    scenario: str,
) -> None:
    """Grok Build 1.0.41 recorded: its write says oldText "" for a file it would create, and
    its refusal replaces the diff with the error text."""
    capture = SYNTHETIC.parent / "recorded" / f"grok-{scenario}.jsonl"
    timeline = project_capture(capture, pm=plugin_manager(acp_adapters_grok))
    assert timeline.provider.id == "grok"  # known without agentInfo
    (change,) = timeline.of_kind("file_change")
    assert change.status in ("failed", "cancelled")
    assert change.operations == {"<workspace>/new.txt": "add"}  # type: ignore[union-attr]
    assert change.diff_str == (  # type: ignore[union-attr]
        "--- /dev/null\n+++ <workspace>/new.txt\n@@ -0,0 +1,1 @@\n+brand new\n"
    )
