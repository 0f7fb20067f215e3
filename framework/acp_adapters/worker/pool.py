"""A worker: up to ``concurrency`` threads of a store at once, each driven as its own session.

The loop: end the turns that lost owners left running (:func:`~acp_adapters.history.lost_turns.
end_lost_turn`); while fewer than ``concurrency`` threads run here, claim the thread that has
waited longest (its lease taken in the same transaction: two workers never take one
thread); else wait for the queue to move (PostgreSQL ``LISTEN``: at once; SQLite: at the
next look). Each thread taken is driven by :func:`~acp_adapters.client.connecting.connect` as
its owner, started from what the thread records (its provider or command, its folder and
folders, its policy, its MCP servers), its agent session resumed or loaded; the thread's
queue runs in order; once it is empty the agent is kept ``idle`` seconds for more, then the
thread is let go.

**The workspace model.** A thread's folder is a path on the machine that made it. The
workers share the filesystem (one machine, or a shared mount at the same path), or each
thread names a folder under the worker's ``root``: a worker given a ``root`` drives only
threads whose folder is under it. A thread whose folder does not exist here (or is outside
``root``) has its queued prompts failed, each with that reason, rather than run elsewhere.

**Stopping** (:meth:`Worker.stop`, SIGTERM for ``acp-adapters worker``): no new thread is
taken and no new prompt claimed; the turns running finish within ``grace`` seconds, past it
they are cancelled; every lease is let go.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import pluggy

from ..client.connecting import Persistence, connect
from ..client.ownership import launch_arguments, serve_queue
from ..client.session import Session
from ..errors import AcpAdaptersError
from ..history.lost_turns import end_lost_turn
from ..store.base import LEASE_SECONDS, Owner, Store, StoreError, Thread, ThreadBusy

#: How many threads a worker drives at once, by default.
DEFAULT_CONCURRENCY = 4
#: How long a worker keeps a thread's agent once its queue is empty, by default (seconds).
DEFAULT_IDLE = 30.0
#: How long running turns may take to finish once the worker is stopped (seconds).
DEFAULT_GRACE = 30.0
#: The longest a worker waits for the queue before it looks again (seconds).
LOOK_SECONDS = 1.0


@dataclass
class WorkerCounts:
    """What a worker did: threads taken, prompts run, prompts failed here before a turn
    (a missing folder, an agent that cannot start), lost turns ended."""

    threads: int = 0
    prompts: int = 0
    refused: int = 0
    lost_turns: int = 0
    #: The last errors of the threads it could not drive (thread id: why).
    errors: dict[str, str] = field(default_factory=dict)


class Worker:
    """Runs the threads of ``store`` (see the module's documentation); :meth:`run` until
    :meth:`stop`."""

    def __init__(
        self,
        store: Store,
        *,
        concurrency: int = DEFAULT_CONCURRENCY,
        idle: float = DEFAULT_IDLE,
        grace: float = DEFAULT_GRACE,
        root: str | os.PathLike[str] | None = None,
        lease_seconds: float = LEASE_SECONDS,
        env: Mapping[str, str] | None = None,
        pm: pluggy.PluginManager | None = None,
    ) -> None:
        if not 1 <= concurrency <= 1000:
            raise ValueError(f"concurrency is from 1 to 1000, not {concurrency!r}")
        if not 0 <= idle <= 86400 or not 0 <= grace <= 86400:  # also refuses nan
            raise ValueError(f"idle and grace are from 0 to 86400 seconds, not {idle!r}, {grace!r}")
        self.store = store
        self.concurrency = concurrency
        self.idle = idle
        self.grace = grace
        self.root = os.path.realpath(root) if root is not None else None
        self.lease_seconds = lease_seconds
        self.env = dict(env) if env is not None else None
        self.pm = pm
        self.counts = WorkerCounts()
        self._stopping = anyio.Event()
        self._running: dict[str, Session | None] = {}
        self._changed = anyio.Event()

    @property
    def running(self) -> list[str]:
        """The ids of the threads driven here now."""
        return list(self._running)

    def stop(self) -> None:
        """Take no new thread and claim no new prompt; :meth:`run` returns once the running
        turns ended (within ``grace``, then cancelled)."""
        self._stopping.set()
        for session in self._running.values():
            if session is not None:
                session.serving.stopped = True

    async def run(self) -> WorkerCounts:
        """Drive the store's threads until :meth:`stop` (see the module's documentation)."""
        async with anyio.create_task_group() as drives:
            async with anyio.create_task_group() as looking:
                looking.start_soon(self._look, drives)
                await self._stopping.wait()
                looking.cancel_scope.cancel()
            # Stopped: the turns running end, within the grace.
            with anyio.move_on_after(self.grace):
                while self._running:
                    await self._wait_changed(LOOK_SECONDS)
            drives.cancel_scope.cancel()
        return self.counts

    async def _look(self, drives: anyio.abc.TaskGroup) -> None:
        while not self._stopping.is_set():
            seen = self.store.queue_changes()
            try:
                await self._end_lost()
                if len(self._running) < self.concurrency:
                    owner = Owner.here()
                    thread = await self.store.claim_thread(
                        owner, seconds=self.lease_seconds, skip=list(self._running)
                    )
                    if thread is not None:
                        self._running[thread.id] = None
                        self.counts.threads += 1
                        drives.start_soon(self._drive, thread, owner)
                        continue
            except StoreError as error:
                self.counts.errors["store"] = str(error)[:500]
                await anyio.sleep(LOOK_SECONDS)
                continue
            if len(self._running) >= self.concurrency:
                await self._wait_changed(LOOK_SECONDS)
            else:
                await self.store.wait_queue(seen, LOOK_SECONDS)

    async def _end_lost(self) -> None:
        for thread_id in await self.store.lost_threads():
            if thread_id not in self._running and await end_lost_turn(
                self.store, thread_id, pm=self.pm
            ):
                self.counts.lost_turns += 1

    async def _wait_changed(self, timeout: float) -> None:
        with anyio.move_on_after(timeout):
            await self._changed.wait()

    def _done(self, thread_id: str) -> None:
        self._running.pop(thread_id, None)
        changed, self._changed = self._changed, anyio.Event()
        changed.set()

    # --- one thread -----------------------------------------------------------------------

    async def _drive(self, thread: Thread, owner: Owner) -> None:
        try:
            why = self._cannot_drive(thread)
            if why is not None:
                await self._refuse(thread, owner, why)
                return
            try:
                async with connect(**self._arguments(thread, owner)) as session:
                    self._running[thread.id] = session
                    if self._stopping.is_set():
                        session.serving.stopped = True
                    await self._serve(session, owner)
            except ThreadBusy:
                return  # taken by another meanwhile: its to drive
            except (AcpAdaptersError, OSError) as error:
                # An agent that cannot start: its prompts fail, each with the reason, rather
                # than be taken again and again.
                await self._refuse(thread, owner, f"the worker could not drive it: {error}")
        finally:
            with anyio.CancelScope(shield=True), contextlib.suppress(StoreError):
                await self.store.release_lease(thread.id, owner)
            self._done(thread.id)

    async def _serve(self, session: Session, owner: Owner) -> None:
        """The thread's queue, in order; then ``idle`` seconds for more, and again."""
        assert session.thread is not None
        while not session.serving.stopped and not session.closed:
            ran = await serve_queue(session, owner, until_empty=True)
            self.counts.prompts += ran  # after the await: the drives count together
            if not await self._more_within(session.thread.id, session):
                return

    async def _more_within(self, thread_id: str, session: Session) -> bool:
        """Whether a prompt was queued for the thread within ``idle`` seconds."""
        with anyio.move_on_after(self.idle):
            while not session.serving.stopped:
                seen = self.store.queue_changes()
                if await self.store.prompts(thread_id, ("queued",)):
                    return True
                await self.store.wait_queue(seen, LOOK_SECONDS)
        return False

    def _cannot_drive(self, thread: Thread) -> str | None:
        folder = os.path.realpath(thread.cwd)
        if self.root is not None and os.path.commonpath([self.root, folder]) != self.root:
            return (
                f"the thread's folder {thread.cwd} is not under this worker's root {self.root} "
                "(each thread names a folder under the workers' --root)"
            )
        if not os.path.isdir(folder):
            return (
                f"the thread's folder {thread.cwd} does not exist on this worker's machine "
                f"({os.uname().nodename}); the workers share the filesystem, or each thread "
                "names a folder under their --root"
            )
        return None

    async def _refuse(self, thread: Thread, owner: Owner, why: str) -> None:
        """Each queued prompt of the thread fails with ``why``."""
        self.counts.errors[thread.id] = why[:500]
        try:
            # Its lease again: a session that failed to start let it go.
            await self.store.acquire_lease(thread.id, owner, seconds=self.lease_seconds)
        except ThreadBusy:
            return  # another has it now
        while (prompt := await self.store.claim_prompt(thread.id, owner)) is not None:
            await self.store.end_prompt(prompt.id, "failed", error=why[:2000])
            self.counts.refused += 1

    def _arguments(self, thread: Thread, owner: Owner) -> dict[str, Any]:
        """``connect``'s arguments for the thread, from what it records."""
        arguments: dict[str, Any] = {
            "provider": thread.provider if thread.command is None else None,
            "command": list(thread.command) if thread.command is not None else None,
            "cwd": thread.cwd,
            "additional_directories": list(thread.folders),
            "store": self.store,
            "thread": thread.id,
            "persistence": Persistence(
                busy="fail", owner=owner, lease_seconds=self.lease_seconds, run_queued=False
            ),
            "pm": self.pm,
            "env": self.env,
        }
        arguments.update(launch_arguments(thread.launch))
        return arguments


async def run_worker(
    store: Store | str | os.PathLike[str] | None,
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    idle: float = DEFAULT_IDLE,
    grace: float = DEFAULT_GRACE,
    root: str | os.PathLike[str] | None = None,
    lease_seconds: float = LEASE_SECONDS,
    env: Mapping[str, str] | None = None,
    pm: pluggy.PluginManager | None = None,
    stop: anyio.Event | None = None,
) -> WorkerCounts:
    """Run the threads of ``store`` (a store, or what :func:`~acp_adapters.store.open_store`
    opens) until ``stop`` is set (then as :meth:`Worker.stop`); what it did.

    :param concurrency: how many threads it drives at once.
    :param idle: how long a thread's agent is kept once its queue is empty (seconds).
    :param grace: how long running turns may take to finish once stopped (seconds).
    :param root: drive only threads whose folder is under it (see the module's
        documentation).
    :param lease_seconds: the leases it takes (see ``connect``).
    :param env: environment variables for the agents, on top of this process's.
    """
    from ..store.open import open_store

    opened = store if isinstance(store, Store) else await open_store(store)
    worker = Worker(
        opened,
        concurrency=concurrency,
        idle=idle,
        grace=grace,
        root=root,
        lease_seconds=lease_seconds,
        env=env,
        pm=pm,
    )
    try:
        async with anyio.create_task_group() as group:
            if stop is not None:

                async def stopper() -> None:
                    await stop.wait()
                    worker.stop()

                group.start_soon(stopper)
            counts = await worker.run()
            group.cancel_scope.cancel()
        return counts
    finally:
        if opened is not store:
            with anyio.CancelScope(shield=True):
                await opened.close()
