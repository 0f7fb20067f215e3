"""The loopback MCP server the real agents are given, checked on its own (stdio and HTTP)."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .mcp_probe_server import (
    DESCRIPTION,
    ECHO_PREFIX,
    TOOL,
    McpProbeHttpServer,
    methods_of,
)

PROBE = Path(__file__).with_name("mcp_probe_server.py")
SESSION = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {}},
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": TOOL, "arguments": {"text": "hi"}},
    },
    {
        "jsonrpc": "2.0",
        "id": 4,
        "method": "tools/call",
        "params": {"name": "other", "arguments": {}},
    },
    {"jsonrpc": "2.0", "id": 5, "method": "server/discover"},
]


def check_answers(answers: list[dict[str, Any]]) -> None:
    assert [a["id"] for a in answers] == [1, 2, 3, 4, 5]
    init, listed, called, refused, unknown = answers
    assert init["result"]["protocolVersion"] == "2025-06-18"
    assert init["result"]["capabilities"] == {"tools": {"listChanged": False}}
    (tool,) = listed["result"]["tools"]
    assert (tool["name"], tool["description"]) == (TOOL, DESCRIPTION)
    assert tool["inputSchema"]["required"] == ["text"]
    assert called["result"] == {
        "content": [{"type": "text", "text": ECHO_PREFIX + "hi"}],
        "isError": False,
    }
    assert refused["error"]["code"] == -32602
    assert unknown["error"]["code"] == -32601


def test_stdio_answers_each_request_and_logs_what_it_got(tmp_path: Path) -> None:
    log = tmp_path / "probe.jsonl"
    lines = "".join(json.dumps(m) + "\n" for m in SESSION) + "not json\n\n"
    done = subprocess.run(
        [sys.executable, str(PROBE), "--log", str(log)],
        input=lines,
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    check_answers([json.loads(line) for line in done.stdout.splitlines()])
    assert methods_of(log) == [m["method"] for m in SESSION]
    assert methods_of(tmp_path / "never.jsonl") == []


def post(url: str, body: Any) -> tuple[int, dict[str, str], bytes]:
    where = urlsplit(url)
    connection = http.client.HTTPConnection(where.hostname, where.port, timeout=10)
    try:
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        connection.request("POST", where.path, body=json.dumps(body), headers=headers)
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def test_http_answers_each_request_with_one_json_body() -> None:
    with McpProbeHttpServer() as probe:
        answers = []
        for message in SESSION:
            status, headers, body = post(probe.url, message)
            if "id" not in message:
                assert (status, body) == (202, b"")
                continue
            assert status == 200
            assert headers["content-type"] == "application/json"
            if message["method"] == "initialize":
                assert headers["mcp-session-id"] == probe.session_id
            answers.append(json.loads(body))
        check_answers(answers)
        assert probe.methods == [m["method"] for m in SESSION]
        status, _, body = post(probe.url, SESSION[2:4])  # a batch
        assert status == 200
        assert [a["id"] for a in json.loads(body)] == [2, 3]
