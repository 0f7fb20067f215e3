"""A scripted agent built on the official Python SDK (``agent-client-protocol``).

    python sdk_agent.py

It speaks ACP v1 as the SDK implements it, so the client meets another
implementation's framing, field spelling and request ids. What a prompt does
depends on its text:

- ``edit``: announce an edit tool call with the diff, ask permission, read the
  file through the client, write it, report the call completed; create a new
  file the same way; run a shell line in a client terminal and report its
  output and exit status.
- ``wait``: ask permission for a tool call and wait; a cancelled turn answers
  ``cancelled``.
- anything else: echo the text back.
"""

from __future__ import annotations

import asyncio
from typing import Any

import acp
from acp import schema
from acp.helpers import (
    start_edit_tool_call,
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    tool_terminal_ref,
    update_agent_message_text,
    update_tool_call,
)

SESSION = "sdk-session"
ALLOW = [
    schema.PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
    schema.PermissionOption(option_id="deny", name="Deny", kind="reject_once"),
]


class ScriptedAgent:
    """An ``acp.Agent`` playing the scripts above."""

    def __init__(self) -> None:
        self.client: Any = None
        self.cwd = "."
        self.cancelled = asyncio.Event()

    def on_connect(self, conn: Any) -> None:
        self.client = conn

    async def initialize(
        self, protocol_version: int, client_capabilities: Any = None, **_: Any
    ) -> schema.InitializeResponse:
        fs = client_capabilities.fs if client_capabilities else None
        name = "sdk-agent" if fs and fs.read_text_file and fs.write_text_file else "sdk-agent-no-fs"
        return schema.InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            agent_capabilities=schema.AgentCapabilities(),
            agent_info=schema.Implementation(name=name, version="0.12.1"),
        )

    async def new_session(self, cwd: str, **_: Any) -> schema.NewSessionResponse:
        self.cwd = cwd
        return schema.NewSessionResponse(session_id=SESSION)

    async def cancel(self, session_id: str, **_: Any) -> None:
        self.cancelled.set()

    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> schema.PromptResponse:
        words = "".join(getattr(block, "text", "") for block in prompt)
        self.cancelled.clear()
        if words == "edit":
            return await self.edit()
        if words == "wait":
            return await self.wait()
        await self.say(f"you said: {words}")
        return schema.PromptResponse(stop_reason="end_turn")

    async def say(self, words: str) -> None:
        await self.client.session_update(SESSION, update_agent_message_text(words))

    async def edit(self) -> schema.PromptResponse:
        existing = f"{self.cwd}/existing.txt"
        old = (await self.client.read_text_file(session_id=SESSION, path=existing)).content
        new = old.replace("beta", "BETA changed")
        diff = tool_diff_content(existing, new, old)
        await self.client.session_update(
            SESSION, start_edit_tool_call("edit-1", "Edit existing.txt", existing, new)
        )
        answer = await self.client.request_permission(
            session_id=SESSION,
            tool_call=schema.ToolCallUpdate(tool_call_id="edit-1", title="Edit existing.txt"),
            options=ALLOW,
        )
        if answer.outcome.outcome != "selected" or answer.outcome.option_id != "allow":
            await self.client.session_update(SESSION, update_tool_call("edit-1", status="failed"))
            return schema.PromptResponse(stop_reason="end_turn")
        await self.client.write_text_file(session_id=SESSION, path=existing, content=new)
        await self.client.session_update(
            SESSION, update_tool_call("edit-1", status="completed", content=[diff])
        )

        created = f"{self.cwd}/created.txt"
        await self.client.session_update(
            SESSION, start_edit_tool_call("edit-2", "Create created.txt", created, "made by sdk\n")
        )
        await self.client.write_text_file(session_id=SESSION, path=created, content="made by sdk\n")
        await self.client.session_update(
            SESSION,
            update_tool_call(
                "edit-2",
                status="completed",
                content=[tool_diff_content(created, "made by sdk\n", None)],
            ),
        )

        terminal = await self.client.create_terminal(
            session_id=SESSION, command="printf 'from the shell'; exit 3", cwd=self.cwd
        )
        await self.client.session_update(
            SESSION,
            start_tool_call(
                "run-1",
                "Run a shell line",
                kind="execute",
                status="in_progress",
                content=[tool_terminal_ref(terminal.terminal_id)],
            ),
        )
        exit_status = await self.client.wait_for_terminal_exit(
            session_id=SESSION, terminal_id=terminal.terminal_id
        )
        ids = {"session_id": SESSION, "terminal_id": terminal.terminal_id}
        output = await self.client.terminal_output(**ids)
        await self.client.release_terminal(**ids)
        await self.client.session_update(
            SESSION,
            update_tool_call(
                "run-1",
                status="failed" if exit_status.exit_code else "completed",
                content=[tool_content(text_block(output.output))],
                raw_output={"exit_code": exit_status.exit_code},
            ),
        )
        await self.say("done")
        return schema.PromptResponse(stop_reason="end_turn")

    async def wait(self) -> schema.PromptResponse:
        await self.client.session_update(
            SESSION, start_tool_call("risky-1", "Something risky", kind="execute", status="pending")
        )
        answer = await self.client.request_permission(
            session_id=SESSION,
            tool_call=schema.ToolCallUpdate(tool_call_id="risky-1"),
            options=ALLOW,
        )
        if answer.outcome.outcome == "cancelled" or self.cancelled.is_set():
            await self.client.session_update(SESSION, update_tool_call("risky-1", status="failed"))
            return schema.PromptResponse(stop_reason="cancelled")
        await self.say("went ahead")
        return schema.PromptResponse(stop_reason="end_turn")


if __name__ == "__main__":
    asyncio.run(acp.run_agent(ScriptedAgent()))
