"""acp-adapters provider plugin for Codex (codex-acp).

Registers the ``codex`` provider and overrides:

* ``project_file_change``: a rename (``move_path`` in codex's own changes) shows
  as a move of the old path to the new one, with codex's unified diff under
  ``--- old`` / ``+++ new``; other edits take the built-in projection;
* ``project_tool_call``: a tool call carrying a shell command (codex reports
  ``cat x`` as a read) is a ``command_execution``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from acp_adapters import for_provider, hookimpl

from .provider import PROVIDER, PROVIDER_ID, codex_changes, command_line, moves

if TYPE_CHECKING:
    from acp_adapters import (
        FileChangeItem,
        Provider,
        ProviderRegistrar,
        SessionView,
        TimelineItem,
        ToolCall,
    )

# The projection's helpers are imported by the hooks that use them: loading the plugin
# (``acp-adapters providers`` loads every plugin) does not load the models.


@hookimpl
def register_providers(register: ProviderRegistrar) -> None:
    register(PROVIDER)


@hookimpl
@for_provider(PROVIDER_ID)
def project_tool_call(
    provider: Provider, tool_call: ToolCall, session: SessionView
) -> TimelineItem | None:
    if tool_call.kind not in ("read", "search", "execute"):
        return None
    command = command_line(tool_call.raw_input)
    if command is None:
        return None
    from acp_adapters import command_item, tool_status

    item = command_item(
        tool_call,
        session,
        status=tool_status(tool_call, session),
        title=tool_call.title,
        tool_kind=tool_call.kind,
    )
    return item.model_copy(update={"command": command})


@hookimpl
@for_provider(PROVIDER_ID)
def project_file_change(
    provider: Provider, tool_call: ToolCall, session: SessionView
) -> FileChangeItem | None:
    renamed = moves(tool_call.raw_input)
    if not renamed:
        return None
    from acp_adapters import DiffPatch, FileChangeItem, count_changes, file_patches, tool_status

    changes = codex_changes(tool_call.raw_input)
    sources = set(renamed.values())
    reported = {
        p.path: p for p in file_patches(tool_call.content, max_edits=session.diff_limits.max_edits)
    }
    operations: dict[str, str] = {}
    texts: list[str] = []
    capped = False
    for path, change in changes.items():
        if path in sources:
            target = next(new for new, old in renamed.items() if old == path)
            operations[target] = "move"
            texts.append(_rename_patch(path, target, change))
            continue
        operations[path] = {"add": "add", "delete": "delete"}.get(str(change.get("type")), "modify")
        patch = reported.get(path)
        if patch is not None and patch.patch is not None:
            texts.append(patch.patch)
        capped = capped or (patch is not None and patch.omitted_reason == "capped")
    diff = "\n".join(texts) if texts else None
    # A file the rewrite cap left without a patch says so, beside the others' patch too.
    found = DiffPatch(diff, "capped" if capped else None if diff else "unchanged")
    additions, deletions = count_changes(found.patch)
    return FileChangeItem(
        status=tool_status(tool_call, session),
        title=tool_call.title,
        tool_kind=tool_call.kind,
        paths=tuple(operations),
        operations=operations,
        moved_from=renamed,
        diff_str=found.patch,
        diff_omitted_reason=found.omitted_reason,
        additions=additions,
        deletions=deletions,
        patch_source="provider_meta",
    )


def _rename_patch(old: str, new: str, change: dict[str, Any]) -> str:
    """The headers of a rename and codex's own hunks (none for a pure rename)."""
    hunks = change.get("unified_diff")
    body = hunks if isinstance(hunks, str) else ""
    if body and not body.endswith("\n"):
        body += "\n"
    return f"--- {old}\n+++ {new}\n{body}"
