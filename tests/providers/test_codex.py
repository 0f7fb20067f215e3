"""The Codex plugin: renames show as moves, shell commands as commands."""

from __future__ import annotations

import pytest

import acp_adapters_codex
from acp_adapters import CommandExecutionItem, Hooks, ProviderRegistry, project_capture
from acp_adapters.testing import plugin_manager, provider, session, tool_call

CAPTURES = __import__("pathlib").Path(__file__).parent.parent / "data" / "captures"


@pytest.fixture
def hooks() -> Hooks:
    return Hooks(plugin_manager(acp_adapters_codex))


def test_registers_the_codex_provider(hooks: Hooks) -> None:
    codex = ProviderRegistry.collect(hooks.pm).for_agent("codex-acp")
    assert (codex.id, codex.protocol_version) == ("codex", 1)


def test_a_rename_is_a_move_not_a_delete_and_an_add(hooks: Hooks) -> None:
    state = session()
    old, new = "/ws/old_name.py", "/ws/new_name.py"
    changes = {
        old: {"type": "update", "unified_diff": "@@ -1 +1 @@\n-x = 1\n+x = 2\n", "move_path": new}
    }
    content = [{"type": "diff", "path": old, "oldText": "x = 1\n", "newText": "x = 2\n"}]
    call = tool_call(kind="edit", content=content, rawInput={"changes": changes}, state=state)
    item = hooks.project_file_change(provider("codex"), call, state.view())
    assert item.operations == {new: "move"}
    assert item.moved_from == {new: old}
    assert item.diff_str == f"--- {old}\n+++ {new}\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
    assert (item.additions, item.deletions) == (1, 1)
    # Another provider's tool call of the same shape keeps the built-in projection.
    other = hooks.project_file_change(provider("acp"), call, state.view())
    assert other.operations == {old: "modify"}


def test_a_rename_next_to_an_add(hooks: Hooks) -> None:
    state = session()
    changes = {
        "/ws/a.py": {"type": "update", "unified_diff": "", "move_path": "/ws/b.py"},
        "/ws/c.py": {"type": "add", "content": "c\n"},
    }
    content = [{"type": "diff", "path": "/ws/c.py", "newText": "c\n"}]
    call = tool_call(kind="edit", content=content, rawInput={"changes": changes}, state=state)
    item = hooks.project_file_change(provider("codex"), call, state.view())
    assert item.operations == {"/ws/b.py": "move", "/ws/c.py": "add"}
    assert (
        item.diff_str
        == "--- /ws/a.py\n+++ /ws/b.py\n\n--- /dev/null\n+++ /ws/c.py\n@@ -0,0 +1,1 @@\n+c\n"
    )


def test_a_file_past_the_cap_beside_a_rename_is_capped_not_unchanged(hooks: Hooks) -> None:
    state = session(max_edits=5)
    old, new = "".join(f"{i}\n" for i in range(10)), "".join(f"{i}!\n" for i in range(10))
    changes = {
        "/ws/a.py": {"type": "update", "unified_diff": "", "move_path": "/ws/b.py"},
        "/ws/big.py": {"type": "update", "unified_diff": "@@ ... @@\n"},
    }
    content = [{"type": "diff", "path": "/ws/big.py", "oldText": old, "newText": new}]
    call = tool_call(kind="edit", content=content, rawInput={"changes": changes}, state=state)
    item = hooks.project_file_change(provider("codex"), call, state.view())
    assert item.operations == {"/ws/b.py": "move", "/ws/big.py": "modify"}
    assert (item.diff_str, item.diff_omitted_reason) == ("--- /ws/a.py\n+++ /ws/b.py\n", "capped")


def test_a_shell_command_reported_as_a_read_is_a_command() -> None:
    timeline = project_capture(
        CAPTURES / "codex-acp-fakellm-tools-v1.jsonl", pm=plugin_manager(acp_adapters_codex)
    )
    (command,) = timeline.of_kind("command_execution")
    assert isinstance(command, CommandExecutionItem)
    assert command.command == "echo hello-from-exec; cat existing.txt"
    assert command.output == "hello-from-exec\nalpha\nBETA changed\n"
    assert command.exit_code == 0
    assert timeline.of_kind("file_read") == []
