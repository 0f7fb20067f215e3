"""Helpers for the replay tests: the replay agent's command, comparable timelines, a driver."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_adapters import AcpAdaptersError, project_capture
from acp_adapters.capture.format import capture_values
from acp_adapters.client import ProtocolVersionError, Session
from acp_adapters.replay import (
    RecordedTerminals,
    read_capture,
    recorded_answers,
    recorded_checkpoints,
    recorded_disk,
    seed_workspace,
)
from acp_adapters.transport import ConnectionClosed, RpcError
from contract.scenarios import Scenario

AGENT = Path(__file__).parent.parent / "agents" / "fake_agent.py"


def fake_agent(scenario: str, arg: str = "") -> list[str]:
    return [sys.executable, str(AGENT), scenario, *([arg] if arg else [])]


def replay(capture: Path, *options: str) -> list[str]:
    """The replay agent's command line (the capture's path made absolute: it runs elsewhere)."""
    return [sys.executable, "-m", "acp_adapters.replay", *options, str(capture.resolve())]


def status_of(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def entries(capture: Path) -> list[dict[str, Any]]:
    """A capture's lines, as the one capture reader reads them (cut at ``\n`` only)."""
    return [value for _, value in capture_values(capture)]


def write_entries(capture: Path, lines: Sequence[dict[str, Any]]) -> Path:
    capture.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return capture


def comparable(items: Any, workspace: Path) -> list[dict[str, Any]]:
    """Items as JSON, without times, the live folders written as the capture writes them."""
    text = json.dumps(
        [
            {k: v for k, v in item.model_dump(mode="json").items() if not k.endswith("_at")}
            for item in items
        ]
    )
    text = text.replace(str(workspace), "<workspace>")
    home = os.path.expanduser("~")
    if home and home != os.sep:
        text = text.replace(home, "<home>")
    return json.loads(text)  # type: ignore[no-any-return]


@pytest.fixture
def replay_workspace(tmp_path: Path) -> Path:
    """A fresh folder for the replayed session, other than the recording's."""
    folder = tmp_path / "replayed"
    folder.mkdir()
    return Path(os.path.realpath(folder))


def auth_stand_ins(capture: Path) -> dict[str, str]:
    """A value for each variable the agent's env_var auth methods read (the replay reads none;
    the session checks they are set before it authenticates)."""
    found: dict[str, str] = {}
    for entry in entries(capture):
        result = entry.get("msg", {}).get("result") if isinstance(entry.get("msg"), dict) else None
        methods = result.get("authMethods") if isinstance(result, dict) else None
        for method in methods if isinstance(methods, list) else []:
            for variable in method.get("vars", []) if method.get("type") == "env_var" else []:
                found[variable["name"]] = "replayed"
    return found


def initialize_refused(capture: Path) -> bool:
    first = next(e["msg"] for e in entries(capture) if e["dir"] == "agent->client")
    return "error" in first


def asked_version(capture: Path) -> int:
    """The protocol version the capture's client asked for."""
    first = next(e["msg"] for e in entries(capture) if e["dir"] == "client->agent")
    return int(first["params"]["protocolVersion"])


async def play(
    connect: Any,
    scenario: Scenario,
    folder: Path,
    status: Path,
    *,
    match: str,
    pm: Any,
    protocol: int | None = None,
) -> list[dict[str, Any]] | None:
    """Replay a scenario's capture live in ``folder``, driven as its client did; the timeline.

    None when the agent refused ``initialize``: the client then has no session.
    """
    for path, content in (scenario.before or {}).items():
        (folder / path.removeprefix("<workspace>/")).write_text(content)
    seed_workspace(scenario.path, folder)
    opened = False
    try:
        async with connect(
            provider=scenario.provider,
            command=replay(scenario.path, "--match", match, "--status", str(status)),
            cwd=folder,
            env=auth_stand_ins(scenario.path),
            # Nothing edits the disk in a replay: the files read around edits are the recorded.
            disk_patches=recorded_disk(scenario.path, folder)
            if read_capture(scenario.path).disk
            else False,
            # Nor changes it: the checkpoints are the recorded ones, where they were taken.
            checkpoints=recorded_checkpoints(scenario.path, folder)
            if read_capture(scenario.path).checkpoints
            else False,
            policy="ask",
            ask=recorded_answers(scenario.path),
            # The capture's commands never run: its terminals answer as recorded.
            terminals=RecordedTerminals(scenario.path),
            new_session=False,
            protocol=protocol,
            pm=pm,
        ) as session:
            opened = True
            await drive(session, scenario.path, folder, provider=scenario.provider, pm=pm)
    except (ProtocolVersionError, RpcError):
        if opened:
            raise
        return None
    return comparable(session.timeline, folder)


def filled(value: Any, workspace: Path) -> Any:
    """A recorded value with ``<workspace>`` written as the live folder."""
    return json.loads(json.dumps(value).replace("<workspace>", str(workspace)))


async def drive(
    session: Session,
    capture: Path,
    workspace: Path,
    *,
    provider: str | None = None,
    pm: Any = None,
) -> list[str]:
    """Make the session send what the capture's client sent, in order, through the session API.

    Where the capture's agent answered a request with an error, the session's call may
    fail, and the call the agent exits in fails; no other may. Returns the methods whose
    calls failed.
    """
    lines = entries(capture)
    calls: list[tuple[int, dict[str, Any]]] = []
    answers: dict[Any, dict[str, Any]] = {}
    exit_line: int | None = None
    for index, entry in enumerate(lines):
        if entry["dir"] == "exit" and exit_line is None:
            exit_line = index
        message = entry.get("msg")
        if not isinstance(message, dict):
            continue
        if entry["dir"] == "client->agent" and "method" in message:
            calls.append((index, message))
        elif entry["dir"] == "agent->client" and "method" not in message and "id" in message:
            answers.setdefault(message["id"], message)
    failed: list[str] = []
    for position, (index, message) in enumerate(calls):
        method, params = message["method"], filled(message.get("params") or {}, workspace)
        refused = "error" in answers.get(message.get("id"), {})
        following = calls[position + 1] if position + 1 < len(calls) else None
        try:
            if method in ("initialize", "session/cancel"):
                continue  # connect() initializes; a cancel goes with its prompt
            if method == "authenticate":
                await session.authenticate(params["methodId"])
            elif method == "session/new":
                await session.new_session()
            elif method == "session/set_mode":
                await session.set_mode(params["modeId"])
            elif method == "session/set_config_option":
                await session.set_config_option(params["configId"], params["value"])
            elif (
                method == "session/prompt"
                and following
                and following[1]["method"] == "session/cancel"
            ):
                prefix = lines[: following[0]]
                await _prompt_then_cancel(session, params["prompt"], prefix, provider, pm)
            elif method == "session/prompt":
                await session.prompt(params["prompt"])
            else:
                raise AssertionError(f"the driver cannot send {method}")
        except ConnectionClosed:
            if exit_line is None or exit_line < index:
                raise
            failed.append(method)
            return failed  # the agent exited here, as it did in the capture
        except AcpAdaptersError:
            if not refused:
                raise
            failed.append(method)
    return failed


async def _prompt_then_cancel(
    session: Session,
    prompt: list[dict[str, Any]],
    prefix: list[dict[str, Any]],
    provider: str | None,
    pm: Any,
) -> None:
    """Send the prompt; cancel once the client has handled the updates and permission
    requests the recorded client had before it cancelled."""
    seen = project_capture(prefix, provider=provider, pm=pm).state
    state = session.projector.state
    async with anyio.create_task_group() as task_group:
        task_group.start_soon(session.prompt, prompt)
        with anyio.fail_after(10):
            while state.updates < seen.updates or len(state.permissions) < len(seen.permissions):
                await anyio.sleep(0.01)
        await session.cancel()
