"""The store contract: what every backend does, run against each (``store``: SQLite, and
PostgreSQL when a server can be had).

The PostgreSQL database is shared by the tests of a run: a test keeps to the threads it made
(names are made unique per test), and never expects the store to be empty.
"""

from __future__ import annotations

import math
import uuid
from contextlib import aclosing
from typing import Any

import anyio
import pytest

from acp_adapters.store import (
    SCHEMA_VERSION,
    Commit,
    Store,
    StoredEvent,
    StoreError,
    Thread,
    ThreadNotFound,
    Turn,
    open_store,
)

pytestmark = pytest.mark.anyio

#: What JSON keeps that a careless store would not: other than ASCII, a NUL, a lone surrogate,
#: the line breaks a JSON line must escape.
ODD_TEXT = "é ✓ \x00 \ud800 \udfff \u2028 \u0085 𝄞"


def unique(word: str) -> str:
    return f"{word}-{uuid.uuid4().hex[:12]}"


def event(number: int, **extra: Any) -> dict[str, Any]:
    return {
        "dir": "agent->client",
        "t": float(number),
        "msg": {"jsonrpc": "2.0", "method": "session/update", "params": {"n": number, **extra}},
    }


def item(item_id: str, ordinal: int, text: str = "") -> dict[str, Any]:
    return {"id": item_id, "ordinal": ordinal, "kind": "assistant_message", "text": text}


async def new_thread(store: Store, **fields: Any) -> Thread:
    fields.setdefault("provider", "generic")
    fields.setdefault("cwd", "/work/project")
    return await store.create_thread(**fields)


# --- threads -----------------------------------------------------------------------------


async def test_a_thread_is_created_with_its_fields_and_read_back(store: Store) -> None:
    name = unique("named")
    made = await store.create_thread(
        provider="claude",
        cwd="/work/é",
        name=name,
        folders=["/work/a", "/work/b"],
        agent_session_id="sess-1",
        title="A title",
        command=["claude-agent-acp", "--flag"],
    )
    assert made.id
    assert (made.provider, made.cwd, made.name) == ("claude", "/work/é", name)
    assert made.folders == ("/work/a", "/work/b")
    assert made.agent_session_id == "sess-1"
    assert made.title == "A title"
    assert made.command == ("claude-agent-acp", "--flag")
    assert made.created_at > 0
    assert made.updated_at == made.created_at
    assert await store.thread(made.id) == made
    assert await store.thread_named(name) == made
    assert made in await store.threads()


async def test_a_thread_has_no_command_nor_name_unless_given(store: Store) -> None:
    made = await new_thread(store)
    assert (made.name, made.command, made.agent_session_id, made.title) == (None, None, None, None)
    assert made.folders == ()
    assert await store.thread(made.id) == made


async def test_two_threads_without_a_name_are_two_threads(store: Store) -> None:
    first, second = await new_thread(store), await new_thread(store)
    assert first.id != second.id
    assert {first.id, second.id} <= {thread.id for thread in await store.threads()}


async def test_an_unknown_thread_is_not_found(store: Store) -> None:
    missing = uuid.uuid4().hex
    with pytest.raises(ThreadNotFound):
        await store.thread(missing)
    with pytest.raises(ThreadNotFound):
        await store.update_thread(missing, title="x")
    with pytest.raises(ThreadNotFound):
        await store.delete_thread(missing)
    with pytest.raises(ThreadNotFound):
        await store.commit(missing, Commit(events=[event(1)]))
    for read in (store.events, store.items, store.turns, store.queued_prompts):
        with pytest.raises(ThreadNotFound):
            await read(missing)
    with pytest.raises(ThreadNotFound):
        await store.queue_prompt(missing, [{"type": "text", "text": "hi"}])
    assert await store.thread_named(unique("nobody")) is None
    assert issubclass(ThreadNotFound, StoreError)


async def test_the_threads_come_most_recently_updated_first(store: Store) -> None:
    first = await new_thread(store)
    second = await new_thread(store)
    third = await new_thread(store)

    def order(threads: list[Thread]) -> list[str]:
        ours = {first.id, second.id, third.id}
        return [thread.id for thread in threads if thread.id in ours]

    assert order(await store.threads()) == [third.id, second.id, first.id]
    await store.commit(first.id, Commit(events=[event(1)]))
    assert order(await store.threads()) == [first.id, third.id, second.id]
    await store.update_thread(second.id, title="renamed")
    assert order(await store.threads()) == [second.id, first.id, third.id]


async def test_a_thread_is_updated_and_its_updated_at_moves(store: Store) -> None:
    made = await new_thread(store, title="before")
    name = unique("after")
    updated = await store.update_thread(
        made.id,
        name=name,
        agent_session_id="sess-2",
        title="after",
        folders=["/work/other"],
    )
    assert (updated.name, updated.agent_session_id, updated.title) == (name, "sess-2", "after")
    assert updated.folders == ("/work/other",)
    assert (updated.provider, updated.cwd, updated.created_at) == (
        made.provider,
        made.cwd,
        made.created_at,
    )
    assert updated.updated_at > made.updated_at
    assert await store.thread(made.id) == updated
    cleared = await store.update_thread(made.id, title=None, name=None)
    assert (cleared.title, cleared.name) == (None, None)
    assert await store.thread_named(name) is None


async def test_names_are_unique(store: Store) -> None:
    name = unique("taken")
    first = await new_thread(store, name=name)
    with pytest.raises(StoreError):
        await new_thread(store, name=name)
    other = await new_thread(store, name=unique("other"))
    with pytest.raises(StoreError):
        await store.update_thread(other.id, name=name)
    assert (await store.thread(other.id)).name == other.name
    assert await store.thread_named(name) == first
    # A name given up is free again.
    await store.update_thread(first.id, name=unique("moved"))
    again = await new_thread(store, name=name)
    assert await store.thread_named(name) == again


async def test_deleting_a_thread_removes_everything_of_it(store: Store) -> None:
    kept = await new_thread(store, name=unique("kept"))
    name = unique("gone")
    gone = await new_thread(store, name=name)
    for thread in (kept, gone):
        await store.commit(
            thread.id,
            Commit(
                events=[event(1), event(2)],
                items=[item("a", 1, "x")],
                turns=[Turn(thread.id, 1, status="completed")],
            ),
        )
        await store.queue_prompt(thread.id, [{"type": "text", "text": "later"}])
    await store.delete_thread(gone.id)
    with pytest.raises(ThreadNotFound):
        await store.thread(gone.id)
    assert gone.id not in {thread.id for thread in await store.threads()}
    assert await store.thread_named(name) is None
    for read in (store.events, store.items, store.turns, store.queued_prompts):
        with pytest.raises(ThreadNotFound):
            await read(gone.id)
    # The other thread keeps all of its own.
    assert len(await store.events(kept.id)) == 2
    assert len(await store.items(kept.id)) == 1
    assert len(await store.turns(kept.id)) == 1
    assert len(await store.queued_prompts(kept.id)) == 1
    # The name is free, and a thread made with it starts empty.
    again = await new_thread(store, name=name)
    assert await store.events(again.id) == []
    assert await store.items(again.id) == []
    assert await store.commit(again.id, Commit(events=[event(1)])) == 1


# --- commits -----------------------------------------------------------------------------


async def test_events_are_kept_in_order_with_seq_from_one_and_no_gaps(store: Store) -> None:
    thread = await new_thread(store)
    assert await store.events(thread.id) == []
    assert await store.commit(thread.id, Commit(events=[event(1), event(2), event(3)])) == 3
    assert await store.commit(thread.id, Commit(events=[event(4)])) == 4
    assert await store.commit(thread.id, Commit()) == 4  # nothing new: the last seq still
    assert await store.commit(thread.id, Commit(events=[event(5), event(6)])) == 6
    events = await store.events(thread.id)
    assert [stored.seq for stored in events] == [1, 2, 3, 4, 5, 6]
    assert [stored.entry for stored in events] == [event(n) for n in range(1, 7)]
    assert all(isinstance(e, StoredEvent) and e.thread_id == thread.id for e in events)
    assert [stored.seq for stored in await store.events(thread.id, after=4)] == [5, 6]
    assert await store.events(thread.id, after=6) == []


async def test_each_thread_counts_its_own_seq(store: Store) -> None:
    first, second = await new_thread(store), await new_thread(store)
    await store.commit(first.id, Commit(events=[event(1), event(2)]))
    assert await store.commit(second.id, Commit(events=[event(1)])) == 1
    assert await store.commit(first.id, Commit(events=[event(3)])) == 3
    assert [e.seq for e in await store.events(second.id)] == [1]


async def test_what_json_holds_is_kept_exactly(store: Store) -> None:
    # A thread's own fields are plain text columns: other than ASCII, but no NUL nor lone
    # surrogate (PostgreSQL's text holds neither).
    thread = await new_thread(store, title="é ✓ 𝄞 \u2028", cwd="/work/é ✓")
    entry = {
        "dir": "agent->client",
        "t": 1.5,
        "msg": {"text": ODD_TEXT, ODD_TEXT: [1, -2.5, None, True, {"deep": [[[]]]}]},
    }
    stored_item = {**item("odd", 1, ODD_TEXT), "nested": {"big": 2**62, "small": -(2**62)}}
    await store.commit(thread.id, Commit(events=[entry], items=[stored_item]))
    position = await store.queue_prompt(thread.id, [{"type": "text", "text": ODD_TEXT}])
    assert (await store.events(thread.id))[0].entry == entry
    assert await store.items(thread.id) == [stored_item]
    assert (await store.queued_prompts(thread.id))[0].prompt == [{"type": "text", "text": ODD_TEXT}]
    assert (await store.queued_prompts(thread.id))[0].position == position
    assert (await store.thread(thread.id)).title == "é ✓ 𝄞 \u2028"
    assert (await store.thread(thread.id)).cwd == "/work/é ✓"


async def test_items_are_upserted_and_come_in_ordinal_order(store: Store) -> None:
    thread = await new_thread(store)
    await store.commit(thread.id, Commit(events=[event(1)], items=[item("b", 2, "two")]))
    await store.commit(
        thread.id, Commit(events=[event(2)], items=[item("c", 3, "three"), item("a", 1, "one")])
    )
    assert [i["id"] for i in await store.items(thread.id)] == ["a", "b", "c"]
    # The same id again: the item is replaced, not added.
    await store.commit(thread.id, Commit(events=[event(3)], items=[item("b", 2, "two, grown")]))
    items = await store.items(thread.id)
    assert items == [item("a", 1, "one"), item("b", 2, "two, grown"), item("c", 3, "three")]
    # Items of another thread are its own, the same ids notwithstanding.
    other = await new_thread(store)
    await store.commit(other.id, Commit(items=[item("b", 1, "elsewhere")]))
    assert await store.items(other.id) == [item("b", 1, "elsewhere")]
    assert (await store.items(thread.id))[1]["text"] == "two, grown"


async def test_the_last_of_one_item_in_a_commit_is_kept(store: Store) -> None:
    thread = await new_thread(store)
    await store.commit(thread.id, Commit(items=[item("a", 1, "first"), item("a", 1, "last")]))
    assert await store.items(thread.id) == [item("a", 1, "last")]


async def test_turns_are_upserted_by_index_and_come_in_order(store: Store) -> None:
    thread = await new_thread(store)
    await store.commit(thread.id, Commit(turns=[Turn(thread.id, 1, started_at=10.0)]))
    await store.commit(
        thread.id,
        Commit(
            turns=[
                Turn(thread.id, 2, started_at=30.0),
                Turn(
                    thread.id,
                    1,
                    status="completed",
                    stop_reason="end_turn",
                    started_at=10.0,
                    ended_at=20.0,
                ),
            ]
        ),
    )
    await store.commit(
        thread.id,
        Commit(
            turns=[
                Turn(
                    thread.id,
                    2,
                    status="failed",
                    error="the agent exited (code 1)",
                    started_at=30.0,
                    ended_at=31.5,
                )
            ]
        ),
    )
    assert await store.turns(thread.id) == [
        Turn(thread.id, 1, "completed", "end_turn", None, 10.0, 20.0),
        Turn(thread.id, 2, "failed", None, "the agent exited (code 1)", 30.0, 31.5),
    ]


async def test_a_commit_changes_the_threads_fields_and_moves_updated_at(store: Store) -> None:
    thread = await new_thread(store)
    await store.commit(
        thread.id, Commit(events=[event(1)], thread={"agent_session_id": "s-1", "title": "T"})
    )
    after = await store.thread(thread.id)
    assert (after.agent_session_id, after.title) == ("s-1", "T")
    assert after.updated_at > thread.updated_at
    await store.commit(thread.id, Commit(events=[event(2)]))
    assert (await store.thread(thread.id)).updated_at > after.updated_at


async def test_a_commit_of_something_json_cannot_hold_leaves_nothing(store: Store) -> None:
    thread = await new_thread(store, title="before")
    await store.commit(thread.id, Commit(events=[event(1)], items=[item("a", 1, "kept")]))
    for bad in ({"not json": object()}, {"nan": math.nan}, {"inf": math.inf}):
        with pytest.raises(StoreError):
            await store.commit(
                thread.id,
                Commit(
                    events=[event(2), event(3)],
                    items=[item("a", 1, "changed"), {**item("b", 2), **bad}],
                    turns=[Turn(thread.id, 1)],
                    thread={"title": "after"},
                ),
            )
        with pytest.raises(StoreError):
            await store.commit(thread.id, Commit(events=[event(2), {**event(3), **bad}]))
    assert [e.seq for e in await store.events(thread.id)] == [1]
    assert await store.items(thread.id) == [item("a", 1, "kept")]
    assert await store.turns(thread.id) == []
    assert (await store.thread(thread.id)).title == "before"
    assert await store.commit(thread.id, Commit(events=[event(2)])) == 2


async def test_a_commit_that_fails_in_its_transaction_leaves_nothing(store: Store) -> None:
    # The thread's new name is taken: the database refuses it at the commit's last write,
    # after its events, items and turns were written in the transaction.
    taken = unique("taken")
    await new_thread(store, name=taken)
    thread = await new_thread(store, title="before")
    await store.commit(thread.id, Commit(events=[event(1)], items=[item("a", 1, "kept")]))
    before = await store.thread(thread.id)
    with pytest.raises(StoreError):
        await store.commit(
            thread.id,
            Commit(
                events=[event(2), event(3)],
                items=[item("a", 1, "changed"), item("b", 2, "new")],
                turns=[Turn(thread.id, 1)],
                thread={"name": taken, "title": "after"},
            ),
        )
    assert [e.seq for e in await store.events(thread.id)] == [1]
    assert await store.items(thread.id) == [item("a", 1, "kept")]
    assert await store.turns(thread.id) == []
    assert await store.thread(thread.id) == before
    # What comes next has the seq the failed commit would have had: no gap.
    assert await store.commit(thread.id, Commit(events=[event(2)])) == 2
    assert [e.seq for e in await store.events(thread.id)] == [1, 2]


async def test_an_item_without_an_id_is_refused(store: Store) -> None:
    thread = await new_thread(store)
    with pytest.raises(StoreError):
        await store.commit(thread.id, Commit(events=[event(1)], items=[{"ordinal": 1}]))
    assert await store.events(thread.id) == []


# --- following ---------------------------------------------------------------------------


async def test_follow_sees_what_another_store_commits_after_it_started(
    store: Store, store_target: str
) -> None:
    thread = await new_thread(store)
    await store.commit(thread.id, Commit(events=[event(1), event(2)]))
    seen: list[StoredEvent] = []
    started = anyio.Event()
    got_all = anyio.Event()

    async def follow() -> None:
        async with aclosing(store.follow(thread.id, after=1)) as events:  # type: ignore[type-var]
            started.set()
            async for stored in events:
                seen.append(stored)
                if len(seen) == 4:
                    got_all.set()
                    return

    async with await open_store(store_target) as other, anyio.create_task_group() as tasks:
        tasks.start_soon(follow)
        await started.wait()
        await other.commit(thread.id, Commit(events=[event(3)]))
        await other.commit(thread.id, Commit(events=[event(4), event(5)]))
        # A guard against a hang, not a measure: the follower gets them however long it takes.
        with anyio.fail_after(60):
            await got_all.wait()
    assert [stored.seq for stored in seen] == [2, 3, 4, 5]
    assert [stored.entry for stored in seen] == [event(n) for n in (2, 3, 4, 5)]


async def test_follow_sees_this_stores_commits(store: Store) -> None:
    thread = await new_thread(store)
    seen: list[int] = []

    async def follow() -> None:
        async with aclosing(store.follow(thread.id)) as events:  # type: ignore[type-var]
            async for stored in events:
                seen.append(stored.seq)
                if len(seen) == 3:
                    return

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(follow)
        for number in (1, 2, 3):
            await store.commit(thread.id, Commit(events=[event(number)]))
            await anyio.sleep(0)
        with anyio.fail_after(60):
            while len(seen) < 3:
                await anyio.sleep(0.01)
    assert seen == [1, 2, 3]


# --- the prompt queue --------------------------------------------------------------------


async def test_prompts_are_queued_in_order_and_taken(store: Store) -> None:
    thread = await new_thread(store)
    assert await store.queued_prompts(thread.id) == []
    prompts = [[{"type": "text", "text": word}] for word in ("one", "two", "three")]
    positions = [await store.queue_prompt(thread.id, prompt) for prompt in prompts]
    assert positions == sorted(positions)
    assert len(set(positions)) == 3
    queued = await store.queued_prompts(thread.id)
    assert [q.prompt for q in queued] == prompts
    assert [q.position for q in queued] == positions
    assert all(q.thread_id == thread.id and q.queued_at > 0 for q in queued)
    await store.take_prompt(thread.id, positions[0])
    assert [q.prompt for q in await store.queued_prompts(thread.id)] == prompts[1:]
    later = await store.queue_prompt(thread.id, [{"type": "text", "text": "four"}])
    assert later > positions[-1]
    await store.take_prompt(thread.id, positions[2])
    assert [q.prompt[0]["text"] for q in await store.queued_prompts(thread.id)] == ["two", "four"]
    other = await new_thread(store)
    assert await store.queued_prompts(other.id) == []


async def test_a_queued_prompt_survives_closing_the_store(store_target: str) -> None:
    async with await open_store(store_target) as first:
        thread = await new_thread(first)
        await first.queue_prompt(thread.id, [{"type": "text", "text": "after the restart"}])
        await first.commit(thread.id, Commit(events=[event(1)], items=[item("a", 1, "x")]))
    async with await open_store(store_target) as second:
        assert [q.prompt for q in await second.queued_prompts(thread.id)] == [
            [{"type": "text", "text": "after the restart"}]
        ]
        assert [e.seq for e in await second.events(thread.id)] == [1]
        assert await second.items(thread.id) == [item("a", 1, "x")]
        assert await second.commit(thread.id, Commit(events=[event(2)])) == 2


# --- the store ---------------------------------------------------------------------------


async def test_the_schema_version_is_this_librarys(store: Store, store_target: str) -> None:
    assert store.schema_version == SCHEMA_VERSION
    async with await open_store(store_target) as again:
        assert again.schema_version == SCHEMA_VERSION


async def test_the_location_hides_a_password(store: Store) -> None:
    assert store.location
    assert "@" not in store.location or ":" not in store.location.split("@")[0].split("//")[-1]


async def test_a_closed_store_refuses_to_work(store_target: str) -> None:
    opened = await open_store(store_target)
    thread = await new_thread(opened)
    await opened.close()
    await opened.close()  # twice is once
    with pytest.raises(StoreError):
        await opened.thread(thread.id)
    with pytest.raises(StoreError):
        await opened.commit(thread.id, Commit(events=[event(1)]))
