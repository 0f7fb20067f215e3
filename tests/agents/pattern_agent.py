"""A scripted agent built on the official Python SDK that plays traffic patterns of real agents.

    python pattern_agent.py

It speaks ACP v1 as the SDK implements it. A prompt's text names the pattern
(``PATTERNS``); the workspace starts with ``existing.txt`` = ``alpha\\nbeta\\n``.
Paths are absolute (under the session's folder) unless a pattern says relative,
and every turn ends ``end_turn``:

- ``fs-write-fragment``: an edit tool call naming existing.txt by its location only;
  a client write of existing.txt with no read before; completed with a fragment diff
  (``beta`` -> ``BETA changed``).
- ``create-locations-only``: an edit tool call naming notes.txt by location and raw
  input only; the agent writes notes.txt itself, on disk; completed with a text block.
- ``rejected-no-tool-call``: no tool call at all, only a permission request whose tool
  call proposes new.txt; refused, the agent ends the turn.
- ``no-oldtext-existing``: a permission request whose diff of existing.txt has no
  ``oldText``; allowed, the agent writes existing.txt itself and completes the call
  with the same diff.
- ``write-then-tool-call``: a client write of existing.txt first, then a completed
  edit tool call whose diff (relative path) has ``oldText`` == ``newText``.
- ``empty-oldtext-missing``: a read of the missing new.txt (an error), an edit tool call
  with ``oldText`` ``""``, a client write of new.txt, completed.
- ``empty-oldtext-unknown``: a completed edit tool call with ``oldText`` ``""`` for
  new.txt, and nothing read or written.
- ``command-output``: two commands without a client terminal: ``ls`` whose raw output
  has an empty ``output`` beside its ``stdout``, and ``echo hello`` whose output is only
  in its content's text.
- anything else: echo the text back.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

import acp
from acp import schema
from acp.helpers import (
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    update_agent_message_text,
    update_tool_call,
)

SESSION = "pattern-session"
ALLOW = [
    schema.PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
    schema.PermissionOption(option_id="deny", name="Deny", kind="reject_once"),
]
#: What the agent waits before it writes a file itself: real agents are slower than a
#: client's look at the disk as the tool call starts.
SLOW = 0.3
EXISTING_AFTER = "alpha\nBETA changed\n"
PATTERNS = (
    "fs-write-fragment",
    "create-locations-only",
    "rejected-no-tool-call",
    "no-oldtext-existing",
    "write-then-tool-call",
    "empty-oldtext-missing",
    "empty-oldtext-unknown",
    "command-output",
)


class PatternAgent:
    """An ``acp.Agent`` playing the patterns above."""

    def __init__(self) -> None:
        self.client: Any = None
        self.cwd = "."

    def on_connect(self, conn: Any) -> None:
        self.client = conn

    async def initialize(
        self, protocol_version: int, client_capabilities: Any = None, **_: Any
    ) -> schema.InitializeResponse:
        return schema.InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            agent_capabilities=schema.AgentCapabilities(),
            agent_info=schema.Implementation(name="pattern-agent", version="0.12.1"),
        )

    async def new_session(self, cwd: str, **_: Any) -> schema.NewSessionResponse:
        self.cwd = cwd
        return schema.NewSessionResponse(session_id=SESSION)

    async def cancel(self, session_id: str, **_: Any) -> None:
        pass

    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> schema.PromptResponse:
        words = "".join(getattr(block, "text", "") for block in prompt).strip()
        if words in PATTERNS:
            await getattr(self, words.replace("-", "_"))()
        else:
            await self.say(f"you said: {words}")
        return schema.PromptResponse(stop_reason="end_turn")

    # --- helpers ------------------------------------------------------------------------------

    def path(self, name: str) -> str:
        return f"{self.cwd}/{name}"

    async def update(self, update: Any) -> None:
        await self.client.session_update(SESSION, update)

    async def say(self, words: str) -> None:
        await self.update(update_agent_message_text(words))

    async def write(self, path: str, content: str) -> None:
        """Write through the client (``fs/write_text_file``)."""
        await self.client.write_text_file(session_id=SESSION, path=path, content=content)

    async def ask(self, call: schema.ToolCallUpdate) -> bool:
        """Ask permission for ``call``; whether the application allowed it."""
        answer = await self.client.request_permission(
            session_id=SESSION, tool_call=call, options=ALLOW
        )
        return bool(answer.outcome.outcome == "selected" and answer.outcome.option_id == "allow")

    # --- the patterns -------------------------------------------------------------------------

    async def fs_write_fragment(self) -> None:
        existing = self.path("existing.txt")
        await self.update(
            start_tool_call(
                "fragment-1",
                "Edit existing.txt",
                kind="edit",
                status="pending",
                locations=[schema.ToolCallLocation(path=existing)],
            )
        )
        await self.write(existing, EXISTING_AFTER)  # never read first
        fragment = tool_diff_content(existing, "BETA changed", "beta")
        await self.update(update_tool_call("fragment-1", status="completed", content=[fragment]))

    async def create_locations_only(self) -> None:
        notes = self.path("notes.txt")
        await self.update(
            start_tool_call(
                "create-1",
                "Create notes.txt",
                kind="edit",
                status="in_progress",
                locations=[schema.ToolCallLocation(path=notes)],
                raw_input={"file_path": notes, "content": "first note\n"},
            )
        )
        await asyncio.sleep(SLOW)
        Path(notes).write_text("first note\n", encoding="utf-8")  # itself, not through the client
        await self.update(
            update_tool_call(
                "create-1",
                status="completed",
                content=[tool_content(text_block("created notes.txt"))],
            )
        )

    async def rejected_no_tool_call(self) -> None:
        created = self.path("new.txt")
        proposed = tool_diff_content(created, "brand new\n")
        call = schema.ToolCallUpdate(
            tool_call_id="write-1", kind="edit", title="Write new.txt", content=[proposed]
        )
        if await self.ask(call):  # not what the tests answer: write it, and say so
            await self.write(created, "brand new\n")
            await self.update(update_tool_call("write-1", status="completed", content=[proposed]))

    async def no_oldtext_existing(self) -> None:
        existing = self.path("existing.txt")
        diff = tool_diff_content(existing, EXISTING_AFTER)  # no oldText, though the file exists
        call = schema.ToolCallUpdate(
            tool_call_id="edit-1", kind="edit", title="Edit existing.txt", content=[diff]
        )
        if not await self.ask(call):
            await self.update(update_tool_call("edit-1", status="failed"))
            return
        await asyncio.sleep(SLOW)
        Path(existing).write_text(EXISTING_AFTER, encoding="utf-8")  # itself, on disk
        await self.update(update_tool_call("edit-1", status="completed", content=[diff]))

    async def write_then_tool_call(self) -> None:
        await self.write(self.path("existing.txt"), EXISTING_AFTER)  # before any tool call
        await self.update(
            start_tool_call(
                "edit-1",
                "Edit existing.txt",
                kind="edit",
                status="completed",
                content=[tool_diff_content("existing.txt", EXISTING_AFTER, EXISTING_AFTER)],
                locations=[schema.ToolCallLocation(path="existing.txt")],
            )
        )

    async def empty_oldtext_missing(self) -> None:
        created = self.path("new.txt")
        with contextlib.suppress(Exception):  # no such file: the client answers an error
            await self.client.read_text_file(session_id=SESSION, path=created)
        await self.update(
            start_tool_call(
                "write-1",
                "Write new.txt",
                kind="edit",
                status="in_progress",
                content=[tool_diff_content(created, "brand new\n", "")],
            )
        )
        await self.write(created, "brand new\n")
        await self.update(update_tool_call("write-1", status="completed"))

    async def empty_oldtext_unknown(self) -> None:
        await self.update(
            start_tool_call(
                "write-1",
                "Write new.txt",
                kind="edit",
                status="completed",
                content=[tool_diff_content(self.path("new.txt"), "brand new\n", "")],
            )
        )

    async def command_output(self) -> None:
        await self.update(
            start_tool_call(
                "ls-1", "ls", kind="execute", status="in_progress", raw_input={"command": "ls"}
            )
        )
        await self.update(
            update_tool_call(
                "ls-1",
                status="completed",
                raw_output={"output": "", "stdout": "file-a\n", "exit_code": 0},
            )
        )
        await self.update(
            start_tool_call(
                "echo-1",
                "echo hello",
                kind="execute",
                status="in_progress",
                raw_input={"command": "echo hello"},
            )
        )
        await self.update(
            update_tool_call(
                "echo-1", status="completed", content=[tool_content(text_block("hello\n"))]
            )
        )


if __name__ == "__main__":
    asyncio.run(acp.run_agent(PatternAgent()))
