"""Helpers for tool items: a tool call's status, a command's item, content text."""

from __future__ import annotations

import shlex
from typing import Any

from ..runtime import ContentItem, SessionView, TerminalRef, ToolCall, ToolContent
from ..timeline.items import CommandExecutionItem, ItemStatus

_STATUSES: dict[str, ItemStatus] = {
    "pending": "pending",
    "in_progress": "running",
    "completed": "completed",
    "failed": "failed",
    "cancelled": "cancelled",
    "requires_action": "waiting",
}


def tool_status(tool_call: ToolCall, session: SessionView) -> ItemStatus:
    """The item status of a tool call.

    A pending permission request makes it ``waiting``; a turn that ended
    before the tool call did makes it ``cancelled`` (the turn was cancelled),
    ``failed`` (the prompt failed, or the agent exited) or ``completed``; a
    status not known here counts as ``running``.
    """
    status = _STATUSES.get(tool_call.status, "running")
    if status in ("completed", "failed", "cancelled"):
        return status
    if not tool_call.reported:
        # Only a permission request named it: refused, it failed; left unanswered (the
        # turn was cancelled), it was cancelled.
        for request in session.permissions.values():
            if request.tool_call_id != tool_call.id or request.outcome is None:
                continue
            if request.outcome != "selected":
                return "cancelled"
            if not (request.option_kind or "").startswith("allow"):
                return "failed"
    ended = session.ended_tool_calls.get(tool_call.id)
    if ended is not None:
        if ended == "cancelled":
            return "cancelled"
        return "failed" if ended in ("error", "agent_exited") else "completed"
    for request in session.permissions.values():
        if request.tool_call_id == tool_call.id and request.outcome is None:
            return "waiting"
    return status


def content_text(content: tuple[ToolContent, ...]) -> str | None:
    """The text blocks of tool-call content, joined (None when there are none)."""
    texts = [
        item.block.text
        for item in content
        if isinstance(item, ContentItem) and item.block.text is not None
    ]
    return "\n".join(texts) if texts else None


def command_item(tool_call: ToolCall, session: SessionView, **common: Any) -> CommandExecutionItem:
    """A command_execution item from what agents put in raw input, raw output and content."""
    raw = tool_call.raw_input if isinstance(tool_call.raw_input, dict) else {}
    command = raw.get("command", raw.get("cmd"))
    if isinstance(command, list) and all(isinstance(part, str) for part in command):
        command = shlex.join(command)
    output_raw = tool_call.raw_output
    output: str | None = None
    exit_code: int | None = None
    if isinstance(output_raw, str):
        output = output_raw
    elif isinstance(output_raw, dict):
        # The first of them that says something: an agent may send ``output: ""`` beside
        # the real ``stdout``.
        texts = [
            output_raw[key]
            for key in ("formatted_output", "aggregated_output", "output", "stdout")
            if isinstance(output_raw.get(key), str)
        ]
        output = next((text for text in texts if text), texts[0] if texts else None)
        for key in ("exit_code", "exitCode"):
            if isinstance(output_raw.get(key), int):
                exit_code = output_raw[key]
                break
    terminal_id = next(
        (item.terminal_id for item in tool_call.content if isinstance(item, TerminalRef)), None
    )
    terminal = session.terminals.get(terminal_id) if terminal_id else None
    if terminal is None:
        # A command the client ran for this tool call, though its content does not say so.
        terminal = session.terminal_of(tool_call.id)
        terminal_id = terminal.id if terminal is not None else None
    if terminal is not None:
        output = output if output else (terminal.text or output)
        exit_code = exit_code if exit_code is not None else terminal.exit_code
    if not output:
        # Only in the content's text (or nowhere): an empty output never hides a real one.
        output = content_text(tool_call.content) or output
    cwd = raw.get("cwd")
    client = terminal is not None and terminal.client
    return CommandExecutionItem(
        command=command if isinstance(command, str) else None,
        cwd=cwd if isinstance(cwd, str) else None,
        output=output,
        exit_code=exit_code,
        terminal_id=terminal_id,
        client_command=terminal.command if client and terminal is not None else None,
        refused=terminal.refused if client and terminal is not None else None,
        **common,
    )
