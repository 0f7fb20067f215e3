"""A session that queues its prompts behind its thread's owner (``connect(busy="queue")``).

It starts no agent. Its timeline is the thread's log, read back from the store and followed
as the owner commits it, through the same traffic reader as the owner's: the same items.
Each prompt goes into the thread's queue (:meth:`~acp_adapters.store.Store.enqueue`); the
owner runs it in order, and the guest's turn is what the owner committed for it, as it
lands (``prompt``, ``stream_prompt``: as a session's own). When no live owner holds the
thread while the prompt waits (the owner let it go, or died and its lease expired), the
guest takes the thread over: it starts the agent as :func:`connect` was asked to and runs
the queue, its own prompt among it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import anyio

from ..errors import AcpAdaptersError
from ..store.base import Lease, QueuedPrompt, Store, StoredEvent, StoreError, Thread, ThreadNotFound
from .agent import AgentBase
from .session import PromptCancelled, Session, SessionSettings
from .turns import Turn

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from .agent import Agent, ProjectedWith

#: How often a guest looks at the store for its turn (seconds).
FOLLOW_SECONDS = 0.1


class QueuedTurnFailed(AcpAdaptersError):
    """The turn of a prompt queued behind another owner failed (its agent exited, its owner
    was lost): ``prompt`` says how it ended."""

    def __init__(self, message: str, prompt: QueuedPrompt) -> None:
        super().__init__(message)
        self.prompt = prompt


@dataclass(eq=False, repr=False, kw_only=True)
class _NoAgent(AgentBase):
    """What a guest has instead of an agent: the provider it projects with, and no
    negotiation; anything else is refused, naming the owner that drives the thread."""

    task_group: Any = None
    owner: str
    # What a session reads of its agent's process: there is none.
    closed = False
    stderr = ""

    def saw(self, direction: str, payload: Any) -> None:
        """A guest makes no events of its own."""

    def offers(self, method: str) -> bool:
        return False

    def __getattr__(self, name: str) -> Any:
        raise AcpAdaptersError(
            f"this session queues its prompts behind the thread's owner, {self.owner}: it "
            f"has no agent of its own ({name})"
        )


class GuestSession(Session):
    """A session that queues behind its thread's owner (see the module's documentation):
    of ``thread`` in ``store``, whose owner holds ``lease``.

    ``owner`` is the lease of the owner it found; ``queued`` the ids of its prompts, in
    order. What needs an agent (``set_mode``, ``fork``, ...) raises
    :class:`~acp_adapters.errors.AcpAdaptersError` naming the owner."""

    def __init__(
        self,
        store: Store,
        thread: Thread,
        lease: Lease,
        *,
        settings: SessionSettings,
        task_group: Any,
        take_over: Callable[[], Awaitable[None]],
        **projecting: Unpack[ProjectedWith],
    ) -> None:
        stand_in = _NoAgent(task_group=task_group, owner=lease.owner.describe(), **projecting)
        super().__init__(cast("Agent", stand_in), settings)
        stand_in.sessions.append(self)
        self.store = store
        self.thread = thread
        self._kept = thread
        self._tasks = task_group
        #: The owner found driving the thread when the session opened.
        self.owner = lease
        #: The ids of the prompts this session queued, in order.
        self.queued_ids: list[str] = []
        #: The ``seq`` of the last event of the thread taken in.
        self.seq = 0
        self._take_over = take_over
        self._taking_over = False
        self._take_over_failure: BaseException | None = None
        #: The prompt whose turn is followed, how it ended once it has, and when.
        self._current: QueuedPrompt | None = None
        self._ended: QueuedPrompt | Exception | None = None
        self._seen_end = anyio.Event()

    # --- the thread's log ---------------------------------------------------------------

    async def read_back(self) -> None:
        """Take in the thread's log as it is (before any prompt)."""
        self._feed(await self.store.events(self._kept.id), None)

    async def follow(self) -> None:
        """Take in what the owner commits, as it lands (until cancelled): the timeline is
        the thread's, and the turn of the prompt waiting is followed to its end."""
        while True:
            await self._look()
            await anyio.sleep(FOLLOW_SECONDS)

    async def _look(self) -> None:
        current = self._current
        # The events first, then the prompt: a prompt still queued after them means they
        # were all committed before its turn began (it is marked running first).
        events = await self.store.events(self._kept.id, after=self.seq)
        if current is None:
            self._feed(events, None)
            return
        now = await self.store.queued_prompt(current.id)
        if now is None:
            self._feed(events, None)
            self._ended = ThreadNotFound(f"the thread {self._kept.name or self._kept.id} is gone")
            self._seen_end.set()
            return
        self._feed(events, now.turn)
        if now.ended:
            # What its owner committed before it ended the prompt, all of it.
            self._feed(await self.store.events(self._kept.id, after=self.seq), now.turn)
            self._ended = now
            self._seen_end.set()
            return
        if now.state == "queued" and not self._taking_over:
            lease = await self.store.lease(self._kept.id)
            if lease is None or not lease.live:
                self._taking_over = True
                self._tasks.start_soon(self._take_over_thread)

    def _feed(self, events: Sequence[StoredEvent], turn: int | None) -> None:
        """Take in events of the thread; the listeners (a turn's stream) hear only of the
        items of ``turn`` (None: of none: what came before the prompt's turn)."""
        if not events:
            return
        projector = self.projector
        with (
            projector.on_item.only(lambda item: turn is not None and item.turn == turn),
            projector.on_session.only(lambda kind: turn is not None),
        ):
            for event in events:
                self.traffic.entry(event.entry)
                self.seq = event.seq
            projector.flush()

    # --- turns --------------------------------------------------------------------------

    def _checked_ticket(self, prompt: str | Sequence[dict[str, Any]]) -> Any:
        # The owner checks the blocks against its agent's capabilities.
        if self.closed:
            raise AcpAdaptersError("the session is closed")
        return self.prompts.take()

    async def run_turn(self, blocks: list[dict[str, Any]], meta: Mapping[str, Any] | None) -> Turn:
        queued = await self.store.enqueue(self._kept.id, blocks)
        self.queued_ids.append(queued.id)
        self._seen_end = anyio.Event()
        self._ended = None
        self._current = queued
        try:
            while not self._seen_end.is_set():
                if self._take_over_failure is not None:
                    raise self._take_over_failure
                with anyio.move_on_after(FOLLOW_SECONDS * 5):
                    await self._seen_end.wait()
        finally:
            self._current = None
        ended = self._ended
        if isinstance(ended, Exception):
            raise ended
        assert ended is not None
        index = ended.turn or 0
        if ended.state == "failed":
            raise QueuedTurnFailed(
                f"the turn of the prompt {ended.id} failed: {ended.error or 'no reason given'}",
                ended,
            )
        if ended.state == "cancelled" and ended.turn is None:
            raise PromptCancelled(f"the prompt {ended.id} was cancelled before its turn came")
        return Turn(
            index=index,
            stop_reason=self.projector.state.turn_state.stop_reason,
            items=[item for item in self.projector.timeline() if item.turn == index],
        )

    async def _take_over_thread(self) -> None:
        """No live owner: drive the thread here until its queue is empty (another who took
        it first is left to)."""
        from ..store.base import ThreadBusy

        try:
            await self._take_over()
        except ThreadBusy:
            pass
        except Exception as exc:
            self._take_over_failure = exc
        finally:
            self._taking_over = False

    async def cancel(self, *, meta: Mapping[str, Any] | None = None) -> bool:
        """Withdraw the prompts still waiting (the owner's running turn is its own): whether
        one was withdrawn."""
        self.prompts.drop_waiting()
        current = self._current
        if current is None:
            return False
        with anyio.CancelScope(shield=True):
            try:
                return await self.store.withdraw_prompt(current.id, "withdrawn before its turn")
            except StoreError:
                return False
        return False

    async def kill(self) -> None:
        """A guest has no agent to stop: its waiting prompt is withdrawn."""
        await self.cancel()

    async def close(self, *, meta: Mapping[str, Any] | None = None) -> bool:
        if self.closed:
            return False
        await self.cancel()
        self.closed = True
        self.end_changes()
        return False
