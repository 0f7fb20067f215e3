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

from collections.abc import Sequence
from dataclasses import dataclass

from ..capture.format import FileSide as LineSide
from ..diff import DEFAULT_MAX_EDITS, FilePatch, file_patches, unified_diff
from ..diff.content import DiffPatch, build_file_patch
from ..diff.limits import DiffLimits
from ..diff.stats import patch_stats
from ..diff.unified import DEV_NULL
from ..runtime import (
    CheckpointedFile,
    DiffV1,
    DiffV2,
    FileSide,
    SessionView,
    ToolCall,
    ToolContent,
    tool_call_paths,
)
from ..timeline.items import (
    FileChangeItem,
    FileSides,
    FileVersion,
    ItemStatus,
    PatchOmittedReason,
    PatchSource,
)


def count_changes(patch: str | None) -> tuple[int, int]:
    """Added and deleted lines of a unified patch (hunk bodies only, headers not counted)."""
    stats = patch_stats(patch)
    return stats.additions, stats.deletions


@dataclass(frozen=True)
class FileContents:
    """One file's content before and after an edit (``old`` None: the file did not exist;
    ``new`` None: the edit deleted it)."""

    path: str
    old: str | None
    new: str | None


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
    reported = {
        session.resolve(item.path): item.old_text
        for item in tool_call.content
        if isinstance(item, DiffV1)
    }
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
    patches: list[FilePatch] = []
    operations: dict[str, str] = {}
    for f in files:
        if f.new is None:  # deleted: every line removed, no search needed
            text = unified_diff(f.path, DEV_NULL, f.old, "") if f.old else None
            patches.append(FilePatch(f.path, "modify", text, None if text else "unchanged"))
            operations[f.path] = "delete"
            continue
        patch = build_file_patch(f.path, f.old, f.new, max_edits=limits.max_edits)
        patches.append(patch)
        operations[f.path] = patch.operation
    found = DiffPatch.of_files(patches)
    additions, deletions = count_changes(found.patch)
    return FileChangeItem(
        status=status,
        title=tool_call.title,
        tool_kind=tool_call.kind,
        paths=tuple(f.path for f in files),
        operations=operations,
        diff_str=found.patch,
        diff_omitted_reason=found.omitted_reason,
        additions=additions,
        deletions=deletions,
        patch_source=patch_source,
        patch_note=note,
    )


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


def edited_paths(tool_call: ToolCall) -> list[str]:
    """The paths a tool call edits: its diffs' paths, else every path it names."""
    paths: list[str] = []
    for item in tool_call.content:
        if isinstance(item, DiffV1):
            paths.append(item.path)
        elif isinstance(item, DiffV2):
            paths.extend(c.path for c in item.changes if c.path)
    return list(dict.fromkeys(paths)) or tool_call_paths(tool_call)


@dataclass(frozen=True)
class DiskContents:
    """Files whose true content the disk shows around an edit, and fragments it could not place."""

    files: list[FileContents]
    unplaced: list[str]


def fragments_by_path(tool_call: ToolCall, session: SessionView) -> dict[str, list[DiffV1]]:
    """The v1 diffs of a tool call by file (one spelling each), in the order sent: a
    multi-edit reports several fragments of one file."""
    found: dict[str, list[DiffV1]] = {}
    for item in tool_call.content:
        if isinstance(item, DiffV1):
            found.setdefault(session.resolve(item.path), []).append(item)
    return found


def _forward(text: str, fragments: list[DiffV1], *, strict: bool) -> str | None:
    """``text`` with each fragment applied in turn, each ``oldText`` found there exactly once
    (``strict``: and its ``newText`` not yet, so ``text`` cannot be the file after)."""
    for fragment in fragments:
        old, new = fragment.old_text, fragment.new_text
        if not old or text.count(old) != 1 or (strict and (not new or new in text)):
            return None
        text = text.replace(old, new, 1)
    return text


def _backward(text: str, fragments: list[DiffV1]) -> str | None:
    """``text`` with each fragment undone, the last first: each ``newText`` found exactly
    once and its ``oldText`` not (so ``text`` cannot be the file before)."""
    for fragment in reversed(fragments):
        old, new = fragment.old_text, fragment.new_text
        if not old or not new or text.count(new) != 1 or old in text:
            return None
        text = text.replace(new, old, 1)
    return text


def file_contents_from_disk(tool_call: ToolCall, session: SessionView) -> DiskContents:
    """A tool call's files from what a live client read of the disk around it.

    When the content read as the tool call started differs from the content read as
    it completed, and the first holds the agent's ``oldText`` (each, for several
    fragments), that is the change. Otherwise one content is trusted, and the agent's
    ``oldText``/``newText`` fragments are placed in it: a content holding each
    ``oldText`` once and no ``newText`` is the file before the edit; one holding each
    ``newText`` once and no ``oldText`` is the file after. The first read comes too
    late when the agent was quicker, or catches the file half written; then the read
    at completion is the one trusted. Anything else cannot be placed, and is listed
    in ``unplaced``.
    """
    snapshots: dict[str, dict[str, str | None]] = {}
    for event in session.disk_of(tool_call.id):
        snapshots.setdefault(event.path, {})[event.op] = event.content
    reported = fragments_by_path(tool_call, session)
    files: list[FileContents] = []
    unplaced: list[str] = []
    for path, seen in snapshots.items():
        before, after = seen.get("disk_before"), seen.get("disk_after")
        fragments = reported.get(path, [])
        if (
            "disk_before" in seen
            and "disk_after" in seen
            and before != after
            and (after is not None or tool_call.kind in ("delete", "move"))
            and _holds_old_text(before, fragments)
        ):
            # A file gone at the end of a delete (or the old name of a move): deleted.
            files.append(FileContents(path, before, after))
            continue
        if not fragments:
            continue
        fragment = fragments[0]
        if len(fragments) == 1 and fragment.old_text is None:
            # A whole new text: of a file that was there, a modification, not a creation;
            # of a file the disk did not have, a creation.
            if "disk_before" in seen and before is not None and before != fragment.new_text:
                files.append(FileContents(path, before, fragment.new_text))
            elif "disk_before" in seen and before is None and after in (None, fragment.new_text):
                files.append(FileContents(path, None, fragment.new_text))
            continue
        if len(fragments) == 1 and fragment.old_text == "":
            if "disk_before" in seen and before is None and "disk_after" not in seen:
                # An edit that never completed, of a file that did not exist: its
                # "empty old file" is a creation it proposed.
                files.append(FileContents(path, None, fragment.new_text))
            elif not ("disk_before" in seen and before is None):
                unplaced.append(path)
            continue
        content = after if after is not None else before
        if content is None:
            unplaced.append(path)
        elif (applied := _forward(content, fragments, strict=True)) is not None:
            files.append(FileContents(path, content, applied))
        elif (undone := _backward(content, fragments)) is not None:
            files.append(FileContents(path, undone, content))
        else:
            unplaced.append(path)
    covered = {f.path for f in files} | set(unplaced)
    if any(path not in covered for path in reported):
        # A file the edit names that the disk reads say nothing of: they are not the whole
        # edit, and a patch of some of its files would lose the others.
        return DiskContents([], unplaced)
    return DiskContents(files, unplaced)


def _holds_old_text(before: str | None, fragments: list[DiffV1]) -> bool:
    """Whether a read taken as an edit started is consistent with the agent's fragments."""
    olds = [fragment.old_text for fragment in fragments if fragment.old_text]
    return not olds or (before is not None and all(old in before for old in olds))


def file_contents_from_permission(tool_call: ToolCall, session: SessionView) -> list[FileContents]:
    """A tool call's files from the whole-file diff its permission request carried, where its
    later updates report only fragments of that same edit.

    The proposal counts when the fragments, applied in turn to the proposed old text
    (each ``oldText`` found there once), give the proposed new text, and when the old
    text is what the session knew of the file before the tool call (if it knew).
    """
    reported = fragments_by_path(tool_call, session)
    files: list[FileContents] = []
    for proposed in tool_call.diffs_proposed:
        if not isinstance(proposed, DiffV1) or proposed.old_text is None:
            continue
        path = session.resolve(proposed.path)
        fragments = reported.get(path, [])
        if not fragments or fragments == [proposed]:
            continue
        whole_old, whole_new = proposed.old_text, proposed.new_text
        if _forward(whole_old, fragments, strict=False) != whole_new:
            continue
        known = session.file_before(path, tool_call.first_seq)
        if known is not None and (not known.kept or known.content != whole_old):
            continue  # not the file as it was: no patch that does not apply to it
        files.append(FileContents(path, whole_old, whole_new))
    return files


def file_contents_from_known(tool_call: ToolCall, session: SessionView) -> DiskContents:
    """A tool call's files from the agent's diffs placed in what the session knew of each
    file before the tool call (a read, a write, a file found missing).

    A file known not to exist, with no ``oldText`` or an empty one, is created (from
    ``/dev/null``); a known content with no ``oldText`` is replaced by ``newText``
    whole; an ``oldText`` that is the whole content, or is found in it exactly once,
    is replaced there. When the session knew nothing of one of the files, there is
    nothing to check its diff against: no files at all (the agent's diffs stand). A
    diff that cannot be placed is listed in ``unplaced``.
    """
    files: list[FileContents] = []
    unplaced: list[str] = []
    for path, fragments in fragments_by_path(tool_call, session).items():
        known = session.file_before(path, tool_call.first_seq)
        if known is None or not known.kept:
            # Nothing to check this file against: the agent's diff stands, for every file.
            return DiskContents([], [])
        result = edit_result(known.content, fragments)
        if result is None:
            unplaced.append(path)
        else:
            files.append(FileContents(path, known.content, result))
    return DiskContents(files, unplaced)


def edit_result(content: str | None, fragments: list[DiffV1]) -> str | None:
    """What an edit's fragments of one file make of its ``content`` (None: no such file):
    a file created (no ``oldText``, or an empty one, where there was none), replaced whole
    (no ``oldText``, or the whole content as it), or each ``oldText`` found once and replaced
    in turn; None when they cannot be placed in it."""
    if not fragments:
        return None
    first = fragments[0]
    if len(fragments) == 1 and content is None and not first.old_text:
        return first.new_text
    if len(fragments) == 1 and content is not None and first.old_text in (None, content):
        return first.new_text
    return _forward(content, fragments, strict=False) if content is not None else None


# --- the workspace's checkpoints ------------------------------------------------------------

#: How bad a file's missing patch is, worst first: the item says the worst.
_REASONS: tuple[PatchOmittedReason, ...] = ("capped", "binary", "too_large", "not_kept")


def side_of(line: LineSide | None) -> FileSide | None:
    """A ``change`` line's side as the runtime model keeps it (its text aside)."""
    if line is None:
        return None
    return FileSide(
        kind="link" if line.kind == "link" else "file",
        mode=line.mode,
        size=line.size,
        oid=line.oid,
        binary=line.binary,
        target=line.target,
        omitted=line.omitted,
    )


def file_version(side: FileSide | None) -> FileVersion | None:
    """A checkpoint's side of a file as the timeline shows it (its mode as git writes it)."""
    if side is None:
        return None
    named = side.oid is not None and not side.oid.startswith("stat-")
    return FileVersion(
        kind=side.kind,
        mode=f"{0o120000:o}" if side.kind == "link" else f"{0o100000 | (side.mode & 0o7777):o}",
        size=side.size,
        sha256=side.oid if named else None,
        binary=side.binary,
        target=side.target,
        omitted=side.omitted,
    )


def _side_text(
    side: FileSide | None, text: str | None
) -> tuple[str | None, PatchOmittedReason | None]:
    """The text a side gives the patch ("" for no file), or why it has none."""
    if side is None:
        return "", None
    if side.kind == "link":
        return (side.target, None) if side.target is not None else (None, "not_kept")
    if side.binary:
        return None, "binary"
    if side.omitted in ("too_large", "total_cap", "unhashed"):
        return None, "too_large"
    if text is None:
        return None, "not_kept"
    return text, None


def checkpoint_operation(change: CheckpointedFile) -> str:
    """What happened to a path: ``add``, ``delete``, ``move`` or ``modify``."""
    if change.before is None:
        return "move" if change.moved_from is not None else "add"
    if change.after is None:
        return "delete"
    return "move" if change.moved_from is not None else "modify"


def file_change_from_checkpoint(
    tool_call: ToolCall,
    files: Sequence[CheckpointedFile],
    *,
    limits: DiffLimits | None = None,
    status: ItemStatus = "completed",
    note: str | None = None,
) -> FileChangeItem:
    """A ``file_change`` item from what the workspace's checkpoints found of each file: its
    patch (as jsdiff writes it, capped as the built-in diff hook caps it; a link's target
    as its text), each path's operation, and both sides (``checkpoint``). A binary file, or
    one over the caps, has no text patch: ``diff_omitted_reason`` says so."""
    limits = limits or DiffLimits()
    patches: list[str] = []
    reasons: list[PatchOmittedReason] = []
    operations: dict[str, str] = {}
    moved_from: dict[str, str] = {}
    sides: dict[str, FileSides] = {}
    for change in files:
        path = change.path
        operations[path] = checkpoint_operation(change)
        if change.moved_from is not None:
            moved_from[path] = change.moved_from
        sides[path] = FileSides(
            before=file_version(change.before), after=file_version(change.after)
        )
        same = change.before is not None and change.before.same(change.after)
        if same or (change.before is None and change.after is None):
            reasons.append("unchanged")  # its content did not change (a move, or nothing)
            continue
        old, old_missing = _side_text(change.before, change.old_text)
        new, new_missing = _side_text(change.after, change.new_text)
        missing = old_missing or new_missing
        if missing == "not_kept" and "binary" in (old_missing, new_missing):
            missing = "binary"
        if old is None or new is None:
            reasons.append(missing or "not_kept")
            continue
        if old == new:
            reasons.append("unchanged")
            continue
        old_name = DEV_NULL if change.before is None else (change.moved_from or path)
        new_name = DEV_NULL if change.after is None else path
        text = unified_diff(
            old_name, new_name, old, new, max_edits=limits.max_edits if old and new else None
        )
        if text is None:
            reasons.append("capped")
        else:
            patches.append(text)
    patch = "\n".join(patches) if patches else None
    worst = next((r for r in _REASONS if r in reasons), None)
    reason: PatchOmittedReason | None = worst if patch is not None else (worst or "unchanged")
    additions, deletions = count_changes(patch)
    return FileChangeItem(
        status=status,
        title=tool_call.title,
        tool_kind=tool_call.kind,
        paths=tuple(operations),
        operations=operations,
        moved_from=moved_from,
        diff_str=patch,
        diff_omitted_reason=reason,
        additions=additions,
        deletions=deletions,
        patch_source="checkpoint",
        patch_note=note,
        checkpoint=sides,
    )


def checkpointed_files(tool_call: ToolCall, session: SessionView) -> list[CheckpointedFile] | None:
    """What the checkpoint taken as ``tool_call`` completed says of its files: the ones that
    changed, and the ones its diffs name (unchanged too: the checkpoint says so). None when
    no checkpoint covers it, or one of the files its diffs name is not covered (outside the
    session's folders, left out by the ignore rules): the other evidence stands then."""
    found = session.checkpointed(tool_call.id)
    if not found:
        return None
    covered = {f.path for f in found} | {f.moved_from for f in found if f.moved_from}
    named = list(fragments_by_path(tool_call, session))
    for item in tool_call.content:
        if isinstance(item, DiffV2):
            named.extend(session.resolve(c.path) for c in item.changes if c.path)
    if any(path not in covered for path in named):
        return None
    wanted = set(named)
    changed = [
        f
        for f in found
        if f.moved_from is not None
        or not (f.before.same(f.after) if f.before is not None else f.after is None)
        or f.path in wanted
    ]
    return changed or list(found)
