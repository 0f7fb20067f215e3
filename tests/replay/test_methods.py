"""Methods mode: the captures of other clients, replayed live to their offline timelines."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from acp_adapters import ProviderRegistry, get_plugin_manager, project_capture
from acp_adapters.replay import recorded_answers, seed_workspace
from contract.scenarios import SCENARIOS, Scenario

from .conftest import (
    comparable,
    drive,
    entries,
    initialize_refused,
    play,
    replay,
    status_of,
    write_entries,
)

pytestmark = pytest.mark.anyio

PM = get_plugin_manager()
LOADED = [s for s in SCENARIOS if s.provider in ProviderRegistry.collect(PM)]
CAPTURES = Path(__file__).parent.parent / "data" / "captures"


@pytest.mark.parametrize("scenario", LOADED, ids=lambda s: s.name)
async def test_a_capture_replays_live_to_its_offline_timeline(
    connect: Any, scenario: Scenario, replay_workspace: Path, tmp_path: Path
) -> None:
    """The main acceptance test: every capture, through the live client, against the replay."""
    status = tmp_path / "status.json"
    live = await play(connect, scenario, replay_workspace, status, match="methods", pm=PM)
    if live is None:
        # Only an agent that refused initialize leaves the client without a session (and
        # so without a timeline): it has nothing to show either way.
        assert initialize_refused(scenario.path)
        assert status_of(status)["status"] == "mismatch"
        assert "the client closed its input" in status_of(status)["report"]
        live = []
    else:
        assert status_of(status)["status"] == "ok", status_of(status)
    offline = project_capture(scenario.path, provider=scenario.provider, pm=PM)
    assert live == comparable(offline, Path("<workspace>"))


async def test_a_client_that_goes_ahead_skips_the_capture_forward(
    connect: Any, replay_workspace: Path, tmp_path: Path
) -> None:
    """codex-acp's capture authenticates first; a client that does not is skipped past it."""
    capture = CAPTURES / "codex-acp-fakellm-tools-v1.jsonl"
    seed_workspace(capture, replay_workspace)
    (replay_workspace / "existing.txt").write_text("alpha\nbeta\n")
    status = tmp_path / "status.json"
    async with connect(
        command=replay(capture, "--match", "methods", "--status", str(status)),
        cwd=replay_workspace,
        disk_patches=False,
        policy="ask",
        ask=recorded_answers(capture),
    ) as session:
        turn = await session.prompt("add new.txt")
        assert turn.stop_reason == "end_turn"
        assert [i.kind for i in turn.items if i.kind == "file_change"] == ["file_change"]
        await session.prompt("edit existing.txt")
        await session.prompt("run a command")
    assert (replay_workspace / "existing.txt").read_text() == "alpha\nbeta\n"  # codex edits itself
    report = status_of(status)
    assert report["status"] == "ok"
    (skip, *others) = report["warnings"]
    assert skip == "the client sent session/new (capture line 5): skipped authenticate (line 3)"
    assert others == []


async def test_a_request_the_capture_lacks_gets_an_empty_answer_and_a_warning(
    connect: Any, replay_workspace: Path, tmp_path: Path
) -> None:
    capture = CAPTURES / "sdk-echo_agent-v2.jsonl"
    status = tmp_path / "status.json"
    async with connect(
        command=replay(capture, "--match", "methods", "--status", str(status)),
        cwd=replay_workspace,
    ) as session:
        await session.set_mode("fast")  # the capture never switches modes
        turn = await session.prompt("anything")
        assert turn.items[-1].text == "hello from probe"
        assert "session/set_mode" in session.stderr
    report = status_of(status)
    assert report["status"] == "ok"
    (warning,) = report["warnings"]
    assert warning.startswith("the client sent session/set_mode, which the capture does not have")
    assert "answered {}" in warning


async def test_answers_are_not_checked_in_methods_mode(
    connect: Any, replay_workspace: Path, tmp_path: Path
) -> None:
    """The live client refuses what the recorded one allowed: the recorded agent goes on."""
    capture = CAPTURES / "sdk-scripted-edit-agent-v1.jsonl"
    status = tmp_path / "status.json"
    async with connect(
        command=replay(capture, "--match", "methods", "--status", str(status)),
        cwd=replay_workspace,  # empty: the agent's read fails
        policy="read-only",  # its permission requests and writes are refused
        disk_patches=False,
        new_session=False,
    ) as session:
        await drive(session, capture, replay_workspace)
    assert status_of(status)["status"] == "ok"
    assert not (replay_workspace / "existing.txt").exists()
    assert not (replay_workspace / "new.txt").exists()
    refused = [i for i in session.timeline if i.kind == "approval_request"]
    assert [i.option_kind for i in refused] == ["reject_once"] * 3


async def test_a_recorded_batch_and_a_notification_the_capture_lacks(
    connect: Any, replay_workspace: Path, tmp_path: Path
) -> None:
    """A batch goes out as one line, its answers with the live ids; a stray notification warns."""
    lines = entries(CAPTURES / "sdk-echo_agent-v2.jsonl")
    update, answer = lines[5]["msg"], lines[6]["msg"]
    rebuilt = [*lines[:5], {"dir": "agent->client", "t": 0, "msg": [update, answer]}]
    capture = write_entries(tmp_path / "batch.jsonl", rebuilt)
    status = tmp_path / "status.json"
    async with connect(
        command=replay(capture, "--match", "methods", "--status", str(status)),
        cwd=replay_workspace,
        new_session=False,
    ) as session:
        await session.connection.notify("session/cancel", {"sessionId": "none yet"})
        await session.new_session()
        turn = await session.prompt("anything")
    assert turn.stop_reason == "end_turn"
    assert turn.items[-1].text == "hello from probe"
    report = status_of(status)
    assert report["status"] == "ok", report
    (warning,) = report["warnings"]
    assert "the notification session/cancel" in warning


async def test_the_terminal_ids_the_client_gives_replace_the_recorded_ones(
    connect: Any, replay_workspace: Path, tmp_path: Path
) -> None:
    """fast-agent's terminal was term-a351db55; this client's is another: the agent uses it."""
    capture = CAPTURES / "fast-agent-passthrough-shell-v1.jsonl"
    (replay_workspace / "existing.txt").write_text("alpha\nbeta\n")
    again = tmp_path / "again.jsonl"
    async with connect(
        command=replay(capture, "--match", "methods"),
        cwd=replay_workspace,
        policy="ask",
        ask=recorded_answers(capture),
        new_session=False,
        disk_patches=False,
        record=again,
    ) as session:
        await drive(session, capture, replay_workspace)
    asked = {
        line["msg"]["id"]: line["msg"]
        for line in entries(again)
        if line["dir"] == "agent->client" and line["msg"].get("method", "").startswith("terminal/")
    }
    answers = {
        line["msg"]["id"]: line["msg"]
        for line in entries(again)
        if line["dir"] == "client->agent" and line["msg"].get("id") in asked
    }
    created = answers[next(i for i, m in asked.items() if m["method"] == "terminal/create")]
    given = created["result"]["terminalId"]
    assert given != "term-a351db55"
    used = [m["params"]["terminalId"] for m in asked.values() if m["method"] != "terminal/create"]
    assert used == [given, given, given]  # wait_for_exit, output, release
    assert all("result" in answer for answer in answers.values())
    output = next(a for i, a in answers.items() if asked[i]["method"] == "terminal/output")
    assert output["result"]["output"] == "hello-from-terminal\nexisting.txt\n"
