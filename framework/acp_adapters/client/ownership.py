"""One owner per thread: the lease a session holds on its thread, the queue it serves, and
the session that queues behind another owner.

A session kept in a store takes its thread's lease before its agent starts
(:meth:`~acp_adapters.store.Store.acquire_lease`) and renews it while it lives
(:class:`HeldThread`): no other process starts an agent on the thread meanwhile. It runs
the prompts other processes queue for the thread (:func:`serve_queue`), in order, between
its own. A session whose thread another live owner holds is a :class:`GuestSession`: it
starts no agent; each prompt goes into the thread's queue and its turn is followed in the
store as the owner commits it, so that its timeline is the one the owner's makes. When the
owner lets the thread go (or dies, and its lease expires) with the guest's prompt still
queued, the guest takes the thread over: it starts the agent itself and runs the queue.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from ..errors import AcpAdaptersError
from ..store.base import (
    LEASE_SECONDS,
    Lease,
    Owner,
    PromptState,
    QueuedPrompt,
    Store,
    StoreError,
    Thread,
)
from .persistence import turn_status
from .turns import ItemChange, TurnStream

if TYPE_CHECKING:
    from ..timeline.items import TimelineItem
    from .session import Session


class QueueServing:
    """A session serving its thread's queue (:func:`serve_queue`): ``lock`` is held while a
    prompt it claimed runs; ``stopped``, it claims no more (:func:`stop_serving`)."""

    def __init__(self) -> None:
        self.lock = anyio.Lock()
        self.stopped = False


class LeaseLost(StoreError):
    """The session's lease on its thread expired before it was renewed (the store was out of
    reach for longer than the lease lasts): its agent was stopped, as another may drive the
    thread now."""


@dataclass(eq=False, repr=False)
class HeldThread:
    """A session's lease on its thread, renewed every third of its length while it lives.

    When it cannot be renewed in time (the store out of reach, or the lease taken after it
    expired), ``on_lost`` is called: the session stops its agent, so that no two agents
    drive the thread."""

    store: Store
    thread: Thread
    owner: Owner
    lease: Lease
    seconds: float = field(default=LEASE_SECONDS, kw_only=True)
    #: What is called when the lease is lost (the session stops its agent).
    on_lost: Callable[[LeaseLost], Awaitable[None]] = field(kw_only=True)
    lost: LeaseLost | None = field(default=None, init=False)
    #: Forget the thread as it is let go if it holds no turn and no prompt
    #: (:meth:`Store.forget_unused`): one the session made, and never used.
    forget_if_unused: bool = field(default=False, init=False)

    async def keep(self) -> None:
        """Renew the lease until cancelled (or lost)."""
        renewed = anyio.current_time()
        while True:
            await anyio.sleep(self.seconds / 3)
            try:
                held = await self.store.renew_lease(
                    self.thread.id, self.owner, seconds=self.seconds
                )
            except StoreError as error:
                if anyio.current_time() - renewed < self.seconds * 0.9:
                    continue  # tried again at the next third
                await self._lose(f"the store could not be reached to renew it: {error}")
                return
            if not held:
                await self._lose("it expired and was taken by another")
                return
            renewed = anyio.current_time()

    async def _lose(self, why: str) -> None:
        self.lost = LeaseLost(
            f"the session lost its thread {self.thread.name or self.thread.id}: {why}; its "
            "agent was stopped"
        )
        await self.on_lost(self.lost)

    async def release(self) -> None:
        with anyio.CancelScope(shield=True), contextlib.suppress(StoreError):
            if self.forget_if_unused and await self.store.forget_unused(self.thread.id, self.owner):
                return  # its lease went with it
            await self.store.release_lease(self.thread.id, self.owner)


def prompt_state(session: Session, index: int, failure: BaseException | None) -> PromptState:
    """How a claimed prompt's turn ended, as its row says it: as the turn's own status."""
    if failure is not None:
        return "cancelled" if isinstance(failure, anyio.get_cancelled_exc_class()) else "failed"
    state = session.projector.state
    if state.turn < index:
        return "failed"
    return turn_status(state.turn_state.stop_reason)


async def run_claimed(
    session: Session,
    prompt: QueuedPrompt,
    on_turn: Callable[[int], None] = lambda index: None,
) -> Exception | None:
    """Run a prompt claimed from the thread's queue as the session's next turn (after the
    prompts of its own process that wait), keeping its row up to date: ``running`` as its
    turn (``on_turn`` is told which), then how it ended, once what the turn committed is
    in the store. What failed the turn, if anything did."""
    writer = session.writer
    assert writer is not None
    store = writer.store
    ticket = session.prompts.take()
    try:
        await ticket.event.wait()
    except BaseException:
        session.prompts.give_up(ticket)
        with anyio.CancelScope(shield=True), contextlib.suppress(StoreError):
            await store.end_prompt(prompt.id, "cancelled", error="the session closed first")
        raise
    failure: BaseException | None = None
    index = session.projector.state.turn + 1
    try:
        if ticket.dropped:
            raise AcpAdaptersError("the session closed before the prompt's turn came")
        await store.end_prompt(prompt.id, "running", turn=index)
        on_turn(index)
        await session.run_turn(list(prompt.prompt), None)
    except BaseException as exc:
        failure = exc
        if not isinstance(exc, Exception):
            raise
    finally:
        if ticket.granted:
            session.prompts.next_turn()
        with anyio.CancelScope(shield=True):
            state = prompt_state(session, index, failure)
            error = None
            if state == "failed":
                error = str(failure) if failure is not None else writer.why_failed(index, None)
            elif state == "cancelled":
                error = "the turn was cancelled"
            with contextlib.suppress(StoreError):
                await writer.flush()  # its turn's events, before the row says it ended
                await store.end_prompt(prompt.id, state, turn=index, error=error)
    return failure if isinstance(failure, Exception) else None


def stream_claimed(session: Session, prompt: QueuedPrompt) -> TurnStream[ItemChange]:
    """:func:`run_claimed` in the session's task group; the changes of its turn as they
    come (``async for``), as :meth:`Session.stream_prompt` gives them."""
    stream: TurnStream[ItemChange] = TurnStream()
    turn: list[int] = []

    def of_turn(item: TimelineItem) -> None:
        if turn and item.turn == turn[0]:
            stream.put_item(item)

    async def run() -> None:
        failure: Exception | None = None
        try:
            with session.projector.on_item.subscribe(of_turn):
                failure = await run_claimed(session, prompt, turn.append)
        finally:
            stream.end(failure)

    task_group = session.agent.task_group
    assert task_group is not None
    task_group.start_soon(run)
    return stream


async def serve_queue(session: Session, owner: Owner, *, until_empty: bool = False) -> int:
    """Run the prompts queued for the session's thread, in order, as they come, each when
    the session has no turn of its own to run (until cancelled or stopped; ``until_empty``:
    until none waits). How many it ran."""
    ran = 0
    writer = session.writer
    assert writer is not None
    store, thread_id = writer.store, writer.thread.id
    while not session.closed and not session.serving.stopped:
        while session.prompts.busy:
            await anyio.sleep(0.05)  # the session's own prompts first
        seen = store.queue_changes()
        # A prompt claimed is run to its end: the session's close waits for it.
        async with session.serving.lock:
            if session.serving.stopped:
                return ran
            try:
                prompt = await store.claim_prompt(thread_id, owner)
            except StoreError as error:
                writer.failed(error)
                prompt = None
            if prompt is not None:
                await run_claimed(session, prompt)
                ran += 1
                continue
        if until_empty:
            return ran
        await store.wait_queue(seen, 1.0)
    return ran


async def stop_serving(session: Session) -> None:
    """Claim no more prompts; the one claimed (its turn running) ends first, unless the
    session is cancelled meanwhile: then the turn is cut short with it, and the close goes
    on (the agent shut down, the recording closed, the lease let go)."""
    session.serving.stopped = True
    with contextlib.suppress(anyio.get_cancelled_exc_class()):
        async with session.serving.lock:
            pass


def launch_record(policy: Any, mcp_servers: Sequence[Any], protocol: int | None) -> dict[str, Any]:
    """How the session's agent was started, as its thread keeps it for a worker: the policy
    (name, folders, rules), the MCP servers (as ``mcpServers`` entries), the protocol
    version asked for."""
    servers = []
    for server in mcp_servers:
        entry: dict[str, Any] = {"name": server.name, "transport": server.transport}
        if server.command is not None:
            entry.update(command=server.command, args=list(server.args), env=dict(server.env))
        if server.url is not None:
            entry.update(url=server.url, headers=dict(server.headers))
        servers.append(entry)
    return {
        "policy": policy.model_dump(mode="json"),
        "mcp_servers": servers,
        "protocol": protocol,
    }


def launch_arguments(launch: Mapping[str, Any] | None) -> dict[str, Any]:
    """``connect``'s arguments from a thread's launch record (what :func:`launch_record`
    wrote; what is missing or malformed is left to the defaults)."""
    from ..plugin.permissions import Policy
    from .mcp import as_servers

    found: dict[str, Any] = {}
    if not isinstance(launch, Mapping):
        return found
    if isinstance(launch.get("policy"), Mapping):
        found["policy"] = Policy.model_validate(dict(launch["policy"]))
    servers = launch.get("mcp_servers")
    if isinstance(servers, list) and servers:
        found["mcp_servers"] = as_servers([s for s in servers if isinstance(s, Mapping)])
    protocol = launch.get("protocol")
    if isinstance(protocol, int) and not isinstance(protocol, bool) and protocol in (1, 2):
        found["protocol"] = protocol
    return found
