"""A thread followed live for the browsers that show it: one reader of its log per thread,
however many browsers follow it, each sent the thread's wire snapshot and then its wire deltas.

The log is read as :func:`~acp_adapters.history.following.follow_items` reads it (the owner's
traffic reader, :func:`~acp_adapters.history.rebuild.thread_reader`, fed the events in order),
with two differences a viewer needs: the reader says when it has caught up with the log (a
browser is sent the snapshot of a thread read to its end, never one half read), and it only
reads (it ends no turn a lost owner left running: that is a writer's business).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import anyio
import pluggy
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from ..history.following import LOOK_SECONDS
from ..history.rebuild import thread_reader
from ..store.base import Store
from ..wire.projection import WireFollower

#: The most deltas a browser may be behind; one further behind is let go (its page
#: reconnects and is sent a new snapshot).
BEHIND_LIMIT = 1000


@dataclass
class _Feed:
    follower: WireFollower = field(default_factory=WireFollower)
    caught_up: anyio.Event = field(default_factory=anyio.Event)
    browsers: set[MemoryObjectSendStream[dict[str, Any]]] = field(default_factory=set)
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    failed: str | None = None


class Feeds:
    """The threads followed now, each read once for all its browsers, in ``tasks`` (the
    app's task group); a thread no browser follows any more is no longer read."""

    def __init__(
        self, store: Store, tasks: TaskGroup, *, pm: pluggy.PluginManager | None = None
    ) -> None:
        self._store = store
        self._tasks = tasks
        self._pm = pm
        self._feeds: dict[str, _Feed] = {}

    @contextlib.asynccontextmanager
    async def follow(
        self, thread_id: str
    ) -> AsyncIterator[tuple[dict[str, Any], MemoryObjectReceiveStream[dict[str, Any]]]]:
        """The thread's wire snapshot, read to the end of its log, and the stream of the
        wire deltas after it (it ends when the thread can no longer be read: deleted, or the
        store gone). The thread's existence is the caller's to check."""
        feed = self._feeds.get(thread_id)
        if feed is None:
            feed = self._feeds[thread_id] = _Feed()
            self._tasks.start_soon(self._read, thread_id, feed)
        send, receive = anyio.create_memory_object_stream[dict[str, Any]](BEHIND_LIMIT)
        feed.browsers.add(send)
        try:
            await feed.caught_up.wait()
            # Taken and joined with no wait between: no delta is missed or sent twice.
            snapshot = feed.follower.snapshot()
            if feed.failed is not None:
                snapshot["error"] = feed.failed
            with receive:
                yield snapshot, receive
        finally:
            feed.browsers.discard(send)
            send.close()
            if not feed.browsers and self._feeds.get(thread_id) is feed:
                del self._feeds[thread_id]
                feed.scope.cancel()

    async def _read(self, thread_id: str, feed: _Feed) -> None:
        with feed.scope:
            try:
                thread = await self._store.thread(thread_id)
                # From the stored items (a thread kept without its log, e.g. imported, is
                # still drawn), then each version the log makes, sent once caught up.
                feed.follower = WireFollower(await self._store.items(thread_id))
                traffic = thread_reader(thread, self._pm)
                changed: list[dict[str, Any]] = []
                traffic.projector.on_item.subscribe(
                    lambda item: changed.append(item.model_dump(mode="json"))
                )
                seq = 0
                while True:
                    events = await self._store.events(thread_id, after=seq)
                    for event in events:
                        traffic.entry(event.entry)
                        seq = event.seq
                    traffic.projector.flush()
                    for item in changed:
                        delta = feed.follower.update(item)
                        if delta is not None and feed.caught_up.is_set():
                            self._send(feed, delta)
                    changed.clear()
                    if not events:
                        feed.caught_up.set()
                        await anyio.sleep(LOOK_SECONDS)
            except Exception as error:  # the store or the thread gone: its browsers told
                feed.failed = f"the thread can no longer be read: {error}"
            finally:
                feed.caught_up.set()
                for browser in list(feed.browsers):
                    browser.close()

    @staticmethod
    def _send(feed: _Feed, delta: dict[str, Any]) -> None:
        for browser in list(feed.browsers):
            if not _offer(browser, delta):
                feed.browsers.discard(browser)
                browser.close()


def _offer(browser: MemoryObjectSendStream[dict[str, Any]], delta: dict[str, Any]) -> bool:
    """Whether the browser took the delta: False when it is gone, or too far behind (then it
    is let go, and its page reconnects afresh)."""
    try:
        browser.send_nowait(delta)
    except (anyio.WouldBlock, anyio.BrokenResourceError, anyio.ClosedResourceError):
        return False
    return True


__all__ = ["BEHIND_LIMIT", "Feeds"]
