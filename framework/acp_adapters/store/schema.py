"""The store's schema, version by version: the SQL that brings a store from one version to the
next, the same for SQLite and PostgreSQL.

Version ``N``'s statements take a store of version ``N - 1`` to version ``N`` (version 0's take
an empty database to version 0). A new store runs them all, in order; an older store runs
those past its version; both in one transaction. The ``meta`` table holds the version
(``key = 'schema_version'``); a store whose version is newer than :data:`SCHEMA_VERSION` is
refused.

Only types and statements both databases take: ``TEXT`` (JSON is kept as its text: a
PostgreSQL ``jsonb`` could not hold ``\\u0000``, nor keep a lone surrogate), ``BIGINT``,
``INTEGER``, ``DOUBLE PRECISION`` (times, seconds since the epoch), ``CHECK`` and
``REFERENCES ... ON DELETE CASCADE`` (SQLite enforces them with ``PRAGMA foreign_keys=ON``).

Version 0 is the first draft of the store: threads, turns, events and items. Version 1 adds a
thread's ``command``, a turn's ``error`` and the prompt queue. Version 2 adds the leases (who
drives a thread, until when), a thread's ``launch`` (how a worker starts its agent again) and
the queued prompts' ids and states (a prompt is kept once run: the turn it ran as, and how
it ended).
"""

from __future__ import annotations

from collections.abc import Callable

from .base import SCHEMA_VERSION, StoreError

#: The statements of each version, in order (see the module's documentation).
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    # --- version 0 -------------------------------------------------------------------------
    (
        """CREATE TABLE meta (
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL
        )""",
        "INSERT INTO meta (key, value) VALUES ('schema_version', '0')",
        """CREATE TABLE threads (
            id TEXT PRIMARY KEY,
            name TEXT UNIQUE,
            provider TEXT NOT NULL,
            agent_session_id TEXT,
            cwd TEXT NOT NULL,
            folders TEXT NOT NULL DEFAULT '[]',
            title TEXT,
            created_at DOUBLE PRECISION NOT NULL,
            updated_at DOUBLE PRECISION NOT NULL
        )""",
        "CREATE INDEX threads_updated ON threads (updated_at)",
        """CREATE TABLE turns (
            thread_id TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
            turn_index INTEGER NOT NULL,
            status TEXT NOT NULL
                CHECK (status IN ('running', 'completed', 'failed', 'cancelled')),
            stop_reason TEXT,
            started_at DOUBLE PRECISION NOT NULL,
            ended_at DOUBLE PRECISION,
            PRIMARY KEY (thread_id, turn_index)
        )""",
        """CREATE TABLE events (
            thread_id TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
            seq BIGINT NOT NULL CHECK (seq >= 1),
            entry TEXT NOT NULL,
            PRIMARY KEY (thread_id, seq)
        )""",
        """CREATE TABLE items (
            thread_id TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
            item_id TEXT NOT NULL,
            ordinal BIGINT NOT NULL,
            item TEXT NOT NULL,
            PRIMARY KEY (thread_id, item_id)
        )""",
        "CREATE INDEX items_ordinal ON items (thread_id, ordinal)",
    ),
    # --- version 1 -------------------------------------------------------------------------
    (
        "ALTER TABLE threads ADD COLUMN command TEXT",
        "ALTER TABLE turns ADD COLUMN error TEXT",
        """CREATE TABLE queue (
            thread_id TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
            position BIGINT NOT NULL,
            prompt TEXT NOT NULL,
            queued_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (thread_id, position)
        )""",
        "UPDATE meta SET value = '1' WHERE key = 'schema_version'",
    ),
    # --- version 2 -------------------------------------------------------------------------
    (
        "ALTER TABLE threads ADD COLUMN launch TEXT",
        "ALTER TABLE queue ADD COLUMN id TEXT",
        "ALTER TABLE queue ADD COLUMN state TEXT NOT NULL DEFAULT 'queued'",
        "ALTER TABLE queue ADD COLUMN owner TEXT",
        "ALTER TABLE queue ADD COLUMN turn_index INTEGER",
        "ALTER TABLE queue ADD COLUMN error TEXT",
        "ALTER TABLE queue ADD COLUMN ended_at DOUBLE PRECISION",
        # A prompt queued before version 2 waits for whoever owns its thread next.
        "UPDATE queue SET id = thread_id || '-' || CAST(position AS TEXT)",
        "CREATE UNIQUE INDEX queue_id ON queue (id)",
        "CREATE INDEX queue_state ON queue (state, queued_at)",
        """CREATE TABLE leases (
            thread_id TEXT PRIMARY KEY REFERENCES threads (id) ON DELETE CASCADE,
            owner TEXT NOT NULL,
            host TEXT NOT NULL,
            pid BIGINT NOT NULL,
            taken_at DOUBLE PRECISION NOT NULL,
            expires_at DOUBLE PRECISION NOT NULL
        )""",
        "UPDATE meta SET value = '2' WHERE key = 'schema_version'",
    ),
)

assert len(MIGRATIONS) == SCHEMA_VERSION + 1, "a migration for every version"

#: The statement that reads a store's version (no row, or no ``meta`` table: not a store yet).
VERSION_QUERY = "SELECT value FROM meta WHERE key = 'schema_version'"


def migration(from_version: int | None) -> list[str]:
    """The statements that bring a store of version ``from_version`` (None: an empty
    database) to :data:`SCHEMA_VERSION`, in order; none when it is there already.

    :raises ValueError: ``from_version`` is newer than this library's, or below 0.
    """
    start = 0 if from_version is None else from_version + 1
    if from_version is not None and not 0 <= from_version <= SCHEMA_VERSION:
        raise ValueError(
            f"the store's schema is version {from_version}; this library knows versions "
            f"0 to {SCHEMA_VERSION}"
        )
    return [statement for version in MIGRATIONS[start:] for statement in version]


def migrate(execute: Callable[[str], object], version: int | None, location: str) -> int:
    """Bring the store at ``location``, of ``version`` (None: an empty database), to
    :data:`SCHEMA_VERSION`, each statement run by ``execute`` (in the caller's transaction,
    which the backend holds as each opens a store: SQLite's write lock, PostgreSQL's advisory
    lock); the version it is of then.

    :raises StoreError: its schema is newer than this library's (upgrade it), or its version
        is below 0.
    """
    if version is not None and version > SCHEMA_VERSION:
        raise StoreError(
            f"cannot open the store {location}: its schema is version {version}, newer than "
            f"this library's ({SCHEMA_VERSION}); upgrade acp-adapters"
        )
    if version is not None and version < 0:
        raise StoreError(f"cannot open the store {location}: its schema version is {version}")
    for statement in migration(version):
        execute(statement)
    return SCHEMA_VERSION
