"""The processes of a session end with it: the agent's exit is seen when it exits, what it
and its terminals detached is killed and reaped, a deaf agent blocks nothing, and the
command line leaves no agent behind whatever signal it gets."""

from __future__ import annotations

import contextlib
import ctypes
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

import acp_adapters
from acp_adapters import get_plugin_manager
from acp_adapters.transport import ConnectionClosed

pytestmark = pytest.mark.anyio

AGENT = Path(__file__).parent / "agents_processes.py"
LINUX = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc (Linux)")


def agent(scenario: str, folder: Path) -> list[str]:
    return [sys.executable, str(AGENT), scenario, str(folder)]


def state(pid: int) -> str | None:
    """The process's state letter (``Z`` for a zombie); None when there is no such process."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[1].split()[0]


def running(pid: int) -> bool:
    """Whether ``pid`` runs; a zombie (ended, not collected yet) does not."""
    return state(pid) not in (None, "Z")


def pid_in(folder: Path, name: str) -> int:
    return int((folder / f"{name}.pid").read_text())


async def until(condition: Any, within: float = 10.0) -> bool:
    with anyio.move_on_after(within):
        while not condition():
            await anyio.sleep(0.02)
    return bool(condition())


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[Path]:
    """The session's folder; whatever a test left running (its ids in ``*.pid``) is
    killed afterwards."""
    work = tmp_path / "ws"
    work.mkdir()
    yield work
    for file in work.glob("*.pid"):
        with contextlib.suppress(ValueError, ProcessLookupError):
            os.kill(int(file.read_text()), signal.SIGKILL)


def connect(command: list[str], folder: Path, **options: Any) -> Any:
    pm = get_plugin_manager(load_entrypoints=False, environ={})
    return acp_adapters.connect(command=command, cwd=folder, pm=pm, **options)


# --- the agent's exit ----------------------------------------------------------------------


async def test_an_agent_that_exits_while_a_detached_child_holds_its_output(folder: Path) -> None:
    started = time.monotonic()
    async with connect(
        agent("exit-holding", folder), folder, timeouts=acp_adapters.Timeouts(close_grace=0.5)
    ) as session:
        with anyio.fail_after(10), pytest.raises(ConnectionClosed) as info:
            await session.prompt("go")
        assert time.monotonic() - started < 5  # seen at its exit, not at the holder's
        assert info.value.exit_status == 5
        assert "the key is missing" in info.value.stderr_tail
        # Its last word is the error; after it, what it changed in the folder (its pid files).
        kinds = [item.kind for item in session.timeline.items]
        assert [kind for kind in kinds if kind != "file_change"][-1] == "error"
        assert state(pid_in(folder, "holder")) == "S"  # it still holds the output
    # Killed with the session, and reaped: not even a zombie is left.
    assert await until(lambda: state(pid_in(folder, "holder")) is None)


async def test_an_agent_that_fails_at_once_says_its_exit_status_and_why(folder: Path) -> None:
    command = ["sh", "-c", "echo missing API key >&2; exit 1"]
    for _ in range(5):  # the exit status used to race the failed write
        with pytest.raises(ConnectionClosed) as info:
            async with connect(command, folder):
                pass
        assert info.value.exit_status == 1
        assert info.value.stderr_tail == "missing API key\n"


# --- what the agent and its terminals detach -----------------------------------------------


@LINUX
async def test_what_the_agent_detached_is_killed_and_reaped_at_close(folder: Path) -> None:
    bystander = subprocess.Popen(["sleep", "60"], start_new_session=True)  # not the session's
    try:
        async with connect(agent("detach", folder), folder) as session:
            await session.prompt("go")
            names = ("child", "setsid", "daemon", "hidden")
            pids = {name: pid_in(folder, name) for name in names}
            assert all(state(pid) not in (None, "Z") for pid in pids.values())
        gone = await until(lambda: all(state(pid) is None for pid in pids.values()))
        assert gone, {name: state(pid) for name, pid in pids.items()}
        assert bystander.poll() is None  # never signalled: it is nobody's in the session
    finally:
        bystander.kill()
        bystander.wait()


@LINUX
def test_this_process_is_made_a_child_subreaper_once() -> None:
    from acp_adapters.transport.families import become_subreaper

    assert become_subreaper() is True
    libc = ctypes.CDLL(None, use_errno=True)
    flag = ctypes.c_int(0)
    assert libc.prctl(37, ctypes.byref(flag), 0, 0, 0) == 0  # PR_GET_CHILD_SUBREAPER
    assert flag.value == 1


# --- a deaf agent ----------------------------------------------------------------------------


async def test_cancel_and_close_do_not_wait_for_an_agent_that_stopped_reading(
    folder: Path,
) -> None:
    with anyio.fail_after(20):
        async with connect(
            agent("deaf", folder), folder, timeouts=acp_adapters.Timeouts(close_grace=0.5)
        ) as session:
            async with anyio.create_task_group() as group:
                # 8 MiB: far more than the pipe holds; the write waits for a reader.
                group.start_soon(session.prompt, "x" * (8 * 1024 * 1024))
                await anyio.sleep(0.5)
                started = time.monotonic()
                sent = await session.cancel()
                assert time.monotonic() - started < 3
                assert sent is False
                assert any(p.kind == "not_sent" for p in session.problems)
                group.cancel_scope.cancel()
            started = time.monotonic()
        assert time.monotonic() - started < 8
    assert state(pid_in(folder, "agent")) is None


_WITHOUT_SUBREAPER = """
import sys
import anyio
import acp_adapters

async def main() -> None:
    pm = acp_adapters.get_plugin_manager(load_entrypoints=False, environ={})
    async with acp_adapters.connect(
        command=sys.argv[2:], cwd=sys.argv[1], pm=pm, subreaper=False
    ) as session:
        await session.prompt("go")

anyio.run(main)
"""


@LINUX
def test_without_the_subreaper_what_the_agent_detached_is_killed_all_the_same(
    folder: Path,
) -> None:
    subprocess.run(
        [sys.executable, "-c", _WITHOUT_SUBREAPER, str(folder), *agent("detach", folder)],
        check=True,
        timeout=60,
    )
    pids = {name: pid_in(folder, name) for name in ("child", "setsid", "daemon", "hidden")}
    deadline = time.monotonic() + 5
    while any(running(pid) for pid in pids.values()) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not [name for name, pid in pids.items() if running(pid)]


# --- the command line and signals ------------------------------------------------------------


def _run(folder: Path, scenario: str) -> subprocess.Popen[str]:
    command = shlex.join(agent(scenario, folder))
    return subprocess.Popen(
        [sys.executable, "-m", "acp_adapters", "run", "--command", command, "hi"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=folder,
        env={**os.environ, "NO_COLOR": "1", "ACP_ADAPTERS_PLUGINS": ""},
        start_new_session=True,
    )


def _wait_for(folder: Path, name: str, within: float = 30.0) -> int:
    deadline = time.monotonic() + within
    while not (folder / f"{name}.pid").exists():
        assert time.monotonic() < deadline, f"no {name}.pid"
        time.sleep(0.02)
    return pid_in(folder, name)


@pytest.mark.parametrize(
    ("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)], ids=["TERM", "HUP"]
)
def test_a_stop_signal_kills_the_agent_and_what_it_detached(
    folder: Path, signum: int, code: int
) -> None:
    cli = _run(folder, "hang")
    agent_pid, detached = _wait_for(folder, "agent"), _wait_for(folder, "detached")
    time.sleep(0.5)  # the turn runs: the agent said it works
    cli.send_signal(signum)
    out, err = cli.communicate(timeout=20)
    assert cli.returncode == code, err
    assert "    working" in out
    if signum == signal.SIGTERM:
        assert err.splitlines()[-1] == (
            "Error: stopped by SIGTERM: the agent and what it started were killed"
        )
    else:
        assert err == ""  # the terminal is gone: nothing more is written to it
    deadline = time.monotonic() + 5
    while (running(agent_pid) or running(detached)) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not running(agent_pid)
    assert not running(detached)


def test_a_first_ctrl_c_cancels_the_turn_and_the_agent_ends_it(folder: Path) -> None:
    cli = _run(folder, "cancellable")
    _wait_for(folder, "agent")
    time.sleep(0.8)
    cli.send_signal(signal.SIGINT)
    out, err = cli.communicate(timeout=20)
    assert cli.returncode == 130, err
    assert out.splitlines()[-1].endswith("stop reason cancelled")
    assert "Ctrl-C again stops the agent now" in err
    assert err.splitlines()[-1] == "Error: interrupted: the agent ended its turn cancelled"


def test_a_second_ctrl_c_kills_an_agent_that_does_not_end_its_turn(folder: Path) -> None:
    cli = _run(folder, "hang")
    agent_pid = _wait_for(folder, "agent")
    _wait_for(folder, "detached")
    time.sleep(0.5)
    cli.send_signal(signal.SIGINT)
    time.sleep(0.5)
    started = time.monotonic()
    cli.send_signal(signal.SIGINT)
    _, err = cli.communicate(timeout=20)
    assert time.monotonic() - started < 4
    assert cli.returncode == 130, err
    assert err.splitlines()[-1] == "Error: interrupted: the agent and what it started were killed"
    assert not running(agent_pid)
