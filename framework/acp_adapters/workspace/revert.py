"""Undoing a turn per hunk, three-way, through writes that never follow a link out.

A turn took each file it changed from its *start* to its *end*; since then, the file may
have changed again (a user's edit, a later turn): it is *now*. Undoing the turn puts back
the start where nothing changed it since, and merges where something did:

* now is the end: the start is put back whole (a file written, removed, a link made, a
  mode set);
* now is the start: nothing to do;
* all three are text: the turn's hunks are undone one by one, three-way (:func:`merge`):
  a hunk that later edits left alone is undone, and the later edits are kept; a hunk a
  later edit touched (its lines, or the line beside them) is a conflict. A mode is put
  back when now still has the turn's;
* anything else (a file made binary, a link, a file deleted since) is a conflict.

One conflict anywhere and nothing is written: :class:`RevertPlan` says what conflicts, file
by file and hunk by hunk. Otherwise every write goes through :class:`~.confined.Roots` with
``links="none"``: no link on the path is followed (one where a folder should be is a
conflict), a link at the path is replaced as a name, and each write is bound to what was
read (``Expected``): a file changed between the check and the write fails that write.

The hunks are those of the library's own diff engine (jsdiff's), as the turn's patch shows
them: a conflict names the hunk of the patch a reader saw.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from ..diff.lines import Line, split_lines
from ..diff.search import EQUAL, INSERT, edit_script
from ..diff.unified import Hunk, hunks
from .confined import (
    ChangedError,
    Expected,
    FileTooLargeError,
    LinkInPathError,
    NotRegularFileError,
    OutsideError,
    Roots,
)

#: The most edits a merge's searches may need; past it the file is a conflict.
MERGE_EDITS = 20_000
#: The largest file read to compare with what a turn left (bytes).
READ_LIMIT = 64 * 1024 * 1024


@dataclass(frozen=True)
class Side:
    """One state of a path: a file (its bytes and permission bits; None: not known, as the
    evidence of a log without checkpoints) or a link (its target); a path with nothing
    there is None where a Side is expected."""

    kind: Literal["file", "link"]
    data: bytes = b""
    mode: int | None = None
    target: str = ""

    def same_content(self, other: Side | None) -> bool:
        if other is None or other.kind != self.kind:
            return False
        return self.target == other.target if self.kind == "link" else self.data == other.data

    def same(self, other: Side | None) -> bool:
        if not self.same_content(other):
            return False
        assert other is not None
        if self.kind == "link" or self.mode is None or other.mode is None:
            return True
        return self.mode == other.mode

    def text(self) -> str | None:
        if self.kind != "file":
            return None
        try:
            return self.data.decode("utf-8")
        except UnicodeDecodeError:
            return None


def _same(one: Side | None, other: Side | None) -> bool:
    return other is None if one is None else one.same(other)


@dataclass(frozen=True)
class ConflictHunk:
    """A hunk of the turn's patch that a later edit touched: its header, as the turn's
    patch shows it."""

    header: str


@dataclass(frozen=True)
class Conflict:
    """A file that cannot be undone as it stands now, and why (its hunks, when it was
    merged)."""

    path: str
    why: str
    hunks: tuple[ConflictHunk, ...] = ()

    def describe(self) -> str:
        if not self.hunks:
            return f"{self.path}: {self.why}"
        return f"{self.path}: {self.why}: " + ", ".join(h.header for h in self.hunks)


@dataclass(frozen=True)
class Action:
    """One write of a revert: put ``side`` at ``path`` (None: remove what is there), bound
    to finding ``expected`` there."""

    path: str
    side: Side | None
    expected: Expected


@dataclass
class RevertPlan:
    """What undoing a turn writes, or why it cannot: nothing is written when ``conflicts``."""

    actions: list[Action] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)


# --- the three-way merge ---------------------------------------------------------------------


@dataclass(frozen=True)
class _Region:
    """Lines ``[start, end)`` of the base replaced by ``lines``."""

    start: int
    end: int
    lines: list[Line]


def _regions(
    old: list[Line], new: list[Line], script: list[tuple[int, int]], *, of_new: bool = False
) -> list[_Region]:
    """The changes of an edit script from ``old`` to ``new``, as regions of ``old`` replaced
    by lines of ``new``; ``of_new``: as regions of ``new`` replaced by lines of ``old`` (what
    undoing each change replaces, and with what)."""
    found: list[_Region] = []
    x = y = 0  # positions in old and new
    first = taken = -1
    for op, count in [*script, (EQUAL, 0)]:
        if op == EQUAL:
            if first >= 0:
                found.append(
                    _Region(first, y, old[taken:x]) if of_new else _Region(first, x, new[taken:y])
                )
                first = -1
            x += count
            y += count
            continue
        if first < 0:
            first, taken = (y, x) if of_new else (x, y)
        if op == INSERT:
            y += count
        else:
            x += count
    return found


def _touch(one: _Region, other: _Region) -> bool:
    """Whether two changes of the same base lines overlap, or touch (one starts where the
    other ends): a later edit beside a hunk's lines is in conflict with it, as git's merge
    has it."""
    return one.start <= other.end and other.start <= one.end


@dataclass(frozen=True)
class MergeResult:
    """A merged text, or the turn's hunks that a later edit touched."""

    text: str | None
    conflicts: tuple[ConflictHunk, ...] = ()
    #: The merge gave up (the edit search was capped): the file is too changed to merge.
    capped: bool = False


def merge(start: str, end: str, now: str, *, max_edits: int = MERGE_EDITS) -> MergeResult:
    """Undo the change ``start`` -> ``end`` in ``now``, hunk by hunk (see the module's
    docstring). The turn's hunks named in a conflict are those of its patch, start to end."""
    s, e, c = split_lines(start), split_lines(end), split_lines(now)
    turn = edit_script(s, e, max_edits)
    later = edit_script(e, c, max_edits)
    if turn is None or later is None:
        return MergeResult(None, capped=True)
    undo = _regions(s, e, turn, of_new=True)
    kept = _regions(e, c, later)
    patch = hunks(s, e, turn)
    touched: list[ConflictHunk] = []
    # A hunk some later edit already undid, exactly (the same lines, the same way), is done.
    undo = [region for region in undo if region not in kept]
    for region in undo:
        if any(_touch(region, edit) for edit in kept):
            header = _hunk_of(patch, region)
            if header not in touched:
                touched.append(header)
    if touched:
        return MergeResult(None, tuple(touched))
    merged: list[Line] = []
    at = 0
    for region in sorted([*undo, *kept], key=lambda r: (r.start, r.end)):
        merged.extend(e[at : region.start])
        merged.extend(region.lines)
        at = region.end
    merged.extend(e[at:])
    return MergeResult(_joined(merged))


def _hunk_of(patch: Sequence[Hunk], region: _Region) -> ConflictHunk:
    """The hunk of the turn's patch that holds ``region`` (lines of the turn's end, from 0)."""
    for hunk in patch:
        # new_start counts from 1 (one earlier for an empty side, as the format has it).
        first = hunk.new_start if hunk.new_count else hunk.new_start + 1
        if first - 1 <= region.start <= first - 1 + hunk.new_count:
            return ConflictHunk(hunk.header())
    return ConflictHunk(f"@@ +{region.start + 1},{region.end - region.start} @@")


def _joined(lines: list[Line]) -> str:
    return "".join(line + "\n" if isinstance(line, str) else line[0] for line in lines)


# --- planning and writing --------------------------------------------------------------------


def read_side(roots: Roots, path: str) -> tuple[Side | None, Expected]:
    """What is at ``path`` now, without following a link (a link is read as a link), and
    what a write must still find there.

    :raises OutsideError: the path is outside the roots.
    :raises LinkInPathError: a folder on the way is a link now.
    :raises NotRegularFileError: a FIFO, a socket or a device is there (never opened).
    :raises FileTooLargeError: larger than :data:`READ_LIMIT`.
    :raises IsADirectoryError: a folder is there.
    """
    facts = roots.lstat(path)
    if facts is None:
        return None, Expected(absent=True)
    expected = Expected.unchanged(facts)
    if stat.S_ISLNK(facts.st_mode):
        descriptor, name, _ = roots.folder(path, links="none")
        try:
            target = os.readlink(name, dir_fd=descriptor)
        finally:
            os.close(descriptor)
        return Side("link", target=target), expected
    if stat.S_ISDIR(facts.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    if not stat.S_ISREG(facts.st_mode):
        raise NotRegularFileError(path)
    data = roots.read_bytes(path, READ_LIMIT, links="none")
    return Side("file", data, stat.S_IMODE(facts.st_mode)), expected


def plan(
    roots: Roots,
    files: Sequence[tuple[str, Side | None, Side | None]],
    *,
    read: Callable[[Roots, str], tuple[Side | None, Expected]] = read_side,
) -> RevertPlan:
    """What undoing a turn writes: ``files`` are its paths with their start and end (a path
    after the folders above it: a link removed is removed before a file beneath it is put
    back)."""
    result = RevertPlan()
    for path, start, end in sorted(files, key=lambda file: file[0]):
        try:
            now, expected = read(roots, path)
        except LinkInPathError:
            # Beneath a link nothing is there, as the checkpoints see it (they follow no
            # link); a file can be put back only where this revert replaces the link.
            now, expected = None, Expected(absent=True)
            if start is not None and not _replaces_link(roots, path, result):
                result.conflicts.append(Conflict(path, "a folder on its path is a link now"))
                continue
        except (OutsideError, OSError) as error:
            why = next((w for kind, w in _UNREADABLE if isinstance(error, kind)), None)
            if why is None:
                raise
            result.conflicts.append(Conflict(path, why))
            continue
        if _same(now, end):
            result.actions.append(Action(path, start, expected))
        elif _same(now, start):
            result.unchanged.append(path)
        else:
            _merged(result, path, start, end, now, expected)
    return result


#: What stands at a path now that a revert cannot compare with what the turn left, and why.
_UNREADABLE: tuple[tuple[type[BaseException], str], ...] = (
    (OutsideError, "outside the session's folders"),
    (IsADirectoryError, "a folder is there now"),
    (NotRegularFileError, "a FIFO, socket or device is there now"),
    (FileTooLargeError, "too large to compare now"),
    (NotADirectoryError, "a file is where a folder of its path was"),
)


def _replaces_link(roots: Roots, path: str, result: RevertPlan) -> bool:
    """Whether the link on ``path``'s way is one this plan replaces (or removes) first."""
    parent = os.path.dirname(path)
    replaced = {action.path for action in result.actions}
    while parent and parent != os.path.dirname(parent):
        try:
            facts = roots.lstat(parent)
        except (LinkInPathError, OutsideError):
            facts = None
        if facts is not None and stat.S_ISLNK(facts.st_mode):
            return parent in replaced
        parent = os.path.dirname(parent)
    return False


def _merged(
    result: RevertPlan,
    path: str,
    start: Side | None,
    end: Side | None,
    now: Side | None,
    expected: Expected,
) -> None:
    """A file that changed since the turn: undone three-way, or a conflict."""
    texts = [side.text() if side is not None else None for side in (start, end, now)]
    if start is None or end is None or now is None or None in texts:
        result.conflicts.append(Conflict(path, "it changed since the turn left it"))
        return
    old, new, current = (text or "" for text in texts)
    mode = now.mode
    if None in (start.mode, end.mode, now.mode):
        pass  # not known from the log: the file keeps the mode it has
    elif now.mode == end.mode:
        mode = start.mode
    elif start.mode not in (end.mode, now.mode):
        result.conflicts.append(Conflict(path, "its mode changed since the turn left it"))
        return
    if old == new:
        merged: str | None = current  # the turn changed its mode only
    else:
        found = merge(old, new, current)
        if found.capped:
            result.conflicts.append(Conflict(path, "it changed too much since to merge"))
            return
        if found.conflicts:
            result.conflicts.append(
                Conflict(path, "later edits touched the turn's hunks", found.conflicts)
            )
            return
        merged = found.text
    assert merged is not None
    if merged == current and mode == now.mode:
        result.unchanged.append(path)  # every hunk of the turn is undone in it already
        return
    result.actions.append(Action(path, Side("file", merged.encode("utf-8"), mode), expected))


def apply(roots: Roots, revert: RevertPlan) -> list[str]:
    """Write a plan (one with no conflict); the paths written or removed.

    :raises ValueError: the plan has conflicts.
    :raises ChangedError: a file changed between the plan and its write (what was written
        before it stays written).
    """
    if revert.conflicts:
        raise ValueError("a revert with conflicts writes nothing")
    done: list[str] = []
    for action in revert.actions:
        side = action.side
        if side is None:
            try:
                roots.remove(action.path, expected=action.expected)
            except FileNotFoundError:
                if not action.expected.absent:
                    raise ChangedError(action.path, "the file is gone") from None
                continue
        elif side.kind == "link":
            roots.replace(
                action.path, b"", links="none", expected=action.expected, link_target=side.target
            )
        else:
            roots.replace(
                action.path, side.data, links="none", mode=side.mode, expected=action.expected
            )
        done.append(action.path)
    return done


__all__ = [
    "MERGE_EDITS",
    "Action",
    "Conflict",
    "ConflictHunk",
    "MergeResult",
    "RevertPlan",
    "Side",
    "apply",
    "merge",
    "plan",
    "read_side",
]
