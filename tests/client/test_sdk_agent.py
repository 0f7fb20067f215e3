"""The session API against an agent built on the official Python SDK (agent-client-protocol)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from acp_adapters import FileChangeItem
from diff_helpers import apply_patch
from session_helpers import ask_forever, prompt_cancelled_when_asked

pytestmark = pytest.mark.anyio

SDK_AGENT = [sys.executable, str(Path(__file__).parent.parent / "agents" / "sdk_agent.py")]


async def test_the_sdk_agent_edits_creates_and_runs_a_terminal(
    connect: Any, workspace: Path
) -> None:
    old = (workspace / "existing.txt").read_text()
    async with connect(command=SDK_AGENT, cwd=workspace, policy="full-access") as session:
        assert session.version == 1  # the SDK speaks v1 and answers 1 to a request for 2
        assert session.agent_info["name"] == "sdk-agent"  # it got v1's clientCapabilities
        turn = await session.prompt("edit")
    assert turn.stop_reason == "end_turn"
    assert (workspace / "existing.txt").read_text() == "alpha\nBETA changed\n"
    assert (workspace / "created.txt").read_text() == "made by sdk\n"

    edit, create = [i for i in turn.items if isinstance(i, FileChangeItem)]
    assert edit.status == "completed"
    path = f"{workspace}/existing.txt"
    assert edit.diff_str is not None
    on_disk = (workspace / "existing.txt").read_text()
    assert apply_patch(edit.diff_str, {path: old}) == {path: on_disk}
    assert "@@ -1,2 +1,2 @@\n alpha\n-beta\n+BETA changed\n" in edit.diff_str
    assert create.operations == {f"{workspace}/created.txt": "add"}

    (command,) = [i for i in turn.items if i.kind == "command_execution"]
    assert command.status == "failed"
    assert command.output == "from the shell"  # type: ignore[union-attr]
    assert [i.option_kind for i in turn.items if i.kind == "approval_request"] == ["allow_once"]
    assert turn.items[-1].text == "done"  # type: ignore[union-attr]


async def test_read_only_denies_the_sdk_agents_edit(connect: Any, workspace: Path) -> None:
    async with connect(command=SDK_AGENT, cwd=workspace, policy="read-only") as session:
        turn = await session.prompt("edit")
    assert (workspace / "existing.txt").read_text() == "alpha\nbeta\n"
    assert not (workspace / "created.txt").exists()
    (change,) = [i for i in turn.items if isinstance(i, FileChangeItem)]
    assert change.status == "failed"
    assert [i.option_kind for i in turn.items if i.kind == "approval_request"] == ["reject_once"]


async def test_cancel_reaches_the_sdk_agent_through_its_permission_request(
    connect: Any, workspace: Path
) -> None:
    asked, ask = ask_forever()
    async with connect(command=SDK_AGENT, cwd=workspace, ask=ask) as session:
        turn = await prompt_cancelled_when_asked(session, "wait", asked)
        assert turn.stop_reason == "cancelled"
        (approval,) = [i for i in turn.items if i.kind == "approval_request"]
        assert approval.status == "cancelled"
        again = await session.prompt("hello")
    assert again.items[-1].text == "you said: hello"  # type: ignore[union-attr]
