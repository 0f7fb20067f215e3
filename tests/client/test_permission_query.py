"""A permission question carries the real paths of the tool call and its true patch."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

import acp_adapters
from acp_adapters import PermissionQuery
from acp_adapters.transport import RpcError
from diff_helpers import apply_patch
from pattern_helpers import PATTERN_AGENT

pytestmark = pytest.mark.anyio


async def test_the_question_holds_the_true_patch_and_the_real_paths(workspace: Path) -> None:
    asked: list[PermissionQuery] = []

    async def ask(query: PermissionQuery) -> str | None:
        asked.append(query)
        return next(o["optionId"] for o in query.options if o["kind"] == "reject_once")

    # A diff without oldText for a file that exists: the question shows the modification
    # computed from the disk, not a creation.
    async with acp_adapters.connect(
        command=PATTERN_AGENT, cwd=workspace, policy="ask", ask=ask
    ) as session:
        await session.prompt("no-oldtext-existing")
    (query,) = asked
    real = os.path.realpath(workspace / "existing.txt")
    assert query.paths == (real,)
    assert query.patch is not None
    assert not query.patch.startswith("--- /dev/null")
    assert (query.additions, query.deletions) == (1, 1)
    (new,) = apply_patch(query.patch, {str(workspace / "existing.txt"): "alpha\nbeta\n"}).values()
    assert new == "alpha\nBETA changed\n"


SDK_AGENT = [sys.executable, str(Path(__file__).parent.parent / "agents" / "sdk_agent.py")]


async def test_the_question_of_a_two_file_edit_holds_both_files(workspace: Path) -> None:
    """A new file and a change of an existing one, asked together: the patch holds both."""
    asked: list[PermissionQuery] = []

    async def ask(query: PermissionQuery) -> str | None:
        asked.append(query)
        return next(o["optionId"] for o in query.options if o["kind"] == "allow_once")

    async with acp_adapters.connect(command=SDK_AGENT, cwd=workspace, ask=ask) as session:
        await session.prompt("patch")
    (query,) = [q for q in asked if q.action is None]
    assert query.patch is not None
    assert query.patch.count("+++ ") == 2, query.patch
    assert "--- /dev/null" in query.patch  # new.txt is a creation
    assert (query.additions, query.deletions) == (2, 1)


async def test_a_refused_command_is_not_taken_for_a_login_request(workspace: Path) -> None:
    """-32000 is also how refusals are answered: only one that says so asks for a login."""
    async with acp_adapters.connect(command=SDK_AGENT, cwd=workspace, policy="read-only") as s:
        # The agent's prompt fails with the client's refusal, as it is: not as a login
        # request (AuthenticationRequiredError is no RpcError).
        with pytest.raises(RpcError, match="read-only refuses commands") as raised:
            await s.prompt("shell")
    assert raised.value.code == -32000
