"""The built-in plugin: the projection, diff, permission and text every provider gets.

Registered like any plugin but last, and it always answers: every hookimpl is
``trylast``, so a provider plugin that returns a value for its own provider
overrides it, and one that returns None leaves it here. It also registers the
generic provider, the one an agent no plugin claims gets.
"""

from __future__ import annotations

import os
import posixpath
from typing import Any

import pluggy

from ..diff.limits import DiffLimits
from ..hooks import Hooks
from ..hookspecs import hookimpl
from ..permissions import (
    EDIT_KINDS,
    READ_KINDS,
    RUN_KINDS,
    ActionDecision,
    ClientAction,
    PermissionDecision,
    PermissionQuery,
    Policy,
)
from ..projection import (
    DiffPatch,
    command_item,
    content_text,
    count_changes,
    diff_patch_of,
    edited_paths,
    file_change_from_contents,
    file_contents_from_disk,
    file_contents_from_fs,
    tool_status,
    with_proposed_diffs,
)
from ..providers import GENERIC_PROVIDER_ID, Provider, ProviderRegistrar
from ..runtime import DiffV1, DiffV2, SessionView, ToolCall, ToolContent
from ..runtime.paths import tool_call_paths
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
    TimelineItem,
    ToolItem,
    UserMessageItem,
)


def is_file_change(tool_call: ToolCall, session: SessionView) -> bool:
    """An edit kind, any diff in its content, or a file written through the client for it."""
    return (
        tool_call.kind in EDIT_KINDS
        or bool(tool_call.diffs_reported)
        or bool(session.writes_of(tool_call.id))
    )


class BuiltinPlugin:
    """The built-in hook implementations, bound to the plugin manager they run in."""

    def __init__(self, pm: pluggy.PluginManager) -> None:
        self.hooks = Hooks(pm)

    @hookimpl(trylast=True)
    def register_providers(self, register: ProviderRegistrar) -> None:
        register(
            Provider(
                id=GENERIC_PROVIDER_ID,
                name="ACP agent",
                description="Any agent that speaks ACP, with the built-in behaviour only.",
            )
        )

    @hookimpl(trylast=True)
    def project_tool_call(
        self, provider: Provider, tool_call: ToolCall, session: SessionView
    ) -> TimelineItem:
        if is_file_change(tool_call, session):
            return self.hooks.project_file_change(provider, tool_call, session)
        raw = tool_call.raw_input if isinstance(tool_call.raw_input, dict) else {}
        common: dict[str, Any] = {
            "status": tool_status(tool_call, session),
            "title": tool_call.title,
            "tool_kind": tool_call.kind,
        }
        if tool_call.kind == "execute":
            return command_item(tool_call, session, **common)
        if tool_call.kind == "read":
            return FileReadItem(paths=tuple(tool_call_paths(tool_call)), **common)
        if tool_call.kind == "search":
            query = next(
                (raw[k] for k in ("query", "pattern", "regex") if isinstance(raw.get(k), str)), None
            )
            return SearchItem(query=query, paths=tuple(tool_call_paths(tool_call)), **common)
        if tool_call.kind == "fetch":
            url = raw.get("url") if isinstance(raw.get("url"), str) else None
            return FetchItem(url=url, **common)
        return ToolItem(
            input=tool_call.raw_input,
            output=tool_call.raw_output,
            text=content_text(tool_call.content),
            **common,
        )

    @hookimpl(trylast=True)
    def project_file_change(
        self, provider: Provider, tool_call: ToolCall, session: SessionView
    ) -> FileChangeItem:
        status = tool_status(tool_call, session)
        limits = session.diff_limits
        tool_call = with_proposed_diffs(tool_call)
        content = self.hooks.normalize_diff_content(provider, tool_call, tool_call.content, session)
        if content is not tool_call.content:
            tool_call = tool_call.model_copy(update={"content": content})
        written = file_contents_from_fs(tool_call, session)
        if written:
            return file_change_from_contents(
                tool_call, written, patch_source="client_fs", limits=limits, status=status
            )
        disk = file_contents_from_disk(tool_call, session)
        if disk.files and not disk.unplaced:
            return file_change_from_contents(
                tool_call, disk.files, patch_source="disk", limits=limits, status=status
            )
        note = None
        if disk.unplaced:
            places = ", ".join(disk.unplaced)
            note = f"the agent's fragment could not be placed in {places}: its own patch is kept"
        found = self.hooks.project_diff_patch(provider, tool_call.content, limits)
        operations, moved_from = _operations(tool_call)
        has_diff = any(isinstance(i, DiffV1 | DiffV2) for i in tool_call.content)
        additions, deletions = count_changes(found.patch)
        return FileChangeItem(
            status=status,
            title=tool_call.title,
            tool_kind=tool_call.kind,
            paths=tuple(operations),
            operations=operations,
            moved_from=moved_from,
            diff_str=found.patch,
            diff_omitted_reason=found.omitted_reason,
            additions=additions,
            deletions=deletions,
            patch_source="agent" if has_diff else None,
            patch_note=note,
        )

    @hookimpl(trylast=True)
    def normalize_diff_content(self, content: tuple[ToolContent, ...]) -> tuple[ToolContent, ...]:
        return content

    @hookimpl(trylast=True)
    def project_diff_patch(
        self, provider: Provider, content: tuple[ToolContent, ...], limits: DiffLimits
    ) -> DiffPatch:
        return diff_patch_of(content, max_edits=limits.max_edits)

    @hookimpl(trylast=True)
    def decide_permission(
        self, provider: Provider, request: PermissionQuery, policy: Policy
    ) -> PermissionDecision:
        return decide_by_policy(request, policy)

    @hookimpl(trylast=True)
    def decide_client_action(
        self, provider: Provider, action: ClientAction, policy: Policy
    ) -> ActionDecision:
        return decide_action_by_policy(action, policy)

    @hookimpl(trylast=True)
    def render_item_text(self, item: TimelineItem) -> str:
        return render_text(item)


def _operations(tool_call: ToolCall) -> tuple[dict[str, str], dict[str, str]]:
    """What happened to each path: from v2 changes and v1 diffs, else from the tool kind."""
    operations: dict[str, str] = {}
    moved_from: dict[str, str] = {}
    for item in tool_call.content:
        if isinstance(item, DiffV2):
            for change in item.changes:
                if change.path:
                    operations[change.path] = change.operation
                    if change.old_path:
                        moved_from[change.path] = change.old_path
        elif isinstance(item, DiffV1):
            operations[item.path] = "add" if item.old_text is None else "modify"
    if not operations:
        fallback = {"delete": "delete", "move": "move"}.get(tool_call.kind, "modify")
        operations = dict.fromkeys(edited_paths(tool_call), fallback)
    return operations, moved_from


def _option(request: PermissionQuery, *kinds: str) -> str | None:
    for kind in kinds:
        for option in request.options:
            if option.get("kind") == kind and isinstance(option.get("optionId"), str):
                return str(option["optionId"])
    return None


def _inside(path: str, roots: tuple[str, ...]) -> bool:
    """Whether ``path`` is inside one of the folders, by real paths: a symlink in the
    workspace that leads out is outside."""
    if not os.path.isabs(path) or "\x00" in path:
        return False
    real = os.path.realpath(path)
    return any(
        posixpath.commonpath([real, folder]) == folder
        for folder in (os.path.realpath(root) for root in roots if root and "\x00" not in root)
    )


def decide_by_policy(request: PermissionQuery, policy: Policy) -> PermissionDecision:
    """Allow or refuse by policy, choosing among the options the agent offered.

    An allow-once option is preferred to an allow-always one (an "always" can
    outlive the session); refusing prefers reject-once. With no fitting option
    the request is cancelled.
    """
    if policy.name == "ask":
        return PermissionDecision(outcome="ask", reason="the policy asks the application")
    call = request.tool_call
    kind = call.kind if call is not None else "other"
    if policy.name == "workspace-write" and kind in RUN_KINDS:
        return PermissionDecision(outcome="ask", reason="workspace-write asks before commands")
    allowed = policy.name == "full-access" or kind in READ_KINDS
    if not allowed and policy.name == "workspace-write" and call is not None:
        paths = tool_call_paths(call)
        allowed = (
            kind in EDIT_KINDS and bool(paths) and all(_inside(p, policy.workspace) for p in paths)
        )
    if allowed:
        choice = _option(request, "allow_once", "allow_always")
        reason = f"{policy.name} allows {kind}"
    else:
        choice = _option(request, "reject_once", "reject_always")
        reason = f"{policy.name} refuses {kind}"
    if choice is None:
        return PermissionDecision(outcome="cancelled", reason=f"{reason}; no option fits")
    return PermissionDecision(outcome="selected", option_id=choice, reason=reason)


def decide_action_by_policy(action: ClientAction, policy: Policy) -> ActionDecision:
    """Allow, refuse or ask about a command or a write the client would perform.

    ``read-only`` refuses both; ``workspace-write`` allows a write inside the
    session's folders and asks before a command; ``full-access`` allows both; ``ask``
    asks. An action the application already allowed (``approved``) is not asked again.
    """
    what = "commands" if action.kind == "command" else "writes"
    if action.kind == "write" and not action.inside:
        return ActionDecision(outcome="refuse", reason="the write is outside the session's folders")
    if policy.name == "read-only":
        return ActionDecision(outcome="refuse", reason=f"read-only refuses {what}")
    if policy.name == "full-access":
        return ActionDecision(outcome="allow", reason=f"full-access allows {what}")
    if policy.name == "workspace-write" and action.kind == "write":
        return ActionDecision(outcome="allow", reason="workspace-write allows writes inside")
    if action.approved:
        return ActionDecision(outcome="allow", reason="the application allowed its tool call")
    return ActionDecision(outcome="ask", reason=f"{policy.name} asks the application")


def render_text(item: TimelineItem) -> str:
    """A readable rendering of one item, for another agent."""
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


def plugin(pm: pluggy.PluginManager) -> BuiltinPlugin:
    """The built-in plugin for one plugin manager."""
    return BuiltinPlugin(pm)
