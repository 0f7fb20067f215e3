"""The SQLite backend's own promises: its settings, its file, what it refuses, and a failure
inside a transaction that leaves nothing."""

from __future__ import annotations

import os
import sqlite3
import sys
import types
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_adapters.store import (
    SCHEMA_VERSION,
    STORE_ENV,
    Commit,
    SqliteStore,
    Store,
    StoreError,
    Turn,
    default_store,
    default_store_path,
    open_store,
    sql,
)
from acp_adapters.store import open as open_module

pytestmark = pytest.mark.anyio


def raw(path: Path, query: str, *args: Any) -> list[tuple[Any, ...]]:
    """Rows read with a connection of the test's own."""
    connection = sqlite3.connect(path)
    try:
        return connection.execute(query, args).fetchall()
    finally:
        connection.close()


async def test_the_store_is_wal_with_foreign_keys_a_busy_timeout_and_normal_sync(
    tmp_path: Path,
) -> None:
    path = tmp_path / "store.db"
    async with await SqliteStore.open(path) as store:
        pragmas = {
            name: store._connection.execute(f"PRAGMA {name}").fetchone()[0]
            for name in ("journal_mode", "synchronous", "foreign_keys", "busy_timeout")
        }
        assert pragmas == {
            "journal_mode": "wal",
            "synchronous": 1,  # NORMAL
            "foreign_keys": 1,
            "busy_timeout": 10_000,
        }
        assert store.location == str(path)
    assert raw(path, "PRAGMA journal_mode") == [("wal",)]  # kept in the file
    async with await SqliteStore.open(path, synchronous="FULL") as store:
        assert store._connection.execute("PRAGMA synchronous").fetchone()[0] == 2


async def test_json_is_kept_as_utf8_text(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    async with await open_store(path) as store:
        thread = await store.create_thread(provider="generic", cwd="/w")
        await store.commit(
            thread.id,
            Commit(
                events=[{"dir": "agent->client", "msg": {"text": "é\ud800"}}],
                items=[{"id": "a", "ordinal": 1, "text": "é ✓"}],
            ),
        )
    ((item, kind),) = raw(path, "SELECT item, typeof(item) FROM items")
    assert kind == "text"
    assert '"é ✓"' in item  # as it is, not \\u escaped
    ((entry,),) = raw(path, "SELECT entry FROM events")
    assert "\\ud800" in entry  # a lone surrogate: escaped, so the text is UTF-8


async def test_a_threads_text_keeps_a_lone_surrogate(tmp_path: Path) -> None:
    async with await open_store(tmp_path / "store.db") as store:
        # (A name holds none: a name is what a person types, see check_thread_name.)
        thread = await store.create_thread(
            provider="generic", cwd="/w/\ud800", name="n", title="t\ud800"
        )
        await store.commit(
            thread.id, Commit(turns=[Turn(thread.id, 1, "failed", error="bad \ud800 byte")])
        )
        thread = await store.thread(thread.id)
        assert (thread.cwd, thread.name, thread.title) == ("/w/\ud800", "n", "t\ud800")
        assert await store.thread_named("n") == thread
        assert (await store.turns(thread.id))[0].error == "bad \ud800 byte"


async def test_a_failure_inside_the_transaction_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "store.db"
    async with await open_store(path) as store:
        thread = await store.create_thread(provider="generic", cwd="/w")
        await store.commit(thread.id, Commit(events=[{"n": 1}], items=[{"id": "a", "ordinal": 1}]))

        def fail(*args: Any) -> None:
            raise sqlite3.OperationalError("disk I/O error (injected)")

        # The events and items are written; the turns fail.
        monkeypatch.setattr(sql, "upsert_turns", fail)
        with pytest.raises(StoreError, match="injected") as raised:
            await store.commit(
                thread.id,
                Commit(
                    events=[{"n": 2}, {"n": 3}],
                    items=[{"id": "a", "ordinal": 1, "x": 1}, {"id": "b", "ordinal": 2}],
                    turns=[Turn(thread.id, 1)],
                    thread={"title": "changed"},
                ),
            )
        assert str(path) in str(raised.value)
        monkeypatch.undo()
        assert [e.seq for e in await store.events(thread.id)] == [1]
        assert await store.items(thread.id) == [{"id": "a", "ordinal": 1}]
        assert (await store.thread(thread.id)).title is None
        assert not store._connection.in_transaction
        assert await store.commit(thread.id, Commit(events=[{"n": 2}])) == 2
    assert raw(path, "SELECT seq FROM events ORDER BY seq") == [(1,), (2,)]


async def test_a_cancelled_commit_is_all_or_nothing(tmp_path: Path) -> None:
    async with await open_store(tmp_path / "store.db") as store:
        thread = await store.create_thread(provider="generic", cwd="/w")
        for attempt in range(20):
            with anyio.move_on_after(0):  # cancelled at once: before, or while it runs
                await store.commit(
                    thread.id, Commit(events=[{"n": attempt, "part": p} for p in range(3)])
                )
        events = await store.events(thread.id)
        assert [e.seq for e in events] == list(range(1, len(events) + 1))
        assert len(events) % 3 == 0
        for first in range(0, len(events), 3):
            assert {e.entry["n"] for e in events[first : first + 3]} == {events[first].entry["n"]}


async def test_two_stores_writing_one_file_take_turns(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    async with await open_store(path) as first, await open_store(path) as second:
        thread = await first.create_thread(provider="generic", cwd="/w")

        async def write(store: Store, writer: str) -> None:
            for number in range(30):
                await store.commit(
                    thread.id,
                    Commit(events=[{"writer": writer, "n": number, "part": p} for p in (0, 1)]),
                )

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(write, first, "a")
            tasks.start_soon(write, second, "b")
        events = await second.events(thread.id)
    assert [e.seq for e in events] == list(range(1, 121))
    for first_part in range(0, 120, 2):  # each commit's two events together
        pair = events[first_part : first_part + 2]
        assert pair[0].entry["writer"] == pair[1].entry["writer"]
        assert [e.entry["part"] for e in pair] == [0, 1]
    for writer in "ab":
        assert [e.entry["n"] for e in events if e.entry["writer"] == writer][::2] == list(range(30))


async def test_deleting_a_thread_leaves_no_row_of_it(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    async with await open_store(path) as store:
        thread = await store.create_thread(provider="generic", cwd="/w", name="n")
        await store.commit(
            thread.id,
            Commit(
                events=[{"n": 1}], items=[{"id": "a", "ordinal": 1}], turns=[Turn(thread.id, 1)]
            ),
        )
        await store.queue_prompt(thread.id, [{"type": "text", "text": "x"}])
        await store.delete_thread(thread.id)
    for table in ("threads", "turns", "events", "items", "queue"):
        assert raw(path, f"SELECT COUNT(*) FROM {table}") == [(0,)], table


async def test_an_unknown_thread_field_is_refused(tmp_path: Path) -> None:
    async with await open_store(tmp_path / "store.db") as store:
        thread = await store.create_thread(provider="generic", cwd="/w")
        with pytest.raises(StoreError, match="no field 'colour'"):
            await store.update_thread(thread.id, colour="red")
        with pytest.raises(StoreError, match="no field 'colour'"):
            await store.commit(thread.id, Commit(events=[{"n": 1}], thread={"colour": "red"}))
        assert await store.events(thread.id) == []


# --- paths that cannot be stores -----------------------------------------------------------


async def test_a_path_in_a_missing_folder_is_refused_with_its_path(tmp_path: Path) -> None:
    path = tmp_path / "nowhere" / "store.db"
    with pytest.raises(StoreError) as raised:
        await open_store(path)
    assert str(path) in str(raised.value)
    assert "does not exist" in str(raised.value)
    assert not path.parent.exists()


async def test_a_path_beneath_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    path = tmp_path / "file" / "store.db"
    with pytest.raises(StoreError, match="is not a folder") as raised:
        await open_store(path)
    assert str(path) in str(raised.value)


async def test_a_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="it is a folder"):
        await open_store(tmp_path)


async def test_a_file_that_is_not_a_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    path.write_bytes(b"this is not SQLite, " * 100)
    with pytest.raises(StoreError) as raised:
        await open_store(path)
    assert str(path) in str(raised.value)
    assert "not a database" in str(raised.value)


async def test_a_database_that_is_not_a_store_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE notes (text TEXT)")
    connection.commit()
    connection.close()
    with pytest.raises(StoreError, match="not a store"):
        await open_store(path)
    assert raw(path, "SELECT name FROM sqlite_master") == [("notes",)]  # untouched


@pytest.mark.skipif(sys.platform == "win32" or os.geteuid() == 0, reason="root writes any folder")
async def test_a_read_only_folder_is_refused_with_the_reason(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        with pytest.raises(StoreError) as raised:
            await open_store(folder / "store.db")
    finally:
        folder.chmod(0o700)
    assert str(folder / "store.db") in str(raised.value)
    assert "not writable" in str(raised.value)


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="Linux's /proc")
async def test_a_folder_nobody_may_write_is_refused_with_the_reason() -> None:
    # /proc takes no new file, even from root.
    with pytest.raises(StoreError) as raised:
        await open_store("/proc/acp-adapters-store.db")
    assert "/proc/acp-adapters-store.db" in str(raised.value)
    assert "unable to open" in str(raised.value)


async def test_a_write_refused_later_is_a_store_error(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    async with await open_store(path) as store:
        thread = await store.create_thread(provider="generic", cwd="/w")
        store._connection.execute("PRAGMA query_only = ON")  # as a read-only file would
        with pytest.raises(StoreError) as raised:
            await store.commit(thread.id, Commit(events=[{"n": 1}]))
        assert str(path) in str(raised.value)
        store._connection.execute("PRAGMA query_only = OFF")
        assert await store.commit(thread.id, Commit(events=[{"n": 1}])) == 1


# --- where the store is --------------------------------------------------------------------


async def test_the_default_store_is_in_the_users_data_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(STORE_ENV, raising=False)
    assert default_store_path().name == "store.db"
    assert default_store_path().parent.name == "acp-adapters"
    assert default_store() == str(default_store_path())
    target = tmp_path / "data" / "acp-adapters" / "store.db"
    monkeypatch.setattr(open_module, "default_store_path", lambda: target)
    async with await open_store() as store:
        assert store.location == str(target)  # its folder made on first use
    assert target.is_file()
    async with await open_store(default_store()) as store:  # named, it is the same
        assert store.location == str(target)


async def test_the_environment_names_the_default_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "chosen.db"
    monkeypatch.setenv(STORE_ENV, str(target))
    assert default_store() == str(target)
    async with await open_store() as store:
        assert store.location == str(target)
    assert target.is_file()
    # A path given wins over the environment.
    async with await open_store(tmp_path / "given.db") as store:
        assert store.location == str(tmp_path / "given.db")


@pytest.mark.parametrize("scheme", ["postgresql", "postgres"])
async def test_a_postgresql_url_opens_the_postgresql_store(
    scheme: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[str] = []

    class FakeStore:
        @classmethod
        async def open(cls, url: str, *, create: bool = True) -> str:
            opened.append(url)
            return "opened"

    fake = types.ModuleType("acp_adapters.store.postgres")
    fake.PostgresStore = FakeStore  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "acp_adapters.store.postgres", fake)
    url = f"{scheme}://user@127.0.0.1:5432/db"
    assert await open_store(url) == "opened"  # type: ignore[comparison-overlap]
    monkeypatch.setenv(STORE_ENV, url)
    assert await open_store() == "opened"  # type: ignore[comparison-overlap]
    assert opened == [url, url]


async def test_connections_that_open_a_new_store_together_all_open_it(tmp_path: Path) -> None:
    # Two `run -s NAME` started together both make the store: the connection that comes
    # second while the first makes the file waits for it, rather than failing ("database
    # is locked", or a store half made).
    for round_number in range(60):
        path = tmp_path / f"new-{round_number}.db"
        opened: list[SqliteStore] = []

        async def open_one(path: Path = path, opened: list[SqliteStore] = opened) -> None:
            opened.append(await SqliteStore.open(path))

        async with anyio.create_task_group() as group:
            for _ in range(4):
                group.start_soon(open_one)
        for store in opened:
            assert store.schema_version == SCHEMA_VERSION
            await store.close()
