"""The built-in projection of file edits: the true patch from the best evidence the session has.

``project_file_change`` takes the true patch from the best evidence the session has, best
first (the item's ``patch_source`` says which): the workspace's checkpoints (the files as
they were before the tool call and as it completed, whoever wrote them: ``checkpoint``);
the client's own writes, each with the
file as it was just before (``client_fs``); the disk read around the edit (``disk``);
the whole-file diff of its permission request over a later fragment (``permission``);
the agent's fragment placed in what the session knew of the file (``placed``); the
agent's diff as sent (``agent``).
``project_diff_patch`` builds the agent's patch (jsdiff-identical, capped);
``normalize_diff_content`` leaves the content as sent (a provider fixes its quirks there).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pluggy

from ..plugin.hooks import Hooks
from ..plugin.hookspecs import hookimpl

if TYPE_CHECKING:
    from ..diff import DiffPatch
    from ..diff.limits import DiffLimits
    from ..plugin.providers import Provider
    from ..projection import FileContents
    from ..runtime import CheckpointedFile, SessionView, ToolCall, ToolContent
    from ..timeline.items import FileChangeItem, PatchSource

# The projection and the models are imported by the hooks that project: the plugin manager
# is built (``acp-adapters providers``) without them.


class FileChanges:
    """The built-in file-change hooks, bound to the plugin manager they run in."""

    def __init__(self, pm: pluggy.PluginManager) -> None:
        self.hooks = Hooks(pm)

    @hookimpl(trylast=True)
    def project_file_change(
        self, provider: Provider, tool_call: ToolCall, session: SessionView
    ) -> FileChangeItem:
        from ..projection import (
            DiskContents,
            checkpointed_files,
            count_changes,
            file_change_from_checkpoint,
            file_change_from_contents,
            file_contents_from_disk,
            file_contents_from_fs,
            file_contents_from_known,
            file_contents_from_permission,
            tool_status,
            with_proposed_diffs,
        )
        from ..runtime import DiffV1, DiffV2
        from ..timeline.items import FileChangeItem

        status = tool_status(tool_call, session)
        limits = session.diff_limits
        tool_call = with_proposed_diffs(tool_call)
        content = self.hooks.normalize_diff_content(provider, tool_call, tool_call.content, session)
        if content is not tool_call.content:
            tool_call = tool_call.model_copy(update={"content": content})
        checked = checkpointed_files(tool_call, session) if status == "completed" else None
        if checked is not None:
            # The ground truth: what the files were and are, whoever wrote them.
            return file_change_from_checkpoint(
                tool_call,
                checked,
                limits=limits,
                status=status,
                note=_disagreement(tool_call, checked),
            )
        # The evidence, best first: the first that explains every file it speaks of wins.
        # Each is looked at only when the better ones had nothing.
        disk = file_contents_from_disk(tool_call, session)
        known = DiskContents([], [])

        def placed() -> list[FileContents]:
            nonlocal known
            known = file_contents_from_known(tool_call, session)
            return [] if known.unplaced else known.files

        evidence: list[tuple[PatchSource, Callable[[], list[FileContents]]]] = [
            ("client_fs", lambda: file_contents_from_fs(tool_call, session)),
            ("disk", lambda: [] if disk.unplaced else disk.files),
            ("permission", lambda: file_contents_from_permission(tool_call, session)),
            ("placed", placed),
        ]
        for source, gather in evidence:
            files = gather()
            if files:
                return file_change_from_contents(
                    tool_call, files, patch_source=source, limits=limits, status=status
                )
        note = None
        unplaced = list(dict.fromkeys([*disk.unplaced, *known.unplaced]))
        if unplaced:
            places = ", ".join(unplaced)
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
        from ..projection import diff_patch_of

        return diff_patch_of(content, max_edits=limits.max_edits)


def _disagreement(tool_call: ToolCall, checked: list[CheckpointedFile]) -> str | None:
    """What to say when the agent reported an edit the workspace does not show."""
    from ..runtime import DiffV1

    reported = any(
        isinstance(item, DiffV1) and item.old_text != item.new_text for item in tool_call.content
    )
    if reported and all(f.before is not None and f.before.same(f.after) for f in checked):
        return "the agent reported a change that the workspace does not show"
    return None


def _operations(tool_call: ToolCall) -> tuple[dict[str, str], dict[str, str]]:
    """What happened to each path: from v2 changes and v1 diffs, else from the tool kind."""
    from ..projection import edited_paths
    from ..runtime import DiffV1, DiffV2

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


def plugin(pm: pluggy.PluginManager) -> FileChanges:
    """The built-in file changes for one plugin manager."""
    return FileChanges(pm)
