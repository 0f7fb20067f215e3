"""Logging in: agent methods, terminal methods run through the application, the older
env_var methods, logout, and the typed error of an agent that wants a login first."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

import acp_adapters
from acp_adapters import AuthenticationRequiredError, CapabilityError, LoginCommand
from acp_adapters.client.auth import auth_methods

pytestmark = pytest.mark.anyio

AGENT = Path(__file__).parent.parent / "agents" / "sessions_agent.py"


def agent(*flags: str) -> list[str]:
    return [sys.executable, str(AGENT), *flags]


def methods_sent(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


def connect(log: Path, workspace: Path, *flags: str, **kwargs: Any) -> Any:
    env = {"SESSIONS_AGENT_LOG": str(log), **kwargs.pop("env", {})}
    return acp_adapters.connect(command=agent(*flags), cwd=workspace, env=env, **kwargs)


async def test_authentication_required_is_a_typed_error_listing_the_methods(
    workspace: Path, tmp_path: Path
) -> None:
    log = tmp_path / "log.jsonl"
    with pytest.raises(AuthenticationRequiredError) as raised:
        async with connect(log, workspace, "--auth", "agent,env_var", "--require-login"):
            pass
    assert [m["id"] for m in raised.value.methods] == ["agent-login", "api-key"]
    assert "agent-login, api-key" in str(raised.value)


@pytest.mark.parametrize("version", ["v1", "v2"])
async def test_an_agent_method_logs_in_then_a_session_opens(
    workspace: Path, tmp_path: Path, version: str
) -> None:
    log = tmp_path / "log.jsonl"
    flags = ["--auth", "agent", "--require-login", *(["--v2"] if version == "v2" else [])]
    async with connect(log, workspace, *flags, new_session=False) as session:
        assert [m.id for m in session.login_methods] == ["agent-login"]
        with pytest.raises(AuthenticationRequiredError):
            await session.new_session()
        await session.authenticate("agent-login")
        assert await session.new_session() == "s-1"
    login = "auth/login" if version == "v2" else "authenticate"
    (sent,) = [e for e in methods_sent(log) if e["method"] == login]
    assert sent["params"] == {"methodId": "agent-login"}


async def test_an_env_var_method_needs_its_variables_before_anything_is_sent(
    workspace: Path, tmp_path: Path
) -> None:
    log = tmp_path / "log.jsonl"
    async with connect(log, workspace, "--auth", "env_var", new_session=False) as session:
        (method,) = session.login_methods
        assert (method.type, method.vars) == ("env_var", ("SESSIONS_AGENT_KEY",))
        with pytest.raises(acp_adapters.AcpAdaptersError, match="SESSIONS_AGENT_KEY"):
            await session.authenticate("api-key")
    assert "authenticate" not in [e["method"] for e in methods_sent(log)]
    env = {"SESSIONS_AGENT_KEY": "secret"}
    async with connect(log, workspace, "--auth", "env_var", env=env, new_session=False) as session:
        await session.authenticate("api-key")
    assert "authenticate" in [e["method"] for e in methods_sent(log)]


async def test_terminal_login_is_offered_only_with_a_login_callback(
    workspace: Path, tmp_path: Path
) -> None:
    log = tmp_path / "log.jsonl"
    async with connect(log, workspace, "--auth", "terminal", new_session=False) as session:
        assert session.login_methods == []
    (first,) = [e for e in methods_sent(log) if e["method"] == "initialize"]
    assert "auth" not in first["params"]["clientCapabilities"]


@pytest.mark.parametrize("version", ["v1", "v2"])
async def test_a_terminal_login_runs_the_agents_program_through_the_application(
    workspace: Path, tmp_path: Path, version: str
) -> None:
    log = tmp_path / "log.jsonl"
    ran: list[LoginCommand] = []

    async def login(command: LoginCommand) -> int:
        ran.append(command)
        done = await anyio.run_process(
            list(command.argv), input=b"yes\n", cwd=command.cwd, env=dict(command.env), check=False
        )
        return done.returncode

    flags = ["--auth", "terminal", "--require-login", *(["--v2"] if version == "v2" else [])]
    async with connect(log, workspace, *flags, new_session=False, login=login) as session:
        (method,) = session.login_methods
        assert method.runs_in_terminal
        assert method.args == ("--login",)
        await session.authenticate("tui")
        assert await session.new_session() == "s-1"
    (command,) = ran
    assert command.argv == (*agent(*flags), "--login")
    assert command.env["LOGIN_MODE"] == "tui"
    assert command.cwd == str(workspace.resolve())
    assert (workspace / ".logged-in").exists()
    sent = [e["method"] for e in methods_sent(log)]
    # A terminal method is never passed to authenticate.
    assert "authenticate" not in sent
    assert "auth/login" not in sent
    (initialize,) = [e for e in methods_sent(log) if e["method"] == "initialize"]
    offered = initialize["params"]["clientCapabilities"]["auth"]
    assert offered == {"terminal": True}


async def test_a_failed_terminal_login_is_an_error(workspace: Path, tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"

    async def login(command: LoginCommand) -> int:
        done = await anyio.run_process(
            list(command.argv), input=b"no\n", cwd=command.cwd, env=dict(command.env), check=False
        )
        return done.returncode

    async with connect(log, workspace, "--auth", "terminal", new_session=False, login=login) as s:
        with pytest.raises(acp_adapters.AcpAdaptersError, match="exit status 1"):
            await s.authenticate("tui")
        with pytest.raises(acp_adapters.AcpAdaptersError, match="no login method"):
            await s.authenticate("nope")


async def test_logout_is_gated_on_the_agent(workspace: Path, tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    async with connect(log, workspace) as session:
        with pytest.raises(CapabilityError):
            await session.logout()
    async with connect(log, workspace, "--offer", "logout") as session:
        await session.logout()
    async with connect(log, workspace, "--v2", "--auth", "agent") as session:
        await session.logout()  # v2: every agent with a login method takes auth/logout
    sent = [e["method"] for e in methods_sent(log)]
    assert sent.count("logout") == 1
    assert sent.count("auth/logout") == 1


def test_auth_methods_are_read_as_the_schema_allows() -> None:
    read = auth_methods(
        [
            {"id": "a", "name": "Agent"},
            {
                "type": "terminal",
                "id": "t",
                "name": "TUI",
                "args": ["--x", 3],
                "env": {"K": "v", "N": 1},
            },
            {"type": "env_var", "id": "e", "name": "Key", "vars": [{"name": "KEY"}, "junk"]},
            {"id": 3, "name": "no id"},
            "junk",
        ],
        1,
    )
    assert [(m.id, m.type) for m in read] == [("a", "agent"), ("t", "terminal"), ("e", "env_var")]
    assert read[1].args == ("--x",)
    assert dict(read[1].env) == {"K": "v"}
    assert read[2].vars == ("KEY",)
    v2 = auth_methods(
        [
            {
                "type": "terminal",
                "methodId": "t",
                "name": "TUI",
                "env": [{"name": "K", "value": "v"}],
            }
        ],
        2,
    )
    assert dict(v2[0].env) == {"K": "v"}
