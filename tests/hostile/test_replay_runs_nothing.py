"""A live replay runs nothing a capture holds, and touches nothing outside its scratch folder.

``acp-adapters replay CAPTURE`` plays the capture's agent side against this client: the
agent's ``terminal/create`` would run its command on this host, and its ``fs/*``
requests would read and write where it names. A capture is untrusted, so: terminals
answer from the capture (:class:`acp_adapters.replay.RecordedTerminals`), and files are
read and written inside the replay's temporary folder only. Both match modes.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner, Result

import acp_adapters
from acp_adapters.cli import main, replaying
from acp_adapters.cli.replaying import replay_live, replay_offline
from acp_adapters.plugin.permissions import ClientAction, PermissionDecision, PermissionQuery
from acp_adapters.replay import RecordedTerminals, recorded_answers
from acp_adapters.transport import RpcError

HERE = Path(__file__).resolve().parent
FAKE_AGENT = HERE.parent / "agents" / "fake_agent.py"
MODES = ["exact", "methods"]
SESSION = {"sessionId": "s"}


def run_cli(*args: str) -> Result:
    try:
        runner = CliRunner(mix_stderr=False)  # type: ignore[call-arg]  # click 8.1
    except TypeError:
        runner = CliRunner()
    result = runner.invoke(main, list(args), env={"NO_COLOR": "1"})
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def write_capture(path: Path, messages: list[tuple[str, dict[str, Any]]]) -> Path:
    path.write_text(
        "".join(
            json.dumps({"dir": direction, "t": 0.0, "msg": {"jsonrpc": "2.0", **message}}) + "\n"
            for direction, message in messages
        ),
        encoding="utf-8",
    )
    return path


def hostile(
    path: Path, requests: list[dict[str, Any]], *, answers: bool
) -> tuple[Path, list[dict[str, Any]]]:
    """A capture whose agent sends ``requests`` in its one turn (each ``{"method",
    "params"}``), with the recording client's answers when ``answers`` (as ``<any>``:
    what this client answers is whatever it answers), or none (a foreign capture)."""
    messages: list[tuple[str, dict[str, Any]]] = [
        ("client->agent", {"id": 0, "method": "initialize", "params": "<any>"}),
        ("agent->client", {"id": 0, "result": {"protocolVersion": 1, "agentCapabilities": {}}}),
        ("client->agent", {"id": 1, "method": "session/new", "params": "<any>"}),
        ("agent->client", {"id": 1, "result": SESSION}),
        ("client->agent", {"id": 2, "method": "session/prompt", "params": "<any>"}),
    ]
    for number, request in enumerate(requests, 10):
        params = {**SESSION, **request["params"]}
        messages.append(
            ("agent->client", {"id": number, "method": request["method"], "params": params})
        )
        if answers:
            messages.append(("client->agent", {"id": number, **request["answer"]}))
    messages.append(("agent->client", {"id": 2, "result": {"stopReason": "end_turn"}}))
    return write_capture(path, messages), requests


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder outside any replay's, with a secret in it."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text("TOP SECRET\n", encoding="utf-8")
    return folder


def commands(outside: Path) -> list[dict[str, Any]]:
    created = {"result": {"terminalId": "term-1"}}
    return [
        {
            "method": "terminal/create",
            "params": {"command": f"id > {outside}/id.txt"},
            "answer": created,
        },
        {
            "method": "terminal/wait_for_exit",
            "params": {"terminalId": "term-1"},
            "answer": {"result": {"exitCode": 0, "signal": None}},
        },
        {
            "method": "terminal/create",
            "params": {"command": "touch", "args": [f"{outside}/touched"]},
            "answer": {"result": {"terminalId": "term-2"}},
        },
        {
            "method": "terminal/output",
            "params": {"terminalId": "term-2"},
            "answer": {"result": {"output": "recorded output\n", "truncated": False}},
        },
        {
            "method": "terminal/create",
            "params": {"command": "sh", "args": ["-c", f"cat {outside}/secret.txt > leaked.txt"]},
            "answer": {"result": {"terminalId": "term-3"}},
        },
    ]


def files(outside: Path) -> list[dict[str, Any]]:
    refused = {"error": "<any>"}
    return [
        {
            "method": "fs/write_text_file",
            "params": {"path": f"{outside}/written.txt", "content": "x"},
            "answer": refused,
        },
        {
            "method": "fs/write_text_file",
            "params": {"path": "<workspace>/../escaped.txt", "content": "x"},
            "answer": refused,
        },
        {
            "method": "fs/read_text_file",
            "params": {"path": f"{outside}/secret.txt"},
            "answer": refused,
        },
        {
            "method": "fs/read_text_file",
            "params": {"path": "<workspace>/../outside/secret.txt"},
            "answer": refused,
        },
        {
            "method": "fs/write_text_file",
            "params": {"path": "<workspace>/inside.txt", "content": "in the scratch folder"},
            "answer": {"result": "<any>"},
        },
    ]


def nothing_new(outside: Path) -> None:
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert not (outside.parent / "escaped.txt").exists()


@pytest.mark.parametrize(
    ("mode", "answers"),
    # A capture without the client's answers is another client's: replayed `methods`.
    [("exact", True), ("methods", True), ("methods", False)],
    ids=["exact", "methods", "methods-foreign"],
)
def test_a_replay_runs_none_of_the_commands_a_capture_holds(
    mode: str, answers: bool, outside: Path, tmp_path: Path
) -> None:
    capture, _ = hostile(tmp_path / "commands.jsonl", commands(outside), answers=answers)
    result = run_cli("replay", "--match", mode, "--format", "json", str(capture))
    assert result.exit_code == 0, result.stderr
    nothing_new(outside)
    rows = json.loads(result.stdout)
    run = [row for row in rows if row["kind"] == "command_execution"]
    assert [row["command"] for row in run] == [
        f"id > {outside}/id.txt",
        f"touch {outside}/touched",
        f"sh -c 'cat {outside}/secret.txt > leaked.txt'",
    ]
    assert "TOP SECRET" not in result.stdout
    notes = [line for line in result.stderr.splitlines() if "no recorded answer" in line]
    if answers:
        assert notes == []
        assert run[1]["output"] == "recorded output\n"
        assert run[0]["exit_code"] == 0
    else:  # stand-ins, each said
        assert len(notes) == 5
        assert notes[0] == (
            'Note: capture has no recorded answer to terminal/create: answered {"terminalId": '
            '"replay-terminal-1"} (a replay runs no command)'
        )
        assert run[1]["output"] in (None, "")


@pytest.mark.parametrize("mode", MODES)
def test_a_replay_reads_and_writes_nothing_outside_its_folder(
    mode: str, outside: Path, tmp_path: Path
) -> None:
    capture, _ = hostile(tmp_path / "files.jsonl", files(outside), answers=True)
    result = run_cli("replay", "--match", mode, "--format", "json", str(capture))
    assert result.exit_code == 0, result.stderr
    nothing_new(outside)
    assert "TOP SECRET" not in result.stdout + result.stderr


def test_the_write_inside_lands_in_the_scratch_folder(
    outside: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the capture's agent writes goes into the replay's temporary folder (kept here,
    to look at), and nowhere else."""
    scratch = tmp_path / "scratch"

    @contextlib.contextmanager
    def kept(**_: Any) -> Iterator[str]:
        scratch.mkdir()
        yield str(scratch)

    monkeypatch.setattr(replaying.tempfile, "TemporaryDirectory", kept)
    capture, _ = hostile(tmp_path / "files.jsonl", files(outside), answers=True)
    anyio.run(lambda: replay_live(capture, provider=None, match="exact"))
    nothing_new(outside)
    written = {str(path.relative_to(scratch)): path.read_text() for path in scratch.rglob("*.txt")}
    assert written == {"workspace/inside.txt": "in the scratch folder"}


# --- a capture with recorded terminals ------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_a_recorded_session_with_a_terminal_replays_to_its_timeline_without_running_it(
    mode: str, outside: Path, tmp_path: Path
) -> None:
    marker = outside / "ran"
    workspace = tmp_path / "ws"
    workspace.mkdir()
    capture = tmp_path / "terminal.jsonl"

    async def record() -> None:
        command = [sys.executable, str(FAKE_AGENT), "terminal", f"echo recorded; touch {marker}"]
        async with acp_adapters.connect(
            command=command, cwd=workspace, policy="full-access", record=capture
        ) as session:
            await session.prompt("run")

    anyio.run(record)
    assert marker.exists()  # the recording ran it
    marker.unlink()
    offline = replay_offline(capture, provider=None)
    live = run_cli("replay", "--match", mode, "--format", "json", str(capture))
    assert live.exit_code == 0, live.stderr
    assert not marker.exists()  # the replay did not
    rows = json.loads(live.stdout)
    strip = ("created_at", "updated_at")
    assert [{k: v for k, v in r.items() if k not in strip} for r in rows] == [
        {k: v for k, v in r.items() if k not in strip} for r in offline.rows
    ]
    (run,) = [row for row in rows if row["kind"] == "command_execution"]
    assert run["output"] == "recorded\n"
    assert "no recorded answer" not in live.stderr


# --- the pieces ---------------------------------------------------------------------------


@pytest.mark.anyio
async def test_recorded_terminals_answer_by_position_and_terminal_id(
    outside: Path, tmp_path: Path
) -> None:
    capture, _ = hostile(tmp_path / "commands.jsonl", commands(outside), answers=True)
    terminals = RecordedTerminals(capture)
    assert await terminals.create({"command": "anything"}) == {"terminalId": "term-1"}
    assert await terminals.create({"command": "else"}) == {"terminalId": "term-2"}
    # term-2's output, though asked first by term-1's position
    assert await terminals.output({"terminalId": "term-2"}) == {
        "output": "recorded output\n",
        "truncated": False,
    }
    assert await terminals.wait_for_exit({"terminalId": "term-1"}) == {
        "exitCode": 0,
        "signal": None,
    }
    assert terminals.warnings == []
    assert await terminals.wait_for_exit({"terminalId": "term-2"}) == {
        "exitCode": None,
        "signal": None,
    }
    assert terminals.warnings == [
        "has no recorded answer to terminal/wait_for_exit for terminal term-2: answered "
        '{"exitCode": null, "signal": null} (a replay runs no command)'
    ]
    await terminals.close()


@pytest.mark.anyio
async def test_a_recorded_error_is_answered_as_the_same_error(tmp_path: Path) -> None:
    capture, _ = hostile(
        tmp_path / "refused.jsonl",
        [
            {
                "method": "terminal/create",
                "params": {"command": "rm -rf /"},
                "answer": {"error": {"code": -32000, "message": "running rm is not allowed"}},
            }
        ],
        answers=True,
    )
    terminals = RecordedTerminals(capture)
    with pytest.raises(RpcError, match="running rm is not allowed") as raised:
        await terminals.create({"command": "rm -rf /"})
    assert raised.value.code == -32000


@pytest.mark.anyio
async def test_the_replays_ask_allows_actions_inside_and_refuses_writes_outside(
    tmp_path: Path,
) -> None:
    capture, _ = hostile(tmp_path / "none.jsonl", [], answers=True)
    ask = recorded_answers(capture)

    def query(action: ClientAction) -> PermissionQuery:
        return PermissionQuery(request_id="client-action-1", action=action)

    async def chosen(action: ClientAction) -> tuple[str | None, bool]:
        # Decided as the recorded client did, without being a question (no approval kept).
        answer = await ask(query(action))
        assert isinstance(answer, PermissionDecision)
        return answer.option_id, answer.asked

    assert await chosen(ClientAction(kind="command", argv=("id",))) == ("allow", False)
    assert await chosen(ClientAction(kind="write", path="/ws/a", inside=True)) == ("allow", False)
    outside = ClientAction(kind="write", path="/etc/a", inside=False)
    assert await chosen(outside) == ("reject", False)
