"""A turn's file changes as one patch, and undoing a turn, from a thread's log.

A live session checkpoints its folders at every turn's start and end and as each edit
tool call completes; the log keeps each checkpoint and every change it found (its
``checkpoint`` and ``change`` events, docs/captures.md). A turn's change of a file is then
exact: its first *before* in the turn's changes (the file as the turn's start checkpoint
had it) and its last *after* (as the turn's end checkpoint has it), whoever wrote it.
:func:`turn_files` gives each, with both sides' facts (mode, hash, link target);
:func:`turn_patch` writes them as one unified patch (a file per section, as jsdiff writes
it); :func:`revert_turn` undoes the turn per hunk, three-way (see
:mod:`acp_adapters.workspace.revert`), writing nothing when a later edit touched a hunk of
the turn (:class:`RevertConflict` names each file and hunk).

A thread recorded without checkpoints (an older log, ``checkpoints=False``) has the other
evidence: the whole texts the client read around each edit and the writes it served. Its
turns are read from those the same way; a file whose whole text the log lacks cannot be
undone (:class:`MissingEvidence` names it).

A file's bytes the log does not hold (a binary file, one over the text limit) are read
from the workspace's checkpoint store (:mod:`acp_adapters.workspace.objects`), by hash.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import anyio

from ..capture.format import CHECKPOINT, FILE_CHANGE, FileSide, change_line, checkpoint_line
from ..diff import DEFAULT_MAX_EDITS, unified_diff
from ..errors import AcpAdaptersError
from ..projection.files import file_version, side_of
from ..projection.traffic import project_capture
from ..store.base import Store, StoredEvent, Thread
from ..timeline.items import FileVersion
from ..workspace.confined import Roots
from ..workspace.objects import CheckpointError, ObjectStore
from ..workspace.revert import Conflict, RevertPlan, Side, apply, plan

_T = TypeVar("_T")


class MissingEvidence(AcpAdaptersError):
    """Files a turn changed that the log holds no whole text of; ``paths`` names them."""

    def __init__(self, message: str, paths: Sequence[str]) -> None:
        super().__init__(message)
        self.paths = list(paths)


class RevertConflict(AcpAdaptersError):
    """Files that changed since the turn left them in a way that cannot be merged: nothing
    was written. ``paths`` names them; ``conflicts`` says why for each (and which hunks of
    the turn's patch later edits touched)."""

    def __init__(
        self, message: str, paths: Sequence[str], conflicts: Sequence[Conflict] = ()
    ) -> None:
        super().__init__(message)
        self.paths = list(paths)
        self.conflicts = list(conflicts)


@dataclass(frozen=True)
class FileTurn:
    """What a turn did to one file: its text before (None: there was no file, or it is not
    text: ``before_state`` says which) and after (None: the turn deleted it, or it is not
    text), and, from checkpoints, both sides' facts (mode, SHA-256, link target)."""

    path: str
    before: str | None
    after: str | None
    before_state: FileVersion | None = None
    after_state: FileVersion | None = None
    #: Whether the turn's change is known from checkpoints (else from the other evidence).
    checkpointed: bool = False

    @property
    def operation(self) -> str:
        """``add``, ``delete``, ``modify`` (content, mode or link target)."""
        if self.checkpointed:
            if self.before_state is None:
                return "add"
            return "delete" if self.after_state is None else "modify"
        if self.before is None:
            return "add"
        return "delete" if self.after is None else "modify"

    def side_text(self, which: str) -> str | None:
        """The text a side gives a patch: a file's text, a link's target ("" for none)."""
        state = self.before_state if which == "before" else self.after_state
        text = self.before if which == "before" else self.after
        if not self.checkpointed:
            return text or ""
        if state is None:
            return ""
        if state.kind == "link":
            return state.target
        return text


def _turn_range(entries: Sequence[dict[str, Any]], turn: int, session_id: str | None) -> range:
    """The entries of a turn: from its prompt to the next prompt (or the end)."""
    starts = []
    for index, entry in enumerate(entries):
        message = entry.get("msg")
        if entry.get("dir") != "client->agent" or not isinstance(message, dict):
            continue
        params = message.get("params")
        if message.get("method") != "session/prompt" or not isinstance(params, dict):
            continue
        if session_id is None or params.get("sessionId") == session_id:
            starts.append(index)
    if not 1 <= turn <= len(starts):
        return range(0)
    end = starts[turn] if turn < len(starts) else len(entries)
    return range(starts[turn - 1], end)


def _ours(entry: dict[str, Any], session_id: str | None) -> bool:
    named = entry.get("sessionId")
    return session_id is None or named is None or named == session_id


def _side(side: FileSide | None) -> tuple[FileVersion | None, str | None]:
    return (file_version(side_of(side)), side.text) if side is not None else (None, None)


def checkpointed_turn(
    entries: Sequence[dict[str, Any]], turn: int, session_id: str | None = None
) -> list[FileTurn] | None:
    """Each file turn ``turn`` changed, from its checkpoints' changes: None when the log
    holds no checkpoint of that turn (its start's, or its end's)."""
    of_turn: dict[str, int] = {}
    ended = False
    first: dict[str, tuple[FileVersion | None, str | None]] = {}
    last: dict[str, tuple[FileVersion | None, str | None]] = {}
    for entry in entries:
        if not _ours(entry, session_id):
            continue
        if entry.get("dir") == CHECKPOINT:
            taken = checkpoint_line(entry)
            if taken is not None and taken.turn == turn:
                of_turn[taken.id] = turn
                ended = ended or taken.reason == "turn_end"
        elif entry.get("dir") == FILE_CHANGE:
            found = change_line(entry)
            if found is None or found.checkpoint not in of_turn:
                continue
            sides = [(found.path, found.before, found.after)]
            if found.moved_from is not None:
                sides = [(found.moved_from, found.before, None), (found.path, None, found.after)]
            for path, before, after in sides:
                first.setdefault(path, _side(before))
                last[path] = _side(after)
    if not ended:
        return None
    files: list[FileTurn] = []
    for path in sorted(first):
        (old_state, old_text), (new_state, new_text) = first[path], last[path]
        if old_state == new_state and old_text == new_text:
            continue  # changed and changed back
        files.append(FileTurn(path, old_text, new_text, old_state, new_state, checkpointed=True))
    return files


def turn_files(
    events: Sequence[StoredEvent], turn: int, *, session_id: str | None = None
) -> list[FileTurn]:
    """Each file the turn changed, with its first text before and its last after: from its
    checkpoints where the log has them; else from the log's other evidence (the disk reads
    around its edits, and the writes the client served, in the order the turn first
    touched the files).

    :raises MissingEvidence: without checkpoints, a file the turn changed whose whole text
        the log lacks.
    """
    entries = [event.entry for event in events]
    found = checkpointed_turn(entries, turn, session_id)
    if found is not None:
        return found
    return _evidence_files(entries, turn, session_id)


def _evidence_files(
    entries: list[dict[str, Any]], turn: int, session_id: str | None
) -> list[FileTurn]:
    timeline = project_capture(entries, session_id=session_id)
    paths = [
        path
        for item in timeline.of_kind("file_change")
        if item.turn == turn and not item.replayed
        for path in getattr(item, "paths", ())
    ]
    first: dict[str, str | None] = {}
    last: dict[str, str | None] = {}
    writes: dict[Any, tuple[str, str]] = {}
    for index in _turn_range(entries, turn, session_id):
        entry = entries[index]
        message = entry.get("msg")
        if entry.get("dir") == "disk" and not entry.get("unreadable"):
            path, phase, content = entry.get("path"), entry.get("phase"), entry.get("content")
            if not isinstance(path, str) or not (content is None or isinstance(content, str)):
                continue
            if phase in ("before", "write", "missing"):
                first.setdefault(path, content)
            elif phase == "after":
                last[path] = content
        elif entry.get("dir") == "agent->client" and isinstance(message, dict):
            params = message.get("params")
            if message.get("method") == "fs/write_text_file" and isinstance(params, dict):
                path, content = params.get("path"), params.get("content")
                if isinstance(path, str) and isinstance(content, str) and "id" in message:
                    writes[repr(message["id"])] = (path, content)
        elif entry.get("dir") == "client->agent" and isinstance(message, dict):
            served = writes.pop(repr(message.get("id")), None)
            if served is not None and "error" not in message:
                last[served[0]] = served[1]  # written when the client said it wrote it
                paths.append(served[0])
    found: list[FileTurn] = []
    lacking: list[str] = []
    for path in dict.fromkeys(paths):
        if path in first and path in last:
            found.append(FileTurn(path, first[path], last[path]))
        else:
            lacking.append(path)
    if lacking:
        raise MissingEvidence(
            f"turn {turn}: the log holds no whole text before and after of " + ", ".join(lacking),
            lacking,
        )
    return found


def _mode_lines(change: FileTurn) -> list[str]:
    old, new = change.before_state, change.after_state
    if old is None or new is None or old.mode == new.mode:
        return []
    return [f"old mode {old.mode}", f"new mode {new.mode}"]


def turn_patch(files: Sequence[FileTurn], *, max_edits: int | None = DEFAULT_MAX_EDITS) -> str:
    """The unified patch of a turn's files, a section per file that changed (as jsdiff
    writes it; ``/dev/null`` for a created or deleted file). A file changed by more than
    ``max_edits`` line edits gets a line saying its patch was left out (None: no cap); a
    binary file or one over the caps, a line naming both sides' hashes; a changed mode,
    git's ``old mode`` and ``new mode`` lines before its section."""
    sections = []
    for change in files:
        old_name = change.path if change.operation != "add" else "/dev/null"
        new_name = change.path if change.operation != "delete" else "/dev/null"
        head = _mode_lines(change)
        old, new = change.side_text("before"), change.side_text("after")
        if old is None or new is None:
            sides = [
                (s.sha256 or "unhashed") if s is not None else "/dev/null"
                for s in (change.before_state, change.after_state)
            ]
            sections.append(
                "\n".join([*head, f"Binary files {old_name} and {new_name} differ"])
                + f"\n# {change.path}: {sides[0]} -> {sides[1]} (no text patch)\n"
            )
            continue
        if old == new:
            if head:
                sections.append("\n".join([*head, f"--- {old_name}", f"+++ {new_name}"]) + "\n")
            continue
        cap = max_edits if old and new else None
        text = unified_diff(old_name, new_name, old, new, max_edits=cap)
        if text is None:
            sections.append(
                "\n".join([*head, f"--- {old_name}", f"+++ {new_name}"])
                + f"\n# {change.path}: more than {max_edits} line edits, its patch left out\n"
            )
            continue
        sections.append("\n".join([*head, text]) if head else text)
    return "\n".join(sections)


async def thread_turn_files(store: Store, thread_id: str, turn: int) -> list[FileTurn]:
    """:func:`turn_files` of a thread of the store."""
    thread = await store.thread(thread_id)
    events = await store.events(thread_id)
    return await anyio.to_thread.run_sync(
        lambda: turn_files(events, turn, session_id=thread.agent_session_id)
    )


def _sides(
    files: Sequence[FileTurn], objects: ObjectStore | None
) -> list[tuple[str, Side | None, Side | None]]:
    """Each file's start and end as a revert writes them: text from the log, other bytes
    from the checkpoint store.

    :raises MissingEvidence: a side's bytes are in neither.
    """
    found: list[tuple[str, Side | None, Side | None]] = []
    lacking: list[str] = []
    for change in files:
        sides: list[Side | None] = []
        for state, text in (
            (change.before_state, change.before),
            (change.after_state, change.after),
        ):
            if not change.checkpointed:
                sides.append(None if text is None else Side("file", text.encode("utf-8"), None))
                continue
            if state is None:
                sides.append(None)
            elif state.kind == "link":
                sides.append(Side("link", target=state.target or ""))
            else:
                data = text.encode("utf-8") if text is not None else None
                if data is None and objects is not None and state.sha256 is not None:
                    data = objects.get(state.sha256)
                if data is None:
                    lacking.append(change.path)
                    sides.append(None)
                    continue
                sides.append(Side("file", data, int(state.mode, 8) & 0o7777))
        found.append((change.path, sides[0], sides[1]))
    if lacking:
        raise MissingEvidence(
            "the checkpoints hold no bytes of " + ", ".join(dict.fromkeys(lacking)), lacking
        )
    return found


async def _in_folders(thread: Thread, work: Callable[[Roots], _T]) -> _T:
    """``work`` on the thread's folders (confined, opened for it), in a worker thread."""

    def run() -> _T:
        roots = Roots(thread.cwd, tuple(thread.folders))
        try:
            return work(roots)
        finally:
            roots.close()

    return await anyio.to_thread.run_sync(run)


async def plan_revert(
    store: Store, thread_id: str, turn: int, *, checkpoints: Path | None = None
) -> RevertPlan:
    """What undoing a turn of a thread would write (nothing is written): its actions, or its
    conflicts. ``checkpoints``: the folder of the checkpoint stores the session used, where
    it named one (``Checkpointing(folder=...)``).

    :raises MissingEvidence: files whose before or after the log (and the checkpoint store)
        do not hold.
    """
    thread = await store.thread(thread_id)
    files = await thread_turn_files(store, thread_id, turn)

    def work(roots: Roots) -> RevertPlan:
        objects = None
        if any(f.checkpointed for f in files):
            with contextlib.suppress(CheckpointError):
                objects = ObjectStore.for_workspace(thread.cwd, checkpoints)
        try:
            sides = _sides(files, objects)
        finally:
            if objects is not None:
                objects.close()
        return plan(roots, sides)

    return await _in_folders(thread, work)


async def revert_turn(
    store: Store,
    thread_id: str,
    turn: int,
    *,
    dry_run: bool = False,
    checkpoints: Path | None = None,
) -> list[str]:
    """Undo what a turn of a thread changed, per hunk (see the module's docstring); the
    paths written or removed (with ``dry_run``, those that would be, and nothing written).

    :raises RevertConflict: files that later edits changed in a way that cannot be merged
        (each named, with the turn's hunks they touched): nothing was written.
    :raises MissingEvidence: files the log (and the checkpoint store) hold no bytes of.
    """
    thread = await store.thread(thread_id)
    revert = await plan_revert(store, thread_id, turn, checkpoints=checkpoints)
    if revert.conflicts:
        raise RevertConflict(
            f"turn {turn}: "
            + "; ".join(conflict.describe() for conflict in revert.conflicts)
            + " (nothing was written)",
            [conflict.path for conflict in revert.conflicts],
            revert.conflicts,
        )
    if dry_run:
        return [action.path for action in revert.actions]
    return await _in_folders(thread, lambda roots: apply(roots, revert))


__all__ = [
    "FileTurn",
    "MissingEvidence",
    "RevertConflict",
    "checkpointed_turn",
    "plan_revert",
    "revert_turn",
    "thread_turn_files",
    "turn_files",
    "turn_patch",
]
