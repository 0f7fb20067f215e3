"""The turn a lost owner left running, ended in its thread's log by whoever sees it first.

An owner that dies (SIGKILL, a lost machine) leaves its thread's lease to expire, and maybe a
turn running. Whoever takes the thread next ends that turn in the same transaction as it takes
the lease (the turn's row, the prompt's: see :mod:`acp_adapters.store.leases`);
:func:`end_lost_turn` also ends it in the thread's **log**, as the agent's exit ends a turn: an
``exit`` event (its stderr :data:`~acp_adapters.store.base.OWNER_LOST`) goes in, and the items
it changes (the turn's error item) with it. So a follower, a worker or the next owner sees the
same timeline, whoever came first.
"""

from __future__ import annotations

import time
from typing import Any

import pluggy

from ..store.base import OWNER_LOST, Commit, Owner, Store, ThreadBusy
from .rebuild import thread_reader


def lost_exit_entry(at: float | None = None) -> dict[str, Any]:
    """The event that ends a lost owner's turn: the agent's exit, its status unknown."""
    from ..capture.recorder import capture_entry

    return capture_entry(
        "exit", {"code": None, "stderr": OWNER_LOST}, time.time() if at is None else at
    )


async def end_lost_turn(
    store: Store, thread_id: str, *, pm: pluggy.PluginManager | None = None
) -> bool:
    """End the turn a lost owner left running in the thread's log (see the module's
    documentation); whether there was one to end. Does nothing while a live owner holds the
    thread (it will), and takes the thread's lease meanwhile, so that two who see the lost
    owner at once do not both end its turn.

    :raises ThreadNotFound: no thread of that id.
    """
    ending = Owner.here()
    try:
        await store.acquire_lease(thread_id, ending, seconds=60)
    except ThreadBusy:
        return False
    try:
        thread = await store.thread(thread_id)
        events = await store.events(thread_id)
        traffic = thread_reader(thread, pm)
        projector = traffic.projector
        for event in events:
            traffic.entry(event.entry)
        projector.flush()
        if projector.state.turn_state.state == "idle" or projector.state.turn == 0:
            return False
        changed: dict[str, Any] = {}
        projector.on_item.subscribe(lambda item: changed.__setitem__(item.id, item))
        exit_entry = lost_exit_entry()
        traffic.entry(exit_entry)
        projector.flush()
        await store.commit(
            thread_id,
            Commit(
                events=[exit_entry],
                items=[item.model_dump(mode="json") for item in changed.values()],
            ),
        )
        return True
    finally:
        await store.release_lease(thread_id, ending)
