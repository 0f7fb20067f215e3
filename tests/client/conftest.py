"""Fixtures for the live client's tests: the scripted fake agent."""

from __future__ import annotations

import sys
from pathlib import Path

AGENT = Path(__file__).parent.parent / "agents" / "fake_agent.py"


def fake_agent(scenario: str, arg: str = "") -> list[str]:
    return [sys.executable, str(AGENT), scenario, *([arg] if arg else [])]
