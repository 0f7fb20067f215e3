"""Group commit: the commits of many sessions written in one transaction.

A store serves every session of a process through one connection, so its commits take
turns. Taken one by one, each turn costs two trips through the event loop (the worker
thread's start and its answer), and with hundreds of sessions streaming at once those
trips, not the writing, are what the commits wait for: a backlog of seconds. So a commit
that finds the store busy waits for the write in progress to end, and then the commits
that waited meanwhile are written together, in one transaction of the backend's, each in
a savepoint of its own: every commit is still all of it or none of it, and the one that
fails (its thread deleted) fails alone.

:class:`CommitGroups` holds the waiting commits and chooses which caller writes them; the
backend gives it the function that writes a group (:data:`GroupWriter`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

import anyio

from .base import StoreError

P = TypeVar("P")

#: Writes a group: each commit's outcome, in order (the last event's ``seq``, or the error
#: that commit alone failed with). It raises when the whole group failed.
GroupWriter = Callable[[list[P]], Awaitable[list[int | StoreError]]]


@dataclass(eq=False)
class _Waiting(Generic[P]):
    """One commit waiting to be written, and what became of it."""

    commit: P
    taken: bool = False
    outcome: int | StoreError | None = None
    done: anyio.Event = field(default_factory=anyio.Event)


class CommitGroups(Generic[P]):
    """Commits written a group at a time, by :meth:`commit` (see the module)."""

    def __init__(self, write: GroupWriter[P]) -> None:
        self._write = write
        self._waiting: list[_Waiting[P]] = []
        self._writing = False
        self._written = anyio.Event()

    async def commit(self, commit: P) -> int:
        """Write ``commit``, with whatever else waits: the ``seq`` of its thread's last event.

        Cancelled while it waits, it is not written; once its group is being written, it
        waits for the end of that write (as a commit in a worker thread does) and answers.
        """
        waiting = _Waiting(commit)
        self._waiting.append(waiting)
        try:
            while not waiting.done.is_set():
                if self._writing:
                    written = self._written
                    await written.wait()
                    continue
                await self._write_group()
        except anyio.get_cancelled_exc_class():
            if not waiting.taken:
                self._waiting.remove(waiting)
                raise
            with anyio.CancelScope(shield=True):
                await waiting.done.wait()
        if isinstance(waiting.outcome, StoreError):
            raise waiting.outcome
        assert waiting.outcome is not None
        return waiting.outcome

    async def _write_group(self) -> None:
        group, self._waiting = self._waiting, []
        for waiting in group:
            waiting.taken = True
        self._writing = True
        try:
            with anyio.CancelScope(shield=True):  # the group's other callers wait for it
                try:
                    outcomes = await self._write([waiting.commit for waiting in group])
                except StoreError as error:
                    outcomes = [error] * len(group)
                except BaseException as error:
                    outcomes = [StoreError(f"the commit failed: {error!r}")] * len(group)
                    raise
                finally:
                    for waiting, outcome in zip(group, outcomes, strict=True):
                        waiting.outcome = outcome
                        waiting.done.set()
        finally:
            self._writing = False
            written, self._written = self._written, anyio.Event()
            written.set()
