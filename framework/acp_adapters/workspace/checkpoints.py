"""A workspace's checkpoints, and what changed between them: the truth under every patch.

:class:`Checkpoints` is one session's view of its folders' checkpoints: it takes them
(:meth:`Checkpoints.take`, a stat pass of :class:`~.scan.Scanner`), looks at single paths
(:meth:`Checkpoints.look`, the files a tool call names), and says what changed
(:meth:`Checkpoints.changes`), renames found by content.

:class:`TurnChanges` follows one turn with it: a file's *before* is the file as of the later
of the turn's start checkpoint and the last completed tool call that touched it, its *after*
the file when the tool call completed, or at the turn's end. Every change of the turn is so
reported once, to the tool call that completed after it or, at the turn's end, on its own:
nothing that changed in the workspace during a turn is missing.

All of it is synchronous file work: the live client runs it in a worker thread.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .confined import Roots
from .objects import CheckpointRecord, ObjectStore, TreeEntry
from .revert import Conflict, RevertPlan, Side, apply, plan
from .scan import CheckpointLimits, Scanner, diff_trees, entry_at

#: The largest text a change carries (bytes): what a patch is made of in the timeline, and
#: the recording holds. A larger file is still checkpointed; its change says it is too large.
TEXT_LIMIT = 8 * 1024 * 1024


def same(one: TreeEntry | None, other: TreeEntry | None) -> bool:
    """Whether two entries are the same file (or link): kind, mode and content; the name
    aside (a rename keeps the file)."""
    if one is None or other is None:
        return one is other
    return (one.kind, one.mode, one.oid, one.size) == (
        other.kind,
        other.mode,
        other.oid,
        other.size,
    )


@dataclass(frozen=True)
class FileChange:
    """What happened to one path: its entry before and after (None: not there); a file
    found moved has the path it came from."""

    path: str
    before: TreeEntry | None
    after: TreeEntry | None
    moved_from: str | None = None

    @property
    def changed(self) -> bool:
        return self.moved_from is not None or not same(self.before, self.after)


def paired(changes: Iterable[FileChange]) -> list[FileChange]:
    """``changes`` with each file deleted at one path and created with the same content at
    another made one move (in path order, each paired once)."""
    listed = list(changes)
    created: dict[tuple[str, str | None], list[int]] = {}
    for number, change in enumerate(listed):
        after = change.after
        if change.before is None and after is not None and _content_named(after):
            created.setdefault((after.kind, after.oid), []).append(number)
    moved: dict[int, FileChange] = {}
    gone: set[int] = set()
    for number, change in enumerate(listed):
        before = change.before
        if change.after is not None or before is None or not _content_named(before):
            continue
        candidates = created.get((before.kind, before.oid))
        if not candidates:
            continue
        target = candidates.pop(0)
        moved[target] = FileChange(
            listed[target].path, before, listed[target].after, moved_from=change.path
        )
        gone.add(number)
    return [moved.get(n, c) for n, c in enumerate(listed) if n not in gone]


def _content_named(entry: TreeEntry) -> bool:
    """Whether the entry's object names its content (not a stat: a file not hashed)."""
    return entry.oid is not None and not entry.oid.startswith("stat-")


class Checkpoints:
    """One workspace's checkpoints (see the module's docstring)."""

    def __init__(
        self,
        roots: Roots,
        *,
        folder: Path | None = None,
        ignore: Sequence[str] = (),
        limits: CheckpointLimits | None = None,
        store: ObjectStore | None = None,
    ) -> None:
        self.roots = roots
        self.store = store or ObjectStore.for_workspace(roots.cwd, folder)
        self.scanner = Scanner(roots, self.store, ignore=ignore, limits=limits)

    def close(self) -> None:
        self.scanner.close()
        self.store.close()

    def take(self) -> CheckpointRecord:
        """A checkpoint of the folders now."""
        return self.scanner.checkpoint()

    def look(self, path: str) -> tuple[bool, TreeEntry | None]:
        """What is at ``path`` now, stored (see :meth:`Scanner.look`)."""
        return self.scanner.look(path)

    def path_of(self, root: int, relative: str) -> str:
        return f"{self.roots.roots[root]}/{relative}" if relative else str(self.roots.roots[root])

    def entry(self, record: CheckpointRecord, path: str) -> TreeEntry | None:
        """What ``record`` holds at ``path`` (absolute, or relative to the cwd); None: nothing."""
        place = self.roots.lexical(path)
        if place is None or not place[1]:
            return None
        index, parts = place
        if index >= len(record.roots):
            return None
        return entry_at(self.store, record.roots[index][1], parts)

    def changes(self, old: CheckpointRecord, new: CheckpointRecord) -> list[FileChange]:
        """Every file that differs between two checkpoints of these folders, renames paired."""
        found: list[FileChange] = []
        for index, (_, tree) in enumerate(new.roots):
            before = old.roots[index][1] if index < len(old.roots) else None
            for relative, one, other in diff_trees(self.store, before, tree):
                if not same(one, other):
                    found.append(FileChange(self.path_of(index, relative), one, other))
        return paired(found)

    def blob(self, oid: str | None) -> bytes | None:
        return None if oid is None else self.store.get(oid)

    def restore(self, record: CheckpointRecord, *, dry_run: bool = False) -> RevertPlan:
        """Put the folders back as ``record`` had them: every file that differs now is
        written (or removed, a link made, a mode set), through the writes that follow no link
        (:mod:`.revert`); what the checkpoints leave out (ignored, over the caps) is left as it
        is. A file that changes between the look and its write fails that write. The plan
        (with ``dry_run``, nothing written); ``conflicts`` holds the files it cannot write:
        their bytes are not in the store, or a link is where a folder of their path was.

        :raises ChangedError: a file changed between the look and its write.
        """
        now = self.take()
        files: list[tuple[str, Side | None, Side | None]] = []
        missing: list[Conflict] = []
        for change in self.changes(now, record):
            for path, target, current in _restored(change):
                wanted = self._side(target)
                if target is not None and wanted is None:
                    missing.append(Conflict(path, "the checkpoint store holds no bytes of it"))
                    continue
                files.append((path, wanted, self._side(current)))
        result = plan(self.roots, files)
        result.conflicts[:0] = missing
        if not dry_run and not result.conflicts:
            apply(self.roots, result)
        return result

    def _side(self, entry: TreeEntry | None) -> Side | None:
        """An entry as a revert writes it (None: no file; or its bytes are not stored)."""
        if entry is None:
            return None
        data = self.blob(entry.oid) if entry.stored else None
        if data is None:
            return None
        if entry.kind == "link":
            return Side("link", target=os.fsdecode(data))
        return Side("file", data, entry.mode)

    def state(self, entry: TreeEntry | None, *, text: bool = True) -> dict[str, Any] | None:
        """An entry as a change line carries it: kind, mode, size, object; a file's text (or
        ``binary``) where ``text`` and it is stored and within :data:`TEXT_LIMIT`, else
        ``omitted`` says why not; a link's target."""
        return state_json(entry, self.blob, text=text)


def state_json(
    entry: TreeEntry | None, blob: Any, *, text: bool = True, text_limit: int = TEXT_LIMIT
) -> dict[str, Any] | None:
    """See :meth:`Checkpoints.state`; ``blob`` reads an object's bytes (None: not held)."""
    if entry is None:
        return None
    found: dict[str, Any] = {
        "kind": entry.kind,
        "mode": entry.mode,
        "size": entry.size,
        "oid": entry.oid,
    }
    if entry.kind == "link":
        data = blob(entry.oid)
        if data is not None:
            found["target"] = os.fsdecode(data)
        else:
            found["omitted"] = "missing"
        return found
    if entry.omitted is not None:
        found["omitted"] = entry.omitted
        return found
    if not text:
        return found
    if entry.size > text_limit:
        found["omitted"] = "too_large"
        return found
    data = blob(entry.oid)
    if data is None:
        found["omitted"] = "missing"
        return found
    try:
        found["text"] = data.decode("utf-8")
    except UnicodeDecodeError:
        found["binary"] = True
    return found


@dataclass
class TurnChanges:
    """One turn's changes, as its tool calls complete and as it ends (see the module's
    docstring). Before the turn starts, the session's first checkpoint is its start."""

    checkpoints: Checkpoints
    start: CheckpointRecord | None = None
    #: Each path a completed tool call touched since the start, as it left it.
    touched: dict[str, TreeEntry | None] = field(default_factory=dict)

    def started(self, record: CheckpointRecord) -> None:
        """The turn starts with ``record``."""
        self.start = record
        self.touched = {}

    def before(self, path: str) -> TreeEntry | None:
        if path in self.touched:
            return self.touched[path]
        return self.checkpoints.entry(self.start, path) if self.start is not None else None

    def tool_call(self, paths: Iterable[str]) -> list[FileChange]:
        """A tool call completed: each path it names that the checkpoints cover, before and
        after (unchanged ones too: the checkpoint says so). Its after is the next one's
        before."""
        if self.start is None:
            return []
        found: list[FileChange] = []
        for path in dict.fromkeys(paths):
            covered, now = self.checkpoints.look(path)
            if not covered:
                continue
            found.append(FileChange(path, self.before(path), now))
            self.touched[path] = now
        moved = paired(change for change in found if change.changed)
        kept = [change for change in found if not change.changed]
        return [*moved, *kept]

    def ended(self, record: CheckpointRecord) -> list[FileChange]:
        """The turn ended with ``record``: every change since the start that no completed
        tool call reported (a change after a tool call's, too), renames paired."""
        if self.start is None:
            self.start = record
            return []
        checkpoints = self.checkpoints
        changes: dict[str, FileChange] = {}
        for change in checkpoints.changes(self.start, record):
            for path, before in _sides(change):
                changes[path] = FileChange(path, before, checkpoints.entry(record, path))
        for path, left in self.touched.items():
            if path not in changes:
                changes[path] = FileChange(path, left, checkpoints.entry(record, path))
        found = []
        for path, change in sorted(changes.items()):
            before = self.touched.get(path, change.before)
            if not same(before, change.after):
                found.append(FileChange(path, before, change.after))
        self.start, self.touched = record, {}
        return paired(found)


def _restored(change: FileChange) -> list[tuple[str, TreeEntry | None, TreeEntry | None]]:
    """A change from now to a checkpoint as paths to restore: (path, as the checkpoint had
    it, as it is now)."""
    if change.moved_from is None:
        return [(change.path, change.after, change.before)]
    return [(change.moved_from, None, change.before), (change.path, change.after, None)]


def _sides(change: FileChange) -> list[tuple[str, TreeEntry | None]]:
    """The paths of a change and what each held before (a move: both of its paths)."""
    if change.moved_from is None:
        return [(change.path, change.before)]
    return [(change.moved_from, change.before), (change.path, None)]


__all__ = [
    "TEXT_LIMIT",
    "Checkpoints",
    "FileChange",
    "TurnChanges",
    "paired",
    "same",
    "state_json",
]
