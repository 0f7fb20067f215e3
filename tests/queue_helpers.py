"""What the tests of threads driven from a queue share (owners, guests, workers, the fleet):
the scripted agent (``tests/agents/queue_agent.py``), its log of the turns it ran, and the
fixtures that give each test a store and a log of its own."""

from __future__ import annotations

import itertools
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

AGENT = Path(__file__).parent / "agents" / "queue_agent.py"
COMMAND = [sys.executable, str(AGENT)]


@pytest.fixture(params=["sqlite", "postgres"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A store: a new SQLite file, or the test session's PostgreSQL database (shared: each
    test names its own threads)."""
    if request.param == "sqlite":
        return str(tmp_path / "store.db")
    return str(request.getfixturevalue("postgres_url"))


@pytest.fixture
def log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The file the scripted agents of the test log their turns to."""
    path = tmp_path / "agent-log.jsonl"
    monkeypatch.setenv("QUEUE_AGENT_LOG", str(path))
    return path


def runs(log: Path) -> list[dict[str, Any]]:
    """The agents' log: ``{"event": "start" | "end", "pid", "cwd", "prompt", "t"}`` each."""
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line]


def started(entries: list[dict[str, Any]]) -> Counter[str]:
    """How many times each prompt's turn started."""
    return Counter(entry["prompt"] for entry in entries if entry["event"] == "start")


def overlaps(entries: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """The turns of one folder (one thread) that two agents ran at once: a turn's span is
    from its start to its end, or (an agent killed mid-turn) to its agent's last line."""
    last_seen: dict[int, float] = {}
    for entry in entries:
        last_seen[entry["pid"]] = max(last_seen.get(entry["pid"], 0.0), entry["t"])
    spans: dict[str, list[tuple[float, float, int, str]]] = {}
    open_turns: dict[tuple[int, str], tuple[float, str]] = {}
    for entry in entries:
        key = (entry["pid"], entry["prompt"])
        if entry["event"] == "start":
            open_turns[key] = (entry["t"], entry["cwd"])
        else:
            start, folder = open_turns.pop(key)
            spans.setdefault(folder, []).append((start, entry["t"], entry["pid"], entry["prompt"]))
    for (pid, prompt), (start, folder) in open_turns.items():
        spans.setdefault(folder, []).append((start, last_seen[pid], pid, prompt))
    found: list[tuple[str, str]] = []
    for turns in spans.values():
        turns.sort()
        for first, second in itertools.pairwise(turns):
            if second[0] < first[1] and second[2] != first[2]:
                found.append((first[3], second[3]))
    return found
