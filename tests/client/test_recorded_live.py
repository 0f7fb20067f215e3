"""The suite's own check that live sessions and their recordings agree (``recorded_live``)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

import acp_adapters
import recorded_live
from acp_adapters.client.agent import TrafficEvent

pytestmark = pytest.mark.anyio

SDK_AGENT = [sys.executable, str(Path(__file__).parent.parent / "agents" / "sdk_agent.py")]


async def test_a_live_session_is_checked_against_its_recording(workspace: Path) -> None:
    before = len(recorded_live.checked)
    async with acp_adapters.connect(command=SDK_AGENT, cwd=workspace, policy="full-access") as s:
        await s.prompt("edit")
    assert len(recorded_live.checked) == before + 1
    assert (workspace / "existing.txt").read_text() != "alpha\nbeta\n"  # it did edit


async def test_a_recording_that_says_otherwise_fails_the_session(
    workspace: Path, tmp_path: Path
) -> None:
    record = tmp_path / "session.jsonl"

    async def run() -> None:
        async with acp_adapters.connect(
            command=SDK_AGENT, cwd=workspace, policy="full-access", record=record
        ) as session:
            await session.prompt("hello")
            # A message the live session never took in, written into its recording.
            update = {
                "sessionId": session.session_id,
                "update": {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": "not said"},
                },
            }
            line = {"jsonrpc": "2.0", "method": "session/update", "params": update}
            # Through the recorder (what it writes next must not overwrite it).
            session.agent.on_traffic.publish(TrafficEvent("in", line, time.time()))

    with pytest.raises(AssertionError, match="projects to"):
        await run()
