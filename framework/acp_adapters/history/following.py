"""A thread's timeline items as they are committed, from any process (``sessions follow``).

The thread's event log is followed (:meth:`~acp_adapters.store.base.Store.follow`:
PostgreSQL ``LISTEN``, SQLite's polling) and taken in by the traffic reader the owner's session
projects with (:func:`~.rebuild.thread_reader`), so each item comes out as the owner's
timeline has it, every version of it, in the order they were made: a follower that starts
late reads the log from its start, one that falls behind reads what it missed; the log's
``seq`` has no gap and no duplicate, so no item version is lost or given twice.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import pluggy

from ..store.base import Store
from .lost_turns import end_lost_turn
from .rebuild import thread_reader

#: How often a follower looks for what was committed (seconds).
LOOK_SECONDS = 0.1


async def follow_items(
    store: Store,
    thread_id: str,
    *,
    until_idle: bool = False,
    pm: pluggy.PluginManager | None = None,
) -> AsyncIterator[dict[str, Any]]:
    """Each item of the thread (as JSON, as the store keeps it) each time it appears or
    changes, from the first, as the owner commits them (``async for``). It never ends,
    unless ``until_idle``: then it ends once no prompt of the thread waits or runs and no
    turn runs; a turn a lost owner left running is ended first
    (:func:`~.lost_turns.end_lost_turn`), and its end followed.

    :raises ThreadNotFound: no thread of that id.
    """
    thread = await store.thread(thread_id)
    traffic = thread_reader(thread, pm)
    projector = traffic.projector
    changed: list[dict[str, Any]] = []
    projector.on_item.subscribe(lambda item: changed.append(item.model_dump(mode="json")))
    seq = 0
    while True:
        events = await store.events(thread_id, after=seq)
        for event in events:
            traffic.entry(event.entry)
            seq = event.seq
        projector.flush()
        for item in changed:
            yield item
        changed.clear()
        if events:
            continue
        if until_idle:
            state = projector.state.turn_state.state
            if not await store.prompts(thread_id) and (
                state == "idle" or projector.state.turn == 0
            ):
                if not await store.events(thread_id, after=seq):
                    return
                continue
            if thread_id in await store.lost_threads():
                await end_lost_turn(store, thread_id, pm=pm)
                continue
        await anyio.sleep(LOOK_SECONDS)
