"""Schema migrations: an older store opens with this library (migrated, in one transaction, its
data kept), a newer one is refused, and a migrated store is the same as a new one."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from acp_adapters.store import SCHEMA_VERSION, Commit, Owner, StoreError, Turn, open_store
from acp_adapters.store.schema import MIGRATIONS, migration

pytestmark = pytest.mark.anyio

#: A store of version 0, written by hand (not from :mod:`acp_adapters.store.schema`): threads
#: without a command, turns without an error, no prompt queue.
VERSION_0 = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO meta VALUES ('schema_version', '0');
CREATE TABLE threads (
    id TEXT PRIMARY KEY, name TEXT UNIQUE, provider TEXT NOT NULL, agent_session_id TEXT,
    cwd TEXT NOT NULL, folders TEXT NOT NULL DEFAULT '[]', title TEXT,
    created_at DOUBLE PRECISION NOT NULL, updated_at DOUBLE PRECISION NOT NULL
);
CREATE INDEX threads_updated ON threads (updated_at);
CREATE TABLE turns (
    thread_id TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    turn_index INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('running', 'completed', 'failed', 'cancelled')),
    stop_reason TEXT, started_at DOUBLE PRECISION NOT NULL, ended_at DOUBLE PRECISION,
    PRIMARY KEY (thread_id, turn_index)
);
CREATE TABLE events (
    thread_id TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    seq BIGINT NOT NULL CHECK (seq >= 1), entry TEXT NOT NULL, PRIMARY KEY (thread_id, seq)
);
CREATE TABLE items (
    thread_id TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    item_id TEXT NOT NULL, ordinal BIGINT NOT NULL, item TEXT NOT NULL,
    PRIMARY KEY (thread_id, item_id)
);
CREATE INDEX items_ordinal ON items (thread_id, ordinal);
INSERT INTO threads VALUES ('t1', 'old', 'claude', 'sess-1', '/work', '["/more"]', 'Old title',
    100.0, 200.0);
INSERT INTO turns VALUES ('t1', 1, 'completed', 'end_turn', 150.0, 160.0);
INSERT INTO events VALUES ('t1', 1, '{"dir": "client->agent", "msg": {"id": 1}}');
INSERT INTO events VALUES ('t1', 2, '{"dir": "agent->client", "msg": {"id": 1, "result": {}}}');
INSERT INTO items VALUES ('t1', 'a', 1, '{"id": "a", "ordinal": 1, "text": "é"}');
"""


def make(path: Path, script: str) -> None:
    connection = sqlite3.connect(path)
    connection.executescript(script)
    connection.commit()
    connection.close()


def layout(path: Path) -> dict[str, Any]:
    """The tables' columns and the indexes of a store, to compare two stores' schemas."""
    connection = sqlite3.connect(path)
    try:
        tables = [
            name
            for (name,) in connection.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
            )
        ]
        return {
            "tables": {
                table: sorted(
                    (row[1], row[2].upper(), row[3], row[4], row[5])
                    for row in connection.execute(f"PRAGMA table_info({table})")
                )
                for table in tables
            },
            "indexes": sorted(
                name
                for (name,) in connection.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'index'"
                )
            ),
            "version": connection.execute(
                "SELECT value FROM meta WHERE key = 'schema_version'"
            ).fetchall(),
        }
    finally:
        connection.close()


def test_each_version_has_its_statements() -> None:
    assert len(MIGRATIONS) == SCHEMA_VERSION + 1
    assert migration(SCHEMA_VERSION) == []
    assert migration(None) == [s for version in MIGRATIONS for s in version]
    assert migration(0) == [*MIGRATIONS[1], *MIGRATIONS[2]]
    assert migration(1) == list(MIGRATIONS[2])
    with pytest.raises(ValueError, match="version 7"):
        migration(7)


async def test_a_version_0_store_opens_migrated_with_its_data(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    make(path, VERSION_0)
    async with await open_store(path) as store:
        assert store.schema_version == SCHEMA_VERSION == 2
        (thread,) = await store.threads()
        assert (thread.id, thread.name, thread.provider, thread.cwd) == (
            "t1",
            "old",
            "claude",
            "/work",
        )
        assert (thread.agent_session_id, thread.folders, thread.title) == (
            "sess-1",
            ("/more",),
            "Old title",
        )
        assert (thread.created_at, thread.updated_at, thread.command) == (100.0, 200.0, None)
        assert await store.turns("t1") == [
            Turn("t1", 1, "completed", "end_turn", None, 150.0, 160.0)
        ]
        assert [e.entry["dir"] for e in await store.events("t1")] == [
            "client->agent",
            "agent->client",
        ]
        assert await store.items("t1") == [{"id": "a", "ordinal": 1, "text": "é"}]
        # What version 1 adds works on the migrated store.
        assert (
            await store.commit(
                "t1",
                Commit(
                    events=[{"dir": "agent->client", "msg": {}}],
                    turns=[Turn("t1", 2, "failed", error="the agent exited")],
                    thread={"command": ["agent", "--acp"]},
                ),
            )
            == 3
        )
        assert (await store.thread("t1")).command == ("agent", "--acp")
        assert (await store.turns("t1"))[1].error == "the agent exited"
        assert await store.queue_prompt("t1", [{"type": "text", "text": "next"}]) == 1
        # And what version 2 adds: the prompt has an id and a state; the thread a lease.
        (queued,) = await store.queued_prompts("t1")
        assert (queued.state, len(queued.id)) == ("queued", 32)
        owner = Owner.here()
        assert (await store.acquire_lease("t1", owner)).owner == owner
    fresh = tmp_path / "new.db"
    async with await open_store(fresh):
        pass
    assert layout(path) == layout(fresh)
    assert layout(path)["version"] == [("2",)]


async def test_a_version_1_queue_waits_for_the_next_owner(tmp_path: Path) -> None:
    # A prompt a version 1 store kept queued (its process ended before its turn) is
    # queued for whoever owns the thread next, with an id of its own.
    path = tmp_path / "v1.db"
    connection = sqlite3.connect(path)
    try:
        for statement in migration(None)[: -len(MIGRATIONS[2])]:
            connection.execute(statement)
        connection.execute(
            "INSERT INTO threads (id, provider, cwd, created_at, updated_at) "
            "VALUES ('t1', 'generic', '/w', 1, 1)"
        )
        connection.execute(
            "INSERT INTO queue (thread_id, position, prompt, queued_at) "
            """VALUES ('t1', 3, '[{"type": "text", "text": "left"}]', 5)"""
        )
        connection.commit()
    finally:
        connection.close()
    assert layout(path)["version"] == [("1",)]
    async with await open_store(path) as store:
        (queued,) = await store.queued_prompts("t1")
        assert (queued.position, queued.state, queued.id) == (3, "queued", "t1-3")
        assert queued.prompt == [{"type": "text", "text": "left"}]
        owner = Owner.here()
        await store.acquire_lease("t1", owner)
        claimed = await store.claim_prompt("t1", owner)
        assert claimed is not None
        assert (claimed.id, claimed.state) == ("t1-3", "running")


async def test_a_store_is_migrated_once(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    make(path, VERSION_0)
    async with await open_store(path):
        pass
    async with await open_store(path) as store:  # at version 1 already: nothing to do
        assert store.schema_version == SCHEMA_VERSION
        assert len(await store.events("t1")) == 2


async def test_a_migration_that_fails_leaves_the_store_as_it_was(tmp_path: Path) -> None:
    # A version 0 store that has a table of the name version 1 makes: its migration fails
    # half way (the columns added, then the table refused) and is undone whole.
    path = tmp_path / "odd.db"
    make(path, VERSION_0 + "CREATE TABLE queue (x TEXT);")
    before = layout(path)
    with pytest.raises(StoreError) as raised:
        await open_store(path)
    assert str(path) in str(raised.value)
    assert "queue" in str(raised.value)
    assert layout(path) == before
    assert before["version"] == [("0",)]
    assert "command" not in {column[0] for column in before["tables"]["threads"]}


async def test_a_newer_store_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    async with await open_store(path):
        pass
    connection = sqlite3.connect(path)
    connection.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    connection.commit()
    connection.close()
    with pytest.raises(StoreError, match="version 99, newer than this library's") as raised:
        await open_store(path)
    assert str(path) in str(raised.value)
    assert layout(path)["version"] == [("99",)]  # untouched


async def test_a_store_of_an_unreadable_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "odd.db"
    make(
        path,
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
        "INSERT INTO meta VALUES ('schema_version', 'one');",
    )
    with pytest.raises(StoreError, match="'one'"):
        await open_store(path)


async def test_an_empty_file_becomes_a_store(tmp_path: Path) -> None:
    path = tmp_path / "empty.db"
    path.write_bytes(b"")
    async with await open_store(path) as store:
        assert store.schema_version == SCHEMA_VERSION
        thread = await store.create_thread(provider="generic", cwd="/w")
        assert await store.commit(thread.id, Commit(events=[{"n": 1}])) == 1
    version = json.loads(layout(path)["version"][0][0])
    assert version == SCHEMA_VERSION
