"""Broken captures end in a clear report, never in a hang."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_adapters.replay import EXIT_MISMATCH, EXIT_TIMEOUT, EXIT_USAGE, read_capture
from acp_adapters.transport import ConnectionClosed, RpcError

from .conftest import entries, fake_agent, replay, status_of, write_entries

pytestmark = pytest.mark.anyio


@pytest.fixture
async def basic_capture(connect: Any, workspace: Path, tmp_path: Path) -> Path:
    """initialize, session/new, one prompt ("hello") and their answers: 7 lines (no
    checkpoints: these captures are about their messages)."""
    capture = tmp_path / "basic.jsonl"
    async with connect(
        command=fake_agent("basic"), cwd=workspace, record=capture, checkpoints=False
    ) as session:
        await session.prompt("hello")
    assert len(entries(capture)) == 7
    return capture


def test_unreadable_lines_are_left_out_and_named() -> None:
    capture = read_capture(
        [
            '{"dir": "client->agent", "t": 0, "msg": {"jsonrpc": "2.0", "id": 1, "method": "a"}}',
            "not json at all",
            "",
            "[1, 2]",
            '{"dir": "sideways", "msg": {}}',
            '{"dir": "client->agent", "msg": {"not": "a message"}}',
            '{"dir": "agent->client(raw)"}',
            '{"dir": "exit", "code": "three"}',
            '{"dir": "agent->client", "t": 1, "msg": {"jsonrpc": "2.0", "id": 1, "res',
            '{"dir": "disk", "toolCallId": "e", "path": "<workspace>/a", "phase": "before"}',
            '{"dir": "disk", "toolCallId": "e", "path": "<workspace>/a", "phase": "during"}',
            '{"dir": "disk", "toolCallId": 7, "path": "<workspace>/a", "phase": "after"}',
            '{"dir": "disk", "toolCallId": "e", "path": "<workspace>/a", "phase": "after",'
            ' "content": "x"}',
        ]
    )
    assert [entry.line for entry in capture.entries] == [1, 8]
    assert capture.entries[1].exit_code is None
    # Disk reads are not messages: kept apart (a missing content is no file).
    assert [(read.line, read.phase, read.content) for read in capture.disk] == [
        (10, "before", None),
        (13, "after", "x"),
    ]
    assert capture.warnings == [
        "line 2: not JSON, left out",
        "line 4: not a capture entry (a JSON object), left out",
        "line 5: unknown direction 'sideways', left out",
        "line 6: no JSON-RPC message in it, left out",
        "line 7: no raw text in it, left out",
        "line 9: not JSON, left out",
        "line 11: not a disk entry, left out",
        "line 12: not a disk entry, left out",
    ]


async def test_invalid_lines_are_skipped_with_warnings(
    connect: Any, basic_capture: Path, replay_workspace: Path, tmp_path: Path
) -> None:
    text = basic_capture.read_text().splitlines(keepends=True)
    text[2:2] = ["this is not JSON\n", '{"dir": "nowhere"}\n']
    basic_capture.write_text("".join(text))
    status = tmp_path / "status.json"
    async with connect(
        command=replay(basic_capture, "--status", str(status)), cwd=replay_workspace
    ) as session:
        turn = await session.prompt("hello")
    assert turn.stop_reason == "end_turn"
    report = status_of(status)
    assert report["status"] == "ok"
    assert report["warnings"] == [
        "line 3: not JSON, left out",
        "line 4: unknown direction 'nowhere', left out",
    ]
    assert "line 3: not JSON" in session.stderr


async def test_a_truncated_last_line_fails_the_open_prompt_at_once(
    connect: Any, basic_capture: Path, replay_workspace: Path, tmp_path: Path
) -> None:
    text = basic_capture.read_text()
    basic_capture.write_text(text[: text.rstrip("\n").rfind("\n") + 30])  # the answer, cut
    assert read_capture(basic_capture).cut == 7
    status = tmp_path / "status.json"
    async with connect(
        # A timeout it does not wait for: what the cut line held (the answer) never comes.
        command=replay(basic_capture, "--timeout", "60", "--status", str(status)),
        cwd=replay_workspace,
    ) as session:
        with pytest.raises(RpcError) as info:
            await session.prompt("hello")
    assert info.value.message == (
        "replay error: the capture is cut at line 7 (its last line is not whole JSON): it has "
        "no answer to session/prompt (capture line 5)"
    )
    report = status_of(status)
    assert (report["status"], report["exit_code"], report["line"]) == ("error", EXIT_USAGE, 7)
    assert report["warnings"] == ["line 7: not JSON, left out"]


def test_only_a_last_line_that_is_not_json_is_a_cut() -> None:
    line = '{"dir": "client->agent", "t": 0, "msg": {"jsonrpc": "2.0", "id": 1, "method": "a"}}'
    assert read_capture([line, "not json", line]).cut is None
    assert read_capture([line, line]).cut is None
    assert read_capture([line, '{"dir": "agent->']).cut == 2


async def test_a_client_method_the_client_never_sends_times_out(
    connect: Any, basic_capture: Path, replay_workspace: Path, tmp_path: Path
) -> None:
    lines = entries(basic_capture)
    unknown = {"jsonrpc": "2.0", "id": 99, "method": "vendor/frobnicate", "params": {}}
    lines.insert(4, {"dir": "client->agent", "t": 0, "msg": unknown})
    write_entries(basic_capture, lines)
    status = tmp_path / "status.json"
    async with connect(
        command=replay(basic_capture, "--timeout", "0.5", "--status", str(status)),
        cwd=replay_workspace,
    ) as session:
        with anyio.fail_after(5), pytest.raises(RpcError, match="vendor/frobnicate"):
            await session.prompt("hello")
    # The prompt comes in the same run of client lines: taken in any order.
    assert status_of(status)["report"] == (
        "timed out after 0.5 s waiting for vendor/frobnicate (capture line 5)"
    )
    assert status_of(status)["exit_code"] == EXIT_TIMEOUT


async def test_a_client_method_in_place_of_another_is_a_mismatch(
    connect: Any, basic_capture: Path, replay_workspace: Path, tmp_path: Path
) -> None:
    lines = entries(basic_capture)
    lines[4]["msg"]["method"] = "vendor/frobnicate"  # in place of the prompt
    write_entries(basic_capture, lines)
    status = tmp_path / "status.json"
    async with connect(
        command=replay(basic_capture, "--status", str(status)), cwd=replay_workspace
    ) as session:
        with anyio.fail_after(5), pytest.raises(RpcError) as info:
            await session.prompt("hello")
    expected = (
        "the client sent session/prompt, but the capture waits for vendor/frobnicate "
        "(capture line 5)"
    )
    assert info.value.message == f"replay mismatch: {expected}"
    assert status_of(status)["report"] == expected
    assert status_of(status)["exit_code"] == EXIT_MISMATCH


@pytest.mark.parametrize(("match", "outcome"), [("exact", "mismatch"), ("methods", "ok")])
async def test_an_agent_request_of_an_unknown_method(
    connect: Any,
    basic_capture: Path,
    replay_workspace: Path,
    tmp_path: Path,
    match: str,
    outcome: str,
) -> None:
    """The live client refuses a method it does not know; the recording had an answer."""
    lines = entries(basic_capture)
    asked = {"jsonrpc": "2.0", "id": 7, "method": "vendor/unknown", "params": {}}
    answered = {"jsonrpc": "2.0", "id": 7, "result": {}}
    lines[5:5] = [{"dir": "agent->client", "msg": asked}, {"dir": "client->agent", "msg": answered}]
    write_entries(basic_capture, lines)
    status = tmp_path / "status.json"
    async with connect(
        command=replay(basic_capture, "--match", match, "--status", str(status)),
        cwd=replay_workspace,
    ) as session:
        if outcome == "ok":
            await session.prompt("hello")
        else:
            with pytest.raises(RpcError, match=r"answer to vendor/unknown \(capture line 7\)"):
                await session.prompt("hello")
    assert status_of(status)["status"] == outcome


async def test_out_of_order_ids(
    connect: Any, basic_capture: Path, replay_workspace: Path, tmp_path: Path
) -> None:
    """An answer before its request waits for it; an answer to nothing goes out as it is."""
    lines = entries(basic_capture)
    new_request, new_answer = lines[2], lines[3]
    assert new_request["msg"]["method"] == "session/new"
    lines[2:4] = [new_answer, new_request]
    stray = {"jsonrpc": "2.0", "id": 999, "result": {"stopReason": "end_turn"}}
    lines.insert(5, {"dir": "agent->client", "msg": stray})
    write_entries(basic_capture, lines)
    status = tmp_path / "status.json"
    async with connect(
        command=replay(basic_capture, "--status", str(status)), cwd=replay_workspace
    ) as session:
        turn = await session.prompt("hello")
        assert turn.items[-1].text == "you said: hello"
    assert status_of(status)["status"] == "ok"
    assert [p.kind for p in session.problems] == ["unknown_id"]


async def test_a_capture_of_nothing_but_garbage(
    connect: Any, replay_workspace: Path, tmp_path: Path
) -> None:
    """Played at once: the client's requests come after its end, and are refused."""
    capture = tmp_path / "garbage.jsonl"
    capture.write_text("garbage\n{}\n")
    status = tmp_path / "status.json"
    with (
        anyio.fail_after(5),
        pytest.raises(RpcError, match="the capture has ended: no answer to initialize"),
    ):
        async with connect(command=replay(capture, "--status", str(status)), cwd=replay_workspace):
            pass
    report = status_of(status)
    assert report["status"] == "ok"
    assert report["warnings"] == [
        "line 1: not JSON, left out",
        "line 2: unknown direction None, left out",
        "after the capture's end the client sent initialize",
    ]


def test_a_capture_that_cannot_be_read(tmp_path: Path) -> None:
    status = tmp_path / "status.json"
    done = subprocess.run(
        [*replay(tmp_path / "missing.jsonl", "--status", str(status))],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == EXIT_USAGE
    assert "cannot read capture" in done.stderr
    report = json.loads(status.read_text())
    assert (report["status"], report["exit_code"]) == ("error", EXIT_USAGE)


def test_a_bad_command_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "acp_adapters.replay", "--timeout", "-1", "x.jsonl"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == EXIT_USAGE
    assert "more than 0 seconds" in done.stderr


def test_a_timeout_too_long_for_the_clocks_is_a_usage_error() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "acp_adapters.replay", "--timeout", "1e10", "x.jsonl"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == EXIT_USAGE
    assert "at most 86400" in done.stderr


def test_a_line_nested_too_deeply_is_left_out_and_named() -> None:
    deep = '{"dir": "agent->client", "t": 0, "msg": ' + "[" * 50_000 + "]" * 50_000 + "}"
    capture = read_capture(
        [
            '{"dir": "client->agent", "t": 0, "msg": {"jsonrpc": "2.0", "id": 1, "method": "a"}}',
            deep,
        ]
    )
    assert [entry.line for entry in capture.entries] == [1]
    assert capture.warnings == ["line 2: not JSON, left out"]


@pytest.mark.parametrize("signal_number", [19, 20])  # SIGSTOP, SIGTSTP: they stop, not end
async def test_an_exit_line_with_a_signal_that_stops_ends_the_agent_anyway(
    connect: Any, basic_capture: Path, replay_workspace: Path, signal_number: int
) -> None:
    lines = entries(basic_capture)
    prompt = next(
        i for i, line in enumerate(lines) if line["msg"].get("method") == "session/prompt"
    )
    lines.insert(prompt + 1, {"dir": "exit", "code": -signal_number, "stderr": "stopped\n"})
    write_entries(basic_capture, lines)
    with anyio.fail_after(20):
        async with connect(command=replay(basic_capture), cwd=replay_workspace) as session:
            with pytest.raises(ConnectionClosed) as info:
                await session.prompt("hello")
    assert info.value.exit_status == 128 + signal_number


async def test_a_lone_surrogate_in_a_capture_is_played(
    connect: Any, basic_capture: Path, replay_workspace: Path
) -> None:
    lines = entries(basic_capture)
    for line in lines:
        update = line["msg"].get("params", {}).get("update", {})
        if update.get("sessionUpdate") == "agent_message_chunk":
            update["content"]["text"] = "half a pair: \ud800"
    write_entries(basic_capture, lines)
    async with connect(command=replay(basic_capture), cwd=replay_workspace) as session:
        turn = await session.prompt("hello")
    assert turn.items[-1].text == "half a pair: \ud800"  # type: ignore[union-attr]


def test_the_replay_reads_a_long_line_of_the_client_in_one_pass() -> None:
    """The client's answer to an ``fs/read_text_file`` may carry a 32 MiB file: the replay
    agent's input is cut as the live connection cuts lines, each chunk looked at once (it
    was split again whole at every 64 KiB read: 12 s for 48 MiB)."""
    import os
    import threading
    import time

    from acp_adapters.replay._pipes import Input, NotJson

    content = "x" * (48 << 20)
    answer = {"jsonrpc": "2.0", "id": 1, "result": {"content": content}}
    too_long = b"y" * (51 << 20)
    read, write = os.pipe()

    def client() -> None:
        with os.fdopen(write, "wb") as pipe:
            pipe.write((json.dumps(answer) + "\n").encode() + too_long + b"\n{}\n")

    started = time.monotonic()
    threading.Thread(target=client, daemon=True).start()
    stdin = Input(read)
    assert stdin.get(started + 60) == answer
    assert isinstance(stdin.get(started + 60), NotJson)  # longer than the live limit
    assert stdin.get(started + 60) == {}
    assert time.monotonic() - started < 5
    os.close(read)
