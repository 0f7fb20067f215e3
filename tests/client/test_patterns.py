"""Traffic patterns of real agents, live: each pattern's true patch, and its recording's.

The scripted agent on the official Python SDK (``agents/pattern_agent.py``) plays
one pattern a prompt (``pattern_helpers.PATTERNS``). Each session is recorded; the
items the live session gave must come again from ``project_capture`` of its recording.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import acp_adapters
from pattern_helpers import (
    AGENT_SENDS,
    PATTERN_AGENT,
    PATTERNS,
    agent_sends,
    check_pattern,
    portable,
    workspace_files,
)

pytestmark = pytest.mark.anyio

KINDS = ("file_change", "command_execution")


@pytest.mark.parametrize("pattern", list(PATTERNS))
async def test_a_pattern_gives_its_true_patch_live_and_from_its_recording(
    connect: Any, workspace: Path, pattern: str
) -> None:
    capture = workspace.parent / "capture.jsonl"
    before = workspace_files(workspace)
    options = PATTERNS[pattern].connect_options()
    async with connect(command=PATTERN_AGENT, cwd=workspace, record=capture, **options) as session:
        assert session.agent_info["name"] == "pattern-agent"
        turn = await session.prompt(pattern)
    assert turn.stop_reason == "end_turn"
    assert agent_sends(capture) == AGENT_SENDS[pattern]  # the agent plays the pattern

    root = str(workspace)
    check_pattern(pattern, turn.items, root, before, workspace_files(workspace))

    live = [portable(i, root) for i in turn.items if i.kind in KINDS]
    recorded = acp_adapters.project_capture(capture)
    assert [portable(i, root) for i in recorded.items if i.kind in KINDS] == live
