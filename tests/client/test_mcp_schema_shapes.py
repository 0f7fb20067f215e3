"""MCP servers in the ACP schema's own shape: ``env`` and ``headers`` as lists of ``{name, value}``.

The schema's ``McpServerStdio`` carries ``env: [{"name", "value"}]`` and ``McpServerHttp`` /
``McpServerSse`` carry ``headers: [{"name", "value"}]``; a server written that way (as an
application that forwards another client's servers has it) reaches the agent exactly as the
same server written as a mapping does. A malformed one is an :class:`McpServerError` naming
what is wrong, never an ``AttributeError`` or ``TypeError``.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

import acp_adapters
from acp_adapters import McpServer, McpServerError, mcp_servers_from_config
from acp_adapters.client.mcp import as_servers

pytestmark = pytest.mark.anyio

SCHEMA_SHAPED: list[dict[str, Any]] = [
    {
        "name": "files",
        "command": sys.executable,
        "args": ["-m", "files_server"],
        "env": [{"name": "ROOT", "value": "/srv"}, {"name": "MODE", "value": "ro"}],
    },
    {
        "type": "http",
        "name": "search",
        "url": "http://127.0.0.1:9/mcp",
        "headers": [{"name": "X-Key", "value": "k"}, {"name": "Accept", "value": "*/*"}],
    },
    {
        "type": "sse",
        "name": "events",
        "url": "http://127.0.0.1:9/sse",
        "headers": [{"name": "X-Key", "value": "k", "_meta": {"note": "not kept"}}],
    },
]
MAPPING_SHAPED: list[McpServer] = [
    McpServer(
        name="files",
        command=sys.executable,
        args=("-m", "files_server"),
        env={"ROOT": "/srv", "MODE": "ro"},
    ),
    McpServer(
        name="search",
        transport="http",
        url="http://127.0.0.1:9/mcp",
        headers={"X-Key": "k", "Accept": "*/*"},
    ),
    McpServer(name="events", transport="sse", url="http://127.0.0.1:9/sse", headers={"X-Key": "k"}),
]

#: The agent says it takes HTTP and SSE servers too (v1).
INITIALIZE = {
    "protocolVersion": 1,
    "agentCapabilities": {"mcpCapabilities": {"http": True, "sse": True}},
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def agent(folder: Path) -> list[str]:
    """A v1 agent that takes every transport and ends each turn at once."""
    source = folder / "mcp_shapes_agent.py"
    source.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    m = json.loads(line)\n"
        "    if m.get('method') == 'initialize':\n"
        f"        r = {INITIALIZE!r}\n"
        "    elif m.get('method') == 'session/new':\n"
        "        r = {'sessionId': 's'}\n"
        "    else:\n"
        "        continue\n"
        "    print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': r}), flush=True)\n",
        encoding="utf-8",
    )
    return [sys.executable, str(source)]


async def sent_servers(tmp_path: Path, servers: list[Any]) -> list[dict[str, Any]]:
    """What ``session/new`` carried to the agent, read from the session's recording."""
    record = tmp_path / f"{len(list(tmp_path.iterdir()))}.jsonl"
    with anyio.fail_after(30):
        async with acp_adapters.connect(
            command=agent(tmp_path), cwd=tmp_path, mcp_servers=servers, record=record
        ):
            pass
    for line in record.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        message = entry.get("msg") or {}
        if entry["dir"] == "client->agent" and message.get("method") == "session/new":
            return list(message["params"]["mcpServers"])
    raise AssertionError("no session/new was sent")


async def test_the_schemas_shape_and_a_mapping_reach_the_agent_identically(tmp_path: Path) -> None:
    from_schema = await sent_servers(tmp_path, SCHEMA_SHAPED)
    from_mapping = await sent_servers(tmp_path, list(MAPPING_SHAPED))
    assert from_schema == from_mapping
    assert from_schema[0]["env"] == [
        {"name": "ROOT", "value": "/srv"},
        {"name": "MODE", "value": "ro"},
    ]
    assert from_schema[1]["headers"] == [
        {"name": "X-Key", "value": "k"},
        {"name": "Accept", "value": "*/*"},
    ]
    assert from_schema[2] == {
        "type": "sse",
        "name": "events",
        "url": "http://127.0.0.1:9/sse",
        "headers": [{"name": "X-Key", "value": "k"}],
    }


def test_both_shapes_make_the_same_server() -> None:
    assert as_servers(SCHEMA_SHAPED) == MAPPING_SHAPED
    assert (
        mcp_servers_from_config(
            {
                "mcpServers": {
                    s["name"]: {k: v for k, v in s.items() if k != "name"} for s in SCHEMA_SHAPED
                }
            }
        )
        == MAPPING_SHAPED
    )
    assert McpServer(name="x", command="/bin/x", env=[]) == McpServer(name="x", command="/bin/x")
    assert McpServer(name="x", command="/bin/x", env=[]).to_wire(1)["env"] == []


STDIO = {"name": "x", "command": "/bin/x"}
HTTP = {"name": "h", "transport": "http", "url": "http://127.0.0.1:9/mcp"}


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({**STDIO, "env": [{"name": 1, "value": "v"}]}, "a name in env is not a string: 1"),
        ({**STDIO, "env": [{"name": "A", "value": 2}]}, "env 'A': its value is not a string"),
        ({**STDIO, "env": {"A": None}}, "env 'A': its value is not a string"),
        ({**STDIO, "env": [{"name": "A"}]}, 'env entry 1 is not {"name", "value"}'),
        ({**STDIO, "env": [{"name": "A", "value": "v", "x": 1}]}, "unknown key 'x'"),
        ({**STDIO, "env": ["A=v"]}, "env entry 1 is not an object"),
        ({**STDIO, "env": "A=v"}, "env is an object of strings or a list"),
        ({**STDIO, "env": 5}, "not int"),
        ({**STDIO, "env": [{"name": "A", "value": "1"}, {"name": "A", "value": "2"}]}, "twice"),
        ({**STDIO, "env": [{"name": "A=B", "value": "v"}]}, "cannot be an environment variable"),
        ({**STDIO, "env": {"": "v"}}, "cannot be an environment variable"),
        ({**STDIO, "env": {"A": "v\x00"}}, "cannot be an environment variable"),
        ({**STDIO, "args": "-v"}, "args is not a list of strings"),
        ({**STDIO, "args": [1]}, "args is not a list of strings"),
        ({**STDIO, "command": ["/bin/x"]}, "command is not a string"),
        (
            {**HTTP, "headers": [{"name": "X-A", "value": "a\r\nX-B: b"}]},
            "cannot be an HTTP header",
        ),
        ({**HTTP, "headers": {"X A": "a"}}, "cannot be an HTTP header"),
        ({**HTTP, "headers": [{"name": "X", "value": "1"}, {"name": "X", "value": "2"}]}, "twice"),
        ({**HTTP, "headers": 7}, "headers is an object of strings or a list"),
        ({**HTTP, "url": 7}, "url is not a string"),
        ({"name": 5, "command": "/bin/x"}, "needs a name"),
    ],
)
def test_a_malformed_server_is_an_mcp_server_error(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(McpServerError, match=re.escape(message)):
        McpServer(**fields)
    # The same, as the schema (or a configuration) writes it.
    entry = {("type" if k == "transport" else k): v for k, v in fields.items()}
    if isinstance(entry.get("name"), str):
        with pytest.raises(McpServerError, match=re.escape(message)):
            as_servers([entry])


@pytest.mark.parametrize("servers", [None, 5, "files", {"name": "files"}, [5], [None]])
def test_mcp_servers_that_are_not_a_list_of_servers_are_an_mcp_server_error(servers: Any) -> None:
    with pytest.raises(McpServerError):
        as_servers(servers)
