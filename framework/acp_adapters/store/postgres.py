"""The PostgreSQL store: one database that several processes, on several machines, share.

It needs psycopg 3 (``pip install 'acp-adapters[postgres]'``). Its blocking connections run
in anyio's worker threads, so the store works under asyncio and trio alike:

* **one connection** for the store's reads and writes, one call at a time (an anyio lock);
  each :meth:`~PostgresStore.commit` is one transaction: all of it or none of it;
* **several writers**: a commit locks its thread's row (``SELECT ... FOR UPDATE``) before it
  numbers its events, so two processes writing one thread take turns and the ``seq`` of
  its events has neither a gap nor a duplicate;
* **followers**: a commit that adds events sends ``NOTIFY acp_adapters_events,
  '<thread id>:<last seq>'`` in its transaction (so only once it is committed);
  :meth:`~PostgresStore.follow` reads the events after ``after``, then after each
  notification (one more connection, ``LISTEN``, shared by the store's followers);
* **migrations**: versioned in the ``meta`` table (:mod:`.schema`, the same statements as
  SQLite's), applied in one transaction under an advisory lock, so that two processes
  opening a new database at once do not both create it; a database of a newer schema is
  refused (:class:`~.base.StoreError`);
* **JSON as text** (``TEXT``, :func:`acp_adapters._json.dumps`): ``jsonb`` could hold neither
  ``\\u0000`` nor a lone surrogate, which the agents' strings may carry;
* **faults**: a server that cannot be reached, refuses the login, or goes away is a
  :class:`~.base.StoreError` naming the URL (never its password). Nothing is lost that was
  committed; the next call connects again. A call whose connection turns out to be gone
  before its transaction was committed is run once more on a new connection; a commit whose
  ``COMMIT`` itself was cut off fails (it may or may not have been committed). A follower
  whose ``LISTEN`` connection goes away connects again and reads what it missed; when the
  server is still gone it fails with :class:`~.base.StoreError` (follow again from the last
  ``seq`` it saw).
"""

from __future__ import annotations

import contextlib
import os
import time
import urllib.parse
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, TypeVar

import anyio
import anyio.to_thread
import psycopg
import psycopg.errors

from .base import (
    Commit,
    PreparedCommit,
    StoredEvent,
    StoreError,
    StoreNotFound,
    event_text,
)
from .group import CommitGroups
from .leases import LeaseQueries
from .open import redact
from .schema import VERSION_QUERY, migrate
from .sql import (
    ITEM_UPSERT,
    TURN_COLUMNS,
    TURN_UPSERT,
    Sql,
    ThreadQueries,
    check_turns,
    item_row,
    thread_columns,
    turn_row,
)

T = TypeVar("T")

#: The channel of the commits' notifications (payload ``'<thread id>:<last seq>'``).
CHANNEL = "acp_adapters_events"
#: The channel of the queue's: a prompt queued, a thread let go (payload: the thread's id).
QUEUE_CHANNEL = "acp_adapters_queue"
#: The advisory lock (``pg_advisory_xact_lock``) that migrations are applied under.
MIGRATION_LOCK = 0x6163_7061_6461_7074  # "acpadapt"
#: How long connecting may take before it fails (seconds), unless the URL says.
CONNECT_TIMEOUT = 10


def _password(url: str) -> str | None:
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return None
    if parts.password:
        return urllib.parse.unquote(parts.password)
    for key, value in urllib.parse.parse_qsl(parts.query):
        if key.lower() == "password":
            return value
    return None


def _text(value: Any, what: str) -> Any:
    """A string column's value: PostgreSQL's text holds neither NUL nor a lone surrogate."""
    if isinstance(value, str):
        if "\x00" in value:
            raise StoreError(f"{what} cannot be stored: it holds a NUL character")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise StoreError(f"{what} cannot be stored: it holds a lone surrogate") from None
    return value


class _Lost(Exception):
    """The connection went away before the transaction was committed: run it again."""


class PostgresStore(ThreadQueries, LeaseQueries):
    """A store in a PostgreSQL database (see the module's documentation); open it with
    :meth:`open` (or :func:`acp_adapters.store.open_store`)."""

    def __init__(self, url: str, connection: psycopg.Connection[Any], version: int) -> None:
        self._url = url
        self.location = redact(url)
        self._secret = _password(url)
        self._version = version
        self._connection: psycopg.Connection[Any] | None = connection
        #: The one connection's turn: every read and write takes it.
        self._lock = anyio.Lock()
        self._closed = False
        # The followers' connection (LISTEN), opened by the first follower.
        self._listener: psycopg.Connection[Any] | None = None
        #: Its turn: the follower holding it reads the notifications for all of them.
        self._listen_lock = anyio.Lock()
        #: Connecting it: one follower at a time.
        self._connect_lock = anyio.Lock()
        #: Bumped each time the listener (re)connects: what it missed meanwhile is read again.
        self._epoch = 0
        #: Per followed thread: how many notifications of it were read.
        self._wakeups: dict[str, int] = {}
        self._followers: dict[str, int] = {}
        #: The commits waiting for the one connection, written a group at a time.
        self._groups = CommitGroups(self._write_group)
        #: How many times the queue was seen to move (:meth:`wait_queue`).
        self._queue_count = 0

    @classmethod
    async def open(cls, url: str, *, create: bool = True) -> PostgresStore:
        """Open (creating or migrating) the store in the database of ``url``
        (``postgresql://user:password@host:port/database``, or any URL libpq takes).
        ``create=False``: a database that holds no store yet raises :class:`StoreNotFound`
        (its tables are not made).

        :raises StoreError: the server cannot be reached or refuses the login (the URL without
            its password, and why), the database is not a store, or its schema is newer than
            this library's.
        """
        location = redact(url)
        secret = _password(url)

        def connect_and_migrate() -> tuple[psycopg.Connection[Any], int]:
            connection = _connect(url, location, secret)
            try:
                version = _migrate(connection, location, create)
            except BaseException as exc:
                connection.close()
                if isinstance(exc, psycopg.Error):
                    raise StoreError(_why(location, secret, exc)) from None
                raise
            return connection, version

        connection, version = await anyio.to_thread.run_sync(connect_and_migrate)
        return cls(url, connection, version)

    # --- running in the worker thread ---------------------------------------------------

    async def _run(self, function: Callable[..., T], *args: Any) -> T:
        """``function(connection, *args)`` in one transaction, in a worker thread; again on a
        new connection when the connection was found gone before it committed."""
        if self._closed:
            raise StoreError(f"the store {self.location} is closed")

        def call() -> T:
            for attempt in (1, 2):
                if self._closed:
                    raise StoreError(f"the store {self.location} is closed")
                try:
                    return self._transaction(function, *args)
                except _Lost as lost:
                    if attempt == 2:
                        raise StoreError(str(lost)) from None
            raise AssertionError("unreachable")

        async with self._lock:
            return await anyio.to_thread.run_sync(call)

    def _transaction(self, function: Callable[..., T], *args: Any) -> T:
        connection = self._connection
        if connection is None or connection.closed or connection.broken:
            self._connection = None
            if connection is not None:
                connection.close()
            connection = self._connection = _connect(self._url, self.location, self._secret)
        committing = False
        try:
            with connection.transaction():
                result = function(connection, *args)
                committing = True  # what fails from here on is the COMMIT
            return result
        except StoreError:
            raise
        except psycopg.Error as exc:
            why = _why(self.location, self._secret, exc)
            if connection.closed or connection.broken:
                self._connection = None
                connection.close()
                if not committing:
                    raise _Lost(why) from None
            raise StoreError(why) from None

    # --- threads ------------------------------------------------------------------------

    #: The placeholder of psycopg, and what locks a row read until the transaction ends.
    _mark = "%s"
    _row_lock = " FOR UPDATE"

    def _name_taken(self, error: Exception) -> bool:
        return isinstance(error, psycopg.errors.UniqueViolation)

    def _thread_columns(self, fields: Mapping[str, Any]) -> dict[str, Any]:
        return _checked(thread_columns(fields))

    def _text_column(self, value: str, what: str) -> Any:
        return _text(value, what)

    def _delete_row(self, sql: Sql, thread_id: str) -> None:
        super()._delete_row(sql, thread_id)
        # Its followers learn it is gone (when the transaction commits).
        sql.run("SELECT pg_notify(?, ?)", (CHANNEL, f"{thread_id}:0"))

    # --- what a session writes ----------------------------------------------------------

    async def commit(self, thread_id: str, commit: Commit) -> int:
        columns = self._thread_columns(commit.thread)
        # Everything is JSON before the transaction starts: what cannot be is refused whole.
        events = [event_text(entry) for entry in commit.events]
        # One row each (the last of an id, as row-by-row writing leaves it): a statement that
        # writes the rows of a group may not touch one row twice.
        items = list({row[0]: row for row in map(item_row, commit.items)}.values())
        for item_id, _, _ in items:
            _text(item_id, "an item's id")
        turns = list({turn.index: turn for turn in commit.turns}.values())
        check_turns(thread_id, turns)
        for turn in turns:
            _text(turn.stop_reason, "a turn's stop reason")
            _text(turn.error, "a turn's error")
        name = commit.thread.get("name")
        prepared = PreparedCommit(thread_id, events, items, turns, columns, name)
        if self._closed:
            raise StoreError(f"the store {self.location} is closed")
        return await self._groups.commit(prepared)

    async def _write_group(self, group: list[PreparedCommit]) -> list[int | StoreError]:
        """The commits of ``group`` in one transaction, each in a savepoint when written
        apart (see :mod:`.group`)."""

        def write(con: psycopg.Connection[Any]) -> list[int | StoreError]:
            threads = [prepared.thread_id for prepared in group]
            if len(set(threads)) == len(threads):
                return self._write_together(con, group)
            # A thread twice in the group: its commits in order, one by one.
            return [self._write_apart(con, prepared) for prepared in group]

        return await self._run(write)

    def _write_together(
        self, con: psycopg.Connection[Any], group: list[PreparedCommit]
    ) -> list[int | StoreError]:
        """The commits of a group (one for each thread), their rows written by a few
        statements for all of them, sent in one pipeline: each trip to the server lets the
        worker thread wait for the event loop's thread (Python's lock) on its way back, so a
        few trips for a group of hundreds rather than a few for each commit. A commit that
        changes its thread's fields (a name may be taken) is written apart."""
        ids = sorted(prepared.thread_id for prepared in group)
        # Locked in one order: writers in other processes take turns, never deadlock.
        rows = con.execute(
            "SELECT id FROM threads WHERE id = ANY(%s) ORDER BY id FOR UPDATE", (ids,)
        ).fetchall()
        outcomes, together = self._split_group(
            group, {row[0] for row in rows}, lambda one: self._write_apart(con, one)
        )
        if together:
            rows = con.execute(
                "SELECT thread_id, MAX(seq) FROM events WHERE thread_id = ANY(%s) "
                "GROUP BY thread_id",
                ([prepared.thread_id for _, prepared in together],),
            ).fetchall()
            last_seq = {thread_id: int(last) for thread_id, last in rows}
            events: tuple[list[str], list[int], list[str]] = ([], [], [])
            items: tuple[list[Any], ...] = ([], [], [], [])
            turns: tuple[list[Any], ...] = ([], [], [], [], [], [], [])
            touched: tuple[list[str], list[float]] = ([], [])
            notified: list[str] = []
            for index, prepared in together:
                thread_id = prepared.thread_id
                last = last_seq.get(thread_id, 0)
                for number, entry in enumerate(prepared.events, 1):
                    events[0].append(thread_id)
                    events[1].append(last + number)
                    events[2].append(entry)
                for row in prepared.items:
                    for column, value in zip(items, (thread_id, *row), strict=True):
                        column.append(value)
                for turn in prepared.turns:
                    for column, value in zip(turns, turn_row(thread_id, turn), strict=True):
                        column.append(value)
                touched[0].append(thread_id)
                touched[1].append(self._now())
                last += len(prepared.events)
                if prepared.events:
                    notified.append(f"{thread_id}:{last}")
                outcomes[index] = last
            # Sent together, their answers read once: one trip to the server for all.
            with con.pipeline():
                if events[0]:
                    con.execute(
                        "INSERT INTO events (thread_id, seq, entry) "
                        "SELECT * FROM unnest(%s::text[], %s::bigint[], %s::text[])",
                        events,
                    )
                if items[0]:
                    con.execute(
                        "INSERT INTO items (thread_id, item_id, ordinal, item) "
                        "SELECT * FROM unnest(%s::text[], %s::text[], %s::bigint[], %s::text[]) "
                        + ITEM_UPSERT,
                        items,
                    )
                if turns[0]:
                    con.execute(
                        f"INSERT INTO turns (thread_id, {TURN_COLUMNS}) SELECT * FROM unnest("
                        "%s::text[], %s::integer[], %s::text[], %s::text[], %s::text[], "
                        f"%s::float8[], %s::float8[]) {TURN_UPSERT}",
                        turns,
                    )
                con.execute(
                    "UPDATE threads SET updated_at = v.at "
                    "FROM unnest(%s::text[], %s::float8[]) AS v (id, at) WHERE threads.id = v.id",
                    touched,
                )
                if notified:
                    # Sent when (and only if) the transaction commits.
                    con.execute(
                        "SELECT pg_notify(%s, payload) FROM unnest(%s::text[]) AS payload",
                        (CHANNEL, notified),
                    )
        assert all(outcome is not None for outcome in outcomes)
        return [outcome for outcome in outcomes if outcome is not None]

    def _write_apart(
        self, con: psycopg.Connection[Any], prepared: PreparedCommit
    ) -> int | StoreError:
        """One commit of a group, in a savepoint: the ``seq`` of its last event, or the error
        it alone failed with (what it wrote undone)."""
        try:
            with con.transaction():  # nested: a savepoint
                return self._write_one(con, prepared)
        except StoreError as error:
            return error
        except psycopg.Error as exc:
            if con.closed or con.broken:
                raise  # the connection is gone: the whole group is tried again, or fails
            return StoreError(_why(self.location, self._secret, exc))

    def _write_one(self, con: psycopg.Connection[Any], prepared: PreparedCommit) -> int:
        last = self._write_rows(self._sql(con, time.time()), prepared)
        if prepared.events:
            # Sent when (and only if) the transaction commits.
            con.execute("SELECT pg_notify(%s, %s)", (CHANNEL, f"{prepared.thread_id}:{last}"))
        return last

    # --- following ----------------------------------------------------------------------

    async def follow(self, thread_id: str, *, after: int = 0) -> AsyncIterator[StoredEvent]:
        self._followers[thread_id] = self._followers.get(thread_id, 0) + 1
        self._wakeups.setdefault(thread_id, 0)
        try:
            # Listening before the first read: a commit after that read is notified.
            await self._listening()
            last = after
            while True:
                seen = self._seen(thread_id)
                events = await self.events(thread_id, after=last)
                for event in events:
                    last = event.seq
                    yield event
                if not events:
                    await self._notified(thread_id, seen)
        finally:
            self._followers[thread_id] -= 1
            if not self._followers[thread_id]:
                del self._followers[thread_id]
                del self._wakeups[thread_id]

    def _seen(self, thread_id: str) -> tuple[int, int]:
        return self._epoch, self._wakeups.get(thread_id, 0)

    async def _notified(self, thread_id: str, seen: tuple[int, int]) -> None:
        """Return once a notification of the thread came after ``seen`` (or the listener
        connected again). The follower whose turn it is reads the notifications for all."""
        while self._seen(thread_id) == seen:
            async with self._listen_lock:
                if self._seen(thread_id) != seen:
                    return
                await self._read_notifications()

    async def _listening(self) -> psycopg.Connection[Any]:
        """The listener, connected (again) when it is not."""
        async with self._connect_lock:
            return await self._listening_locked()

    async def _listening_locked(self) -> psycopg.Connection[Any]:
        if self._closed:
            raise StoreError(f"the store {self.location} is closed")
        listener = self._listener
        if listener is not None and not listener.closed and not listener.broken:
            return listener
        self._listener = None
        if listener is not None:
            listener.close()

        def listen() -> psycopg.Connection[Any]:
            connection = _connect(self._url, self.location, self._secret)
            try:
                connection.execute(f"LISTEN {CHANNEL}")
                connection.execute(f"LISTEN {QUEUE_CHANNEL}")
            except psycopg.Error as exc:
                connection.close()
                raise StoreError(_why(self.location, self._secret, exc)) from None
            return connection

        listener = await anyio.to_thread.run_sync(listen)
        if self._closed:
            listener.close()
            raise StoreError(f"the store {self.location} is closed")
        self._listener = listener
        self._epoch += 1  # what was committed while no one listened is read again
        return listener

    async def _read_notifications(self) -> None:
        """Wait for the listener's next notifications and count them (``_listen_lock``)."""
        listener = await self._listening()
        try:
            await _wait_readable(listener)
            notifications = list(listener.notifies(timeout=0))
        except (psycopg.Error, OSError, anyio.ClosedResourceError) as exc:
            if self._closed:
                raise StoreError(f"the store {self.location} is closed") from None
            listener.close()
            self._listener = None
            if not isinstance(exc, psycopg.Error):
                raise
            # Gone: once more on a new connection (a StoreError when the server is still
            # gone); its followers read what they missed.
            await self._listening()
            return
        for notification in notifications:
            if notification.channel == QUEUE_CHANNEL:
                self._queue_count += 1
                continue
            thread_id, _, _ = notification.payload.rpartition(":")
            if thread_id in self._wakeups:
                self._wakeups[thread_id] += 1

    # --- the leases and the queue (:mod:`.leases`) ---------------------------------------

    #: Two workers never claim one thread: the one that locked its row first has it.
    _claim_lock = "FOR UPDATE OF t SKIP LOCKED"

    async def _transact(self, function: Callable[[Sql], T]) -> T:
        def run(con: psycopg.Connection[Any]) -> T:
            # The server's clock: the leases of machines whose clocks differ agree.
            row = con.execute("SELECT EXTRACT(EPOCH FROM clock_timestamp())::float8").fetchone()
            assert row is not None
            return function(self._sql(con, float(row[0])))

        return await self._run(run)

    def _notify_queue(self, sql: Sql, thread_id: str) -> None:
        sql.run("SELECT pg_notify(?, ?)", (QUEUE_CHANNEL, thread_id))

    def _queue_moved(self) -> None:
        self._queue_count += 1

    def queue_changes(self) -> int:
        return self._queue_count + self._epoch

    async def wait_queue(self, seen: int, timeout: float) -> None:
        with anyio.move_on_after(timeout):
            await self._listening()
            while self.queue_changes() == seen:
                async with self._listen_lock:
                    if self.queue_changes() != seen:
                        return
                    await self._read_notifications()

    # --- the store ----------------------------------------------------------------------

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        listener, self._listener = self._listener, None
        if listener is not None:
            _notify_closing(listener)
            listener.close()
        # After what is running now (the lock's turn), nothing else runs.
        async with self._lock:
            connection, self._connection = self._connection, None
            if connection is not None:
                await anyio.to_thread.run_sync(connection.close)


def _checked(columns: dict[str, Any]) -> dict[str, Any]:
    """A thread's columns (:func:`.sql.thread_columns`) as PostgreSQL's text holds them:
    :class:`StoreError` for a NUL or a lone surrogate (which SQLite keeps, as bytes)."""
    for column, value in columns.items():
        if isinstance(value, bytes):
            raise StoreError(f"a thread's {column} cannot be stored: it holds a lone surrogate")
        _text(value, f"a thread's {column}")
    return columns


async def _wait_readable(connection: psycopg.Connection[Any]) -> None:
    wait = getattr(anyio, "wait_readable", None)
    if wait is not None:  # anyio >= 4.7
        await wait(connection.fileno())
        return
    import socket

    with socket.socket(fileno=os.dup(connection.fileno())) as sock:
        await anyio.wait_socket_readable(sock)


def _notify_closing(connection: psycopg.Connection[Any]) -> None:
    notify = getattr(anyio, "notify_closing", None)
    if notify is not None and not connection.closed:
        # No event loop here, or no socket any more: nothing waits on it.
        with contextlib.suppress(RuntimeError, psycopg.Error):
            notify(connection.fileno())


# --- connecting ---------------------------------------------------------------------------


def _reason(secret: str | None, exc: BaseException) -> str:
    """What the driver said, on one line, without the password (should it say it)."""
    reason = " ".join(str(exc).split()) or type(exc).__name__
    if secret:
        reason = reason.replace(secret, "***")
    return reason


def _why(location: str, secret: str | None, exc: BaseException) -> str:
    return f"the store {location}: {_reason(secret, exc)}"


def _connect(url: str, location: str, secret: str | None) -> psycopg.Connection[Any]:
    options: dict[str, Any] = {"autocommit": True, "application_name": "acp-adapters"}
    if "connect_timeout" not in url:
        options["connect_timeout"] = CONNECT_TIMEOUT
    try:
        return psycopg.connect(url, **options)
    except psycopg.Error as exc:
        raise StoreError(
            f"cannot connect to the store {location}: {_reason(secret, exc)}"
        ) from None


def _migrate(connection: psycopg.Connection[Any], location: str, create: bool = True) -> int:
    """Bring the store to :data:`SCHEMA_VERSION` in one transaction, under the migrations'
    advisory lock (another process opening it now waits, then finds it migrated). A
    database without a store gets one only with ``create``."""
    with connection.transaction():
        connection.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        version = _version(connection, location)
        if version is None and not create:
            raise StoreNotFound(f"no store in {location}: the database holds none yet")
        return migrate(connection.execute, version, location)


def _version(connection: psycopg.Connection[Any], location: str) -> int | None:
    """The store's schema version; None for a database without a store."""
    row = connection.execute("SELECT to_regclass('meta') IS NOT NULL").fetchone()
    if row is None or not row[0]:
        return None
    found = connection.execute(VERSION_QUERY).fetchone()
    if found is None:
        raise StoreError(f"cannot open the store {location}: its meta table has no version")
    try:
        return int(found[0])
    except ValueError:
        raise StoreError(
            f"cannot open the store {location}: its schema version is {found[0]!r}"
        ) from None
