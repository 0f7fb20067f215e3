"""Helpers that projections share: the built-in plugin's, and any provider plugin's.

* :func:`tool_status`: a tool call's item status, from the agent's status, a
  pending permission request, and the end of its turn;
* :func:`count_changes`: the ``+`` and ``-`` lines of a unified patch;
* :class:`DiffPatch`, :func:`diff_patch_of`: a tool call's patch and, where there is
  none, why (what ``project_diff_patch`` answers);
* :func:`file_contents_from_fs`: a tool call's files as the client's file-system
  traffic shows them (old content read, new content written);
* :func:`file_change_from_contents`: a ``file_change`` item from files' old and
  new content, with the same patch and cap as the built-in diff hook;
* :func:`command_item`: a ``command_execution`` item from what agents put in a
  tool call's raw input, raw output, content and terminal;
* :func:`content_text`: the text blocks of tool-call content.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .diff import DEFAULT_MAX_EDITS, FilePatch, file_patches
from .diff.limits import DiffLimits
from .runtime import (
    ContentItem,
    DiffV1,
    DiffV2,
    SessionView,
    TerminalRef,
    ToolCall,
    ToolContent,
    tool_call_paths,
)
from .timeline.items import CommandExecutionItem, FileChangeItem, ItemStatus, PatchSource

_STATUSES: dict[str, ItemStatus] = {
    "pending": "pending",
    "in_progress": "running",
    "completed": "completed",
    "failed": "failed",
    "cancelled": "cancelled",
    "requires_action": "waiting",
}

_HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")


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
    ended = session.ended_tool_calls.get(tool_call.id)
    if ended is not None:
        if ended == "cancelled":
            return "cancelled"
        return "failed" if ended in ("error", "agent_exited") else "completed"
    for request in session.permissions.values():
        if request.tool_call_id == tool_call.id and request.outcome is None:
            return "waiting"
    return status


def count_changes(patch: str | None) -> tuple[int, int]:
    """Added and deleted lines of a unified patch (hunk bodies only, headers not counted)."""
    if not patch:
        return 0, 0
    additions = deletions = 0
    old_left = new_left = 0
    for line in patch.split("\n"):
        if old_left <= 0 and new_left <= 0:
            match = _HUNK.match(line)
            if match:
                old_left = int(match.group(1) or 1)
                new_left = int(match.group(2) or 1)
            continue
        if line.startswith("+"):
            additions += 1
            new_left -= 1
        elif line.startswith("-"):
            deletions += 1
            old_left -= 1
        elif line.startswith(" ") or line == "":
            old_left -= 1
            new_left -= 1
    return additions, deletions


@dataclass(frozen=True)
class FileContents:
    """One file's content before and after an edit (``old`` None: the file did not exist)."""

    path: str
    old: str | None
    new: str


def with_proposed_diffs(tool_call: ToolCall) -> ToolCall:
    """A refused or failed edit whose last update replaced its diffs: with them again.

    What the edit proposed is what a reader of the timeline needs to see next to
    "failed"; claude-agent-acp and Grok Build, for two, answer a refused edit with
    the error text alone as the tool call's new content.
    """
    if (
        tool_call.status in ("failed", "cancelled")
        and tool_call.diffs_reported
        and not any(isinstance(item, DiffV1 | DiffV2) for item in tool_call.content)
    ):
        return tool_call.model_copy(
            update={"content": (*tool_call.diffs_reported, *tool_call.content)}
        )
    return tool_call


def file_contents_from_fs(tool_call: ToolCall, session: SessionView) -> list[FileContents]:
    """The files a tool call wrote through the client, with their true new content.

    The old content is what the session knew of the file before the first
    write (a read answer, an earlier write, or "no such file"); where it knew
    nothing, the agent's own ``oldText`` for that path is used.
    """
    reported = {item.path: item.old_text for item in tool_call.content if isinstance(item, DiffV1)}
    found: dict[str, FileContents] = {}
    unknown: set[str] = set()
    for write in session.writes_of(tool_call.id):
        if write.content is None:  # let go past the session's budget: not known
            unknown.add(write.path)
            continue
        if write.path in found:
            found[write.path] = FileContents(write.path, found[write.path].old, write.content)
            continue
        before = session.file_before(write.path, write.seq)
        if before is not None and not before.kept:
            unknown.add(write.path)
            continue
        old = before.content if before is not None else reported.get(write.path)
        found[write.path] = FileContents(write.path, old, write.content)
    # A file whose content the session let go has no true patch here: never a wrong one.
    return [contents for path, contents in found.items() if path not in unknown]


def file_change_from_contents(
    tool_call: ToolCall,
    files: list[FileContents],
    *,
    patch_source: PatchSource,
    limits: DiffLimits | None = None,
    status: ItemStatus = "completed",
    note: str | None = None,
) -> FileChangeItem:
    """A ``file_change`` item from files' old and new content (the patch built as jsdiff does)."""
    limits = limits or DiffLimits()
    content = [{"type": "diff", "path": f.path, "oldText": f.old, "newText": f.new} for f in files]
    patches = file_patches(content, max_edits=limits.max_edits)
    found = DiffPatch.of_files(patches)
    additions, deletions = count_changes(found.patch)
    return FileChangeItem(
        status=status,
        title=tool_call.title,
        tool_kind=tool_call.kind,
        paths=tuple(f.path for f in files),
        operations={p.path: p.operation for p in patches},
        diff_str=found.patch,
        diff_omitted_reason=found.omitted_reason,
        additions=additions,
        deletions=deletions,
        patch_source=patch_source,
        patch_note=note,
    )


#: Why a file_change has no patch (``capped`` also beside the patch of other files: the
#: rewrite cap left out one file's), as ``FileChangeItem.diff_omitted_reason`` says it.
PatchOmitted = Literal["capped", "unchanged", "no_diff"]


@dataclass(frozen=True)
class DiffPatch:
    """A tool call's patch, and why there is none: what ``project_diff_patch`` answers.

    ``patch`` is the unified patch of the files that have one, or None.
    ``omitted_reason`` says why a file has no patch: ``capped`` (the rewrite cap
    stopped its edit search; beside a patch too, when other files have theirs),
    ``unchanged`` (no file changed) or ``no_diff`` (no diff content with a file's
    text). With no patch a reason is required; beside a patch only ``capped`` is one.
    """

    patch: str | None
    omitted_reason: PatchOmitted | None = None

    def __post_init__(self) -> None:
        if self.patch is None and self.omitted_reason is None:
            raise ValueError("a DiffPatch without a patch says why: give its omitted_reason")
        if self.patch is not None and self.omitted_reason not in (None, "capped"):
            raise ValueError(
                f"beside a patch the only omitted_reason is 'capped', not {self.omitted_reason!r}"
            )

    @classmethod
    def of_files(cls, patches: Sequence[FilePatch]) -> DiffPatch:
        """The patches of files joined (one blank line between files), and why any is missing."""
        texts = [p.patch for p in patches if p.patch is not None]
        if texts:
            capped = any(p.omitted_reason == "capped" for p in patches)
            return cls("\n".join(texts), "capped" if capped else None)
        return cls(None, omitted_reason(list(patches)))


def diff_patch_of(
    content: Sequence[ToolContent], *, max_edits: int = DEFAULT_MAX_EDITS
) -> DiffPatch:
    """The patch of a tool call's diff content, as :func:`~acp_adapters.diff_patch` gives it,
    and why there is none: each file diffed once.

    A v2 diff's ``patch.text`` wins, as sent; otherwise each v1 ``{path, oldText,
    newText}`` is built into a jsdiff-identical patch, capped at ``max_edits`` line
    edits per file.
    """
    for item in content:
        if isinstance(item, DiffV2) and item.patch is not None:
            return DiffPatch(item.patch.text)
    return DiffPatch.of_files(file_patches(content, max_edits=max_edits))


def omitted_reason(patches: list[FilePatch]) -> PatchOmitted:
    """Why files got no patch: the cap stopped one, or none changed, or there was no diff."""
    reasons = {p.omitted_reason for p in patches}
    if "capped" in reasons:
        return "capped"
    if reasons == {"unchanged"}:
        return "unchanged"
    return "no_diff"


def edited_paths(tool_call: ToolCall) -> list[str]:
    """The paths a tool call edits: its diffs' paths, else every path it names."""
    paths: list[str] = []
    for item in tool_call.content:
        if isinstance(item, DiffV1):
            paths.append(item.path)
        elif isinstance(item, DiffV2):
            paths.extend(c.path for c in item.changes if c.path)
    return list(dict.fromkeys(paths)) or tool_call_paths(tool_call)


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


@dataclass(frozen=True)
class DiskContents:
    """Files whose true content the disk shows around an edit, and fragments it could not place."""

    files: list[FileContents]
    unplaced: list[str]


def file_contents_from_disk(tool_call: ToolCall, session: SessionView) -> DiskContents:
    """A tool call's files from what a live client read of the disk around it.

    When the content read as the tool call started differs from the content read as
    it completed, and the first holds the agent's ``oldText``, that is the change.
    Otherwise one content is trusted, and the agent's ``oldText``/``newText``
    fragment is placed in it: a content holding ``oldText`` once and not
    ``newText`` is the file before the edit; one holding ``newText`` once and not
    ``oldText`` is the file after. The first read comes too late when the agent
    was quicker, or catches the file half written; then the read at completion is
    the one trusted. Anything else cannot be placed, and is listed in ``unplaced``.
    """
    snapshots: dict[str, dict[str, str | None]] = {}
    for event in session.disk_of(tool_call.id):
        snapshots.setdefault(event.path, {})[event.op] = event.content
    reported = {item.path: item for item in tool_call.content if isinstance(item, DiffV1)}
    files: list[FileContents] = []
    unplaced: list[str] = []
    for path, seen in snapshots.items():
        before, after = seen.get("disk_before"), seen.get("disk_after")
        fragment = reported.get(path)
        if (
            "disk_before" in seen
            and "disk_after" in seen
            and before != after
            and after is not None
            and _holds_old_text(before, fragment)
        ):
            files.append(FileContents(path, before, after))
            continue
        if fragment is None or fragment.old_text is None:
            continue
        if fragment.old_text == "" and "disk_before" in seen and before is None:
            if "disk_after" not in seen:
                # An edit that never completed, of a file that did not exist: its
                # "empty old file" is a creation it proposed.
                files.append(FileContents(path, None, fragment.new_text))
            continue
        content = after if after is not None else before
        old, new = fragment.old_text, fragment.new_text
        if content is None or not old or not new:
            unplaced.append(path)
        elif content.count(old) == 1 and new not in content:
            files.append(FileContents(path, content, content.replace(old, new, 1)))
        elif content.count(new) == 1 and old not in content:
            files.append(FileContents(path, content.replace(new, old, 1), content))
        else:
            unplaced.append(path)
    return DiskContents(files, unplaced)


def _holds_old_text(before: str | None, fragment: DiffV1 | None) -> bool:
    """Whether a read taken as an edit started is consistent with the agent's fragment."""
    if fragment is None or not fragment.old_text:
        return True
    return before is not None and fragment.old_text in before
