"""The session API against real agents, at pinned versions, offline (``tox -e peers``).

Each agent talks to the fake model server on 127.0.0.1, which plays the model:
in one turn it asks the agent to create ``new.txt`` and to edit ``existing.txt``.
The agents ask permission (the application allows once) and edit the files
themselves; the client's timeline must carry patches that, applied to the old
files, give the files on disk. Every message the client sends is checked
against the official schema of the negotiated version (the ``connect`` fixture).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_adapters import FileChangeItem, PermissionQuery, get_plugin_manager
from acp_adapters.client import Turn
from diff_helpers import apply_patch
from peers import launch
from peers.fake_model_server import FakeModelServer, Step, Text, ToolCall, ToolCalls
from peers.launch import script

pytestmark = [pytest.mark.peers, pytest.mark.anyio]

OLD = {"existing.txt": "alpha\nbeta\n"}
NEW = {"existing.txt": "alpha\nBETA changed\n", "new.txt": "brand new\n"}
PROMPT = "create new.txt and change beta in existing.txt"
NEW_TXT = NEW["new.txt"]
FINAL = "created new.txt and edited existing.txt"
TURN_SECONDS = 120


def allow_once(asked: list[PermissionQuery]) -> Any:
    async def ask(query: PermissionQuery) -> str | None:
        asked.append(query)
        return next((o["optionId"] for o in query.options if o.get("kind") == "allow_once"), None)

    return ask


def check_the_turn(turn: Turn, workspace: Path) -> list[FileChangeItem]:
    """The files on disk are the new ones, and each file_change's patch leads there."""
    assert turn.stop_reason == "end_turn"
    assert {p.name: p.read_text() for p in workspace.iterdir()} == NEW
    changes = [i for i in turn.items if isinstance(i, FileChangeItem)]
    assert sorted(Path(p).name for c in changes for p in c.paths) == ["existing.txt", "new.txt"]
    for change in changes:
        assert change.status == "completed"
        assert change.diff_str is not None, change
        (path,) = change.paths
        old = {path: OLD[Path(path).name]} if Path(path).name in OLD else {}
        on_disk = (workspace / Path(path).name).read_text()
        assert apply_patch(change.diff_str, old) == {path: on_disk}
    by_name = {Path(c.paths[0]).name: c for c in changes}
    assert by_name["new.txt"].operations == {str(workspace / "new.txt"): "add"}
    assert by_name["existing.txt"].operations == {str(workspace / "existing.txt"): "modify"}
    assert turn.items[-1].kind == "assistant_message"
    assert turn.items[-1].text.endswith(FINAL)  # type: ignore[union-attr]
    return changes


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    for name, text in OLD.items():
        (folder / name).write_text(text)
    return folder


# --- claude-agent-acp -------------------------------------------------------------------


def claude_plan(workspace: Path) -> list[Step]:
    existing, created = str(workspace / "existing.txt"), str(workspace / "new.txt")
    return [
        ToolCalls([ToolCall("Write", {"file_path": created, "content": NEW_TXT})]),
        ToolCalls([ToolCall("Read", {"file_path": existing})]),  # Claude edits only what it read
        ToolCalls(
            [
                ToolCall(
                    "Edit",
                    {"file_path": existing, "old_string": "beta", "new_string": "BETA changed"},
                )
            ]
        ),
        Text(FINAL),
    ]


@pytest.mark.parametrize("protocol", [1, 2])
async def test_claude_agent_acp(
    connect: Any, agents_bin: Path, workspace: Path, home: Path, protocol: int
) -> None:
    asked: list[PermissionQuery] = []
    with FakeModelServer(script([PROMPT], [claude_plan(workspace)], "anthropic")) as server:
        command, env = launch.claude(agents_bin, home, server)
        async with connect(
            "claude",
            workspace,
            command=command,
            env=env,
            protocol=protocol,
            ask=allow_once(asked),
            pm=get_plugin_manager(),
        ) as session:
            # One initialize carries v2's and v1's fields: it accepts it and answers
            # the version asked for, with that version's body.
            assert session.version == protocol
            assert session.agent_info["name"] == "@agentclientprotocol/claude-agent-acp"
            await session.set_mode("default")  # "Manual": it asks before every edit
            with anyio.fail_after(TURN_SECONDS):
                turn = await session.prompt(PROMPT)
            assert session.usage is not None
            assert session.usage.used > 0
        assert server.requests, "the agent never called the model"
    changes = check_the_turn(turn, workspace)
    assert len(asked) == 2  # the write and the edit
    asked_about = {q.tool_call.id for q in asked if q.tool_call}
    assert asked_about == {c.tool_call_id for c in changes}
    patch_of = {Path(c.paths[0]).name: c.diff_str for c in changes}
    assert patch_of["existing.txt"] == (
        f"--- {workspace}/existing.txt\n+++ {workspace}/existing.txt\n"
        "@@ -1,2 +1,2 @@\n alpha\n-beta\n+BETA changed\n"
    )


# --- codex-acp --------------------------------------------------------------------------

ADD_PATCH = "*** Begin Patch\n*** Add File: new.txt\n+brand new\n*** End Patch\n"
EDIT_PATCH = (
    "*** Begin Patch\n*** Update File: existing.txt\n@@\n alpha\n-beta\n+BETA changed\n"
    "*** End Patch\n"
)


def codex_plan() -> list[Step]:
    # Codex runs apply_patch when the model calls it through exec_command.
    return [
        ToolCalls([ToolCall("exec_command", {"cmd": f"apply_patch <<'EOF'\n{ADD_PATCH}EOF\n"})]),
        ToolCalls([ToolCall("exec_command", {"cmd": f"apply_patch <<'EOF'\n{EDIT_PATCH}EOF\n"})]),
        Text(FINAL),
    ]


@pytest.mark.parametrize("protocol", [2, 1])
async def test_codex_acp(
    connect: Any, agents_bin: Path, workspace: Path, home: Path, protocol: int
) -> None:
    asked: list[PermissionQuery] = []
    with FakeModelServer(script([PROMPT], [codex_plan()], "responses")) as server:
        command, env = launch.codex(agents_bin, home, server)
        async with connect(
            "codex",
            workspace,
            command=command,
            env=env,
            protocol=protocol,
            ask=allow_once(asked),
            new_session=False,
            pm=get_plugin_manager(),
        ) as session:
            assert session.version == 1  # it answers 1 to a request for 2, with a v1 body
            assert session.agent_info["name"] == "codex-acp"
            await session.authenticate("openai-api-key")
            await session.new_session()
            with anyio.fail_after(TURN_SECONDS):
                turn = await session.prompt(PROMPT)
        assert len(server.model_requests) >= 3
    check_the_turn(turn, workspace)
    assert len(asked) == 2  # approval_policy "untrusted": it asks before each patch


# --- Grok Build -------------------------------------------------------------------------


def grok_plan(workspace: Path) -> list[Step]:
    existing, created = str(workspace / "existing.txt"), str(workspace / "new.txt")
    return [
        ToolCalls([ToolCall("write", {"file_path": created, "content": NEW_TXT})]),
        ToolCalls(
            [
                ToolCall(
                    "search_replace",
                    {"file_path": existing, "old_string": "beta", "new_string": "BETA changed"},
                )
            ]
        ),
        Text(FINAL),
    ]


@pytest.mark.parametrize("protocol", [1, 2])
@pytest.mark.parametrize("provider", ["grok", None])
async def test_grok_build(
    connect: Any,
    agents_bin: Path,
    workspace: Path,
    home: Path,
    protocol: int,
    provider: str | None,
) -> None:
    asked: list[PermissionQuery] = []
    steps = script([PROMPT], [grok_plan(workspace)], "responses", launch.grok_side_call)
    with FakeModelServer(steps) as server:
        command, env = launch.grok(agents_bin, home, server)
        async with connect(
            provider,
            workspace,
            command=command,
            env=env,
            protocol=protocol,
            ask=allow_once(asked),
            pm=get_plugin_manager(),
        ) as session:
            assert session.version == 1  # it answers 1 to a request for 2, with a v1 body
            # It sends no agentInfo: without a provider named, its plugin knows it all the same.
            assert session.agent_info == {}
            assert session.provider.id == "grok"
            with anyio.fail_after(TURN_SECONDS):
                turn = await session.prompt(PROMPT)
        turn_calls = [r for r in server.model_requests if not launch.grok_side_call(r.body)]
        assert len(turn_calls) == 3  # the write, the edit, the last answer
    changes = check_the_turn(turn, workspace)
    assert len(asked) == 2  # it asks before each edit
    asked_about = {q.tool_call.id for q in asked if q.tool_call}
    assert asked_about == {c.tool_call_id for c in changes}
    patch_of = {Path(c.paths[0]).name: c.diff_str for c in changes}
    assert patch_of["existing.txt"] == (
        f"--- {workspace}/existing.txt\n+++ {workspace}/existing.txt\n"
        "@@ -1,2 +1,2 @@\n alpha\n-beta\n+BETA changed\n"
    )
    assert (
        patch_of["new.txt"]
        == f"--- /dev/null\n+++ {workspace}/new.txt\n@@ -0,0 +1,1 @@\n+brand new\n"
    )
