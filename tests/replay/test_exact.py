"""Exact mode: sessions recorded with ``connect(record=...)``, replayed live and checked."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_adapters import ProviderRegistry, get_plugin_manager, project_capture
from acp_adapters.replay import EXIT_MISMATCH, EXIT_TIMEOUT, REPLAY_FAILED, seed_workspace
from acp_adapters.transport import ConnectionClosed, RpcError
from contract.scenarios import SCENARIOS, Scenario
from session_helpers import ask_forever

from .conftest import (
    asked_version,
    comparable,
    entries,
    fake_agent,
    play,
    replay,
    status_of,
    write_entries,
)

pytestmark = pytest.mark.anyio

WORKSPACE = "{workspace}"
PM = get_plugin_manager()
#: The sessions this project recorded from real agents (tests/peers/record_scenarios.py).
RECORDED = [
    s
    for s in SCENARIOS
    if s.path.parent.name == "recorded" and s.provider in ProviderRegistry.collect(PM)
]


@dataclass(frozen=True)
class Script:
    """A scripted agent, what the application does with it, under which policy."""

    scenario: str
    prompts: tuple[str, ...]
    arg: str = ""
    policy: str = "full-access"
    #: The replay's folder gets the recording's files, not only those the capture shows
    #: (a read with an unreadable ``line`` reads the whole file, but does not count as one).
    copy_files: bool = False


SCRIPTS = [
    Script("basic", ("hello", "say again")),
    Script("v2", ("hello",)),
    Script("edit", ("edit",), WORKSPACE),
    Script("edit", ("edit",), WORKSPACE, policy="read-only"),
    Script("v2-edit", ("edit",), WORKSPACE),
    Script("terminal", ("run",), "printf 'é%.0s' $(seq 1 100); exit 7"),
    Script("faults", ("go", "say it")),
    Script("requests", ("go",), WORKSPACE),
    Script("elicit", ("go",), WORKSPACE, copy_files=True),
    Script("v2-elicit", ("go",), WORKSPACE),
]


async def record(connect: Any, script: Script, workspace: Path, capture: Path) -> list[Any]:
    """Run the script against the scripted agent, recording; its timeline, made portable."""
    arg = script.arg.replace(WORKSPACE, str(workspace))
    async with connect(
        command=fake_agent(script.scenario, arg),
        cwd=workspace,
        policy=script.policy,
        record=capture,
        disk_patches=False,
    ) as session:
        for prompt in script.prompts:
            await session.prompt(prompt)
    return comparable(session.timeline, workspace)


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda s: f"{s.scenario}-{s.policy}")
async def test_a_recorded_session_replays_to_the_same_timeline(
    connect: Any, script: Script, workspace: Path, replay_workspace: Path, tmp_path: Path
) -> None:
    capture = tmp_path / "recorded.jsonl"
    recorded = await record(connect, script, workspace, capture)
    assert comparable(project_capture(capture), Path("<workspace>")) == recorded
    if script.copy_files:
        (replay_workspace / "existing.txt").write_text("alpha\nbeta\n")
    seed_workspace(capture, replay_workspace)
    status = tmp_path / "status.json"
    async with connect(
        command=replay(capture, "--status", str(status)),
        cwd=replay_workspace,
        policy=script.policy,
        disk_patches=False,
    ) as session:
        for prompt in script.prompts:
            await session.prompt(prompt)
    assert comparable(session.timeline, replay_workspace) == recorded
    assert session.process.exit_status == 0
    assert status_of(status) | {"capture": None} == {
        "status": "ok",
        "exit_code": 0,
        "report": "",
        "line": None,
        "warnings": [],
        "capture": None,
        "match": "exact",
        "connection": 1,
        "connections": 1,
    }


@pytest.mark.parametrize("scenario", RECORDED, ids=lambda s: s.name)
async def test_a_session_this_client_recorded_from_a_real_agent_replays_exactly(
    connect: Any, scenario: Scenario, replay_workspace: Path, tmp_path: Path
) -> None:
    status = tmp_path / "status.json"
    live = await play(
        connect,
        scenario,
        replay_workspace,
        status,
        match="exact",
        pm=PM,
        protocol=asked_version(scenario.path),
    )
    assert status_of(status)["status"] == "ok", status_of(status)
    offline = project_capture(scenario.path, provider=scenario.provider, pm=PM)
    assert live == comparable(offline, Path("<workspace>"))


@pytest.fixture
async def basic_capture(connect: Any, workspace: Path, tmp_path: Path) -> Path:
    capture = tmp_path / "basic.jsonl"
    await record(connect, Script("basic", ("hello",)), workspace, capture)
    return capture


async def test_a_different_prompt_is_answered_with_the_difference(
    connect: Any, basic_capture: Path, replay_workspace: Path, tmp_path: Path
) -> None:
    status = tmp_path / "status.json"
    async with connect(
        command=replay(basic_capture, "--status", str(status)), cwd=replay_workspace
    ) as session:
        with pytest.raises(RpcError) as info:
            await session.prompt("goodbye")
        with anyio.fail_after(5):
            await session.process.process.wait()
    assert info.value.code == REPLAY_FAILED
    assert info.value.message == (
        "replay mismatch: session/prompt (capture line 5): "
        '$.params.prompt[0].text: expected "hello", got "goodbye"'
    )
    assert session.process.exit_status == EXIT_MISMATCH
    assert status_of(status)["status"] == "mismatch"
    assert status_of(status)["exit_code"] == EXIT_MISMATCH
    assert status_of(status)["line"] == 5
    assert "$.params.prompt[0].text" in session.stderr


async def test_any_matches_any_value(
    connect: Any, basic_capture: Path, replay_workspace: Path, tmp_path: Path
) -> None:
    lines = entries(basic_capture)
    for line in lines:
        message = line.get("msg", {})
        if message.get("method") == "session/prompt":
            message["params"]["prompt"][0]["text"] = "<any>"
        if message.get("method") == "session/new":
            message["params"]["cwd"] = "<any>"
            message["params"]["<any>"] = "<any>"  # a key is not a value
    write_entries(basic_capture, lines)
    status = tmp_path / "status.json"
    with pytest.raises(RpcError, match=r'\$\.params\["<any>"\]: missing'):
        async with connect(command=replay(basic_capture), cwd=replay_workspace):
            pass
    new = next(line for line in lines if line["msg"].get("method") == "session/new")
    del new["msg"]["params"]["<any>"]
    write_entries(basic_capture, lines)
    async with connect(
        command=replay(basic_capture, "--status", str(status)), cwd=replay_workspace
    ) as session:
        turn = await session.prompt("anything at all")
    assert turn.items[-1].text == "you said: hello"
    assert status_of(status)["status"] == "ok"


async def test_a_client_that_never_sends_what_is_expected_fails_within_the_timeout(
    connect: Any, basic_capture: Path, replay_workspace: Path, tmp_path: Path
) -> None:
    status = tmp_path / "status.json"
    started = time.monotonic()
    async with connect(
        command=replay(basic_capture, "--timeout", "0.5", "--status", str(status)),
        cwd=replay_workspace,
        new_session=False,  # the capture waits for session/new
    ) as session:
        with anyio.fail_after(5):
            while not session.timeline.items:  # the client saw the agent go
                await anyio.sleep(0.01)
        assert time.monotonic() - started < 5
        assert session.process.exit_status == EXIT_TIMEOUT
        (exited,) = session.timeline.items
        assert exited.message == "the agent exited (exit status 4)"
    report = status_of(status)
    assert report["status"] == "timeout"
    assert report["exit_code"] == EXIT_TIMEOUT
    assert report["report"] == "timed out after 0.5 s waiting for session/new (capture line 3)"
    assert report["line"] == 3


async def test_an_answer_that_never_comes_fails_the_open_request(
    connect: Any, workspace: Path, replay_workspace: Path, tmp_path: Path
) -> None:
    """The replay waits for the answer to its permission request; the prompt gets the report."""
    capture = tmp_path / "edit.jsonl"
    await record(connect, Script("edit", ("edit",), WORKSPACE), workspace, capture)
    seed_workspace(capture, replay_workspace)
    asked, ask = ask_forever()
    async with connect(
        command=replay(capture, "--timeout", "0.5"), cwd=replay_workspace, policy="ask", ask=ask
    ) as session:
        with pytest.raises(RpcError) as info, anyio.fail_after(5):
            await session.prompt("edit")
    assert asked.is_set()
    assert info.value.message.startswith(
        "replay timeout: timed out after 0.5 s waiting for the answer to session/request_permission"
    )


async def test_an_exit_line_ends_the_agent_with_its_code_and_stderr(
    connect: Any, workspace: Path, replay_workspace: Path, tmp_path: Path
) -> None:
    capture = tmp_path / "crash.jsonl"
    async with connect(command=fake_agent("crash"), cwd=workspace, record=capture) as session:
        with pytest.raises(ConnectionClosed):
            await session.prompt("go")
    recorded = comparable(session.timeline, workspace)
    # The exit ends the traffic; the turn's last checkpoint (what the agent changed before
    # it went) comes after it.
    assert [e["dir"] for e in entries(capture) if e["dir"] != "checkpoint"][-1] == "exit"
    assert entries(capture)[-1]["reason"] == "turn_end"
    status = tmp_path / "status.json"
    async with connect(
        command=replay(capture, "--status", str(status)), cwd=replay_workspace
    ) as session:
        with pytest.raises(ConnectionClosed) as info:
            await session.prompt("go")
        assert info.value.exit_status == 3
        assert "fatal: the model went away" in info.value.stderr_tail
    assert comparable(session.timeline, replay_workspace) == recorded
    assert status_of(status)["status"] == "ok"
    assert status_of(status)["exit_code"] == 3


async def test_an_exit_line_written_by_hand(
    connect: Any, basic_capture: Path, replay_workspace: Path
) -> None:
    """The marker works anywhere: here right after the session is created."""
    lines = entries(basic_capture)
    new_answer = next(
        i for i, line in enumerate(lines) if "sessionId" in line["msg"].get("result", {})
    )
    lines.insert(new_answer + 1, {"dir": "exit", "code": 42, "stderr": "bye from <workspace>\n"})
    write_entries(basic_capture, lines)
    async with connect(command=replay(basic_capture), cwd=replay_workspace) as session:
        with pytest.raises(ConnectionClosed) as info:
            await session.prompt("hello")
    assert info.value.exit_status == 42
    assert f"bye from {replay_workspace}" in info.value.stderr_tail
