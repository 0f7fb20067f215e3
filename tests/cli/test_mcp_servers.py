"""``acp-adapters run --mcp-config FILE --mcp-server NAME=...``: the MCP servers the agent gets.

The scripted agent ``tests/agents/mcp_agent.py`` answers the prompt ``servers`` with the
servers its ``session/new`` carried, as the official SDK read them.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from acp_adapters.cli.errors import EXIT_MCP_SERVER, EXIT_USAGE
from acp_adapters.cli.mcp_servers import MAX_CONFIG_BYTES, read_config, recorded_servers
from acp_adapters.client import McpServer

from .conftest import ROOT, Invoke, one_error_line

MCP_AGENT = ROOT / "tests" / "agents" / "mcp_agent.py"

FILES = {
    "command": "/usr/bin/env",
    "args": ["files-mcp", "--root", "/srv"],
    "env": {"ROOT": "/srv"},
}
FILES_WIRE = {
    "name": "files",
    "command": "/usr/bin/env",
    "args": ["files-mcp", "--root", "/srv"],
    "env": [{"name": "ROOT", "value": "/srv"}],
}


def mcp_agent(*transports: str) -> str:
    """``--command`` for the scripted MCP agent (taking stdio, and these transports)."""
    return shlex.join([sys.executable, str(MCP_AGENT), *transports])


def received(cli: Invoke, *options: str, agent: str | None = None) -> Any:
    """The servers the agent's ``session/new`` carried, as it reports them."""
    result = cli("run", "--format", "json", "--command", agent or mcp_agent(), *options, "servers")
    assert result.exit_code == 0, result.stderr
    rows = json.loads(result.stdout)
    message = next(row for row in rows if row["kind"] == "assistant_message")
    return json.loads(message["text"])["new"]


def write(path: Path, config: Any) -> str:
    path.write_text(json.dumps(config), encoding="utf-8")
    return str(path)


def test_without_servers_the_agent_gets_none(cli: Invoke) -> None:
    assert received(cli) == []


def test_the_servers_of_a_config_file(cli: Invoke, tmp_path: Path) -> None:
    config = write(tmp_path / "mcp.json", {"mcpServers": {"files": FILES}, "other": "kept out"})
    assert received(cli, "--mcp-config", config) == [FILES_WIRE]


def test_a_config_of_the_servers_alone(cli: Invoke, tmp_path: Path) -> None:
    config = write(tmp_path / "servers.json", {"files": FILES})
    assert received(cli, "--mcp-config", config) == [FILES_WIRE]


def test_every_file_and_every_server_in_order(cli: Invoke, tmp_path: Path) -> None:
    first = write(tmp_path / "a.json", {"mcpServers": {"files": FILES}})
    second = write(
        tmp_path / "b.json",
        {"mcpServers": {"search": {"type": "http", "url": "http://127.0.0.1:8931/mcp"}}},
    )
    servers = received(
        cli,
        "--mcp-server",
        f"echo={sys.executable} -m echo_mcp --say 'two words'",
        "--mcp-config",
        first,
        "--mcp-server",
        "docs=https://mcp.example.com/mcp",
        "--mcp-config",
        second,
        agent=mcp_agent("http"),
    )
    assert servers == [
        FILES_WIRE,
        {"name": "search", "type": "http", "url": "http://127.0.0.1:8931/mcp", "headers": []},
        {
            "name": "echo",
            "command": sys.executable,
            "args": ["-m", "echo_mcp", "--say", "two words"],
            "env": [],
        },
        {"name": "docs", "type": "http", "url": "https://mcp.example.com/mcp", "headers": []},
    ]


def test_a_command_by_name_is_looked_up_on_the_path(cli: Invoke, tmp_path: Path) -> None:
    tool = tmp_path / "bin" / "notes-mcp"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    env = {"PATH": f"{tool.parent}:/usr/bin:/bin"}
    result = cli(
        "run",
        "--format",
        "json",
        "--command",
        mcp_agent(),
        "--mcp-server",
        "notes = notes-mcp --db notes.db",
        "servers",
        env=env,
    )
    assert result.exit_code == 0, result.stderr
    text = next(r["text"] for r in json.loads(result.stdout) if r["kind"] == "assistant_message")
    assert json.loads(text)["new"] == [
        {"name": "notes", "command": str(tool), "args": ["--db", "notes.db"], "env": []}
    ]


# --- an agent that does not take the server ---------------------------------------------


def test_an_http_server_for_an_agent_without_http(cli: Invoke) -> None:
    result = cli(
        "run", "--command", mcp_agent(), "--mcp-server", "docs=https://mcp.example.com/mcp", "hi"
    )
    assert result.exit_code == EXIT_MCP_SERVER == 6
    assert one_error_line(result) == (
        "Error: MCP server 'docs': the agent does not take http servers (it takes: stdio); "
        "leave that server out, or change it (--mcp-config, --mcp-server)"
    )
    assert result.stdout == ""  # nothing was sent: no session, no timeline


def test_an_sse_server_of_a_config_for_an_agent_with_http_only(cli: Invoke, tmp_path: Path) -> None:
    config = write(
        tmp_path / "mcp.json", {"mcpServers": {"live": {"type": "sse", "url": "http://h/sse"}}}
    )
    result = cli("run", "--command", mcp_agent("http"), "--mcp-config", config, "hi")
    assert result.exit_code == EXIT_MCP_SERVER
    assert "MCP server 'live': the agent does not take sse servers (it takes: http, stdio)" in (
        one_error_line(result)
    )


def test_a_command_not_on_the_agents_path(cli: Invoke) -> None:
    result = cli("run", "--command", mcp_agent(), "--mcp-server", "x=no-such-mcp-server", "hi")
    assert result.exit_code == EXIT_MCP_SERVER
    assert "MCP server 'x': 'no-such-mcp-server' is not on the agent's PATH" in (
        one_error_line(result)
    )


# --- usage errors: before any agent starts ---------------------------------------------------

#: An agent that is not installed: a usage error comes before it is looked for (exit 3).
ABSENT = "no-such-agent-here --acp"


def _usage_error(cli: Invoke, *options: str) -> str:
    result = cli("run", "--command", ABSENT, *options, "hi")
    assert result.exit_code == EXIT_USAGE, result.stderr
    return one_error_line(result)


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b'{"mcpServers": {', "is not valid JSON (Expecting property name enclosed in double"),
        (b"", "is not valid JSON (Expecting value: line 1 column 1)"),
        (b"\xff\xfe\xfa", "is not UTF-8 text"),
        (b"[1, 2]", "is not an mcpServers configuration: an MCP configuration is an object"),
        (b'{"mcpServers": [1]}', "an MCP configuration is an object of servers by name"),
        (b'{"mcpServers": {"a": 1}}', "MCP server 'a': not an object"),
        (b'{"mcpServers": {"a": {"args": []}}}', "MCP server 'a': no transport None"),
        (b'{"a": {"command": "x", "args": "y"}}', "MCP server 'a': args is not a list of strings"),
        (b'{"a": {"type": "http"}}', "MCP server 'a': an http server needs a url"),
    ],
)
def test_a_bad_config_file(cli: Invoke, tmp_path: Path, content: bytes, says: str) -> None:
    config = tmp_path / "bad config.json"
    config.write_bytes(content)
    line = _usage_error(cli, "--mcp-config", str(config))
    assert line.startswith(f"Error: --mcp-config '{config}' ")
    assert says in line


def test_a_config_file_that_cannot_be_read(cli: Invoke, tmp_path: Path) -> None:
    missing = tmp_path / "missing.json"
    line = _usage_error(cli, "--mcp-config", str(missing))
    assert line == f"Error: --mcp-config {missing} cannot be read (No such file or directory)"
    line = _usage_error(cli, "--mcp-config", str(tmp_path))
    assert line == f"Error: --mcp-config {tmp_path} cannot be read (Is a directory)"


def test_a_config_file_too_large_is_not_read_to_its_end(cli: Invoke, tmp_path: Path) -> None:
    large = tmp_path / "large.json"
    large.write_bytes(b" " * (MAX_CONFIG_BYTES + 1))
    assert _usage_error(cli, "--mcp-config", str(large)).endswith("is larger than 16 MiB")


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("files", "--mcp-server files is not NAME=COMMAND ARGS or NAME=URL"),
        ("=files-mcp", "--mcp-server =files-mcp is not NAME=COMMAND ARGS or NAME=URL"),
        ("files=", "--mcp-server files= has no command: give NAME=COMMAND ARGS or NAME=URL"),
        ("files=  ", "has no command: give NAME=COMMAND ARGS or NAME=URL"),
        ("files='unterminated", "is not a command line (No closing quotation)"),
        ("docs=https://", "--mcp-server docs=https:// is not NAME=URL of a server"),
        ("docs=http://a b", "is not NAME=URL of a server"),
        ("docs=http://[::1/mcp", "is not NAME=URL of a server"),
    ],
)
def test_a_bad_server_option(cli: Invoke, value: str, says: str) -> None:
    assert says in _usage_error(cli, "--mcp-server", value)


def test_two_servers_of_one_name(cli: Invoke, tmp_path: Path) -> None:
    config = write(tmp_path / "mcp.json", {"mcpServers": {"files": FILES}})
    line = _usage_error(cli, "--mcp-config", config, "--mcp-server", "files=/bin/cat")
    assert line == (
        f"Error: two MCP servers are named 'files' (--mcp-config {config}; "
        "--mcp-server files=/bin/cat): give each a name of its own"
    )


# --- recorded, then replayed ---------------------------------------------------------------


def test_a_recorded_session_with_servers_replays_exactly(cli: Invoke, tmp_path: Path) -> None:
    record = tmp_path / "session.jsonl"
    options = ("--mcp-server", "files=/usr/bin/env files-mcp", "--mcp-server", "docs=http://h/mcp")
    result = cli(
        "run", "--command", mcp_agent("http"), *options, "--record", str(record), "servers"
    )
    assert result.exit_code == 0, result.stderr
    new = next(
        json.loads(line)["msg"]
        for line in record.read_text(encoding="utf-8").splitlines()
        if json.loads(line)["msg"].get("method") == "session/new"
    )
    assert [server["name"] for server in new["params"]["mcpServers"]] == ["files", "docs"]
    replayed = cli("replay", str(record))
    assert replayed.exit_code == 0, replayed.stderr
    assert replayed.stdout.splitlines()[-1] == result.stdout.splitlines()[-1]


def test_the_servers_of_a_capture_are_sent_again_only_as_recorded() -> None:
    stdio = {"name": "a", "command": "/bin/a", "args": ["-x"], "env": [{"name": "K", "value": "v"}]}
    http = {
        "type": "http",
        "name": "b",
        "url": "http://h",
        "headers": [{"name": "H", "value": "1"}],
    }
    assert recorded_servers([stdio, {**stdio, "type": "stdio", "name": "c"}, http]) == [
        McpServer(name="a", command="/bin/a", args=("-x",), env={"K": "v"}),
        McpServer(name="c", command="/bin/a", args=("-x",), env={"K": "v"}),
        McpServer(name="b", transport="http", url="http://h", headers={"H": "1"}),
    ]
    # What this client would not send so (a capture is untrusted): no servers at all.
    for servers in (
        None,
        {"a": stdio},
        [{**stdio, "command": "a"}],  # not an absolute path
        [{**stdio, "env": {"K": "v"}}],
        [{**stdio, "env": [{"name": "K", "value": "v"}, {"name": "K", "value": "w"}]}],
        [{**stdio, "args": "-x"}],
        [{**http, "type": "ws"}],
        [{**http, "url": None}],
        [{**stdio, "name": ""}],
        [stdio, 1],
    ):
        assert recorded_servers(servers) == []


def test_the_pages_config_example_is_one(tmp_path: Path) -> None:
    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    section = page.split("### MCP servers\n")[1].split("\n### ")[0]
    example = section.split("```json\n")[1].split("```")[0]
    config = tmp_path / "mcp.json"
    config.write_text(example, encoding="utf-8")
    assert read_config(str(config)) == [
        McpServer(name="files", command="/usr/bin/env", args=("files-mcp",), env={"ROOT": "/srv"}),
        McpServer(
            name="search",
            transport="http",
            url="http://127.0.0.1:8931/mcp",
            headers={"Authorization": "Bearer ..."},
        ),
    ]
