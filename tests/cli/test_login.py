"""``acp-adapters login``: list an agent's login methods, log in with one (a terminal method
runs the agent's program on this terminal), or log out."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

from .conftest import Invoke, one_error_line

AGENT = Path(__file__).resolve().parents[1] / "agents" / "sessions_agent.py"


def agent(*flags: str) -> str:
    return shlex.join([sys.executable, str(AGENT), *flags])


def test_list_shows_the_methods_the_agent_lists_to_this_client(cli: Invoke, tmp_path: Path) -> None:
    result = cli(
        "login", "--command", agent("--auth", "agent,terminal"), "--cwd", str(tmp_path), "--list"
    )
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [
        "ID           TYPE      NAME",
        "agent-login  agent     Log in with the agent",
        "tui          terminal  Log in",
    ]


def test_an_agent_method_is_asked_of_the_agent(cli: Invoke, tmp_path: Path) -> None:
    result = cli("login", "--command", agent("--auth", "agent"), "--cwd", str(tmp_path))
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "Logged in to sessions-agent with Log in with the agent."


def test_a_terminal_login_runs_on_this_terminal(tmp_path: Path) -> None:
    """A real process: the login reads the answer from the command's own stdin."""
    command = [
        sys.executable,
        "-c",
        "from acp_adapters.cli import main; main()",
        "login",
        "--command",
        agent("--auth", "agent,terminal"),
        "--cwd",
        str(tmp_path),
    ]
    done = subprocess.run(command, input="yes\n", capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "Log in as the agent (tui)?" in done.stdout  # the agent's own login, here
    assert done.stdout.splitlines()[-1].endswith("Logged in to sessions-agent with Log in.")
    assert (tmp_path / ".logged-in").exists()
    failed = subprocess.run(command, input="no\n", capture_output=True, text=True, timeout=60)
    assert failed.returncode == 4
    assert "the terminal login 'tui' failed (exit status 1)" in failed.stderr


def test_several_methods_need_one_named(cli: Invoke, tmp_path: Path) -> None:
    result = cli("login", "--command", agent("--auth", "agent,env_var"), "--cwd", str(tmp_path))
    assert result.exit_code == 2
    assert one_error_line(result).endswith(
        "pass --method ID, one of: agent-login (agent), api-key (env_var)"
    )
    unknown = cli(
        "login", "--command", agent("--auth", "agent"), "--cwd", str(tmp_path), "--method", "x"
    )
    assert unknown.exit_code == 2
    assert "no login method 'x'" in one_error_line(unknown)


def test_logout_is_sent_only_to_an_agent_that_offers_it(cli: Invoke, tmp_path: Path) -> None:
    offered = cli(
        "login", "--command", agent("--offer", "logout"), "--cwd", str(tmp_path), "--logout"
    )
    assert offered.exit_code == 0, offered.stderr
    assert offered.stdout.strip() == "Logged out of sessions-agent."
    refused = cli("login", "--command", agent(), "--cwd", str(tmp_path), "--logout")
    assert refused.exit_code == 1
    assert "does not offer logout" in one_error_line(refused)


def test_an_env_var_method_without_its_variable_says_to_set_it_in_the_shell(
    cli: Invoke, tmp_path: Path
) -> None:
    result = cli(
        "login", "--command", agent("--auth", "env_var"), "--cwd", str(tmp_path),
        env={"SESSIONS_AGENT_KEY": None},
    )  # fmt: skip
    assert result.exit_code == 4
    line = one_error_line(result)
    assert line == (
        "Error: the login method 'api-key' reads SESSIONS_AGENT_KEY from the environment: set "
        "it (export SESSIONS_AGENT_KEY=...), then run again"
    )
    assert "connect(" not in line  # words for a person at a shell, not a program
    given = cli(
        "login", "--command", agent("--auth", "env_var"), "--cwd", str(tmp_path),
        env={"SESSIONS_AGENT_KEY": "k-1"},
    )  # fmt: skip
    assert given.exit_code == 0, given.stderr
