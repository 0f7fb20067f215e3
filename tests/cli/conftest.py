"""Fixtures for the command line's tests: a CliRunner, the fake agent's command lines."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from acp_adapters.cli import main

ROOT = Path(__file__).resolve().parents[2]
FAKE_AGENT = ROOT / "tests" / "agents" / "fake_agent.py"
CAPTURES = ROOT / "tests" / "data" / "captures"
SYNTHETIC = ROOT / "tests" / "data" / "synthetic"

Invoke = Callable[..., Result]


def agent_command(scenario: str, *args: str) -> str:
    """``--command`` for the scripted fake agent, with absolute paths (it runs in the session's
    folder)."""
    return shlex.join([sys.executable, str(FAKE_AGENT), scenario, *args])


def _runner() -> CliRunner:
    try:
        return CliRunner(mix_stderr=False)  # type: ignore[call-arg]  # click 8.1
    except TypeError:
        return CliRunner()  # click 8.2 and later keep stderr apart by default


@pytest.fixture
def cli() -> Invoke:
    """Run ``acp-adapters ARGS...``; colours off unless ``color=True``; NO_COLOR unset."""
    runner = _runner()

    def invoke(
        *args: str, color: bool = False, env: dict[str, Any] | None = None, **kw: Any
    ) -> Result:
        environment = {"NO_COLOR": None, **(env or {})}
        result = runner.invoke(main, list(args), color=color, env=environment, **kw)
        # An error must end as an exit code, never as an exception out of the command.
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise result.exception
        return result

    return invoke


def one_error_line(result: Result) -> str:
    """The error a failed command printed: exactly one line, no traceback."""
    lines = result.stderr.splitlines()
    assert "Traceback" not in result.stderr
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: ")
    return lines[0]
