"""The SQLite store: one file, the embedded default.

The standard library's :mod:`sqlite3` runs in anyio's worker threads, through one connection
and one :class:`anyio.CapacityLimiter` of 1: the store's reads and writes run one at a time,
in the order they were asked for, and never block the event loop.

What it guarantees:

* **WAL**: readers (this process's and others') never wait for the writer, and a commit is
  one append to the write-ahead log;
* ``synchronous=NORMAL`` by default: a committed transaction survives the process being
  killed (SIGKILL included: the log is in the operating system's hands once ``COMMIT``
  returns), and the store is never corrupted; only a power loss or an operating system
  crash may undo the last commits (the store still opens, consistent). ``synchronous="FULL"``
  (:meth:`SqliteStore.open`) syncs the log at every commit and survives those as well;
* each :meth:`~SqliteStore.commit` is all of it or none of it. The commits that wait while
  one is written are written next, together (:mod:`.group`): one ``BEGIN IMMEDIATE ...
  COMMIT``, each commit in a savepoint of its own, so that hundreds of sessions commit in
  a few transactions a second, and a commit that fails (its thread deleted) fails alone.
  The write lock is taken at the transaction's start, so two processes writing one file
  take turns (``busy_timeout``: a writer waits up to 10 s for another's transaction);
* foreign keys on: a thread's turns, events, items and queued prompts go with it.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import time
import urllib.parse
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

import anyio
import anyio.to_thread

from .. import _json
from .base import (
    SCHEMA_VERSION,
    Commit,
    PreparedCommit,
    StoredEvent,
    StoreError,
    StoreNotFound,
    Turn,
    event_text,
)
from .group import CommitGroups
from .leases import LeaseQueries
from .schema import VERSION_QUERY, migrate
from .sql import (
    ITEM_UPSERT,
    Sql,
    ThreadQueries,
    check_turns,
    item_row,
    upsert_turns,
)

T = TypeVar("T")

Synchronous = Literal["NORMAL", "FULL"]

#: How often :meth:`SqliteStore.follow` looks for events another process committed (seconds);
#: this process's own commits wake it at once.
POLL_SECONDS = 0.1
#: A commit of more events and items than this is encoded as JSON in a worker thread.
ENCODED_IN_LOOP = 200
#: How long a writer waits for another connection's transaction (seconds).
BUSY_TIMEOUT = 10.0


@contextlib.contextmanager
def _immediate(con: sqlite3.Connection) -> Iterator[None]:
    """A write transaction that takes the file's write lock at its start (``BEGIN
    IMMEDIATE``), so that a writer waits for another's at once rather than failing at its
    first write: committed when the block ends, rolled back (as far as SQLite has not
    already) when it raises."""
    con.execute("BEGIN IMMEDIATE")
    try:
        yield
        con.execute("COMMIT")
    except BaseException:
        _rollback(con)
        raise


class SqliteStore(ThreadQueries, LeaseQueries):
    """A store in one SQLite file (see the module's documentation); open it with
    :meth:`open` (or :func:`acp_adapters.store.open_store`)."""

    def __init__(self, path: str, connection: sqlite3.Connection, version: int) -> None:
        self.location = path
        self._connection = connection
        self._version = version
        #: The one connection's turn: every read and write takes it.
        self._limiter = anyio.CapacityLimiter(1)
        #: Whether this SQLite has JSON1 (``json_each``): a group's rows then go in a few
        #: statements (see :meth:`_write_together`).
        self._json_each = _has_json_each(connection)
        #: The commits waiting to be written, a group at a time (see :mod:`.group`).
        self._groups: CommitGroups[_Prepared] = CommitGroups(self._write_group)
        #: Set (and replaced) at each commit of this store: wakes its followers.
        self._changed = anyio.Event()
        self._closed = False
        #: How often followers look for other processes' commits (seconds).
        self.poll_seconds = POLL_SECONDS
        #: How many times this store saw its queue move (:meth:`wait_queue`).
        self._queue_count = 0
        self._queue_event = anyio.Event()
        self._data_version: int | None = None

    @classmethod
    async def open(
        cls,
        path: str | os.PathLike[str],
        *,
        synchronous: Synchronous = "NORMAL",
        busy_timeout: float = BUSY_TIMEOUT,
        create: bool = True,
    ) -> SqliteStore:
        """Open (creating or migrating) the store at ``path``. A new file is made readable
        and writable by its owner only (0600; SQLite gives its ``-wal`` and ``-shm`` files
        the same mode).

        :param create: make the store when the file is missing (or empty); ``False`` raises
            :class:`StoreNotFound` instead, and creates nothing.
        :raises StoreError: the path cannot be opened or written (the path and the reason), it
            is not a store, or its schema is newer than this library's.
        """
        location = os.fspath(path)
        if synchronous not in ("NORMAL", "FULL"):
            raise ValueError(f"synchronous is NORMAL or FULL, not {synchronous!r}")
        connection, version = await anyio.to_thread.run_sync(
            _connect, location, synchronous, busy_timeout, create
        )
        return cls(location, connection, version)

    # --- running in the worker thread ---------------------------------------------------

    async def _run(self, function: Callable[..., T], *args: Any) -> T:
        if self._closed:
            raise StoreError(f"the store {self.location} is closed")

        def call() -> T:
            if self._closed:
                raise StoreError(f"the store {self.location} is closed")
            try:
                return function(self._connection, *args)
            except StoreError:
                raise
            except sqlite3.Error as exc:
                raise StoreError(f"the store {self.location}: {exc}") from exc

        return await anyio.to_thread.run_sync(call, limiter=self._limiter)

    def _wake(self) -> None:
        changed, self._changed = self._changed, anyio.Event()
        changed.set()

    # --- threads ------------------------------------------------------------------------

    def _name_taken(self, error: Exception) -> bool:
        return isinstance(error, sqlite3.IntegrityError) and "threads.name" in str(error)

    async def delete_thread(self, thread_id: str) -> None:
        await super().delete_thread(thread_id)
        self._wake()  # a follower of it learns it is gone

    # --- what a session writes ----------------------------------------------------------

    async def commit(self, thread_id: str, commit: Commit) -> int:
        columns = self._thread_columns(commit.thread)
        turns = list(commit.turns)
        check_turns(thread_id, turns)
        # Everything is JSON before the transaction starts: what cannot be is refused whole.
        # A large commit (a flood's thousands of events) is encoded in a worker thread, not
        # in the event loop the other sessions wait for.
        if len(commit.events) + len(commit.items) > ENCODED_IN_LOOP:
            prepared = await anyio.to_thread.run_sync(_prepared, thread_id, commit, columns, turns)
        else:
            prepared = _prepared(thread_id, commit, columns, turns)
        if self._closed:
            raise StoreError(f"the store {self.location} is closed")
        try:
            return await self._groups.commit(prepared)
        finally:
            self._wake()

    async def _write_group(self, group: list[_Prepared]) -> list[int | StoreError]:
        """The commits of ``group`` in one transaction, each in a savepoint (see
        :mod:`.group`)."""

        def write(con: sqlite3.Connection) -> list[int | StoreError]:
            with _immediate(con):
                threads = [prepared.thread_id for prepared in group]
                if self._json_each and len(set(threads)) == len(threads):
                    return self._write_together(con, group)
                # A thread twice in the group (its commits in order), or no JSON1.
                return [self._write_one(con, prepared) for prepared in group]

        return await self._run(write)

    def _write_together(
        self, con: sqlite3.Connection, group: list[_Prepared]
    ) -> list[int | StoreError]:
        """The commits of a group (one for each thread), their rows written by a few
        statements for all of them: each statement a step of SQLite's, and each step lets
        the worker thread wait for the event loop's thread (Python's lock), so a few steps
        for a group of hundreds rather than a few for each row. A commit that changes its
        thread's fields (a name may be taken) is written apart, in its savepoint."""
        ids = [prepared.thread_id for prepared in group]
        (found,) = con.execute(
            "SELECT json_group_array(id) FROM threads WHERE id IN (SELECT value FROM json_each(?))",
            (_json.dumps(ids),),
        ).fetchone()
        outcomes, together = self._split_group(
            group, set(json.loads(found)), lambda one: self._write_one(con, one)
        )
        if together:
            (lasts,) = con.execute(
                "SELECT json_group_object(thread_id, last) FROM (SELECT thread_id, "
                "MAX(seq) AS last FROM events WHERE thread_id IN "
                "(SELECT value FROM json_each(?)) GROUP BY thread_id)",
                (_json.dumps([prepared.thread_id for _, prepared in together]),),
            ).fetchone()
            last_seq = {key: int(value) for key, value in json.loads(lasts).items()}
            # Each commit's thread and last seq (``heads``), and its events and items as they
            # were encoded (joined here, not encoded again). A big array is read once: what is
            # read for each row is its own element, or a small head.
            heads: list[tuple[str, int]] = []
            events: list[str] = []
            items: list[str] = []
            touched: list[tuple[str, float]] = []
            for index, prepared in together:
                first = last_seq.get(prepared.thread_id, 0)
                heads.append((prepared.thread_id, first))
                events.append(prepared.events_json)
                items.append(prepared.items_json)
                upsert_turns(self._sql(con, time.time()), prepared.thread_id, prepared.turns)
                touched.append((prepared.thread_id, self._now()))
                outcomes[index] = first + len(prepared.events)
            by_commit = (
                "FROM json_each(?1) AS c JOIN json_each(?2) AS h ON h.key = c.key, "
                "json_each(c.value) AS r"
            )
            con.execute(
                "INSERT INTO events (thread_id, seq, entry) SELECT "
                "json_extract(h.value, '$[0]'), json_extract(h.value, '$[1]') + r.key + 1, "
                f"r.value {by_commit}",
                ("[" + ",".join(events) + "]", _json.dumps(heads)),
            )
            con.execute(
                "INSERT INTO items (thread_id, item_id, ordinal, item) SELECT "
                "json_extract(h.value, '$[0]'), json_extract(r.value, '$[0]'), "
                "json_extract(r.value, '$[1]'), json_extract(r.value, '$[2]') "
                f"{by_commit} WHERE true {ITEM_UPSERT}",
                ("[" + ",".join(items) + "]", _json.dumps(heads)),
            )
            con.execute(
                "UPDATE threads SET updated_at = (SELECT json_extract(value, '$[1]') "
                "FROM json_each(?1) WHERE json_extract(value, '$[0]') = threads.id) "
                "WHERE id IN (SELECT json_extract(value, '$[0]') FROM json_each(?1))",
                (_json.dumps(touched),),
            )
        assert all(outcome is not None for outcome in outcomes)
        return [outcome for outcome in outcomes if outcome is not None]

    def _write_one(self, con: sqlite3.Connection, prepared: _Prepared) -> int | StoreError:
        """One commit of a group, in a savepoint: the ``seq`` of its last event, or the error
        it alone failed with (what it wrote undone)."""
        con.execute("SAVEPOINT one_commit")
        try:
            last = self._write_rows(self._sql(con, time.time()), prepared)
        except (StoreError, sqlite3.Error) as exc:
            con.execute("ROLLBACK TO one_commit")
            con.execute("RELEASE one_commit")
            if isinstance(exc, StoreError):
                return exc
            return StoreError(f"the store {self.location}: {exc}")
        con.execute("RELEASE one_commit")
        return last

    # --- following ----------------------------------------------------------------------

    async def follow(self, thread_id: str, *, after: int = 0) -> AsyncIterator[StoredEvent]:
        last = after
        while True:
            changed = self._changed
            events = await self.events(thread_id, after=last)
            for event in events:
                last = event.seq
                yield event
            if not events:
                # This store's commits wake it at once; another process's are seen at the
                # next look.
                with anyio.move_on_after(self.poll_seconds):
                    await changed.wait()

    # --- the leases and the queue (:mod:`.leases`) ---------------------------------------

    async def _transact(self, function: Callable[[Sql], T]) -> T:
        def run(con: sqlite3.Connection) -> T:
            with _immediate(con):
                return function(self._sql(con, time.time()))

        return await self._run(run)

    def _notify_queue(self, sql: Sql, thread_id: str) -> None:
        """Other processes see the queue move at their next look (:data:`POLL_SECONDS`)."""

    def _queue_moved(self) -> None:
        self._queue_count += 1
        moved, self._queue_event = self._queue_event, anyio.Event()
        moved.set()

    def queue_changes(self) -> int:
        return self._queue_count

    async def wait_queue(self, seen: int, timeout: float) -> None:
        # This store's own changes wake it at once; another process's commits are seen at
        # the next look (``PRAGMA data_version`` moves with every commit of another
        # connection: what it committed may be a prompt, and the waiter looks).
        with anyio.move_on_after(timeout):
            while self._queue_count == seen:
                with anyio.move_on_after(self.poll_seconds):
                    await self._queue_event.wait()
                version = await self._run(_data_version)
                if version != self._data_version:
                    self._data_version = version
                    self._queue_count += 1

    # --- the store ----------------------------------------------------------------------

    async def close(self) -> None:
        if self._closed:
            return
        # After what is running now (the limiter's turn), nothing else runs.
        async with self._limiter:
            self._closed = True
            self._connection.close()
        self._wake()


@dataclass(frozen=True)
class _Prepared(PreparedCommit):
    """A commit as the transaction writes it, with what a group's statements read."""

    #: The events, and the items' rows, as JSON arrays (for a group's few statements: see
    #: :meth:`SqliteStore._write_together`), encoded where the commit was prepared.
    events_json: str
    items_json: str


def _prepared(
    thread_id: str, commit: Commit, columns: dict[str, Any], turns: list[Turn]
) -> _Prepared:
    events = [event_text(entry) for entry in commit.events]
    items = [item_row(item) for item in commit.items]
    return _Prepared(
        thread_id,
        events,
        items,
        turns,
        columns,
        commit.thread.get("name"),
        _json.dumps(events),
        _json.dumps(items),
    )


def _data_version(con: sqlite3.Connection) -> int:
    (version,) = con.execute("PRAGMA data_version").fetchone()
    return int(version)


def _has_json_each(connection: sqlite3.Connection) -> bool:
    try:
        connection.execute("SELECT count(*) FROM json_each('[1]')").fetchone()
    except sqlite3.Error:
        return False
    return True


def _rollback(con: sqlite3.Connection) -> None:
    """Undo the transaction, if SQLite has not already (a full disk may have)."""
    if con.in_transaction:
        con.execute("ROLLBACK")


# --- opening ------------------------------------------------------------------------------


def _refuse_path(path: str) -> None:
    """A path that cannot be a store file, said plainly before SQLite says it vaguely."""
    if path == ":memory:" or path.startswith("file:"):
        return
    target = Path(path)
    if target.is_dir():
        raise StoreError(f"cannot open the store {path}: it is a folder")
    folder = target.parent
    if not folder.exists():
        raise StoreError(f"cannot open the store {path}: its folder {folder} does not exist")
    if not folder.is_dir():
        raise StoreError(f"cannot open the store {path}: {folder} is not a folder")


def _plain_path(path: str) -> bool:
    """Whether ``path`` names a file as it is (not ``:memory:``, not a ``file:`` URI)."""
    return path != ":memory:" and not path.startswith("file:")


def _file_of(path: str) -> str | None:
    """The file a store's location names: the path itself, or a ``file:`` URI's path; None
    for a database in memory (``:memory:``, ``mode=memory``)."""
    if _plain_path(path):
        return path
    if not path.startswith("file:"):
        return None
    parts = urllib.parse.urlsplit(path)
    query = urllib.parse.parse_qs(parts.query)
    named = urllib.parse.unquote(parts.path)
    if "memory" in query.get("mode", ()) or named in ("", ":memory:"):
        return None
    return named


def _made_private(path: str) -> None:
    """Make the store's file, when it is missing, readable and writable by its owner only:
    SQLite would make it as the umask says (0644 mostly: every local user reads every
    session), and gives the ``-wal`` and ``-shm`` files it makes the mode of the database's.
    A file that exists is left as it is (its mode is its owner's choice)."""
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError:
        # There already (or made by another process meanwhile); or it cannot be made here,
        # which SQLite says next, with the reason (see :func:`_why`).
        return
    os.close(descriptor)


def _why(path: str, exc: sqlite3.Error) -> str:
    reason = str(exc)
    folder = Path(path).parent
    if path != ":memory:" and not os.access(folder, os.W_OK):
        reason += f" (the folder {folder} is not writable)"
    elif os.path.exists(path) and not os.access(path, os.W_OK):
        reason += " (the file is not writable)"
    return f"cannot open the store {path}: {reason}"


def _write_ahead(connection: sqlite3.Connection, busy_timeout: float) -> None:
    """Put the file in WAL mode. SQLite answers "locked" at once, without waiting as
    ``busy_timeout`` says, while another connection is making the file (two processes
    opening a new store together): tried again until ``busy_timeout`` has passed."""
    deadline = time.monotonic() + busy_timeout
    while True:
        try:
            connection.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:  # noqa: PERF203 (tried again: rare)
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(0.01)


def _connect(
    path: str, synchronous: Synchronous, busy_timeout: float, create: bool = True
) -> tuple[sqlite3.Connection, int]:
    # A ``file:`` URI names a file as a path does: the same two safeguards.
    file = _file_of(path)
    if not create and file is not None and not os.path.exists(file):
        raise StoreNotFound(f"no store at {path}: there is no such file")
    _refuse_path(path)
    if create and file is not None:
        _made_private(file)
    try:
        connection = sqlite3.connect(
            path,
            timeout=busy_timeout,
            isolation_level=None,  # transactions are this module's: BEGIN IMMEDIATE ... COMMIT
            check_same_thread=False,  # used from anyio's worker threads, one at a time
            uri=path.startswith("file:"),
        )
    except sqlite3.Error as exc:
        raise StoreError(_why(path, exc)) from exc
    try:
        connection.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        if not create and _version(connection, path) is None:
            # Before WAL is set, which writes even an empty file.
            raise StoreNotFound(f"no store at {path}: the file is an empty database")
        _write_ahead(connection, busy_timeout)
        connection.execute(f"PRAGMA synchronous = {synchronous}")
        connection.execute("PRAGMA foreign_keys = ON")
        version = _migrate(connection, path)
    except BaseException as exc:
        connection.close()
        if isinstance(exc, sqlite3.Error):
            raise StoreError(_why(path, exc)) from exc
        raise
    return connection, version


def _version(connection: sqlite3.Connection, path: str) -> int | None:
    """The store's schema version; None for an empty database."""
    # One statement, one look: another connection may be making the store meanwhile.
    found, tables = connection.execute(
        "SELECT (SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'), "
        "(SELECT COUNT(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite_%')"
    ).fetchone()
    if not found:
        if tables:
            raise StoreError(
                f"cannot open the store {path}: it is an SQLite database, but not a store "
                "(no meta table)"
            )
        return None
    row = connection.execute(VERSION_QUERY).fetchone()
    try:
        return int(row[0]) if row is not None else None
    except ValueError:
        raise StoreError(
            f"cannot open the store {path}: its schema version is {row[0]!r}"
        ) from None


def _migrate(connection: sqlite3.Connection, path: str) -> int:
    """Bring the store to :data:`SCHEMA_VERSION` in one transaction; its version."""
    version = _version(connection, path)
    if version == SCHEMA_VERSION:
        return version
    with _immediate(connection):
        # Another process may have migrated it meanwhile.
        return migrate(connection.execute, _version(connection, path), path)
