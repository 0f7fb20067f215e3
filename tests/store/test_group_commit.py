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
