"""Traffic patterns of real agents, from their recordings alone: each one's true patch.

``tests/peers/record_scenarios.py --only patterns`` records what the scripted agent
(``tests/agents/pattern_agent.py``) plays into ``data/recorded/patterns-<pattern>.jsonl``,
with the workspace before and after beside it; the live session's checks
(``client/test_patterns.py``) must hold of ``project_capture`` of the recording.
"""

from __future__ import annotations

import pytest

from acp_adapters import project_capture
from pattern_helpers import (
    AGENT_SENDS,
    PATTERNS,
    WORKSPACE,
    agent_sends,
    check_pattern,
    recorded_files,
    recording,
)

RECORD = "python tests/peers/record_scenarios.py --agents /nonexistent --only patterns"


@pytest.mark.parametrize("pattern", list(PATTERNS))
def test_a_pattern_recording_gives_its_true_patch(pattern: str) -> None:
    capture = recording(pattern)
    if not capture.exists():
        pytest.fail(f"{capture.name} is not recorded: {RECORD}")
    assert agent_sends(capture) == AGENT_SENDS[pattern]  # the agent played the pattern
    before, after = recorded_files(capture)
    check_pattern(pattern, project_capture(capture).items, WORKSPACE, before, after)
