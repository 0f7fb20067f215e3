"""The built-in text of an item: a readable rendering, for another agent or a log."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..plugin.hookspecs import hookimpl

if TYPE_CHECKING:
    from ..timeline.items import TimelineItem


@hookimpl(trylast=True)
def render_item_text(item: TimelineItem) -> str:
    return render_text(item)


def render_text(item: TimelineItem) -> str:
    """A readable rendering of one item, for another agent."""
    # Imported here: the plugin manager is built (``acp-adapters providers``) without the
    # timeline's models.
    from ..timeline.items import (
        ApprovalRequestItem,
        AssistantMessageItem,
        CommandExecutionItem,
        ErrorItem,
        FetchItem,
        FileChangeItem,
        FileReadItem,
        NoticeItem,
        PlanItem,
        ReasoningItem,
        SearchItem,
        ToolItem,
        UserMessageItem,
    )

    if isinstance(item, UserMessageItem):
        return f"User: {item.text}"
    if isinstance(item, AssistantMessageItem):
        return f"Assistant: {item.text}"
    if isinstance(item, ReasoningItem):
        return f"Reasoning: {item.text}"
    if isinstance(item, PlanItem):
        steps = "\n".join(f"- [{e.status}] {e.content}" for e in item.entries)
        return f"Plan:\n{steps}" if steps else "Plan: (empty)"
    if isinstance(item, FileChangeItem):
        head = f"Edited {', '.join(item.paths) or '(no path)'} +{item.additions} -{item.deletions}"
        if item.diff_str is not None:
            text = f"{head}\n{item.diff_str.rstrip()}"
            if item.diff_omitted_reason is not None:
                text += f"\n(the patch of a file is omitted: {item.diff_omitted_reason})"
            return text
        return f"{head} (patch omitted: {item.diff_omitted_reason})"
    if isinstance(item, CommandExecutionItem):
        text = f"$ {item.command or item.title or '(command)'}"
        if item.output:
            text += f"\n{item.output.rstrip()}"
        if item.exit_code is not None:
            text += f"\n(exit {item.exit_code})"
        return text
    if isinstance(item, FileReadItem):
        return f"Read {', '.join(item.paths) or item.title or '(file)'}"
    if isinstance(item, SearchItem):
        return f"Searched {item.query or item.title or ''}".rstrip()
    if isinstance(item, FetchItem):
        return f"Fetched {item.url or item.title or ''}".rstrip()
    if isinstance(item, ToolItem):
        return f"Tool {item.title or item.tool_kind} ({item.status})"
    if isinstance(item, ApprovalRequestItem):
        answer = item.option_kind or item.outcome or "pending"
        return f"Permission asked: {item.title or item.tool_call_id} -> {answer}"
    if isinstance(item, NoticeItem):
        return f"Notice: {item.title or ''} {item.text or ''}".rstrip()
    if isinstance(item, ErrorItem):
        return f"Error: {item.message}"
    raise TypeError(f"not a timeline item: {type(item).__name__}")
