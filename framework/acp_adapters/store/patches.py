"""A turn's file changes as one patch, and undoing a turn, from a thread's evidence.

A live session reads each file an edit names around it (the ``disk`` events of the log:
its whole text before and after) and each file just before the client writes it. For a
turn, each file's first text before the turn touched it and its last text after are the
turn's change of that file: :func:`turn_patch` writes them as one unified patch (a file
per section, as jsdiff writes it), and :func:`revert_turn` puts the first texts back —
only where every file still holds exactly what the turn left, else nothing is written
and :class:`RevertConflict` names the files that changed since. No git is needed.

What a turn did to a file the log has no whole text of (the client did not read it: a
replay without disk reads, ``disk_patches=False``) cannot be undone from the evidence;
:class:`MissingEvidence` names those files.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..diff import unified_diff
from ..errors import AcpAdaptersError
from ..projection.traffic import project_capture
from .base import Store, StoredEvent


class MissingEvidence(AcpAdaptersError):
    """Files a turn changed that the log holds no whole text of; ``paths`` names them."""

    def __init__(self, message: str, paths: Sequence[str]) -> None:
        super().__init__(message)
        self.paths = list(paths)


class RevertConflict(AcpAdaptersError):
    """Files that changed since the turn left them: nothing was written; ``paths``."""

    def __init__(self, message: str, paths: Sequence[str]) -> None:
        super().__init__(message)
        self.paths = list(paths)


@dataclass(frozen=True)
class FileTurn:
    """What a turn did to one file: its text before (None: there was no file) and after
    (None: the turn deleted it)."""

    path: str
    before: str | None
    after: str | None


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


def turn_files(
    events: Sequence[StoredEvent], turn: int, *, session_id: str | None = None
) -> list[FileTurn]:
    """Each file the turn changed, with its first text before and its last after, from the
    log's evidence: the disk reads around its edits, and the writes the client served (in
    the order the turn first touched the files).

    :raises MissingEvidence: a file the turn changed whose whole text the log lacks.
    """
    entries = [event.entry for event in events]
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


def turn_patch(files: Sequence[FileTurn]) -> str:
    """The unified patch of a turn's files, a section per file that changed."""
    sections = []
    for change in files:
        if change.before == change.after:
            continue
        old_name = change.path if change.before is not None else "/dev/null"
        new_name = change.path if change.after is not None else "/dev/null"
        text = unified_diff(old_name, new_name, change.before or "", change.after or "")
        if text:
            sections.append(text)
    return "\n".join(sections)


def _current(path: str) -> str | None:
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


async def thread_turn_files(store: Store, thread_id: str, turn: int) -> list[FileTurn]:
    """:func:`turn_files` of a thread of the store."""
    thread = await store.thread(thread_id)
    return turn_files(await store.events(thread_id), turn, session_id=thread.agent_session_id)


async def revert_turn(store: Store, thread_id: str, turn: int) -> list[str]:
    """Put back what a turn of a thread changed; the paths written (or removed).

    Every file must still hold exactly what the turn left; otherwise nothing is written.

    :raises RevertConflict: files that changed since the turn (named).
    :raises MissingEvidence: files the log holds no whole text of (named).
    """
    files = await thread_turn_files(store, thread_id, turn)
    changed = [f.path for f in files if _current(f.path) != f.after]
    if changed:
        raise RevertConflict(
            f"turn {turn}: these files changed since the turn left them: " + ", ".join(changed),
            changed,
        )
    written: list[str] = []
    for change in files:
        if change.before == change.after:
            continue
        if change.before is None:
            os.remove(change.path)
        else:
            Path(change.path).parent.mkdir(parents=True, exist_ok=True)
            Path(change.path).write_text(change.before, encoding="utf-8")
        written.append(change.path)
    return written


__all__ = [
    "FileTurn",
    "MissingEvidence",
    "RevertConflict",
    "revert_turn",
    "thread_turn_files",
    "turn_files",
    "turn_patch",
]
