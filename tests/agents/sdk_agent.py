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
- ``write``, ``change``, ``patch``, ``rewrite``, ``shell``, ``plan``: the contract
  scenarios (one edit tool call over new.txt, existing.txt, both, or a 600-line
  big.txt, asked first; a shell line in a terminal; a plan).
- anything else: echo the text back.
"""

from __future__ import annotations

import asyncio
from typing import Any

import acp
from acp import schema
from acp.helpers import (
    plan_entry,
    start_edit_tool_call,
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    tool_terminal_ref,
    update_agent_message_text,
    update_plan,
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
        script = self.scripts().get(words)
        if script is not None:
            await script()
            return schema.PromptResponse(stop_reason="end_turn")
        await self.say(f"you said: {words}")
        return schema.PromptResponse(stop_reason="end_turn")

    def scripts(self) -> dict[str, Any]:
        """The prompts of the contract scenarios (``tests/peers/record_scenarios.py``)."""
        existing, created, big = (f"{self.cwd}/{n}" for n in ("existing.txt", "new.txt", "big.txt"))
        rewritten = "".join(f"row {n} of the new file\n" for n in range(600))

        def changed(text: str | None) -> str:
            return (text or "").replace("beta", "BETA changed")

        return {
            "write": lambda: self.change_files("write-1", [(created, lambda _: "brand new\n")]),
            "change": lambda: self.change_files("change-1", [(existing, changed)]),
            "patch": lambda: self.change_files(
                "patch-1", [(created, lambda _: "brand new\n"), (existing, changed)]
            ),
            "rewrite": lambda: self.change_files("rewrite-1", [(big, lambda _: rewritten)]),
            "shell": self.shell,
            "plan": self.plan,
        }

    async def change_files(self, call_id: str, changes: list[tuple[str, Any]]) -> None:
        """One edit tool call over ``changes`` ((path, old text -> new text)), asked first."""
        diffs, writes = [], []
        for path, make in changes:
            try:
                old = (await self.client.read_text_file(session_id=SESSION, path=path)).content
            except Exception:  # no such file yet
                old = None
            new = make(old)
            diffs.append(tool_diff_content(path, new, old))
            writes.append((path, new))
        title = "Edit " + ", ".join(path.rsplit("/", 1)[-1] for path, _ in changes)
        await self.client.session_update(
            SESSION, start_tool_call(call_id, title, kind="edit", status="pending", content=diffs)
        )
        answer = await self.client.request_permission(
            session_id=SESSION,
            tool_call=schema.ToolCallUpdate(tool_call_id=call_id, title=title),
            options=ALLOW,
        )
        if answer.outcome.outcome != "selected" or answer.outcome.option_id != "allow":
            await self.client.session_update(SESSION, update_tool_call(call_id, status="failed"))
            await self.say("left the files as they were")
            return
        for path, new in writes:
            await self.client.write_text_file(session_id=SESSION, path=path, content=new)
        await self.client.session_update(
            SESSION, update_tool_call(call_id, status="completed", content=diffs)
        )
        await self.say("done")

    async def shell(self) -> None:
        line = "echo hello from the shell && cat existing.txt"
        terminal = await self.client.create_terminal(session_id=SESSION, command=line, cwd=self.cwd)
        await self.client.session_update(
            SESSION,
            start_tool_call(
                "shell-1",
                line,
                kind="execute",
                status="in_progress",
                content=[tool_terminal_ref(terminal.terminal_id)],
            ),
        )
        ids = {"session_id": SESSION, "terminal_id": terminal.terminal_id}
        exit_status = await self.client.wait_for_terminal_exit(**ids)
        output = await self.client.terminal_output(**ids)
        await self.client.release_terminal(**ids)
        await self.client.session_update(
            SESSION,
            update_tool_call(
                "shell-1",
                status="completed" if exit_status.exit_code == 0 else "failed",
                content=[tool_content(text_block(output.output))],
            ),
        )
        await self.say("ran it")

    async def plan(self) -> None:
        steps = [("Write the failing test", "completed"), ("Fix the parser", "in_progress")]
        await self.client.session_update(
            SESSION,
            update_plan([plan_entry(step, status=status) for step, status in steps]),
        )
        await self.say("planned")

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
