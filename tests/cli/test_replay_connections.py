"""Captures that hold several connections (a thread's export, one per run; a session whose
agent was started again) replay live as they replay offline; a recorded session that failed
before ``initialize`` was answered replays as the other failed ones do; a cut capture fails
at once."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

import acp_adapters
from acp_adapters.replay import connections, main, read_capture
from acp_adapters.transport import ConnectionClosed

from .conftest import Invoke, one_error_line

AGENT = Path(__file__).resolve().parents[1] / "agents" / "sessions_agent.py"


def _agent(*flags: str) -> str:
    return shlex.join([sys.executable, str(AGENT), *flags])


def _untimed(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in row.items() if k not in ("created_at", "updated_at")} for row in rows]


def _both_ways(cli: Invoke, capture: Path, *options: str) -> list[dict[str, Any]]:
    """The capture replayed live and offline, the same rows both ways (asserted); the rows."""
    live = cli("replay", *options, "--timeout", "30", "--format", "json", str(capture))
    assert live.exit_code == 0, live.output
    offline = cli("replay", "--offline", "--format", "json", str(capture))
    assert offline.exit_code == 0, offline.output
    rows: list[dict[str, Any]] = json.loads(live.stdout)
    assert _untimed(rows) == _untimed(json.loads(offline.stdout))
    return rows


def _exported(cli: Invoke, tmp_path: Path, env: dict[str, str], *prompts: str) -> Path:
    """A named session run once per prompt (a process each), then exported."""
    store, work = tmp_path / "store.db", tmp_path / "work"
    work.mkdir()
    for prompt in prompts:
        ran = cli(
            "run", "--command", _agent("--offer", "resume"), "--cwd", str(work),
            "--store", str(store), "-s", "work", prompt, env=env,
        )  # fmt: skip
        assert ran.exit_code == 0, ran.output
    exported = cli("sessions", "export", "work", "--store", str(store))
    assert exported.exit_code == 0, exported.output
    capture = tmp_path / "export.jsonl"
    capture.write_text(exported.stdout, encoding="utf-8")
    return capture


@pytest.mark.parametrize("match", ["exact", "methods"])
def test_an_export_of_several_runs_replays_live_as_offline(
    cli: Invoke, tmp_path: Path, match: str
) -> None:
    env = {"SESSIONS_AGENT_STATE": str(tmp_path / "state.json")}
    capture = _exported(cli, tmp_path, env, "one", "two", "three")
    assert len(connections(read_capture(capture).entries)) == 3
    rows = _both_ways(cli, capture, "--match", match)
    said = [(r["turn"], r["text"]) for r in rows if r["kind"] == "assistant_message"]
    assert said == [(1, "s-1: one"), (2, "s-1: two"), (3, "s-1: three")]


def test_an_export_where_the_agent_lost_the_session_replays_live(
    cli: Invoke, tmp_path: Path
) -> None:
    # No state kept: each run's agent refuses the resume (-32002), and a new session follows.
    capture = _exported(cli, tmp_path, {}, "one", "two")
    rows = _both_ways(cli, capture)
    assert [r["kind"] for r in rows].count("notice") == 1


def test_a_session_whose_agent_was_started_again_replays_live(cli: Invoke, tmp_path: Path) -> None:
    capture, work = tmp_path / "reconnect.jsonl", tmp_path / "work"
    work.mkdir()

    async def record() -> None:
        async with acp_adapters.connect(
            command=shlex.split(_agent("--offer", "resume")),
            cwd=work,
            env={"SESSIONS_AGENT_STATE": str(tmp_path / "state.json")},
            record=capture,
            reconnect=True,
        ) as session:
            await session.prompt("one")
            with pytest.raises(ConnectionClosed):
                await session.prompt("crash")  # it exits mid-turn (status 3)
            await session.prompt("two")  # started again, the session resumed

    anyio.run(record)
    assert len(connections(read_capture(capture).entries)) == 2
    rows = _both_ways(cli, capture)
    assert [r["text"] for r in rows if r["kind"] == "error"] == ["the agent exited (exit status 3)"]
    assert [r["text"] for r in rows if r["kind"] == "assistant_message"] == [
        "s-1: one",
        "dying",
        "s-1: two",
    ]


def _lines(capture: Path, *lines: dict[str, Any]) -> Path:
    capture.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return capture


INITIALIZE = {
    "dir": "client->agent",
    "t": 0.0,
    "msg": {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
}


def test_an_agent_that_died_before_initialize_replays_live_as_a_failed_recording(
    cli: Invoke, tmp_path: Path
) -> None:
    died = _lines(
        tmp_path / "died.jsonl",
        INITIALIZE,
        {"dir": "exit", "t": 0.2, "code": 1, "stderr": "node: not found\n"},
    )
    rows = _both_ways(cli, died, "--match", "methods")
    assert [r["text"] for r in rows] == ["the agent exited (exit status 1)"]
    live = cli("replay", "--match", "methods", str(died))
    assert live.exit_code == 0
    assert live.stderr.startswith("Note: the recorded session ended with an error: ")
    assert "the agent exited" in live.stderr


def test_a_cut_capture_fails_at_once_naming_the_cut(cli: Invoke, tmp_path: Path) -> None:
    record, work = tmp_path / "whole.jsonl", tmp_path / "work"
    work.mkdir()
    ran = cli(
        "run", "--command", _agent(), "--cwd", str(work), "--record", str(record), "hello"
    )  # fmt: skip
    assert ran.exit_code == 0, ran.output
    lines = record.read_text(encoding="utf-8").splitlines(keepends=True)
    # Cut in the middle of the agent's answer to the prompt (its writer killed there).
    (answer,) = [n for n, line in enumerate(lines) if '"stopReason"' in line]
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(lines[:answer]) + lines[answer][:30], encoding="utf-8")
    assert read_capture(cut).cut == answer + 1
    # Not after a wait for what the cut line held: the cut is known before the replay plays.
    live = cli("replay", "--timeout", "30", str(cut))
    assert live.exit_code == 1
    line = one_error_line(live)
    assert f"the capture is cut at line {answer + 1}" in line
    assert "no answer to session/prompt" in line
    assert "timed out" not in line


def test_a_capture_cut_after_its_end_still_replays(cli: Invoke, tmp_path: Path) -> None:
    record, work = tmp_path / "whole.jsonl", tmp_path / "work"
    work.mkdir()
    ran = cli("run", "--command", _agent(), "--cwd", str(work), "--record", str(record), "hi")
    assert ran.exit_code == 0, ran.output
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_text(record.read_text(encoding="utf-8") + '{"dir": "agent->', encoding="utf-8")
    live = cli("replay", str(damaged))
    assert live.exit_code == 0, live.output  # nothing waited for what the cut line held
    assert "not JSON, left out" in live.stderr


def test_the_replay_agent_plays_the_connection_it_is_told(tmp_path: Path) -> None:
    capture = _lines(tmp_path / "two.jsonl", INITIALIZE, {**INITIALIZE, "t": 1.0})
    assert [len(entries) for entries in connections(read_capture(capture).entries)] == [1, 1]
    status = tmp_path / "status.json"
    assert main(["--connection", "3", "--status", str(status), str(capture)]) == 2
    report = json.loads(status.read_text(encoding="utf-8"))
    assert report["status"] == "error"
    assert "the capture has 2 connections, not a connection 3" in report["report"]
    assert report["connection"] == 3
