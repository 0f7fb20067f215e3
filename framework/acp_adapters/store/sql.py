"""The SQL both backends share: the threads, their turns, events and items read back, a
thread's row written, and the rows they are made of, with the dialect as a parameter.

Statements are written once, with ``?`` marks; :class:`Sql` runs them on a backend's
connection with that backend's marks (psycopg's are ``%s``) and its row lock (PostgreSQL's
``FOR UPDATE``; SQLite's write transaction holds the whole file already). What the backends
do differently stays with them (:mod:`.sqlite`, :mod:`.postgres`): the connection, how a
transaction is run, a group of commits written together in a few statements (SQLite's
``json_each``, PostgreSQL's ``unnest`` in a pipeline), following, and how a string is kept in
a text column (SQLite keeps a lone surrogate as bytes, PostgreSQL refuses it).

:class:`SqlBackend` is what a backend gives (one call at a time on its connection, one write
transaction at a time, its dialect); :class:`ThreadQueries` what is written over it: the
reads, a thread's row, and a commit's rows one by one. Each backend is a
:class:`ThreadQueries` and a :class:`~.leases.LeaseQueries`.
"""

from __future__ import annotations

import abc
import contextlib
import json
import os
import time
import uuid
from collections.abc import Callable, Container, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from .base import (
    NewThread,
    PreparedCommit,
    Store,
    StoredEvent,
    StoreError,
    Thread,
    ThreadNotFound,
    Turn,
    check_thread_name,
    dumps,
)

if TYPE_CHECKING:
    from typing_extensions import Unpack

T = TypeVar("T")
P = TypeVar("P", bound=PreparedCommit)

#: The thread's fields a commit or :meth:`~.base.Store.update_thread` may change.
THREAD_FIELDS = (
    "name",
    "provider",
    "cwd",
    "agent_session_id",
    "folders",
    "title",
    "command",
    "launch",
)

#: What a new thread's fields are when :meth:`~.base.Store.create_thread` is not given them.
_NEW_THREAD: dict[str, Any] = {
    "name": None,
    "folders": (),
    "agent_session_id": None,
    "title": None,
    "command": None,
    "launch": None,
}

#: A thread row's columns, in the order of :class:`~.base.Thread`'s fields.
THREAD_COLUMNS = (
    "id, provider, cwd, name, agent_session_id, folders, title, created_at, updated_at, "
    "command, launch"
)
#: A turn row's columns (after its thread's id), in the order of :class:`~.base.Turn`'s fields.
TURN_COLUMNS = "turn_index, status, stop_reason, error, started_at, ended_at"


def loads(text: str) -> Any:
    """What :func:`~.base.dumps` wrote (the store's own text: no limit of untrusted input
    applies)."""
    return json.loads(text)


def text(value: str | None) -> str | bytes | None:
    """A string as a SQLite column keeps it: as it is, or (one with a lone surrogate, which
    UTF-8 cannot hold) as its bytes with the surrogate kept (``surrogatepass``)."""
    if value is None:
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return value.encode("utf-8", "surrogatepass")
    return value


def untext(value: Any) -> Any:
    """What :func:`text` wrote, as the string it was (any other value as it is)."""
    return value.decode("utf-8", "surrogatepass") if isinstance(value, bytes) else value


def thread_of(row: Sequence[Any]) -> Thread:
    """A thread from its row (:data:`THREAD_COLUMNS`)."""
    command = loads(row[9]) if row[9] is not None else None
    return Thread(
        id=row[0],
        provider=untext(row[1]),
        cwd=untext(row[2]),
        name=untext(row[3]),
        agent_session_id=untext(row[4]),
        folders=tuple(loads(row[5])),
        title=untext(row[6]),
        created_at=row[7],
        updated_at=row[8],
        command=tuple(command) if command is not None else None,
        launch=loads(row[10]) if row[10] is not None else None,
    )


def turn_of(thread_id: str, row: Sequence[Any]) -> Turn:
    """A turn from its row (:data:`TURN_COLUMNS`)."""
    return Turn(
        thread_id=thread_id,
        index=row[0],
        status=row[1],
        stop_reason=untext(row[2]),
        error=untext(row[3]),
        started_at=row[4],
        ended_at=row[5],
    )


def thread_columns(fields: Mapping[str, Any]) -> dict[str, Any]:
    """A thread's changed fields as their columns' values (a string as SQLite keeps it:
    :func:`text`); :class:`StoreError` for a field that is not one of :data:`THREAD_FIELDS`,
    or a value of the wrong type."""
    columns: dict[str, Any] = {}
    for key, value in fields.items():
        if key not in THREAD_FIELDS:
            raise StoreError(
                f"a thread has no field {key!r} to change ({', '.join(THREAD_FIELDS)})"
            )
        if key == "folders":
            columns[key] = dumps([os.fspath(folder) for folder in value], "the folders")
        elif key == "command":
            columns[key] = None if value is None else dumps([str(p) for p in value], "the command")
        elif key == "launch":
            if value is not None and not isinstance(value, Mapping):
                raise StoreError(f"a thread's launch is an object or None, not {value!r}")
            columns[key] = None if value is None else dumps(dict(value), "the launch")
        elif key in ("provider", "cwd"):
            if not isinstance(value, str):
                raise StoreError(f"a thread's {key} is a string, not {value!r}")
            columns[key] = text(value)
        else:
            if value is not None and not isinstance(value, str):
                raise StoreError(f"a thread's {key} is a string or None, not {value!r}")
            if key == "name" and value is not None:
                check_thread_name(value)
            columns[key] = text(value)
    return columns


def item_row(item: Mapping[str, Any]) -> tuple[str, int, str]:
    """An item's key, ordinal and JSON text; :class:`StoreError` for an item without an ``id``."""
    item_id = item.get("id")
    if not isinstance(item_id, str) or not item_id:
        raise StoreError(f"an item to store has no id: {str(item)[:200]}")
    ordinal = item.get("ordinal", 0)
    if not isinstance(ordinal, int) or isinstance(ordinal, bool):
        raise StoreError(f"the item {item_id!r} has no integer ordinal: {ordinal!r}")
    return item_id, ordinal, dumps(dict(item), f"the item {item_id!r}")


def turn_row(thread_id: str, turn: Turn) -> tuple[Any, ...]:
    """A turn's row: its thread's id, then :data:`TURN_COLUMNS`."""
    return (
        thread_id,
        turn.index,
        turn.status,
        text(turn.stop_reason),
        text(turn.error),
        turn.started_at,
        turn.ended_at,
    )


def check_turns(thread_id: str, turns: Sequence[Turn]) -> None:
    """:class:`StoreError` for a turn of another thread than the one committed to."""
    for turn in turns:
        if turn.thread_id != thread_id:
            raise StoreError(f"a turn of the thread {turn.thread_id!r} committed to {thread_id!r}")


# --- running a statement --------------------------------------------------------------------


class Cursor(Protocol):
    rowcount: int

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class Sql:
    """A connection (in a transaction, or reading), with SQL written with ``?`` marks, and
    the store's clock and location."""

    def __init__(
        self, connection: Any, mark: str, now: float, row_lock: str = "", location: str = ""
    ) -> None:
        self.connection = connection
        self.mark = mark
        self.now = now
        #: What locks a row read until the transaction ends (PostgreSQL: ``FOR UPDATE``;
        #: SQLite's write transaction holds the whole file already).
        self.row_lock = row_lock
        #: The store's location, for the errors.
        self.location = location

    def run(self, statement: str, params: Sequence[Any] = ()) -> Cursor:
        cursor: Cursor = self.connection.execute(self._marked(statement), tuple(params))
        return cursor

    def run_many(self, statement: str, rows: Sequence[Sequence[Any]]) -> None:
        """The statement once for each row (none for no row)."""
        if not rows:
            return
        cursor = self.connection.cursor()
        try:
            cursor.executemany(self._marked(statement), rows)
        finally:
            cursor.close()

    def _marked(self, statement: str) -> str:
        return statement if self.mark == "?" else statement.replace("?", self.mark)

    def not_found(self, thread_id: str) -> ThreadNotFound:
        return thread_not_found(thread_id, self.location)


def thread_not_found(thread_id: str, location: str) -> ThreadNotFound:
    """The error for an id that names no thread of the store at ``location``."""
    return ThreadNotFound(f"no thread {thread_id!r} in {location}")


def known(sql: Sql, thread_id: str, *, lock: bool = False) -> None:
    """:class:`ThreadNotFound` unless the thread is there (``lock``: its row locked until the
    transaction ends, so that writers of one thread take turns)."""
    query = "SELECT 1 FROM threads WHERE id = ?" + (sql.row_lock if lock else "")
    if sql.run(query, (thread_id,)).fetchone() is None:
        raise sql.not_found(thread_id)


def read_thread(sql: Sql, thread_id: str) -> Thread:
    row = sql.run(f"SELECT {THREAD_COLUMNS} FROM threads WHERE id = ?", (thread_id,)).fetchone()
    if row is None:
        raise sql.not_found(thread_id)
    return thread_of(row)


def append_events(sql: Sql, thread_id: str, events: Sequence[str]) -> int:
    """Append the events (their JSON texts) to the thread's log; the ``seq`` of its last."""
    (last,) = sql.run(
        "SELECT COALESCE(MAX(seq), 0) FROM events WHERE thread_id = ?", (thread_id,)
    ).fetchone()
    sql.run_many(
        "INSERT INTO events (thread_id, seq, entry) VALUES (?, ?, ?)",
        [(thread_id, last + number, entry) for number, entry in enumerate(events, 1)],
    )
    return int(last) + len(events)


#: What an item written again changes.
ITEM_UPSERT = (
    "ON CONFLICT (thread_id, item_id) DO UPDATE "
    "SET ordinal = excluded.ordinal, item = excluded.item"
)
#: What a turn written again changes.
TURN_UPSERT = (
    "ON CONFLICT (thread_id, turn_index) DO UPDATE "
    "SET status = excluded.status, stop_reason = excluded.stop_reason, "
    "error = excluded.error, started_at = excluded.started_at, ended_at = excluded.ended_at"
)


def upsert_items(sql: Sql, thread_id: str, items: Sequence[tuple[str, int, str]]) -> None:
    """Write the items (their :func:`item_row`), each over the one of its id."""
    sql.run_many(
        f"INSERT INTO items (thread_id, item_id, ordinal, item) VALUES (?, ?, ?, ?) {ITEM_UPSERT}",
        [(thread_id, *row) for row in items],
    )


def upsert_turns(sql: Sql, thread_id: str, turns: Sequence[Turn]) -> None:
    """Write the turns, each over the one of its index."""
    sql.run_many(
        f"INSERT INTO turns (thread_id, {TURN_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?) "
        + TURN_UPSERT,
        [turn_row(thread_id, turn) for turn in turns],
    )


def delete_thread(sql: Sql, thread_id: str) -> None:
    """Delete the thread; its turns, events, items and queued prompts go with it (``ON DELETE
    CASCADE``)."""
    if sql.run("DELETE FROM threads WHERE id = ?", (thread_id,)).rowcount == 0:
        raise sql.not_found(thread_id)


# --- what a backend gives, and what is written over it --------------------------------------


class SqlBackend(Store):
    """A store whose backend speaks SQL: what it gives the SQL both backends share (its
    dialect, one call at a time on its connection, one write transaction at a time), and
    its clock."""

    #: The backend's placeholder, and its clause that locks a row read (see :class:`Sql`).
    _mark = "?"
    _row_lock = ""
    #: The schema version of the store as opened.
    _version: int
    #: The last time :meth:`_now` gave.
    _last_time = 0.0

    @abc.abstractmethod
    async def _run(self, function: Callable[..., T], *args: Any) -> T:
        """``function(connection, *args)`` on the store's connection, one call at a time, in a
        worker thread."""

    @abc.abstractmethod
    async def _transact(self, function: Callable[[Sql], T]) -> T:
        """``function`` in one write transaction (a :class:`Sql` on its connection)."""

    def _sql(self, connection: Any, now: float) -> Sql:
        """The connection with this backend's dialect."""
        return Sql(connection, self._mark, now, self._row_lock, self.location)

    async def _read(self, function: Callable[[Sql], T]) -> T:
        """``function`` on the connection as it reads (a SQLite read takes no write lock)."""
        return await self._run(lambda connection: function(self._sql(connection, time.time())))

    def _now(self) -> float:
        """Now, never earlier than the last time this store gave (so that what was updated
        later sorts later); called in the worker, one at a time."""
        now = max(time.time(), self._last_time + 1e-6)
        self._last_time = now
        return now


class ThreadQueries(SqlBackend):
    """The threads, their turns, events and items read back, and a thread's row written, for
    each backend alike (see the module's documentation)."""

    @abc.abstractmethod
    def _name_taken(self, error: Exception) -> bool:
        """Whether ``error`` (the driver's) says a thread's name is taken already."""

    def _thread_columns(self, fields: Mapping[str, Any]) -> dict[str, Any]:
        """A thread's fields as this backend's columns hold them (:func:`thread_columns`)."""
        return thread_columns(fields)

    def _text_column(self, value: str, what: str) -> Any:
        """A string to look for in a text column, as this backend keeps it (``what``: what it
        is, for the error when the backend cannot hold it)."""
        return text(value)

    @contextlib.contextmanager
    def _naming(self, name: Any) -> Iterator[None]:
        """Where a thread's name is written: a name another thread has is a
        :class:`StoreError` that says so."""
        try:
            yield
        except Exception as exc:
            if not self._name_taken(exc):
                raise
            raise StoreError(f"a thread is named {name!r} already") from None

    # --- threads ------------------------------------------------------------------------

    async def create_thread(self, **thread: Unpack[NewThread]) -> Thread:
        fields: dict[str, Any] = {**_NEW_THREAD, **thread}
        fields["cwd"] = os.fspath(fields["cwd"])
        name = fields["name"]
        columns = self._thread_columns(fields)
        thread_id = uuid.uuid4().hex

        def create(sql: Sql) -> Thread:
            now = self._now()
            with self._naming(name):
                sql.run(
                    f"INSERT INTO threads (id, {', '.join(columns)}, created_at, updated_at) "
                    f"VALUES (?, {', '.join('?' for _ in columns)}, ?, ?)",
                    (thread_id, *columns.values(), now, now),
                )
            return read_thread(sql, thread_id)

        return await self._transact(create)

    async def thread(self, thread_id: str) -> Thread:
        return await self._read(lambda sql: read_thread(sql, thread_id))

    async def thread_named(self, name: str) -> Thread | None:
        column = self._text_column(name, "a thread's name")

        def named(sql: Sql) -> Thread | None:
            query = f"SELECT {THREAD_COLUMNS} FROM threads WHERE name = ?"
            row = sql.run(query, (column,)).fetchone()
            return thread_of(row) if row is not None else None

        return await self._read(named)

    async def threads(self) -> list[Thread]:
        def every(sql: Sql) -> list[Thread]:
            rows = sql.run(
                f"SELECT {THREAD_COLUMNS} FROM threads ORDER BY updated_at DESC, created_at DESC"
            ).fetchall()
            return [thread_of(row) for row in rows]

        return await self._read(every)

    async def delete_thread(self, thread_id: str) -> None:
        await self._transact(lambda sql: self._delete_row(sql, thread_id))

    def _delete_row(self, sql: Sql, thread_id: str) -> None:
        """Delete the thread's row (in the transaction :meth:`delete_thread` runs)."""
        delete_thread(sql, thread_id)

    async def update_thread(self, thread_id: str, **fields: Any) -> Thread:
        columns = self._thread_columns(fields)

        def update(sql: Sql) -> Thread:
            self._update_row(sql, thread_id, columns, fields.get("name"))
            return read_thread(sql, thread_id)

        return await self._transact(update)

    def _update_row(self, sql: Sql, thread_id: str, columns: dict[str, Any], name: Any) -> None:
        """Change the thread's ``columns``; its ``updated_at`` moves to now."""
        settings = "".join(f"{column} = ?, " for column in columns)
        with self._naming(name):
            cursor = sql.run(
                f"UPDATE threads SET {settings}updated_at = ? WHERE id = ?",
                (*columns.values(), self._now(), thread_id),
            )
        if cursor.rowcount == 0:
            raise sql.not_found(thread_id)

    def _split_group(
        self, group: Sequence[P], present: Container[str], apart: Callable[[P], int | StoreError]
    ) -> tuple[list[int | StoreError | None], list[tuple[int, P]]]:
        """A group of commits (see :mod:`.group`, one for each thread) as both backends write
        it: one of a thread that is not ``present`` fails, one that changes its thread's fields
        is written apart as it comes (``apart``: a name it gives may be taken, and then it
        fails alone); the others are left to be written together. Each commit's outcome so
        far (None: left), and those left, with their places in the group."""
        outcomes: list[int | StoreError | None] = [None] * len(group)
        together: list[tuple[int, P]] = []
        for index, prepared in enumerate(group):
            if prepared.thread_id not in present:
                outcomes[index] = thread_not_found(prepared.thread_id, self.location)
            elif prepared.columns:
                outcomes[index] = apart(prepared)
            else:
                together.append((index, prepared))
        return outcomes, together

    def _write_rows(self, sql: Sql, prepared: PreparedCommit) -> int:
        """One commit's rows, written one by one (its thread's row locked first, so that
        writers of one thread take turns): the ``seq`` of the thread's last event."""
        thread_id = prepared.thread_id
        known(sql, thread_id, lock=True)
        last = append_events(sql, thread_id, prepared.events)
        upsert_items(sql, thread_id, prepared.items)
        upsert_turns(sql, thread_id, prepared.turns)
        self._update_row(sql, thread_id, prepared.columns, prepared.name)
        return last

    # --- what is read back --------------------------------------------------------------

    async def events(self, thread_id: str, *, after: int = 0) -> list[StoredEvent]:
        def read(sql: Sql) -> list[StoredEvent]:
            known(sql, thread_id)
            rows = sql.run(
                "SELECT seq, entry FROM events WHERE thread_id = ? AND seq > ? ORDER BY seq",
                (thread_id, after),
            ).fetchall()
            return [StoredEvent(thread_id, int(seq), loads(entry)) for seq, entry in rows]

        return await self._read(read)

    async def items(self, thread_id: str) -> list[dict[str, Any]]:
        def read(sql: Sql) -> list[dict[str, Any]]:
            known(sql, thread_id)
            rows = sql.run(
                "SELECT item FROM items WHERE thread_id = ? ORDER BY ordinal, item_id",
                (thread_id,),
            ).fetchall()
            return [loads(item) for (item,) in rows]

        return await self._read(read)

    async def turns(self, thread_id: str) -> list[Turn]:
        def read(sql: Sql) -> list[Turn]:
            known(sql, thread_id)
            rows = sql.run(
                f"SELECT {TURN_COLUMNS} FROM turns WHERE thread_id = ? ORDER BY turn_index",
                (thread_id,),
            ).fetchall()
            return [turn_of(thread_id, row) for row in rows]

        return await self._read(read)

    # --- the store ----------------------------------------------------------------------

    @property
    def schema_version(self) -> int:
        return self._version

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.location!r})"
