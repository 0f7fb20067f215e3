"""A scripted agent on the official Python SDK with a boolean configuration option.

    python config_agent.py

Its sessions offer one option, ``fast`` (boolean, off); ``session/set_config_option``
sets it only when the client offered ``session.configOptions.boolean`` (else it answers
-32602, as an agent that must not send what the client cannot show). The prompt
``capabilities`` answers with the client capabilities ``initialize`` carried, as JSON; the
prompt ``report`` reports the session: its usage (1200 of 200000 tokens, 0.02 USD), its
title (``Fixing the parser``) and one command (``/test``).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import acp
from acp import schema
from acp.helpers import update_agent_message_text

SESSION = "config-session"


class ConfigAgent:
    """An ``acp.Agent`` with one boolean option, honoured only where the client offered it."""

    def __init__(self) -> None:
        self.client: Any = None
        self.offered: dict[str, Any] = {}
        self.fast = False

    def on_connect(self, conn: Any) -> None:
        self.client = conn

    async def initialize(
        self, protocol_version: int, client_capabilities: Any = None, **_: Any
    ) -> schema.InitializeResponse:
        if client_capabilities is not None:
            self.offered = client_capabilities.model_dump(by_alias=True, exclude_none=True)
        return schema.InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            agent_capabilities=schema.AgentCapabilities(),
            agent_info=schema.Implementation(name="config-agent", version="0.1.0"),
        )

    def _options(self) -> list[Any]:
        return [
            schema.SessionConfigOptionBoolean(
                id="fast", name="Fast mode", type="boolean", currentValue=self.fast
            )
        ]

    def _takes_booleans(self) -> bool:
        options = (self.offered.get("session") or {}).get("configOptions") or {}
        return "boolean" in options

    async def new_session(self, cwd: str, **_: Any) -> schema.NewSessionResponse:
        return schema.NewSessionResponse(session_id=SESSION, config_options=self._options())

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **_: Any
    ) -> schema.SetSessionConfigOptionResponse:
        if config_id != "fast" or not isinstance(value, bool) or not self._takes_booleans():
            raise acp.RequestError.invalid_params({"configId": config_id})
        self.fast = value
        return schema.SetSessionConfigOptionResponse(configOptions=self._options())

    async def cancel(self, session_id: str, **_: Any) -> None:
        return None

    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> Any:
        words = "".join(getattr(block, "text", "") for block in prompt)
        if words == "report":
            for update in (
                schema.UsageUpdate(
                    sessionUpdate="usage_update",
                    used=1200,
                    size=200000,
                    cost=schema.Cost(amount=0.02, currency="USD"),
                ),
                schema.SessionInfoUpdate(
                    sessionUpdate="session_info_update", title="Fixing the parser"
                ),
                schema.AvailableCommandsUpdate(
                    sessionUpdate="available_commands_update",
                    availableCommands=[schema.AvailableCommand(name="test", description="Run")],
                ),
            ):
                await self.client.session_update(session_id, update)
        text = json.dumps(self.offered, sort_keys=True) if words == "capabilities" else words
        await self.client.session_update(session_id, update_agent_message_text(text))
        return schema.PromptResponse(stop_reason="end_turn")


if __name__ == "__main__":
    asyncio.run(acp.run_agent(ConfigAgent()))
