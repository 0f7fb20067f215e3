"""Commits of many sessions at once (group commit): each is all of it or none of it, and one
that fails fails alone; run against each backend."""

from __future__ import annotations

import uuid
from typing import Any

import anyio
import pytest

from acp_adapters.store import Commit, Store, StoreError, ThreadNotFound, Turn

pytestmark = pytest.mark.anyio

ODD_TEXT = "é ✓ \x00 \ud800 \u2028 𝄞 \\ \" '"


def event(thread: int, n: int) -> dict[str, Any]:
    return {
        "dir": "agent->client",
        "t": float(n),
        "msg": {"thread": thread, "n": n, "text": ODD_TEXT},
    }


async def test_concurrent_commits_are_each_whole_and_a_failure_stays_its_own(
    store: Store,
) -> None:
    threads = [await store.create_thread(provider="p", cwd="/w") for _ in range(40)]
    taken = f"taken-{uuid.uuid4().hex[:8]}"
    await store.create_thread(provider="p", cwd="/w", name=taken)
    gone = threads[7]
    await store.delete_thread(gone.id)
    outcomes: dict[int, list[Any]] = {i: [] for i in range(len(threads))}

    async def session(index: int) -> None:
        for round_ in range(5):
            fields: dict[str, Any] = {"title": f"title {index}"} if round_ == 2 else {}
            if index == 3 and round_ == 3:
                fields = {"name": taken}  # refused: the name is another thread's
            commit = Commit(
                events=[event(index, round_ * 10 + k) for k in range(index % 4 + 1)],
                items=[
                    {
                        "id": f"item-{index}",
                        "kind": "assistant_message",
                        "ordinal": 1,
                        "text": ODD_TEXT * (round_ + 1),
                    }
                ],
                turns=[Turn(thread_id=threads[index].id, index=1, status="running")],
                thread=fields,
            )
            try:
                outcomes[index].append(await store.commit(threads[index].id, commit))
            except StoreError as error:
                outcomes[index].append(error)
            await anyio.sleep(0)

    async with anyio.create_task_group() as group:
        for index in range(len(threads)):
            group.start_soon(session, index)

    for index, thread in enumerate(threads):
        if thread is gone:
            assert all(isinstance(o, ThreadNotFound) for o in outcomes[index])
            continue
        per_commit = index % 4 + 1
        if index == 3:
            assert isinstance(outcomes[index][3], StoreError)
            assert not isinstance(outcomes[index][3], ThreadNotFound)
            assert taken in str(outcomes[index][3])
            written = [0, 1, 2, 4]  # the refused commit wrote nothing
        else:
            written = [0, 1, 2, 3, 4]
        assert [o for o in outcomes[index] if not isinstance(o, StoreError)] == [
            per_commit * (n + 1) for n in range(len(written))
        ]
        events = await store.events(thread.id)
        assert [e.seq for e in events] == list(range(1, per_commit * len(written) + 1))
        assert [e.entry for e in events] == [
            event(index, r * 10 + k) for r in written for k in range(per_commit)
        ]
        (item,) = await store.items(thread.id)
        assert item["text"] == ODD_TEXT * 5
        assert (await store.thread(thread.id)).title == f"title {index}"
        assert [t.status for t in await store.turns(thread.id)] == ["running"]


async def test_commits_of_one_thread_at_once_each_get_their_own_seqs(store: Store) -> None:
    # Several writers of one thread at once: their commits may meet in one group, where the
    # thread is twice; each is written in its turn, its events numbered after the last.
    thread = await store.create_thread(provider="p", cwd="/w")
    lasts: list[int] = []

    async def writer(index: int) -> None:
        for round_ in range(4):
            commit = Commit(events=[event(index, round_ * 10 + k) for k in range(index + 1)])
            lasts.append(await store.commit(thread.id, commit))
            await anyio.sleep(0)

    async with anyio.create_task_group() as group:
        for index in range(6):
            group.start_soon(writer, index)

    events = await store.events(thread.id)
    total = 4 * sum(index + 1 for index in range(6))
    assert [e.seq for e in events] == list(range(1, total + 1))
    assert sorted(lasts)[-1] == total
    assert len(set(lasts)) == len(lasts)
    for index in range(6):  # each commit's events together, in its order
        mine = [e for e in events if e.entry["msg"]["thread"] == index]
        assert [e.entry["msg"]["n"] for e in mine] == [
            r * 10 + k for r in range(4) for k in range(index + 1)
        ]
        for round_ in range(4):
            seqs = [e.seq for e in mine[round_ * (index + 1) : (round_ + 1) * (index + 1)]]
            assert seqs == list(range(seqs[0], seqs[0] + index + 1))
            assert seqs[-1] in lasts


async def test_an_item_or_turn_twice_in_one_commit_is_kept_as_its_last(store: Store) -> None:
    threads = [await store.create_thread(provider="p", cwd="/w") for _ in range(5)]

    async def commit(thread_id: str) -> None:
        await store.commit(
            thread_id,
            Commit(
                events=[event(0, 1)],
                items=[
                    {"id": "a", "kind": "assistant_message", "ordinal": 1, "text": "first"},
                    {"id": "b", "kind": "assistant_message", "ordinal": 2, "text": "other"},
                    {"id": "a", "kind": "assistant_message", "ordinal": 3, "text": "last"},
                ],
                turns=[
                    Turn(thread_id=thread_id, index=1, status="running"),
                    Turn(thread_id=thread_id, index=1, status="completed", stop_reason="x"),
                ],
            ),
        )

    async with anyio.create_task_group() as group:  # in one group, and in the next ones
        for thread in threads:
            group.start_soon(commit, thread.id)

    for thread in threads:
        items = {item["id"]: item for item in await store.items(thread.id)}
        assert items["a"]["text"] == "last"
        assert items["a"]["ordinal"] == 3
        assert items["b"]["text"] == "other"
        (turn,) = await store.turns(thread.id)
        assert (turn.status, turn.stop_reason) == ("completed", "x")
