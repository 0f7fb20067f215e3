"""The PostgreSQL store against a real server (``postgres_server``): what the contract suite
cannot say of one process — several writers of one thread, a follower in another instance,
the server going away and coming back, migrations opened at once, a newer schema refused."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator, Iterator
from contextlib import aclosing
from typing import Any

import anyio
import pytest

from acp_adapters.store import SCHEMA_VERSION, Commit, StoredEvent, StoreError, ThreadNotFound, Turn
from acp_adapters.store.schema import MIGRATIONS

from .postgres_server import PostgresServer, running_server

psycopg = pytest.importorskip("psycopg")
from acp_adapters.store.postgres import PostgresStore, redact  # noqa: E402

pytestmark = pytest.mark.anyio


@pytest.fixture
def database(postgres_server: PostgresServer) -> str:
    """A new empty database on the test session's server."""
    return postgres_server.create_database()


@pytest.fixture
async def store(database: str) -> AsyncIterator[PostgresStore]:
    async with await PostgresStore.open(database) as opened:
        assert isinstance(opened, PostgresStore)
        yield opened


@pytest.fixture
def own_server() -> Iterator[PostgresServer]:
    """A server of this test's own, which it may stop and start."""
    with running_server() as server:
        yield server


def _entries(events: list[StoredEvent]) -> list[dict[str, Any]]:
    return [event.entry for event in events]


# --- the URL -------------------------------------------------------------------------------


def test_redact_drops_the_password() -> None:
    assert (
        redact("postgresql://me:s3cret@db.example:5432/app")
        == "postgresql://me@db.example:5432/app"
    )
    assert redact("postgresql://me@h/app?password=s3cret&sslmode=require") == (
        "postgresql://me@h/app?sslmode=require"
    )
    assert redact("postgresql://h/app") == "postgresql://h/app"


async def test_connection_refused_names_the_url_without_its_password() -> None:
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"postgresql://me:hunter2@127.0.0.1:{port}/app"
    with pytest.raises(StoreError) as raised:
        await PostgresStore.open(url)
    message = str(raised.value)
    assert f"postgresql://me@127.0.0.1:{port}/app" in message
    assert "hunter2" not in message
    assert "refused" in message.lower()


async def test_login_refused_is_a_store_error(postgres_server: PostgresServer) -> None:
    url = f"postgresql://nobody_here:hunter2@127.0.0.1:{postgres_server.port}/postgres"
    with pytest.raises(StoreError) as raised:
        await PostgresStore.open(url)
    assert "nobody_here@127.0.0.1" in str(raised.value)
    assert "hunter2" not in str(raised.value)


# --- several writers -----------------------------------------------------------------------


async def test_two_instances_writing_one_thread_number_events_without_gap(database: str) -> None:
    first = await PostgresStore.open(database)
    second = await PostgresStore.open(database)
    try:
        thread = await first.create_thread(provider="fake", cwd="/tmp")
        returned: list[int] = []

        async def write(store: PostgresStore, writer: str) -> None:
            for number in range(40):
                events = [{"writer": writer, "n": number, "part": part} for part in range(3)]
                returned.append(await store.commit(thread.id, Commit(events=events)))

        # Each instance's commits run on its own connection, in a worker thread: at once.
        async with anyio.create_task_group() as group:
            group.start_soon(write, first, "a")
            group.start_soon(write, second, "b")
        events = await first.events(thread.id)
    finally:
        await first.close()
        await second.close()
    assert [event.seq for event in events] == list(range(1, 241))
    assert sorted(returned) == list(range(3, 241, 3))
    # Each commit's events are together, in order; each writer's commits in its order.
    for start in range(0, 240, 3):
        chunk = [event.entry for event in events[start : start + 3]]
        assert [entry["part"] for entry in chunk] == [0, 1, 2]
        assert len({(entry["writer"], entry["n"]) for entry in chunk}) == 1
    for writer in "ab":
        mine = [
            e.entry["n"] for e in events if e.entry["writer"] == writer and e.entry["part"] == 0
        ]
        assert mine == list(range(40))


WRITER = textwrap.dedent(
    """
    import sys, anyio
    from acp_adapters.store import Commit, open_store

    async def main(url, thread_id, writer, count):
        async with await open_store(url) as store:
            for number in range(count):
                events = [{"writer": writer, "n": number, "part": part} for part in range(2)]
                await store.commit(thread_id, Commit(events=events))

    anyio.run(main, sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]))
    """
)


def test_two_processes_writing_one_thread_number_events_without_gap(database: str) -> None:
    async def create() -> str:
        async with await PostgresStore.open(database) as store:
            return (await store.create_thread(provider="fake", cwd="/tmp")).id

    thread_id = anyio.run(create)
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, database, thread_id, name, "60"])
        for name in ("a", "b", "c")
    ]
    assert [writer.wait(timeout=100) for writer in writers] == [0, 0, 0]

    async def read() -> list[StoredEvent]:
        async with await PostgresStore.open(database) as store:
            return await store.events(thread_id)

    events = anyio.run(read)
    assert [event.seq for event in events] == list(range(1, 361))
    for start in range(0, 360, 2):
        first, second = events[start].entry, events[start + 1].entry
        assert (first["part"], second["part"]) == (0, 1)
        assert (first["writer"], first["n"]) == (second["writer"], second["n"])
    for name in "abc":
        mine = [e.entry["n"] for e in events if e.entry["writer"] == name and e.entry["part"] == 0]
        assert mine == list(range(60))


# --- following -----------------------------------------------------------------------------


async def test_follow_sees_the_commits_of_another_instance(database: str) -> None:
    writer = await PostgresStore.open(database)
    reader = await PostgresStore.open(database)
    try:
        thread = await writer.create_thread(provider="fake", cwd="/tmp")
        await writer.commit(thread.id, Commit(events=[{"n": 1}, {"n": 2}]))
        seen: list[StoredEvent] = []
        caught_up = anyio.Event()

        async def follow() -> None:
            async with aclosing(reader.follow(thread.id, after=1)) as events:
                async for event in events:
                    seen.append(event)
                    if event.seq == 2:
                        caught_up.set()  # what was there before; the rest comes by NOTIFY
                    if event.seq == 5:
                        return

        async with anyio.create_task_group() as group:
            group.start_soon(follow)
            await caught_up.wait()
            other = await writer.create_thread(provider="fake", cwd="/tmp")
            await writer.commit(other.id, Commit(events=[{"other": True}]))
            await writer.commit(thread.id, Commit(events=[{"n": 3}]))
            await writer.commit(thread.id, Commit(events=[{"n": 4}, {"n": 5}]))
    finally:
        await writer.close()
        await reader.close()
    assert [(event.seq, event.entry) for event in seen] == [
        (2, {"n": 2}),
        (3, {"n": 3}),
        (4, {"n": 4}),
        (5, {"n": 5}),
    ]


async def test_several_followers_of_one_store(database: str) -> None:
    async with (
        await PostgresStore.open(database) as store,
        await PostgresStore.open(database) as writer,
    ):
        threads = [await writer.create_thread(provider="fake", cwd="/tmp") for _ in range(3)]
        seen: dict[str, list[int]] = {thread.id: [] for thread in threads}
        ready = [anyio.Event() for _ in threads]

        async def follow(number: int, thread_id: str) -> None:
            async with aclosing(store.follow(thread_id)) as events:
                async for event in events:
                    seen[thread_id].append(event.seq)
                    if event.seq == 1:
                        ready[number].set()
                    if event.seq == 3:
                        return

        async with anyio.create_task_group() as group:
            for number, thread in enumerate(threads):
                await writer.commit(thread.id, Commit(events=[{"n": 1}]))
                group.start_soon(follow, number, thread.id)
            for event in ready:
                await event.wait()
            for thread in reversed(threads):
                await writer.commit(thread.id, Commit(events=[{"n": 2}]))
            for thread in threads:
                await writer.commit(thread.id, Commit(events=[{"n": 3}]))
    assert seen == {thread.id: [1, 2, 3] for thread in threads}


async def test_a_deleted_thread_ends_its_follower(database: str) -> None:
    async with (
        await PostgresStore.open(database) as store,
        await PostgresStore.open(database) as other,
    ):
        thread = await store.create_thread(provider="fake", cwd="/tmp")
        await store.commit(thread.id, Commit(events=[{"n": 1}]))
        first = anyio.Event()
        ended: list[BaseException] = []

        async def follow() -> None:
            try:
                async for _ in store.follow(thread.id):
                    first.set()
            except ThreadNotFound as exc:
                ended.append(exc)

        async with anyio.create_task_group() as group:
            group.start_soon(follow)
            await first.wait()
            await other.delete_thread(thread.id)
        assert len(ended) == 1


# --- the server goes away ------------------------------------------------------------------


async def test_the_server_going_away_and_coming_back(own_server: PostgresServer) -> None:
    url = own_server.url.replace("acp@", "acp:hunter2@")  # trust: the password is not asked
    store = await PostgresStore.open(url)
    try:
        thread = await store.create_thread(provider="fake", cwd="/tmp", name="kept")
        item = {"id": "i1", "ordinal": 0, "kind": "text", "text": "hello"}
        assert (
            await store.commit(
                thread.id,
                Commit(events=[{"n": 1}, {"n": 2}], items=[item], turns=[Turn(thread.id, 0)]),
            )
            == 2
        )
        own_server.stop("fast")
        with pytest.raises(StoreError) as raised:
            await store.commit(thread.id, Commit(events=[{"n": "lost"}]))
        assert store.location in str(raised.value)
        assert "hunter2" not in str(raised.value)
        with pytest.raises(StoreError):
            await store.events(thread.id)
        own_server.start()
        assert await store.commit(thread.id, Commit(events=[{"n": 3}])) == 3
        assert _entries(await store.events(thread.id)) == [{"n": 1}, {"n": 2}, {"n": 3}]
        assert await store.items(thread.id) == [item]
        assert [turn.index for turn in await store.turns(thread.id)] == [0]
        assert (await store.thread_named("kept")) is not None
        # Gone and back while the store was idle: the first call finds its connection gone
        # before its transaction committed, and runs again on a new one.
        own_server.stop("fast")
        own_server.start()
        assert await store.commit(thread.id, Commit(events=[{"n": 4}])) == 4
    finally:
        await store.close()
    async with await PostgresStore.open(url) as again:
        assert [event.seq for event in await again.events(thread.id)] == [1, 2, 3, 4]


async def test_a_follower_fails_when_the_server_goes_away(own_server: PostgresServer) -> None:
    async with await PostgresStore.open(own_server.url) as store:
        thread = await store.create_thread(provider="fake", cwd="/tmp")
        await store.commit(thread.id, Commit(events=[{"n": 1}]))
        seen: list[int] = []
        listening = anyio.Event()
        failed: list[StoreError] = []

        async def follow() -> None:
            try:
                async for event in store.follow(thread.id):
                    seen.append(event.seq)
                    listening.set()
            except StoreError as exc:
                failed.append(exc)

        async with anyio.create_task_group() as group:
            group.start_soon(follow)
            await listening.wait()
            own_server.stop("fast")
        assert len(failed) == 1
        assert store.location in str(failed[0])
        assert seen == [1]
        own_server.start()
        # Followed again from what it saw: what was committed meanwhile comes first.
        await store.commit(thread.id, Commit(events=[{"n": 2}]))
        async with aclosing(store.follow(thread.id, after=1)) as events:
            async for event in events:
                assert event.seq == 2
                break


# --- migrations ----------------------------------------------------------------------------


async def test_opened_at_once_by_several_the_schema_is_created_once(database: str) -> None:
    stores: list[PostgresStore] = []

    async def open_one() -> None:
        stores.append(await PostgresStore.open(database))

    async with anyio.create_task_group() as group:
        for _ in range(6):
            group.start_soon(open_one)  # each in a worker thread, on its own connection
    try:
        assert [store.schema_version for store in stores] == [SCHEMA_VERSION] * 6
        thread = await stores[0].create_thread(provider="fake", cwd="/tmp")
        assert (await stores[5].thread(thread.id)).id == thread.id
    finally:
        for store in stores:
            await store.close()
    with psycopg.connect(database) as connection:
        rows = connection.execute("SELECT key, value FROM meta").fetchall()
    assert rows == [("schema_version", str(SCHEMA_VERSION))]


async def test_processes_opening_at_once(database: str) -> None:
    script = "import sys, anyio\nfrom acp_adapters.store import open_store\n" + (
        "async def main():\n    async with await open_store(sys.argv[1]) as s:\n"
        "        print(s.schema_version)\nanyio.run(main)\n"
    )
    results = []
    async with anyio.create_task_group() as group:

        async def run() -> None:
            done = await anyio.run_process([sys.executable, "-c", script, database], check=False)
            results.append((done.returncode, done.stdout.decode().strip(), done.stderr.decode()))

        for _ in range(4):
            group.start_soon(run)
    assert results == [(0, str(SCHEMA_VERSION), "")] * 4


async def test_a_newer_schema_is_refused(database: str) -> None:
    async with await PostgresStore.open(database):
        pass
    with psycopg.connect(database, autocommit=True) as connection:
        connection.execute(
            "UPDATE meta SET value = %s WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),)
        )
    with pytest.raises(StoreError) as raised:
        await PostgresStore.open(database)
    assert "newer" in str(raised.value)
    assert redact(database) in str(raised.value)


async def test_an_older_store_is_migrated(database: str) -> None:
    with psycopg.connect(database, autocommit=True) as connection:
        for statement in MIGRATIONS[0]:
            connection.execute(statement)
        connection.execute(
            "INSERT INTO threads (id, name, provider, cwd, folders, created_at, updated_at) "
            "VALUES ('old', 'old-name', 'fake', '/tmp', '[\"/x\"]', 1.0, 2.0)"
        )
        connection.execute("INSERT INTO events VALUES ('old', 1, '{\"n\": 1}')")
    async with await PostgresStore.open(database) as store:
        assert store.schema_version == SCHEMA_VERSION
        thread = await store.thread("old")
        assert (thread.name, thread.folders, thread.command) == ("old-name", ("/x",), None)
        assert await store.commit("old", Commit(events=[{"n": 2}])) == 2
        assert await store.queue_prompt("old", [{"type": "text", "text": "later"}]) == 1


async def test_a_database_that_is_not_a_store_is_refused(database: str) -> None:
    with psycopg.connect(database, autocommit=True) as connection:
        connection.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    with pytest.raises(StoreError, match="no version"):
        await PostgresStore.open(database)


# --- what PostgreSQL's text cannot hold ----------------------------------------------------

ODD = "a\ud800b\u0000c\udfff\u2028\U0001f600\\\"'"


async def test_lone_surrogates_and_nul_round_trip(store: PostgresStore) -> None:
    thread = await store.create_thread(provider="fake", cwd="/tmp")
    entry = {"dir": "in", "t": 1.5, "msg": {"text": ODD, ODD: [ODD, "\u0000"]}}
    item = {"id": "i1", "ordinal": 3, "text": ODD}
    await store.commit(thread.id, Commit(events=[entry], items=[item]))
    await store.queue_prompt(thread.id, [{"type": "text", "text": ODD}])
    (event,) = await store.events(thread.id)
    assert event.entry == entry
    assert json.dumps(event.entry) == json.dumps(entry)
    assert await store.items(thread.id) == [item]
    (queued,) = await store.queued_prompts(thread.id)
    assert queued.prompt == [{"type": "text", "text": ODD}]


async def test_text_columns_refuse_what_postgresql_cannot_hold(store: PostgresStore) -> None:
    thread = await store.create_thread(provider="fake", cwd="/tmp")
    for title in ("nul\u0000", "surrogate\ud800"):
        with pytest.raises(StoreError):
            await store.update_thread(thread.id, title=title)
        with pytest.raises(StoreError):
            await store.commit(thread.id, Commit(events=[{"n": 1}], thread={"title": title}))
    assert await store.events(thread.id) == []
    assert (await store.thread(thread.id)).title is None


async def test_a_commit_is_whole_or_not_at_all(store: PostgresStore) -> None:
    thread = await store.create_thread(provider="fake", cwd="/tmp", name="one")
    await store.create_thread(provider="fake", cwd="/tmp", name="two")
    await store.commit(thread.id, Commit(events=[{"n": 1}]))
    with pytest.raises(StoreError, match="named"):
        # The rename fails in the transaction, after its events were inserted.
        await store.commit(
            thread.id,
            Commit(events=[{"n": 2}], items=[{"id": "x", "ordinal": 0}], thread={"name": "two"}),
        )
    assert _entries(await store.events(thread.id)) == [{"n": 1}]
    assert await store.items(thread.id) == []
    assert await store.commit(thread.id, Commit(events=[{"n": 2}])) == 2


async def test_closing_the_store_ends_its_followers(database: str) -> None:
    store = await PostgresStore.open(database)
    thread = await store.create_thread(provider="fake", cwd="/tmp")
    await store.commit(thread.id, Commit(events=[{"n": 1}]))
    waiting = anyio.Event()
    ended: list[StoreError] = []

    async def follow() -> None:
        try:
            async with aclosing(store.follow(thread.id)) as events:
                async for _ in events:
                    waiting.set()
        except StoreError as exc:
            ended.append(exc)

    async with anyio.create_task_group() as group:
        group.start_soon(follow)
        group.start_soon(follow)
        await waiting.wait()
        await store.close()
    assert len(ended) == 2
    assert all("closed" in str(exc) for exc in ended)
