"""The Claude plugin: true patches from claude-agent-acp's tool responses."""

from __future__ import annotations

from typing import Any

import pytest

import acp_adapters_claude
from acp_adapters import Hooks, ProviderRegistry, project_capture
from acp_adapters.testing import plugin_manager, provider, session, tool_call
from acp_adapters_claude.provider import PROVIDER, apply_structured_patch, true_contents
from diff_helpers import apply_patch

CAPTURES = __import__("pathlib").Path(__file__).parent.parent / "data" / "captures"


@pytest.fixture
def hooks() -> Hooks:
    return Hooks(plugin_manager(acp_adapters_claude))


def test_registers_the_claude_provider(hooks: Hooks) -> None:
    registry = ProviderRegistry.collect(hooks.pm)
    claude = registry.for_agent("@agentclientprotocol/claude-agent-acp")
    assert claude.id == "claude" == PROVIDER.id
    assert registry.for_agent("@zed-industries/claude-code-acp").id == "claude"
    assert claude.launch is not None
    assert claude.launch.args == ("@agentclientprotocol/claude-agent-acp@0.85.1",)


def test_the_fragment_edit_becomes_the_files_true_patch() -> None:
    capture = CAPTURES / "claude-agent-acp-fakellm-tools-v1.jsonl"
    naive = project_capture(capture, pm=plugin_manager(), provider="acp").of_kind("file_change")[1]
    true = project_capture(capture, pm=plugin_manager(acp_adapters_claude)).of_kind("file_change")[
        1
    ]
    # The fragment ("alpha\nbeta" without the file's final newline) misleads the naive patch.
    assert "\\ No newline at end of file" in (naive.diff_str or "")
    assert true.patch_source == "provider_meta"
    assert true.diff_str == (
        "--- <workspace>/existing.txt\n+++ <workspace>/existing.txt\n"
        "@@ -1,2 +1,2 @@\n alpha\n-beta\n+BETA changed\n"
    )
    files = apply_patch(true.diff_str or "", {"<workspace>/existing.txt": "alpha\nbeta\n"})
    assert files == {"<workspace>/existing.txt": "alpha\nBETA changed\n"}


def test_without_a_tool_response_the_builtin_answers(hooks: Hooks) -> None:
    state = session()
    diff = [{"type": "diff", "path": "/ws/a", "oldText": "x\n", "newText": "y\n"}]
    call = tool_call(
        kind="edit", content=diff, _meta={"claudeCode": {"toolName": "Edit"}}, state=state
    )
    item = hooks.project_file_change(provider("claude"), call, state.view())
    assert item.patch_source == "agent"
    assert item.diff_str == "--- /ws/a\n+++ /ws/a\n@@ -1,1 +1,1 @@\n-x\n+y\n"


def test_metadata_spread_over_updates_is_still_read(hooks: Hooks) -> None:
    state = session()
    response = {
        "type": "create",
        "filePath": "/ws/n.txt",
        "content": "one\ntwo\n",
        "originalFile": None,
        "structuredPatch": [],
    }
    tool_call(
        kind="edit",
        _meta={"claudeCode": {"toolResponse": response, "toolName": "Write"}},
        state=state,
    )
    call = tool_call(status="completed", _meta={"claudeCode": {"toolName": "Write"}}, state=state)
    assert "toolResponse" not in call.meta["claudeCode"]  # the latest _meta replaced it
    item = hooks.project_file_change(provider("claude"), call, state.view())
    assert item.diff_str == "--- /dev/null\n+++ /ws/n.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n"
    assert item.operations == {"/ws/n.txt": "add"}


@pytest.mark.parametrize(
    ("original", "hunks", "expected"),
    [
        ("a\nb\nc\n", [{"oldStart": 2, "oldLines": 1, "lines": ["-b", "+B"]}], "a\nB\nc\n"),
        (
            "a\nb",
            [{"oldStart": 2, "oldLines": 1, "lines": ["-b", "\\ No newline at end of file", "+B"]}],
            "a\nB\n",
        ),
        (
            "a\nb\n",
            [{"oldStart": 2, "oldLines": 1, "lines": ["-b", "+B", "\\ No newline at end of file"]}],
            "a\nB",
        ),
        ("a\n", [{"oldStart": 1, "oldLines": 0, "lines": ["+z"]}], "a\nz\n"),
        ("", [{"oldStart": 0, "oldLines": 0, "lines": ["+first"]}], "first\n"),
        ("a\nb\n", [{"oldStart": 1, "oldLines": 1, "lines": ["-nope", "+x"]}], None),
        ("a\n", [{"oldStart": "1", "lines": []}], None),
    ],
)
def test_apply_structured_patch(original: str, hunks: list[Any], expected: str | None) -> None:
    assert apply_structured_patch(original, hunks) == expected


def test_true_contents_reads_only_what_it_understands() -> None:
    assert true_contents(
        {"filePath": "/a", "type": "update", "content": "x", "originalFile": "y"}
    ) == ("/a", "y", "x")
    assert true_contents({"filePath": 3}) is None
    assert true_contents({"filePath": "/a", "originalFile": 5}) is None
    assert true_contents({"stdout": "hello"}) is None
