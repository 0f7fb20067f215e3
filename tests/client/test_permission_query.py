"""A permission question carries the real paths of the tool call and its true patch."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import acp_adapters
from acp_adapters import PermissionQuery
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
