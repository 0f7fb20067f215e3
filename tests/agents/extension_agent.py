"""A scripted agent on the official Python SDK that speaks ACP's extension methods.

    python extension_agent.py

It answers the extension request ``_acme/echo`` with its params; any other extension
request is "method not found". Its prompts:

- ``ask``: it calls the client's extension method ``_acme/ping`` and says what came back
  (the result, or the error's code and message) as JSON;
- ``meta``: it says, as JSON, the ``_meta`` its ``session/prompt`` carried;
- anything else: it says how many extension notifications it received.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import acp
from acp import schema
from acp.helpers import update_agent_message_text

SESSION = "extension-session"


class ExtensionAgent:
    """An ``acp.Agent`` with one extension method of its own."""

    def __init__(self) -> None:
        self.client: Any = None
        self.notified: list[tuple[str, Any]] = []

    def on_connect(self, conn: Any) -> None:
        self.client = conn

    async def initialize(self, protocol_version: int, **_: Any) -> schema.InitializeResponse:
        return schema.InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            agent_capabilities=schema.AgentCapabilities(),
            agent_info=schema.Implementation(name="extension-agent", version="0.1.0"),
        )

    async def new_session(self, cwd: str, **_: Any) -> schema.NewSessionResponse:
        return schema.NewSessionResponse(session_id=SESSION)

    async def cancel(self, session_id: str, **_: Any) -> None:
        return None

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "acme/echo":  # the SDK takes the leading "_" off
            return {"echo": params}
        raise acp.RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        self.notified.append((method, params))

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> Any:
        words = "".join(getattr(block, "text", "") for block in prompt)
        if words == "ask":
            try:
                answer: Any = {"result": await self.client.ext_method("acme/ping", {"n": 1})}
            except acp.RequestError as error:
                answer = {"code": error.code, "message": str(error)}
            text = json.dumps(answer, sort_keys=True)
        elif words == "meta":
            # The SDK hands a request's ``_meta`` keys to the method as keyword arguments.
            meta = {k: v for k, v in kwargs.items() if k != "message_id"}
            text = json.dumps(meta or None, sort_keys=True)
        else:
            text = json.dumps(self.notified)
        await self.client.session_update(session_id, update_agent_message_text(text))
        return schema.PromptResponse(stop_reason="end_turn")


if __name__ == "__main__":
    asyncio.run(acp.run_agent(ExtensionAgent()))
