"""The command line against real agents (``tox -e peers``): run, record, replay.

``acp-adapters run --record`` drives a real agent (offline, against the fake
model server) and writes a capture; ``acp-adapters replay`` of that capture,
live through the replay agent with every message checked (``--match exact``)
and offline, prints the same timeline the run printed.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from peers import launch
from peers.fake_model_server import FakeModelServer
from peers.launch import script

from .test_real_agents import NEW, OLD, PROMPT, claude_plan, codex_plan, grok_plan

pytestmark = pytest.mark.peers

COMMAND = Path(sys.executable).with_name("acp-adapters")
Launch = Callable[..., tuple[list[str], dict[str, str]]]


def cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> Any:
    """Run the installed command; its JSON output, or the failure with its stderr."""
    done = subprocess.run(
        [str(COMMAND), *args],
        env={**os.environ, **(env or {})},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


#: When an item was made: the session's clock in a run, the capture's in a replay.
CLOCK = ("created_at", "updated_at")


def comparable(rows: list[dict[str, Any]], workspace: Path | None = None) -> list[dict[str, Any]]:
    """The rows without their times, the workspace written ``<workspace>`` as a replay writes it."""
    text = json.dumps([{k: v for k, v in row.items() if k not in CLOCK} for row in rows])
    for folder in {str(workspace), os.path.realpath(workspace)} if workspace else set():
        text = text.replace(folder, "<workspace>")
    return list(json.loads(text))


@pytest.mark.parametrize(
    ("provider", "agent", "plan", "api"),
    [
        ("claude", launch.claude, claude_plan, "anthropic"),
        ("codex", launch.codex, lambda _workspace: codex_plan(), "responses"),
        ("grok", launch.grok, grok_plan, "responses"),
    ],
)
def test_run_records_a_capture_that_replays_to_the_same_timeline(
    provider: str,
    agent: Launch,
    plan: Callable[[Path], Any],
    api: str,
    agents_bin: Path,
    home: Path,
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    for name, text in OLD.items():
        (workspace / name).write_text(text)
    capture = tmp_path / "session.jsonl"
    side_call = launch.grok_side_call if provider == "grok" else None
    with FakeModelServer(script([PROMPT], [plan(workspace)], api, side_call)) as server:
        command, env = agent(agents_bin, home, server)
        ran = cli(
            "run",
            "--provider",
            provider,
            "--command",
            shlex.join(command),
            "--cwd",
            str(workspace),
            "--approve",
            "workspace-write",
            "--record",
            str(capture),
            "--format",
            "json",
            PROMPT,
            env=env,
        )
    assert {p.name: p.read_text() for p in workspace.iterdir()} == NEW
    changes = [row for row in ran if row["kind"] == "file_change"]
    assert sorted(Path(p).name for row in changes for p in row["paths"]) == sorted(NEW)
    assert all(row["diff_str"] and row["status"] == "completed" for row in changes)

    recorded = capture.read_text(encoding="utf-8")
    assert str(workspace) not in recorded
    assert "<workspace>" in recorded
    expected = comparable(ran, workspace)
    offline = cli("replay", "--offline", "--format", "json", str(capture))
    assert comparable(offline) == expected
    # The replay runs elsewhere, with none of the agent's environment: the capture is all it needs.
    live = cli("replay", "--format", "json", str(capture), cwd=tmp_path)
    assert comparable(live) == expected
