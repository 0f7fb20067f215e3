"""Who drives a thread, and the queue of prompts waiting for it: the SQL both backends share.

A thread has at most one **owner** at a time: a row of ``leases`` (the owner's id, host and
pid, and when the lease expires). The owner renews it while it lives; a lease past its
expiry is dead, and the next one to take the thread replaces it, in the same transaction
ending what the dead owner left running: its running turns and prompts fail
(:data:`~.base.OWNER_LOST`), the prompts it held in its process go back to the queue. So a
prompt is never run twice (a ``running`` prompt is never queued again) and never lost (a
``held`` one is).

A prompt of the queue is ``queued`` (for whoever owns the thread), ``held`` (the owner's own,
waiting in its process for the running turn), ``running`` (sent, as turn ``turn_index``), or
ended (``completed``, ``failed``, ``cancelled``: kept, so that whoever queued it learns how).
Prompts run in the order of their ``position``.

:class:`LeaseQueries` is mixed into each backend; it needs of the backend one write
transaction at a time (:meth:`~.sql.SqlBackend._transact`), its clock, and its way of telling
other processes that the queue moved. Its statements are written with ``?`` marks, as
:mod:`.sql`'s are, and run through :class:`~.sql.Sql`.
"""

from __future__ import annotations

import abc
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .base import (
    OWNER_LOST,
    Lease,
    Owner,
    PromptBlocks,
    PromptEnd,
    PromptState,
    QueuedPrompt,
    Thread,
    ThreadBusy,
    ThreadNotFound,
    busy_error,
    dumps,
)
from .sql import Sql, SqlBackend, known, loads

if TYPE_CHECKING:
    from typing_extensions import Unpack

_PROMPT_COLUMNS = (
    "thread_id, position, prompt, queued_at, id, state, turn_index, error, owner, ended_at"
)
_LEASE_COLUMNS = "thread_id, owner, host, pid, taken_at, expires_at"


def prompt_of(row: Sequence[Any]) -> QueuedPrompt:
    return QueuedPrompt(
        thread_id=row[0],
        position=int(row[1]),
        prompt=loads(row[2]),
        queued_at=row[3],
        id=row[4],
        state=row[5],
        turn=row[6],
        error=row[7],
        owner=row[8],
        ended_at=row[9],
    )


def lease_of(row: Sequence[Any], now: float, replaced: Owner | None = None) -> Lease:
    return Lease(
        thread_id=row[0],
        owner=Owner(row[1], row[2], int(row[3])),
        taken_at=row[4],
        expires_at=row[5],
        live=row[5] > now,
        replaced=replaced,
    )


def read_lease(sql: Sql, thread_id: str) -> Lease | None:
    row = sql.run(
        f"SELECT {_LEASE_COLUMNS} FROM leases WHERE thread_id = ?", (thread_id,)
    ).fetchone()
    return lease_of(row, sql.now) if row is not None else None


def end_lost(sql: Sql, thread_id: str, lost: str) -> None:
    """What the dead owner ``lost`` left: its running prompts and the thread's running turns
    fail; the prompts it held wait for the next owner."""
    sql.run(
        "UPDATE queue SET state = 'failed', error = ?, ended_at = ? "
        "WHERE thread_id = ? AND state = 'running'",
        (OWNER_LOST, sql.now, thread_id),
    )
    sql.run(
        "UPDATE queue SET state = 'queued', owner = NULL WHERE thread_id = ? AND state = 'held'",
        (thread_id,),
    )
    sql.run(
        "UPDATE turns SET status = 'failed', error = ?, stop_reason = "
        "COALESCE(stop_reason, 'agent_exited'), ended_at = ? "
        "WHERE thread_id = ? AND status = 'running'",
        (OWNER_LOST, sql.now, thread_id),
    )


def acquire(sql: Sql, thread_id: str, owner: Owner, seconds: float) -> Lease:
    """Take (or renew) the thread's lease for ``owner`` (see :meth:`Store.acquire_lease`)."""
    known(sql, thread_id, lock=True)
    held = read_lease(sql, thread_id)
    replaced: Owner | None = None
    if held is not None and held.owner.id != owner.id:
        if held.live:
            raise busy_error(thread_id, held)
        replaced = held.owner
        end_lost(sql, thread_id, held.owner.id)
    expires = sql.now + seconds
    if held is None:
        sql.run(
            f"INSERT INTO leases ({_LEASE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)",
            (thread_id, owner.id, owner.host, owner.pid, sql.now, expires),
        )
    else:
        sql.run(
            "UPDATE leases SET owner = ?, host = ?, pid = ?, taken_at = ?, expires_at = ? "
            "WHERE thread_id = ?",
            (
                owner.id,
                owner.host,
                owner.pid,
                held.taken_at if replaced is None and held.owner.id == owner.id else sql.now,
                expires,
                thread_id,
            ),
        )
    lease = read_lease(sql, thread_id)
    assert lease is not None
    return Lease(lease.thread_id, lease.owner, lease.taken_at, lease.expires_at, True, replaced)


def renew(sql: Sql, thread_id: str, owner: Owner, seconds: float) -> bool:
    cursor = sql.run(
        "UPDATE leases SET expires_at = ? WHERE thread_id = ? AND owner = ? AND expires_at > ?",
        (sql.now + seconds, thread_id, owner.id, sql.now),
    )
    return cursor.rowcount > 0


def release(sql: Sql, thread_id: str, owner: Owner) -> bool:
    """Whether there was the owner's lease to release."""
    cursor = sql.run("DELETE FROM leases WHERE thread_id = ? AND owner = ?", (thread_id, owner.id))
    return cursor.rowcount > 0


def forget_unused(sql: Sql, thread_id: str, owner: Owner) -> bool:
    """Delete the thread when ``owner`` holds it and it has no turn and no prompt."""
    try:
        known(sql, thread_id, lock=True)  # a prompt queued now waits for the verdict
    except ThreadNotFound:
        return False
    lease = read_lease(sql, thread_id)
    if lease is None or lease.owner.id != owner.id:
        return False
    for table in ("turns", "queue"):
        if sql.run(f"SELECT 1 FROM {table} WHERE thread_id = ? LIMIT 1", (thread_id,)).fetchone():
            return False
    # Its events, items and lease go with it (ON DELETE CASCADE).
    sql.run("DELETE FROM threads WHERE id = ?", (thread_id,))
    return True


def enqueue(sql: Sql, thread_id: str, prompt: str, held_by: Owner | None) -> QueuedPrompt:
    known(sql, thread_id)
    (position,) = sql.run(
        "SELECT COALESCE(MAX(position), 0) + 1 FROM queue WHERE thread_id = ?", (thread_id,)
    ).fetchone()
    prompt_id = uuid.uuid4().hex
    sql.run(
        "INSERT INTO queue (thread_id, position, prompt, queued_at, id, state, owner) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            thread_id,
            position,
            prompt,
            sql.now,
            prompt_id,
            "held" if held_by is not None else "queued",
            held_by.id if held_by is not None else None,
        ),
    )
    found = read_prompt(sql, prompt_id)
    assert found is not None
    return found


def read_prompt(sql: Sql, prompt_id: str) -> QueuedPrompt | None:
    row = sql.run(f"SELECT {_PROMPT_COLUMNS} FROM queue WHERE id = ?", (prompt_id,)).fetchone()
    return prompt_of(row) if row is not None else None


def waiting(sql: Sql, thread_id: str) -> list[QueuedPrompt]:
    known(sql, thread_id)
    rows = sql.run(
        f"SELECT {_PROMPT_COLUMNS} FROM queue WHERE thread_id = ? "
        "AND state IN ('queued', 'held') ORDER BY position",
        (thread_id,),
    ).fetchall()
    return [prompt_of(row) for row in rows]


def claim_prompt(sql: Sql, thread_id: str, owner: Owner) -> QueuedPrompt | None:
    lease = read_lease(sql, thread_id)
    if lease is None or not lease.live or lease.owner.id != owner.id:
        return None
    row = sql.run(
        f"SELECT {_PROMPT_COLUMNS} FROM queue WHERE thread_id = ? AND state = 'queued' "
        "ORDER BY position LIMIT 1",
        (thread_id,),
    ).fetchone()
    if row is None:
        return None
    prompt = prompt_of(row)
    sql.run("UPDATE queue SET state = 'running', owner = ? WHERE id = ?", (owner.id, prompt.id))
    return read_prompt(sql, prompt.id)


def end_prompt(
    sql: Sql, prompt_id: str, state: PromptState, turn: int | None, error: str | None
) -> None:
    ended = None if state in ("running", "queued", "held") else sql.now
    sql.run(
        "UPDATE queue SET state = ?, turn_index = COALESCE(?, turn_index), error = ?, "
        "ended_at = ? WHERE id = ?",
        (state, turn, error, ended, prompt_id),
    )


def claimable(sql: Sql, skip: Sequence[str], lock: str) -> str | None:
    """The thread waiting longest with a ``queued`` prompt and no live lease (``lock``:
    the backend's row-locking clause)."""
    skipped = ""
    if skip:
        skipped = f" AND t.id NOT IN ({', '.join('?' for _ in skip)})"
    row = sql.run(
        "SELECT t.id FROM threads t WHERE EXISTS (SELECT 1 FROM queue q "
        "WHERE q.thread_id = t.id AND q.state = 'queued') AND NOT EXISTS (SELECT 1 FROM "
        f"leases l WHERE l.thread_id = t.id AND l.expires_at > ?){skipped} "
        "ORDER BY (SELECT MIN(q.queued_at) FROM queue q WHERE q.thread_id = t.id "
        f"AND q.state = 'queued') LIMIT 1 {lock}",
        (sql.now, *skip),
    ).fetchone()
    return str(row[0]) if row is not None else None


def lost(sql: Sql) -> list[str]:
    rows = sql.run(
        "SELECT l.thread_id FROM leases l WHERE l.expires_at <= ? AND (EXISTS (SELECT 1 "
        "FROM turns t WHERE t.thread_id = l.thread_id AND t.status = 'running') OR EXISTS "
        "(SELECT 1 FROM queue q WHERE q.thread_id = l.thread_id AND q.state IN "
        "('running', 'held'))) ORDER BY l.expires_at",
        (sql.now,),
    ).fetchall()
    return [str(row[0]) for row in rows]


class LeaseQueries(SqlBackend):
    """The leases and the queue, for a backend that gives one write transaction at a time
    (see the module's documentation)."""

    @abc.abstractmethod
    def _notify_queue(self, sql: Sql, thread_id: str) -> None:
        """Tell the store's other processes (at the commit) that the thread's queue moved."""

    @abc.abstractmethod
    def _queue_moved(self) -> None:
        """This process's waiters: the queue moved (after the commit)."""

    #: The backend's row-locking clause for :meth:`claim_thread`.
    _claim_lock = ""

    async def enqueue(
        self, thread_id: str, prompt: PromptBlocks, *, held_by: Owner | None = None
    ) -> QueuedPrompt:
        text = dumps([dict(block) for block in prompt], "the prompt")

        def put(sql: Sql) -> QueuedPrompt:
            found = enqueue(sql, thread_id, text, held_by)
            if held_by is None:
                self._notify_queue(sql, thread_id)
            return found

        queued = await self._transact(put)
        self._queue_moved()
        return queued

    async def queued_prompts(self, thread_id: str) -> list[QueuedPrompt]:
        return await self._transact(lambda sql: waiting(sql, thread_id))

    async def prompts(
        self, thread_id: str, states: Sequence[PromptState] = ("queued", "held", "running")
    ) -> list[QueuedPrompt]:
        def read(sql: Sql) -> list[QueuedPrompt]:
            known(sql, thread_id)
            if not states:
                return []
            rows = sql.run(
                f"SELECT {_PROMPT_COLUMNS} FROM queue WHERE thread_id = ? AND state IN "
                f"({', '.join('?' for _ in states)}) ORDER BY position",
                (thread_id, *states),
            ).fetchall()
            return [prompt_of(row) for row in rows]

        return await self._transact(read)

    async def queued_prompt(self, prompt_id: str) -> QueuedPrompt | None:
        return await self._transact(lambda sql: read_prompt(sql, prompt_id))

    async def take_prompt(self, thread_id: str, position: int) -> None:
        await self._transact(
            lambda sql: sql.run(
                "DELETE FROM queue WHERE thread_id = ? AND position = ?", (thread_id, position)
            )
        )

    async def claim_prompt(self, thread_id: str, owner: Owner) -> QueuedPrompt | None:
        return await self._transact(lambda sql: claim_prompt(sql, thread_id, owner))

    async def end_prompt(
        self, prompt_id: str, state: PromptState, **where: Unpack[PromptEnd]
    ) -> None:
        turn, error = where.get("turn"), where.get("error")
        await self._transact(lambda sql: end_prompt(sql, prompt_id, state, turn, error))

    async def withdraw_prompt(self, prompt_id: str, why: str) -> bool:
        def withdraw(sql: Sql) -> bool:
            cursor = sql.run(
                "UPDATE queue SET state = 'cancelled', error = ?, ended_at = ? "
                "WHERE id = ? AND state = 'queued'",
                (why, sql.now, prompt_id),
            )
            return cursor.rowcount > 0

        return await self._transact(withdraw)

    async def acquire_lease(self, thread_id: str, owner: Owner, *, seconds: float = 15.0) -> Lease:
        _check_seconds(seconds)
        return await self._transact(lambda sql: acquire(sql, thread_id, owner, seconds))

    async def renew_lease(self, thread_id: str, owner: Owner, *, seconds: float = 15.0) -> bool:
        _check_seconds(seconds)
        return await self._transact(lambda sql: renew(sql, thread_id, owner, seconds))

    async def release_lease(self, thread_id: str, owner: Owner) -> None:
        def let_go(sql: Sql) -> None:
            if release(sql, thread_id, owner):
                self._notify_queue(sql, thread_id)

        await self._transact(let_go)
        self._queue_moved()

    async def forget_unused(self, thread_id: str, owner: Owner) -> bool:
        return await self._transact(lambda sql: forget_unused(sql, thread_id, owner))

    async def lease(self, thread_id: str) -> Lease | None:
        return await self._transact(lambda sql: read_lease(sql, thread_id))

    async def claim_thread(
        self, owner: Owner, *, seconds: float = 15.0, skip: Sequence[str] = ()
    ) -> Thread | None:
        _check_seconds(seconds)

        def claim(sql: Sql) -> str | None:
            passed = list(skip)
            while (thread_id := claimable(sql, passed, self._claim_lock)) is not None:
                try:
                    acquire(sql, thread_id, owner, seconds)
                except ThreadBusy:
                    # Taken by another worker between the look and the lock: the next.
                    passed.append(thread_id)
                    continue
                return thread_id
            return None

        claimed = await self._transact(claim)
        return await self.thread(claimed) if claimed is not None else None

    async def lost_threads(self) -> list[str]:
        return await self._transact(lost)


def _check_seconds(seconds: float) -> None:
    if not 0.05 <= seconds <= 86400:  # also refuses nan
        raise ValueError(f"a lease lasts from 0.05 s to a day, not {seconds!r} s")
