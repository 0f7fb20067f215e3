"""A scripted agent on the official Python SDK that reports the MCP servers it was given.

    python mcp_agent.py [http] [sse]

It takes stdio MCP servers (every ACP v1 agent must), and HTTP or SSE servers when
named on its command line (its ``mcpCapabilities``). ``session/new``, ``session/load``
and ``session/resume`` each keep the servers they carried; the prompt ``servers``
answers with them as JSON, one agent message: ``{"new" | "load" | "resume": [server,
...]}``, each server as the SDK read it from the wire.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import acp
from acp import schema
from acp.helpers import update_agent_message_text

SESSION = "mcp-session"


class McpReportingAgent:
    """An ``acp.Agent`` that keeps and reports the MCP servers each session method carried."""

    def __init__(self, transports: set[str]) -> None:
        self.client: Any = None
        self.transports = transports
        self.received: dict[str, list[Any]] = {}

    def on_connect(self, conn: Any) -> None:
        self.client = conn

    async def initialize(self, protocol_version: int, **_: Any) -> schema.InitializeResponse:
        return schema.InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            agent_capabilities=schema.AgentCapabilities(
                load_session=True,
                mcp_capabilities=schema.McpCapabilities(
                    http="http" in self.transports, sse="sse" in self.transports
                ),
                session_capabilities=schema.SessionCapabilities(
                    resume=schema.SessionResumeCapabilities()
                ),
            ),
            agent_info=schema.Implementation(name="mcp-agent", version="0.1.0"),
        )

    def _keep(self, method: str, servers: Any) -> None:
        self.received[method] = [
            server.model_dump(by_alias=True, exclude_none=True) for server in servers or []
        ]

    async def new_session(self, cwd: str, mcp_servers: Any = None, **_: Any) -> Any:
        self._keep("new", mcp_servers)
        return schema.NewSessionResponse(session_id=SESSION)

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: Any = None, **_: Any
    ) -> Any:
        self._keep("load", mcp_servers)
        return schema.LoadSessionResponse()

    async def resume_session(
        self, cwd: str, session_id: str, mcp_servers: Any = None, **_: Any
    ) -> Any:
        self._keep("resume", mcp_servers)
        return schema.ResumeSessionResponse()

    async def cancel(self, session_id: str, **_: Any) -> None:
        return None

    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> Any:
        words = "".join(getattr(block, "text", "") for block in prompt)
        text = json.dumps(self.received, sort_keys=True) if words == "servers" else words
        await self.client.session_update(session_id, update_agent_message_text(text))
        return schema.PromptResponse(stop_reason="end_turn")


if __name__ == "__main__":
    # session/resume is among the SDK's unstable methods.
    asyncio.run(acp.run_agent(McpReportingAgent(set(sys.argv[1:])), use_unstable_protocol=True))
