"""``--speed``: the replay agent sends the agent's lines at the recorded pace."""

from __future__ import annotations

import os
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from acp_adapters.capture.reader import Entry, read_capture
from acp_adapters.replay import agent as replay_agent
from acp_adapters.replay._pipes import Input, Output

from .conftest import replay, status_of, write_entries

pytestmark = pytest.mark.anyio

SESSION = "paced-session"
#: Seconds after the prompt at which the recorded agent sent each update.
GAPS = (0.1, 0.4, 0.7)


def paced_capture(path: Path) -> Path:
    def line(direction: str, t: float, message: dict[str, Any]) -> dict[str, Any]:
        return {"dir": direction, "t": t, "msg": {"jsonrpc": "2.0", **message}}

    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}}
    return write_entries(
        path,
        [
            line("client->agent", 1.0, {"id": 0, "method": "initialize", "params": {}}),
            line("agent->client", 1.0, {"id": 0, "result": {"protocolVersion": 1}}),
            line("client->agent", 1.1, {"id": 1, "method": "session/new", "params": {}}),
            line("agent->client", 1.1, {"id": 1, "result": {"sessionId": SESSION}}),
            line("client->agent", 2.0, {"id": 2, "method": "session/prompt", "params": {}}),
            *(
                line(
                    "agent->client",
                    2.0 + gap,
                    {"method": "session/update", "params": {"sessionId": SESSION, "update": chunk}},
                )
                for gap in GAPS
            ),
            line("agent->client", 2.8, {"id": 2, "result": {"stopReason": "end_turn"}}),
        ],
    )


async def _arrivals(connect: Any, command: list[str], cwd: Path) -> list[float]:
    """When each update of the turn reached the client (seconds after the prompt was sent)."""
    arrivals: list[float] = []
    async with connect(command=command, cwd=cwd) as session:

        def seen(event: Any) -> None:
            if isinstance(event.payload, dict) and event.payload.get("method") == "session/update":
                arrivals.append(time.monotonic() - start)

        session.agent.on_traffic.subscribe(seen)
        start = time.monotonic()
        turn = await session.prompt("go")
    assert turn.stop_reason == "end_turn"
    assert len(arrivals) == len(GAPS)
    return arrivals


@pytest.mark.parametrize("speed", [1.0, 2.0])
async def test_lines_go_out_at_the_recorded_pace(
    connect: Any, tmp_path: Path, replay_workspace: Path, speed: float
) -> None:
    capture = paced_capture(tmp_path / "paced.jsonl")
    status = tmp_path / "status.json"
    command = replay(capture, "--match", "methods", "--speed", str(speed), "--status", str(status))
    arrivals = await _arrivals(connect, command, replay_workspace)
    assert status_of(status)["status"] == "ok"
    # No sooner than recorded (a lower bound only: a busy machine is late, never early).
    for got, gap in zip(arrivals, GAPS, strict=True):
        assert got >= gap / speed - 0.01
    assert arrivals[-1] - arrivals[0] >= (GAPS[-1] - GAPS[0]) / speed - 0.01


def test_a_gap_is_at_most_max_gap_and_a_late_replay_does_not_hurry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    capture = read_capture(paced_capture(tmp_path / "paced.jsonl"))
    assert [entry.at for entry in capture.entries][:2] == [1.0, 1.0]
    read_end, write_end = os.pipe()
    out_read, out_write = os.pipe()
    agent = replay_agent.ReplayAgent(
        capture, live_in=Input(read_end), live_out=Output(out_write), speed=1.0
    )
    now = [100.0]
    slept: list[float] = []
    clock = SimpleNamespace(monotonic=lambda: now[0], sleep=slept.append)
    monkeypatch.setattr(replay_agent, "time", clock)  # the replay agent's clock alone

    def line(at: float) -> Entry:
        return Entry(1, "agent->client", message={}, at=at)

    agent._pace(line(0.0))
    agent._pace(line(10**9))  # a capture's times are not trusted
    assert slept == [replay_agent.MAX_GAP]
    now[0] = 500.0  # far behind the recorded pace: no hurrying, no waiting
    agent._pace(line(10**9 + 1))
    assert slept == [replay_agent.MAX_GAP]
    agent._pace(line(10**9 + 3))  # then the pace again, from where it is
    assert slept == [replay_agent.MAX_GAP, 2.0]
    for fd in (write_end, out_read):
        os.close(fd)


def test_speed_is_checked_on_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    for bad in ("0", "-1", "nan", "inf", "fast", "1001"):
        with pytest.raises(SystemExit) as exited:
            replay_agent.main(["--speed", bad, "capture.jsonl"])
        assert exited.value.code == 2
        assert "--speed" in capsys.readouterr().err


def test_an_untimed_line_is_sent_at_once(tmp_path: Path) -> None:
    capture = tmp_path / "untimed.jsonl"
    capture.write_text('{"dir": "agent->client", "t": "soon", "msg": {"jsonrpc": "2.0"}}\n')
    (entry,) = read_capture(capture).entries
    assert entry.at is None
