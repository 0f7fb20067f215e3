"""Who drives a thread (its lease) and the queue of prompts waiting for it, on both backends."""

from __future__ import annotations

import time

import anyio
import pytest

from acp_adapters.store import (
    OWNER_LOST,
    Commit,
    Owner,
    Store,
    ThreadBusy,
    ThreadNotFound,
    Turn,
    open_store,
)

pytestmark = pytest.mark.anyio

PROMPT = [{"type": "text", "text": "go"}]


async def _thread(store: Store) -> str:
    return (await store.create_thread(provider="generic", cwd="/w")).id


async def test_one_owner_at_a_time(store: Store) -> None:
    thread = await _thread(store)
    first, second = Owner.here(), Owner.here()
    lease = await store.acquire_lease(thread, first, seconds=30)
    assert (lease.owner, lease.live, lease.replaced) == (first, True, None)
    with pytest.raises(ThreadBusy) as busy:
        await store.acquire_lease(thread, second)
    assert busy.value.lease.owner == first
    assert first.host in str(busy.value)
    assert str(first.pid) in str(busy.value)
    assert "busy='queue'" in str(busy.value)
    # The owner takes it again: a renewal, the same lease.
    again = await store.acquire_lease(thread, first, seconds=60)
    assert again.taken_at == lease.taken_at
    assert again.expires_at > lease.expires_at
    assert await store.renew_lease(thread, first)
    assert not await store.renew_lease(thread, second)
    await store.release_lease(thread, second)  # not its lease: nothing happens
    assert (await store.lease(thread)).owner == first  # type: ignore[union-attr]
    await store.release_lease(thread, first)
    assert await store.lease(thread) is None
    assert (await store.acquire_lease(thread, second)).owner == second


async def test_an_expired_lease_is_replaced_and_what_it_ran_fails(store: Store) -> None:
    thread = await _thread(store)
    dead, taker = Owner.here(), Owner.here()
    await store.acquire_lease(thread, dead, seconds=0.2)
    await store.commit(thread, Commit(turns=[Turn(thread, 1, "running", started_at=1.0)]))
    running = await store.enqueue(thread, PROMPT)
    assert (await store.claim_prompt(thread, dead)).id == running.id  # type: ignore[union-attr]
    await store.end_prompt(running.id, "running", turn=1)
    held = await store.enqueue(thread, PROMPT, held_by=dead)
    queued = await store.enqueue(thread, PROMPT)
    assert [p.id for p in await store.queued_prompts(thread)] == [held.id, queued.id]
    with pytest.raises(ThreadBusy):
        await store.acquire_lease(thread, taker)
    assert thread not in await store.lost_threads()
    await anyio.sleep(0.3)
    assert thread in await store.lost_threads()
    assert not await store.renew_lease(thread, dead)  # expired: not renewed
    lease = await store.acquire_lease(thread, taker)
    assert lease.replaced == dead
    assert lease.owner == taker
    (turn,) = await store.turns(thread)
    assert (turn.status, turn.error) == ("failed", OWNER_LOST)
    ran = await store.queued_prompt(running.id)
    assert ran is not None
    assert (ran.state, ran.error, ran.turn) == ("failed", OWNER_LOST, 1)
    assert ran.ended
    # What the dead owner held waits for the new one, in order; nothing ran twice.
    assert [(p.id, p.state) for p in await store.queued_prompts(thread)] == [
        (held.id, "queued"),
        (queued.id, "queued"),
    ]
    assert thread not in await store.lost_threads()


async def test_prompts_are_claimed_in_order_by_the_owner_alone(store: Store) -> None:
    thread = await _thread(store)
    owner, other = Owner.here(), Owner.here()
    ids = [(await store.enqueue(thread, [{"type": "text", "text": str(n)}])).id for n in range(3)]
    assert await store.claim_prompt(thread, owner) is None  # it holds no lease
    await store.acquire_lease(thread, owner)
    assert await store.claim_prompt(thread, other) is None
    claimed = []
    while (prompt := await store.claim_prompt(thread, owner)) is not None:
        claimed.append(prompt)
        await store.end_prompt(prompt.id, "running", turn=len(claimed))
        await store.end_prompt(prompt.id, "completed")
    assert [p.id for p in claimed] == ids
    assert [p.prompt[0]["text"] for p in claimed] == ["0", "1", "2"]
    done = await store.queued_prompt(ids[1])
    assert done is not None
    assert (done.state, done.turn, done.error) == ("completed", 2, None)
    assert done.ended_at is not None
    assert await store.queued_prompts(thread) == []
    assert await store.queued_prompt("no-such-prompt") is None
    with pytest.raises(ThreadNotFound):
        await store.enqueue("no-such-thread", PROMPT)


async def test_a_thread_is_claimed_by_one_worker(store_target: str) -> None:
    # Two stores (two connections, as two processes have) claim at once: each thread with
    # a queued prompt goes to one of them, never to both.
    async with await open_store(store_target) as one, await open_store(store_target) as two:
        threads = [await _thread(one) for _ in range(6)]
        for thread in threads:
            await one.enqueue(thread, PROMPT)
        busy = await _thread(one)  # a live owner's: not claimable
        await one.acquire_lease(busy, Owner.here())
        await one.enqueue(busy, PROMPT)
        claimed: dict[str, list[str]] = {"one": [], "two": []}

        async def claim(name: str, store: Store) -> None:
            owner = Owner.here()
            others: list[str] = []  # the threads of other tests (the database is shared)
            while True:
                thread = await store.claim_thread(owner, skip=[*claimed[name], *others])
                if thread is None:
                    return
                if thread.id not in [*threads, busy]:
                    others.append(thread.id)
                    await store.release_lease(thread.id, owner)
                    continue
                claimed[name].append(thread.id)

        async with anyio.create_task_group() as group:
            group.start_soon(claim, "one", one)
            group.start_soon(claim, "two", two)
        taken = claimed["one"] + claimed["two"]
        assert sorted(taken) == sorted(threads)
        assert busy not in taken


async def test_a_waiter_wakes_when_the_queue_moves(store_target: str) -> None:
    async with await open_store(store_target) as here, await open_store(store_target) as there:
        thread = await _thread(here)
        seen = here.queue_changes()
        started = time.monotonic()
        async with anyio.create_task_group() as group:

            async def later() -> None:
                await anyio.sleep(0.2)
                await there.enqueue(thread, PROMPT)  # another connection's prompt

            group.start_soon(later)
            with anyio.fail_after(5):
                while here.queue_changes() == seen:
                    await here.wait_queue(seen, 5.0)
        assert time.monotonic() - started < 5
        # Nothing moved: the wait ends at its timeout.
        seen = here.queue_changes()
        with anyio.fail_after(5):
            await here.wait_queue(seen, 0.1)


async def test_a_lease_of_no_time_is_refused(store: Store) -> None:
    thread = await _thread(store)
    with pytest.raises(ValueError, match="a lease lasts"):
        await store.acquire_lease(thread, Owner.here(), seconds=0)
    with pytest.raises(ValueError, match="a lease lasts"):
        await store.acquire_lease(thread, Owner.here(), seconds=float("nan"))
    with pytest.raises(ThreadNotFound):
        await store.acquire_lease("no-such-thread", Owner.here())


async def test_a_thread_is_forgotten_only_unused_and_by_its_owner(store: Store) -> None:
    """What a session that made a thread and failed before its first turn leaves is not
    kept; a thread someone else uses meanwhile is."""
    me, other = Owner.here(), Owner.here()
    unused = await _thread(store)
    assert not await store.forget_unused(unused, me)  # no lease: nobody's to forget
    await store.acquire_lease(unused, me)
    assert not await store.forget_unused(unused, other)  # not its owner
    assert await store.forget_unused(unused, me)
    with pytest.raises(ThreadNotFound):
        await store.thread(unused)
    assert not await store.forget_unused(unused, me)  # gone already
    queued = await _thread(store)
    await store.acquire_lease(queued, me)
    await store.enqueue(queued, PROMPT)  # `sessions send`, from another process
    assert not await store.forget_unused(queued, me)
    turned = await _thread(store)
    await store.acquire_lease(turned, me)
    await store.commit(turned, Commit(turns=[Turn(thread_id=turned, index=1)]))
    assert not await store.forget_unused(turned, me)
    for kept in (queued, turned):
        assert (await store.lease(kept)) is not None
        await store.release_lease(kept, me)
        await store.delete_thread(kept)
