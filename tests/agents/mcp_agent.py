"""A scripted agent that reports the MCP servers it was given (standard library only).

    python mcp_agent.py [http] [sse]

It takes stdio MCP servers (every ACP v1 agent must), and HTTP or SSE servers when
named on its command line (its ``mcpCapabilities``). ``session/new``, ``session/load``
and ``session/resume`` each keep the servers they carried; the prompt ``servers``
answers with them as JSON, one agent message: ``{"new" | "load" | "resume": [server,
...]}``, each server as the official Python SDK reads it from the wire (``read_server``:
the agent was built on the SDK, and reports the same).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from stdio_rpc import (
    Connection,
    Params,
    RpcError,
    answer_initialize,
    prompt_text,
    string,
    text_chunk,
)

SESSION = "mcp-session"

#: The fields of each kind of server, as the SDK's models have them, by its ``type``
#: (a stdio server has none); each field is a string, or a list of strings ("args") or
#: of ``{"name", "value"}`` pairs ("env", "headers").
KINDS: dict[str | None, tuple[str, ...]] = {
    "http": ("name", "url", "headers"),
    "sse": ("name", "url", "headers"),
    "acp": ("name", "serverId"),
    None: ("name", "command", "args", "env"),
}


def _valid(field: str, value: Any) -> bool:
    if field == "args":
        return isinstance(value, list) and all(isinstance(arg, str) for arg in value)
    if field in ("env", "headers"):
        return isinstance(value, list) and all(
            isinstance(pair, dict)
            and isinstance(pair.get("name"), str)
            and isinstance(pair.get("value"), str)
            for pair in value
        )
    return isinstance(value, str)


def _meta(fields: dict[str, Any], source: dict[str, Any]) -> dict[str, Any]:
    """``fields`` with the ``_meta`` object of ``source``, where it has one."""
    if isinstance(source.get("_meta"), dict):
        fields["_meta"] = source["_meta"]
    return fields


def read_server(server: Any) -> dict[str, Any] | None:
    """The server as the SDK reads it (its fields alone, ``type`` last, a pair's
    ``_meta`` kept when it is an object), or None for one the SDK skips as invalid."""
    if not isinstance(server, dict):
        return None
    kind = server.get("type") if server.get("type") in ("http", "sse", "acp") else None
    fields = KINDS[kind]
    if not all(field in server and _valid(field, server[field]) for field in fields):
        return None
    read: dict[str, Any] = {}
    for field in fields:
        value = server[field]
        if field in ("env", "headers"):
            value = [_meta({"name": p["name"], "value": p["value"]}, p) for p in value]
        read[field] = value
    _meta(read, server)
    if kind is not None:
        read["type"] = kind
    return read


class McpReportingAgent:
    """An agent that keeps and reports the MCP servers each session method carried."""

    def __init__(self, transports: set[str]) -> None:
        self.client = Connection()
        self.transports = transports
        self.received: dict[str, list[Any]] = {}

    async def initialize(self, params: Params) -> dict[str, Any]:
        capabilities = {
            "loadSession": True,
            "mcpCapabilities": {"http": "http" in self.transports, "sse": "sse" in self.transports},
            "sessionCapabilities": {"resume": {}},
        }
        return answer_initialize("mcp-agent", "0.1.0", capabilities)

    def _keep(self, method: str, params: Params) -> None:
        string(params, "cwd")
        servers = params.get("mcpServers")
        if servers is None and method == "resume":  # the one method that may leave them out
            servers = []
        if not isinstance(servers, list):
            raise RpcError.invalid_params({"errors": ["mcpServers: a list is required"]})
        read = (read_server(server) for server in servers)
        self.received[method] = [server for server in read if server is not None]

    async def new_session(self, params: Params) -> dict[str, Any]:
        self._keep("new", params)
        return {"sessionId": SESSION}

    async def load_session(self, params: Params) -> dict[str, Any]:
        string(params, "sessionId")
        self._keep("load", params)
        return {}

    async def resume_session(self, params: Params) -> dict[str, Any]:
        string(params, "sessionId")
        self._keep("resume", params)
        return {}

    async def cancel(self, params: Params) -> None:
        return None

    async def prompt(self, params: Params) -> dict[str, Any]:
        words = prompt_text(params)
        text = json.dumps(self.received, sort_keys=True) if words == "servers" else words
        await self.client.update(params["sessionId"], text_chunk(text))
        return {"stopReason": "end_turn"}

    def serve(self) -> None:
        self.client.serve(
            {
                "initialize": self.initialize,
                "session/new": self.new_session,
                "session/load": self.load_session,
                "session/resume": self.resume_session,
                "session/prompt": self.prompt,
            },
            {"session/cancel": self.cancel},
        )


if __name__ == "__main__":
    McpReportingAgent(set(sys.argv[1:])).serve()
