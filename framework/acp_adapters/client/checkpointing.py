"""A live session's checkpoints of its folders, as lines of its traffic.

The session takes a checkpoint as it opens, at every turn's start and end, as each edit
tool call completes (of the files it names), and on request (``session.checkpoint()``).
Each is a ``checkpoint`` line of the session's traffic, followed by a ``change`` line per
file it found changed (docs/captures.md): the traffic reader projects them (the true patch
of each completed tool call, an ``unattributed`` file_change for a change no tool call
claimed), the recording and the store keep them, and a replay plays them back.

:class:`Checkpointing` says how: where the store is, what to leave out, the caps. The file
work runs in a worker thread, one checkpoint at a time per workspace, off the event loop.
A replay gives :class:`~acp_adapters.replay.helpers.RecordedCheckpoints` instead: the lines
its capture recorded.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import anyio

from ..transport import Problem
from ..workspace.checkpoints import Checkpoints, FileChange, TurnChanges
from ..workspace.confined import Roots
from ..workspace.objects import CheckpointError, CheckpointRecord
from ..workspace.scan import CheckpointLimits

#: The text a batch of change lines carries at most (characters): a turn that changed many
#: large files is read and sent a batch at a time.
BATCH_CHARS = 16 * 1024 * 1024

#: What one checkpoint gives the traffic: its ``checkpoint`` line, and what its ``change``
#: lines are made of (each made by the taker's ``render``, a batch at a time).
Lines = tuple[dict[str, Any], list[Any]]


@dataclass(frozen=True)
class Checkpointing:
    """How a session checkpoints its folders (``connect(checkpoints=...)``).

    :param folder: where the checkpoint stores are (default ``$ACP_ADAPTERS_CHECKPOINTS``,
        else ``checkpoints`` in the user's data folder).
    :param ignore: gitignore lines of the session's own, after the workspace's
        ``.gitignore`` files and ``.git/info/exclude``.
    :param limits: the caps of one checkpoint (:class:`~acp_adapters.CheckpointLimits`).
    """

    folder: Path | None = None
    ignore: tuple[str, ...] = ()
    limits: CheckpointLimits = field(default_factory=CheckpointLimits)


class CheckpointTaker(Protocol):
    """What takes a session's checkpoints: the workspace's (:class:`LiveCheckpoints`), or a
    capture's (``acp_adapters.replay.recorded_checkpoints``). Each call is synchronous file
    work (run in a worker thread) and gives the lines to send, or None for none."""

    def opened(self) -> Lines | None: ...
    def turn_started(self, turn: int) -> Lines | None: ...
    def tool_call(self, turn: int, tool_call_id: str, paths: Sequence[str]) -> Lines | None: ...
    def turn_ended(self, turn: int) -> Lines | None: ...
    def request(self, turn: int) -> Lines | None: ...
    def render(self, change: Any) -> dict[str, Any]: ...
    def close(self) -> None: ...


# One Checkpoints (its scanner's memory of the folders) per workspace in this process,
# shared by the sessions in it, one pass at a time.
_shared: weakref.WeakValueDictionary[tuple[Any, ...], _Shared] = weakref.WeakValueDictionary()
_shared_lock = threading.Lock()


class _Shared:
    def __init__(self, checkpoints: Checkpoints) -> None:
        self.checkpoints = checkpoints
        self.lock = threading.Lock()


def _shared_checkpoints(roots: Sequence[Path], options: Checkpointing) -> _Shared:
    key = (tuple(str(r) for r in roots), options.folder, options.ignore, options.limits)
    with _shared_lock:
        found = _shared.get(key)
        if found is None:
            own = Roots(roots[0], tuple(str(r) for r in roots[1:]))
            found = _Shared(
                Checkpoints(
                    own, folder=options.folder, ignore=options.ignore, limits=options.limits
                )
            )
            weakref.finalize(found, _close, found.checkpoints, own)
            _shared[key] = found
        return found


def _close(checkpoints: Checkpoints, roots: Roots) -> None:
    """The last session of a workspace is gone: its scanner and store, then its folders."""
    checkpoints.close()
    roots.close()


class LiveCheckpoints:
    """The checkpoints of a session's folders, taken from the disk (see the module's
    docstring)."""

    def __init__(self, roots: Sequence[Path], options: Checkpointing | None = None) -> None:
        self._shared = _shared_checkpoints(roots, options or Checkpointing())
        self.checkpoints = self._shared.checkpoints
        self.changes = TurnChanges(self.checkpoints)

    def close(self) -> None:
        pass  # shared with the other sessions of the workspace: closed with the last

    @property
    def lock(self) -> threading.Lock:
        """Held while the workspace's checkpoints are being taken (one pass at a time)."""
        return self._shared.lock

    def _take(self) -> CheckpointRecord:
        with self._shared.lock:
            return self.checkpoints.take()

    @staticmethod
    def _lines(
        ident: str,
        reason: str,
        turn: int,
        changes: list[FileChange],
        *,
        files: int,
        notes: Sequence[str] = (),
        tool_call_id: str | None = None,
    ) -> Lines:
        """A checkpoint's line, and its changes as :meth:`render` takes them."""
        head: dict[str, Any] = {
            "id": ident,
            "reason": reason,
            "turn": turn,
            "toolCallId": tool_call_id,
            "files": files,
            "notes": list(notes),
        }
        return head, [(ident, change, tool_call_id) for change in changes]

    def _record_lines(
        self, record: CheckpointRecord, reason: str, turn: int, changes: list[FileChange]
    ) -> Lines:
        return self._lines(record.id, reason, turn, changes, files=record.files, notes=record.notes)

    def render(self, change: Any) -> dict[str, Any]:
        """The ``change`` line of one change (its texts read from the store now)."""
        checkpoint, found, tool_call_id = change
        assert isinstance(found, FileChange)
        checkpoints = self.checkpoints
        texts = found.changed  # an unchanged file's text says nothing the patch needs
        return {
            "checkpoint": checkpoint,
            "toolCallId": tool_call_id,
            "path": found.path,
            "movedFrom": found.moved_from,
            "before": checkpoints.state(found.before, text=texts),
            "after": checkpoints.state(found.after, text=texts),
        }

    def opened(self) -> Lines | None:
        record = self._take()
        if self.changes.start is None:  # a turn that started first has its own start
            self.changes.started(record)
        return self._record_lines(record, "session", 0, [])

    def turn_started(self, turn: int) -> Lines | None:
        record = self._take()
        self.changes.started(record)
        return self._record_lines(record, "turn_start", turn, [])

    def tool_call(self, turn: int, tool_call_id: str, paths: Sequence[str]) -> Lines | None:
        with self._shared.lock:
            found = self.changes.tool_call(paths)
        if not found:
            return None
        ident = f"tool:{tool_call_id}"
        return self._lines(
            ident, "tool_call", turn, found, files=len(found), tool_call_id=tool_call_id
        )

    def turn_ended(self, turn: int) -> Lines | None:
        record = self._take()
        with self._shared.lock:
            found = self.changes.ended(record)
        return self._record_lines(record, "turn_end", turn, found)

    def request(self, turn: int) -> Lines | None:
        return self._record_lines(self._take(), "request", turn, [])


def render_batch(
    taker: CheckpointTaker, pending: list[Any], start: int
) -> tuple[list[dict[str, Any]], int]:
    """The ``change`` lines of ``pending`` from ``start``, until they hold
    :data:`BATCH_CHARS` of text (the last may pass it: each is made once), and where the
    next batch starts."""
    lines: list[dict[str, Any]] = []
    size = 0
    at = start
    while at < len(pending) and size < BATCH_CHARS:
        line = taker.render(pending[at])
        lines.append(line)
        size += sum(
            len(side.get("text") or "")
            for side in (line.get("before"), line.get("after"))
            if isinstance(side, dict)
        )
        at += 1
    return lines, at


__all__ = [
    "CheckpointError",
    "CheckpointTaker",
    "Checkpointing",
    "LiveCheckpoints",
]


class SessionCheckpoints:
    """A live session's checkpoints: taken one at a time in a worker thread, each sent into
    the traffic as its lines (``saw``), a failure a ``checkpoint`` problem of the session."""

    def __init__(
        self,
        given: Checkpointing | CheckpointTaker | None,
        roots: Sequence[Path],
        saw: Callable[[str, Any], None],
        problems: list[Problem],
    ) -> None:
        self._saw = saw
        self._problems = problems
        self._lock = anyio.Lock()
        #: What takes them (None: the session takes none).
        self.taker: CheckpointTaker | None = None
        if isinstance(given, Checkpointing):
            try:
                self.taker = LiveCheckpoints(roots, given)
            except (CheckpointError, OSError) as error:
                # The session goes on without checkpoints (its patches from other evidence).
                problems.append(Problem("checkpoint", f"no checkpoints: {error}"))
        else:
            self.taker = given

    @property
    def taking(self) -> bool:
        """Whether the session checkpoints its folders."""
        return self.taker is not None

    async def take(self, kind: str, *args: Any, raising: bool = False) -> dict[str, Any] | None:
        """Take one checkpoint (``kind``: what the taker is told) in a worker thread, and send
        its lines into the traffic; its ``checkpoint`` line, or None. One that fails is a
        ``checkpoint`` problem (``raising``: and its error is raised)."""
        taker = self.taker
        if taker is None:
            return None
        async with self._lock:
            try:
                # The first look at the folders may read every file: a session that ends
                # meanwhile does not wait for it (the others wait their turn anyway).
                lines = await anyio.to_thread.run_sync(
                    getattr(taker, kind), *args, abandon_on_cancel=kind == "opened"
                )
            except (CheckpointError, OSError) as error:
                self._problems.append(Problem("checkpoint", f"{kind}: {error}"[:500]))
                if raising:
                    raise CheckpointError(f"the checkpoint failed: {error}") from error
                return None
            if lines is None:
                return None
            head: dict[str, Any] = lines[0]
            pending = lines[1]
            self._saw("checkpoint", head)
            start = 0
            while start < len(pending):
                batch, start = await anyio.to_thread.run_sync(render_batch, taker, pending, start)
                for line in batch:
                    self._saw("change", line)
            return head

    async def restore(self, checkpoint_id: str, *, dry_run: bool = False) -> list[str]:
        """Put the folders back as checkpoint ``checkpoint_id`` had them (see
        :meth:`Session.restore <acp_adapters.client.session.Session.restore>`)."""
        taker = self.taker
        if not isinstance(taker, LiveCheckpoints):
            raise CheckpointError("this session takes no checkpoints of its folders")
        checkpoints = taker.checkpoints

        def work() -> list[str]:
            with taker.lock:
                record = checkpoints.store.checkpoint(checkpoint_id)
                done = checkpoints.restore(record, dry_run=dry_run)
            if done.conflicts:
                raise CheckpointError(
                    "cannot restore the checkpoint, nothing was written: "
                    + "; ".join(conflict.describe() for conflict in done.conflicts)
                )
            return [action.path for action in done.actions]

        async with self._lock:
            restored: list[str] = await anyio.to_thread.run_sync(work)
        return restored
