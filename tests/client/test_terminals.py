"""Terminals the client runs for an agent: their processes end with the session, their
answers stay readable, bad input is refused, and their output has a ceiling."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

import acp_adapters
from acp_adapters.client import terminals

pytestmark = pytest.mark.anyio

AGENT = Path(__file__).parent.parent / "agents" / "terminal_agent.py"


def terminal_agent(workspace: Path, *steps: dict[str, Any]) -> list[str]:
    return [sys.executable, str(AGENT), json.dumps(list(steps)), str(workspace)]


def answers(workspace: Path) -> dict[str, Any]:
    """The answers the agent got, by step name."""
    lines = (workspace / "answers.jsonl").read_text().splitlines()
    return {r["name"]: r["answer"] for r in map(json.loads, lines)}


def running(pid: int) -> bool:
    """Whether ``pid`` runs; a zombie (ended, not collected yet by its parent) does not."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    with_state = stat.read_text() if stat.exists() else ""
    return not with_state or with_state.rsplit(")", 1)[1].split()[0] != "Z"


def pid_in(workspace: Path, file: str) -> int:
    return int((workspace / file).read_text())


async def ended(pid: int, within: float = 5.0) -> bool:
    """Whether ``pid`` ends within ``within`` seconds (SIGKILL is delivered, not awaited)."""
    with anyio.move_on_after(within):
        while running(pid):
            await anyio.sleep(0.02)
    return not running(pid)


@pytest.fixture
def workspace(workspace: Path) -> Iterator[Path]:
    """The session's folder; whatever a test's commands left running (their ids in
    ``*.pid`` files) is killed afterwards."""
    yield workspace
    for file in workspace.glob("*.pid"):
        text = file.read_text().strip()
        if text.isdigit() and running(int(text)):
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(text), signal.SIGKILL)


def create(name: str, command: str, *args: str, **params: Any) -> dict[str, Any]:
    return {
        "name": name,
        "method": "terminal/create",
        "params": {"command": command, **({"args": list(args)} if args else {}), **params},
    }


def on(name: str, method: str, terminal: str) -> dict[str, Any]:
    return {"name": name, "method": f"terminal/{method}", "params": {"terminal": terminal}}


def holding_the_output(seconds: int, pid_file: str) -> dict[str, Any]:
    """A terminal whose command starts a process that keeps the output open ``seconds`` (its
    id in ``pid_file``), and exits. That process escapes every kill: it leaves the
    terminal's session and process group, drops the family's mark from its environment,
    and its parent is gone before the session looks for it."""
    start = (
        "import subprocess; "
        f"child = subprocess.Popen(['sleep', '{seconds}'], start_new_session=True, env={{}}); "
        f"open('{pid_file}', 'w').write(str(child.pid))"
    )
    return create(pid_file, sys.executable, "-c", start)


async def test_a_background_process_of_a_terminal_ends_with_the_session(
    connect: Any, workspace: Path
) -> None:
    agent = terminal_agent(
        workspace,
        create("bg", "sleep 60 >/dev/null 2>&1 & echo $! > bg.pid; echo started"),
        on("exit", "wait_for_exit", "bg"),
    )
    async with connect(command=agent, cwd=workspace, policy="full-access") as session:
        with anyio.fail_after(15):
            await session.prompt("run")
        assert answers(workspace)["exit"]["result"] == {"exitCode": 0, "signal": None}
        assert running(pid_in(workspace, "bg.pid"))  # its shell has exited; it has not
    assert await ended(pid_in(workspace, "bg.pid"))


async def test_killing_a_terminal_whose_shell_exited_kills_what_it_left_running(
    connect: Any, workspace: Path
) -> None:
    agent = terminal_agent(
        workspace,
        # The background sleep keeps the output open: the terminal has not exited.
        create("bg", "sleep 60 & echo $! > bg.pid; echo $$ > shell.pid; echo started"),
        {"until_file": "bg.pid"},
        {"until_gone": "shell.pid"},
        {"sleep": 0.3},  # time for the client to collect the shell's exit status
        on("kill", "kill", "bg"),
        on("exit", "wait_for_exit", "bg"),
        on("output", "output", "bg"),
    )
    async with connect(command=agent, cwd=workspace, policy="full-access") as session:
        with anyio.fail_after(15):
            await session.prompt("run")
        assert await ended(pid_in(workspace, "bg.pid"))
    got = answers(workspace)
    assert got["kill"]["result"] == {}
    assert got["exit"]["result"] == {"exitCode": 0, "signal": None}
    assert got["output"]["result"] == {
        "output": "started\n",
        "truncated": False,
        "exitStatus": {"exitCode": 0, "signal": None},
    }


async def test_closing_waits_for_all_terminals_at_once_within_one_bound(
    connect: Any, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(terminals, "CLOSE_WAIT_SECONDS", 1.0)
    agent = terminal_agent(
        workspace,
        *(holding_the_output(60, f"holder{n}.pid") for n in range(3)),
        *({"until_file": f"holder{n}.pid"} for n in range(3)),
    )
    async with connect(command=agent, cwd=workspace, policy="full-access") as session:
        with anyio.fail_after(15):
            await session.prompt("run")
        started = time.monotonic()
    assert time.monotonic() - started < 2.5


async def test_a_terminal_asked_for_while_the_session_closes_is_refused(
    connect: Any, workspace: Path
) -> None:
    agent = terminal_agent(
        workspace,
        create("watched", "echo $$ > watched.pid; exec sleep 60"),
        # Keeps closing busy for 4 s (it escapes the kill): the late request arrives while it
        # waits, on a loaded machine too.
        holding_the_output(4, "holder.pid"),
        {"until_file": "watched.pid"},
        {"until_file": "holder.pid"},
        {"end_turn": True},
        {"until_gone": "watched.pid"},  # the client has begun to close: it killed this one
        create("late", "echo $$ > late.pid; exec sleep 60"),
    )
    async with connect(command=agent, cwd=workspace, policy="full-access") as session:
        with anyio.fail_after(15):
            await session.prompt("run")
    late = answers(workspace)["late"]
    assert late["error"]["code"] == -32000
    assert "closing" in late["error"]["message"]
    await anyio.sleep(0.3)  # what would have started has had time to write its id
    assert not (workspace / "late.pid").exists()


@pytest.mark.skipif(not hasattr(signal, "SIGRTMIN"), reason="needs real-time signals")
async def test_a_terminal_ended_by_a_signal_python_does_not_name(
    connect: Any, workspace: Path
) -> None:
    number = signal.SIGRTMIN + 6
    with pytest.raises(ValueError, match="not a valid Signals"):
        signal.Signals(number)
    agent = terminal_agent(
        workspace,
        create("run", f"echo dying; kill -{number} $$"),
        on("exit", "wait_for_exit", "run"),
        on("output", "output", "run"),
    )
    async with connect(command=agent, cwd=workspace, policy="full-access") as session:
        with anyio.fail_after(15):
            await session.prompt("run")
    got = answers(workspace)
    status = {"exitCode": None, "signal": f"SIG{number}"}
    assert got["exit"]["result"] == status
    assert got["output"]["result"] == {
        "output": "dying\n",
        "truncated": False,
        "exitStatus": status,
    }


@pytest.mark.parametrize(
    ("params", "complaint"),
    [
        ({"command": "true", "env": [{"name": "A=B", "value": "1"}]}, "environment variable name"),
        (
            {"command": "true", "env": [{"name": "A\x00", "value": "1"}]},
            "environment variable name",
        ),
        ({"command": "true", "env": [{"name": "", "value": "1"}]}, "environment variable name"),
        ({"command": "true", "env": [{"name": "A", "value": "1\x00"}]}, "NUL"),
        ({"command": "tr\x00ue"}, "NUL"),
        ({"command": "echo", "args": ["a\x00b"]}, "NUL"),
        ({"command": "echo", "args": ["\ud800"]}, "cannot be passed"),
        (
            {"command": "true", "cwd": "\ud800"},
            "not valid Unicode",
        ),  # the cwd is judged before anything runs
    ],
)
async def test_a_terminal_that_cannot_be_started_is_invalid_params(
    connect: Any, workspace: Path, params: dict[str, Any], complaint: str
) -> None:
    agent = terminal_agent(
        workspace, {"name": "bad", "method": "terminal/create", "params": params}
    )
    async with connect(command=agent, cwd=workspace, policy="full-access") as session:
        with anyio.fail_after(15):
            await session.prompt("run")
    error = answers(workspace)["bad"]["error"]
    assert error["code"] == -32602
    assert complaint in error["message"]


async def test_retained_output_has_a_ceiling_whatever_the_agent_asks(
    connect: Any, workspace: Path
) -> None:
    agent = terminal_agent(
        workspace,
        create("yes", "yes | head -c 20000000", outputByteLimit=10**12),
        on("exit", "wait_for_exit", "yes"),
        on("output", "output", "yes"),
    )
    async with connect(command=agent, cwd=workspace, policy="full-access") as session:
        with anyio.fail_after(30):
            await session.prompt("run")
    output = answers(workspace)["output"]["result"]
    assert output["truncated"] is True
    assert len(output["output"]) == terminals.MAX_OUTPUT_BYTES == 16 * 1024 * 1024
    assert output["output"].startswith(("y\n", "\ny"))


async def test_wait_for_exit_answers_when_the_command_exits_though_its_output_is_held(
    connect: Any, workspace: Path
) -> None:
    agent = terminal_agent(
        workspace,
        # The background sleep holds the output open for 30 s; the shell exits at once.
        create("bg", "(sleep 1; echo later) & sleep 30 & echo $! > bg.pid; echo first"),
        on("exit", "wait_for_exit", "bg"),
        on("at-exit", "output", "bg"),
        {"sleep": 2.5},
        on("later", "output", "bg"),
        on("release", "release", "bg"),
    )
    async with connect(command=agent, cwd=workspace, policy="full-access") as session:
        with anyio.fail_after(15):
            await session.prompt("run")
        assert await ended(pid_in(workspace, "bg.pid"))  # released: killed
    got = answers(workspace)
    status = {"exitCode": 0, "signal": None}
    assert got["exit"]["result"] == status
    assert got["at-exit"]["result"]["output"].startswith("first\n")  # what it wrote is read
    assert got["at-exit"]["result"]["exitStatus"] == status
    # What the background wrote after the exit is kept too, until the release.
    assert got["later"]["result"] == {
        "output": "first\nlater\n",
        "truncated": False,
        "exitStatus": status,
    }


async def test_what_a_terminal_detached_from_its_group_is_killed_at_its_release(
    connect: Any, workspace: Path
) -> None:
    agent = terminal_agent(
        workspace,
        create("det", "setsid sleep 60 >/dev/null 2>&1 & echo $! > det.pid"),
        on("exit", "wait_for_exit", "det"),
        {"until_file": "det.pid"},
        on("release", "release", "det"),
        {"until_gone": "det.pid"},  # else the agent gives up, and the turn fails
    )
    async with connect(command=agent, cwd=workspace, policy="full-access") as session:
        with anyio.fail_after(30):
            await session.prompt("run")
        # Killed, and reaped: this process (a subreaper) collected it.
        assert not Path(f"/proc/{pid_in(workspace, 'det.pid')}").exists()


async def test_a_session_has_at_most_max_terminals_at_once(connect: Any, workspace: Path) -> None:
    agent = terminal_agent(
        workspace,
        create("a", "sleep 30"),
        create("b", "sleep 30"),
        create("c", "sleep 30"),
        on("release", "release", "a"),
        create("d", "true"),
    )
    async with connect(
        command=agent,
        cwd=workspace,
        policy="full-access",
        limits=acp_adapters.Limits(max_terminals=2),
    ) as session:
        with anyio.fail_after(15):
            await session.prompt("run")
    got = answers(workspace)
    assert got["c"]["error"] == {
        "code": -32000,
        "message": "too many terminals (limit 2): release one first",
    }
    assert got["d"]["result"]["terminalId"].startswith("term-")
    assert terminals.DEFAULT_MAX_TERMINALS == 64
