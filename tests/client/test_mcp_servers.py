"""MCP servers reach the agent with session/new, load and resume, as it takes them."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

import acp_adapters
from acp_adapters import McpServer, McpServerError, mcp_servers_from_config

pytestmark = pytest.mark.anyio

AGENT = Path(__file__).parent.parent / "agents" / "mcp_agent.py"
CONFIG = {
    "mcpServers": {
        "files": {"command": "python3", "args": ["-m", "files_server"], "env": {"ROOT": "/srv"}},
        "search": {"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"X-Key": "k"}},
    }
}


async def _received(session: acp_adapters.Session) -> dict[str, Any]:
    turn = await session.prompt("servers")
    (message,) = [i for i in turn.items if i.kind == "assistant_message"]
    return dict(json.loads(message.text))  # type: ignore[union-attr]


async def test_stdio_and_http_servers_reach_the_agent(workspace: Path, connect: Any) -> None:
    servers = mcp_servers_from_config(CONFIG)
    command = [sys.executable, str(AGENT), "http"]
    async with connect(command=command, cwd=workspace, mcp_servers=servers) as session:
        received = await _received(session)
    python3 = os.path.abspath(str(__import__("shutil").which("python3")))
    assert received["new"] == [
        {
            "name": "files",
            "command": python3,  # found on the agent's PATH: ACP wants an absolute path
            "args": ["-m", "files_server"],
            "env": [{"name": "ROOT", "value": "/srv"}],
        },
        {
            "type": "http",
            "name": "search",
            "url": "http://127.0.0.1:9/mcp",
            "headers": [{"name": "X-Key", "value": "k"}],
        },
    ]


async def test_a_server_the_agent_does_not_take_is_an_error_before_anything_is_sent(
    workspace: Path,
) -> None:
    http = McpServer(name="search", transport="http", url="http://127.0.0.1:9/mcp")
    command = [sys.executable, str(AGENT)]  # takes stdio servers only
    async with acp_adapters.connect(command=command, cwd=workspace, new_session=False) as session:
        with pytest.raises(McpServerError, match=r"'search'.*does not take http"):
            await session.new_session(mcp_servers=[http])
        assert session.session_id is None  # no session/new went out
        await session.new_session()  # without it, the session starts
        assert (await _received(session))["new"] == []


async def test_load_and_resume_carry_the_servers_too(workspace: Path) -> None:
    stdio = {"name": "tools", "command": sys.executable, "args": ["tools.py"]}
    command = [sys.executable, str(AGENT)]
    async with acp_adapters.connect(
        command=command, cwd=workspace, new_session=False, mcp_servers=[stdio]
    ) as session:
        await session.load_session("mcp-session")
        await session.resume_session("mcp-session")
        received = await _received(session)
    expected = [{"name": "tools", "command": sys.executable, "args": ["tools.py"], "env": []}]
    assert received["load"] == expected
    assert received["resume"] == expected


def test_the_common_config_format_is_read_and_checked() -> None:
    files, search = mcp_servers_from_config(CONFIG)
    assert (files.transport, files.command, files.args, dict(files.env)) == (
        "stdio",
        "python3",
        ("-m", "files_server"),
        {"ROOT": "/srv"},
    )
    assert (search.transport, search.url, dict(search.headers)) == (
        "http",
        "http://127.0.0.1:9/mcp",
        {"X-Key": "k"},
    )
    for bad, why in [
        ({"mcpServers": []}, "object of servers"),
        ({"a": {"args": ["x"]}}, "no transport"),
        ({"a": {"command": "x", "args": "not a list"}}, "args"),
        ({"a": {"type": "ws", "url": "ws://x"}}, "no transport"),
        ({"a": {"type": "http"}}, "needs a url"),
    ]:
        with pytest.raises(McpServerError, match=why):
            mcp_servers_from_config(bad)


def test_a_v2_agent_gets_typed_servers_and_no_sse() -> None:
    from acp_adapters.client.mcp import wire_servers

    stdio = McpServer(name="t", command="/bin/true")
    sse = McpServer(name="s", transport="sse", url="http://127.0.0.1:9/sse")
    v2_caps = {"session": {"mcp": {"stdio": {}, "http": {}}}}
    assert wire_servers([stdio], 2, v2_caps) == [
        {"type": "stdio", "name": "t", "command": "/bin/true", "args": [], "env": []}
    ]
    with pytest.raises(McpServerError, match="does not take sse"):
        wire_servers([sse], 2, v2_caps)
    with pytest.raises(McpServerError, match="does not take stdio"):
        wire_servers([stdio], 2, {})  # a v2 agent that offers no stdio transport
    with pytest.raises(McpServerError, match="two MCP servers"):
        wire_servers([stdio, stdio], 1, {})
