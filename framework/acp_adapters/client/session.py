"""The session API: start an agent, negotiate, run turns, answer its requests.

::

    async with acp_adapters.connect(provider="claude", cwd=path, policy="full-access") as session:
        turn = await session.prompt("add a README")
        for item in turn.items:
            ...
        async for change in session.stream_prompt("now run the tests"):
            print(change.item.kind, change.item.status)

:func:`connect` starts the provider's agent (or ``command``), asks for protocol
version 2 and accepts 1, creates a session in ``cwd`` and yields a
:class:`Session`. Leaving the block kills the session's terminals and closes
the agent (stdin closed, then terminate, then kill, whole process group), and
on Linux whatever the agent and its terminals detached from their groups too
(see :mod:`acp_adapters.transport.process`). The agent's exit is watched on
its own: when it exits, the turn ends and pending requests fail with
:class:`ConnectionClosed`, even while a process it left behind holds its
output open.
One agent process may hold several sessions: ``session.agent`` opens more
(:class:`~.agent.Agent`), each its own :class:`Session` with its own timeline; a
prompt sent during a turn waits for it, in order.
The agent's requests are answered here: permissions through the
``decide_permission`` hook and the policy (``ask``: the application's
callback), the file system inside the session's folders only, terminals as
real processes, elicitation by the application (default: decline).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import sys
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar, overload

import anyio
import pluggy

from ..errors import (
    AcpAdaptersError,
    AgentNotFoundError,
    AuthenticationRequiredError,
    CapabilityError,
    PromptCancelled,
    ProtocolVersionError,
    StartTimeoutError,
)

if sys.version_info < (3, 11):
    from exceptiongroup import BaseExceptionGroup
from ..capture.format import request_key
from ..capture.recorder import CaptureRecorder
from ..plugin.hooks import Hooks
from ..plugin.manager import get_plugin_manager
from ..plugin.permissions import Policy, PolicyName
from ..plugin.providers import Provider, ProviderRegistry
from ..projection.projector import Projector
from ..projection.traffic import Traffic
from ..runtime import CONTENT_BUDGET, CheckpointMark, SessionState
from ..store.base import (
    LEASE_SECONDS,
    Lease,
    Owner,
    QueuedPrompt,
    Store,
    StoreError,
    Thread,
    ThreadBusy,
    ThreadMoved,
    ThreadNotFound,
    check_thread_name,
)
from ..timeline.items import TimelineItem
from ..timeline.timeline import Timeline, session_json
from ..transport import AgentProcess, Connection, ConnectionClosed, Problem, RpcError
from ..transport.environment import base_environment
from ..transport.families import become_subreaper
from ..transport.jsonrpc import (
    DEFAULT_MAX_ELEMENTS,
    DEFAULT_MAX_LINE_BYTES,
    DEFAULT_MAX_PENDING_REQUESTS,
)
from ..workspace.objects import CheckpointError
from .agent import CLIENT_INFO, Agent, SessionPage, auth_required
from .answers import (
    AgentRequests,
    AskCallback,
    DiskReader,
    ElicitCallback,
    TerminalFactory,
)
from .auth import AuthMethod, LoginCallback
from .capabilities import check_prompt
from .checkpointing import (
    Checkpointing,
    CheckpointTaker,
    LiveCheckpoints,
    render_batch,
)
from .mcp import McpServer, as_servers, wire_servers
from .ownership import (
    HeldThread,
    LeaseLost,
    launch_record,
    serve_queue,
    stop_serving,
    stream_claimed,
)
from .persistence import COMMIT_INTERVAL, StoreErrorCallback, ThreadWriter, reopened
from .terminals import DEFAULT_MAX_TERMINALS, Terminals
from .workspace import RESOURCE_NOT_FOUND, MissingFileRead, Workspace

#: How often, at most, the timeline catches up with the messages handled: a message
#: streamed in many chunks is projected again once per this, not once per chunk.
CATCH_UP_SECONDS = 0.02
#: How long ``connect`` waits for the agent to answer ``initialize`` and open the session.
DEFAULT_START_TIMEOUT = 60.0


@dataclass(frozen=True)
class ItemChange:
    """A timeline item that appeared or changed, as it is now."""

    item: TimelineItem


@dataclass(frozen=True)
class SessionChange:
    """Something the agent reported of the session changed: ``kind`` is ``usage``, ``info``
    (title, updated time), ``commands``, ``mode``, ``config`` or ``turn``; ``session`` is
    all of it as it is now (:meth:`Timeline.session_json`)."""

    kind: str
    session: dict[str, Any]


#: What ``connect`` does when another owner drives the thread (see :func:`connect`).
Busy = Literal["queue", "fail"]

Change = TypeVar("Change", ItemChange, "ItemChange | SessionChange")


@dataclass
class Turn:
    """One prompt and what came of it: its stop reason and the items of its turn."""

    index: int
    stop_reason: str | None
    items: list[TimelineItem] = field(default_factory=list)


class TurnStream(Generic[Change]):
    """The changes of one turn as they come (:meth:`Session.stream_prompt`): ``async for``.

    Each is an :class:`ItemChange`; with ``session_events``, also a :class:`SessionChange`.
    """

    def __init__(self) -> None:
        self._changes: deque[Any] = deque()
        self._more = anyio.Event()
        self._ended = False
        self._failure: Exception | None = None
        self._listening = True
        self._on_close: Callable[[], None] | None = None

    def _put(self, item: TimelineItem) -> None:
        if self._listening:
            self._changes.append(ItemChange(item))
            self._more.set()

    def _put_session(self, kind: str, session: dict[str, Any]) -> None:
        if self._listening:
            self._changes.append(SessionChange(kind, session))
            self._more.set()

    def _end(self, failure: Exception | None) -> None:
        self._ended, self._failure = True, failure
        self._more.set()

    def __aiter__(self) -> TurnStream[Change]:
        return self

    async def __anext__(self) -> Change:
        while not self._changes:
            if self._ended:
                if self._failure is not None:
                    raise self._failure
                raise StopAsyncIteration
            await self._more.wait()
            self._more = anyio.Event()
        change: Change = self._changes.popleft()
        return change

    async def aclose(self) -> None:
        """Stop the updates (the turn goes on)."""
        self._listening = False
        self._changes.clear()
        if self._on_close is not None:
            self._on_close()


@dataclass(frozen=True)
class SessionSettings:
    """What a session of a connection is opened with: its folders, its policy, the
    application's callbacks and the session's bounds (``connect``'s arguments)."""

    workspace: Workspace
    #: The policy as the application gave it (its folders filled in per session).
    policy: Policy
    ask: AskCallback | None
    elicit: ElicitCallback | None
    missing_file_read: MissingFileRead
    disk_patches: bool | DiskReader
    terminals: TerminalFactory
    content_budget: int
    mcp_servers: tuple[McpServer, ...] = ()
    #: How the session checkpoints its folders (None: it does not).
    checkpoints: Checkpointing | CheckpointTaker | None = None

    @property
    def session_policy(self) -> Policy:
        """The policy, its folders the session's when the application named none."""
        if self.policy.workspace:
            return self.policy
        return self.policy.model_copy(
            update={"workspace": tuple(str(r) for r in self.workspace.roots)}
        )

    def with_folders(
        self,
        cwd: str | os.PathLike[str] | None,
        additional_directories: Sequence[str | os.PathLike[str]] | None,
        mcp_servers: Sequence[McpServer | Mapping[str, Any]] | None,
    ) -> SessionSettings:
        """These settings for a session in other folders (or with other MCP servers)."""
        changes: dict[str, Any] = {}
        if cwd is not None or additional_directories is not None:
            changes["workspace"] = Workspace(
                cwd if cwd is not None else self.workspace.cwd,
                tuple(str(p) for p in additional_directories)
                if additional_directories is not None
                else tuple(str(r) for r in self.workspace.roots[1:]),
            )
        if mcp_servers is not None:
            changes["mcp_servers"] = tuple(as_servers(mcp_servers))
        return replace(self, **changes)


class _Ticket:
    """A prompt's place in its session's queue: set when its turn comes, or when it is
    dropped (``cancel()``)."""

    def __init__(self) -> None:
        self.event = anyio.Event()
        self.dropped = False
        self.granted = False


class Session:
    """A live session with an agent: its timeline, its turns, its answers to the agent.

    Made by :func:`connect` (the first session of its agent) and by the methods of
    :attr:`agent` that open more sessions on the same agent process.
    """

    def __init__(self, agent: Agent, settings: SessionSettings, *, primed: bool = False) -> None:
        #: The agent process and connection this session is one of the sessions of.
        self.agent = agent
        self.settings = settings
        self.workspace = settings.workspace
        self.policy = settings.session_policy
        self.projector = Projector(
            agent.hooks,
            agent.provider,
            fixed_provider=agent.fixed_provider,
            state=SessionState(content_budget=settings.content_budget),
        )
        #: The one reader of the session's traffic (the one a recording is projected with):
        #: every message in and out, the disk reads and the agent's exit go through it.
        self.traffic = Traffic(self.projector, agent.registry, others=self._other_ids)
        if primed:
            # Opened after the negotiation: what it said is this session's too.
            self.projector.initialized(agent.version, agent.provider)
        #: What answers the agent's requests and takes in its notifications.
        self.answers = AgentRequests(
            self,
            ask=settings.ask,
            elicit=settings.elicit,
            missing_file_read=settings.missing_file_read,
            disk_patches=settings.disk_patches,
            terminals=settings.terminals,
        )
        #: The MCP servers this session is opened with, unless told otherwise.
        self.mcp_servers = settings.mcp_servers
        #: Whether the session is closed (:meth:`close`): it takes no more prompts.
        self.closed = False
        self._idle = anyio.Event()
        self._caught_up = time.monotonic()
        self._catching_up_later = False
        # The prompt queue: whether a turn runs, and the prompts waiting for it to end.
        self._turn_busy = False
        self._waiting: deque[_Ticket] = deque()
        #: Whether a prompt after the agent went away starts it again and goes on
        #: (``connect(reconnect=...)``).
        self.reconnect = False
        #: The store's thread this session is kept in (``connect(store=...)``), if any.
        self.thread: Thread | None = None
        #: What writes the session into its thread.
        self._writer: ThreadWriter | None = None
        #: The session's lease on its thread (who it is as the thread's owner), if kept in
        #: a store.
        self.lease: HeldThread | None = None
        #: Held while a prompt claimed from the thread's queue runs (see :mod:`.ownership`).
        self._serving = anyio.Lock()
        self._serving_stopped = False
        #: The turns of the prompts the thread's queue held when it was gone on with, run
        #: in order as the session opened (``connect(run_queued=True)``).
        self.restored_turns: list[TurnStream[ItemChange]] = []
        #: What ends the streams of :meth:`changes` (when the session closes or the agent goes).
        self._watchers: list[Callable[[], None]] = []
        #: What takes the session's checkpoints of its folders (None: it takes none).
        self._checkpointer = self._checkpoint_taker(settings.checkpoints)
        self._checkpointing = anyio.Lock()

    def _other_ids(self) -> set[str]:
        return {
            s.session_id for s in self.agent.sessions if s is not self and s.session_id is not None
        }

    # --- what the application reads -----------------------------------------------------

    @property
    def session_id(self) -> str | None:
        return self.projector.state.session_id

    @property
    def timeline(self) -> Timeline:
        return self.projector.timeline()

    @property
    def usage(self) -> Any:
        """The agent's last usage report (tokens used, context size, cost), if any."""
        return self.projector.state.usage

    @property
    def provider(self) -> Provider:
        return self.projector.provider

    @property
    def stderr(self) -> str:
        """The end of what the agent wrote to stderr."""
        return self.agent.stderr

    # The connection's, shared by its sessions.
    @property
    def process(self) -> AgentProcess:
        return self.agent.process

    @property
    def connection(self) -> Connection:
        return self.agent.connection

    @property
    def problems(self) -> list[Problem]:
        """What the connection skipped or ignored (lines that were not JSON, unknown
        notifications), for all the sessions of the agent."""
        return self.agent.problems

    @property
    def version(self) -> int:
        return self.agent.version

    @property
    def agent_info(self) -> dict[str, Any]:
        return self.agent.agent_info

    @property
    def agent_capabilities(self) -> dict[str, Any]:
        return self.agent.agent_capabilities

    @property
    def auth_methods(self) -> list[dict[str, Any]]:
        return self.agent.auth_methods

    @property
    def login_methods(self) -> list[AuthMethod]:
        return self.agent.login_methods

    @property
    def registry(self) -> ProviderRegistry:
        return self.agent.registry

    @property
    def hooks(self) -> Hooks:
        return self.agent.hooks

    # --- the traffic ---------------------------------------------------------------------------

    def saw(self, direction: str, payload: Any) -> None:
        """One event of this session's making (a ``disk`` read around one of its edits, a
        checkpoint and its changes): the connection's traffic, with the session it is for."""
        own = direction in ("disk", "checkpoint", "change")
        if own and isinstance(payload, dict) and self.session_id is not None:
            payload = {**payload, "sessionId": self.session_id}
        self.agent.saw(direction, payload)

    # --- checkpoints ---------------------------------------------------------------------

    def _checkpoint_taker(
        self, given: Checkpointing | CheckpointTaker | None
    ) -> CheckpointTaker | None:
        if given is None or not isinstance(given, Checkpointing):
            return given
        try:
            return LiveCheckpoints(self.workspace.roots, given)
        except (CheckpointError, OSError) as error:
            # The session goes on without checkpoints (its patches from the other evidence).
            self.agent.problems.append(Problem("checkpoint", f"no checkpoints: {error}"))
            return None

    @property
    def checkpoints(self) -> bool:
        """Whether the session checkpoints its folders."""
        return self._checkpointer is not None

    async def _checkpoint(
        self, kind: str, *args: Any, raising: bool = False
    ) -> dict[str, Any] | None:
        """Take one checkpoint (``kind``: what the taker is told) in a worker thread, and send
        its lines into the traffic; its ``checkpoint`` line, or None. One that fails is a
        ``checkpoint`` problem (``raising``: and its error is raised)."""
        taker = self._checkpointer
        if taker is None:
            return None
        async with self._checkpointing:
            try:
                # The first look at the folders may read every file: a session that ends
                # meanwhile does not wait for it (the others wait their turn anyway).
                lines = await anyio.to_thread.run_sync(
                    getattr(taker, kind), *args, abandon_on_cancel=kind == "opened"
                )
            except (CheckpointError, OSError) as error:
                self.agent.problems.append(Problem("checkpoint", f"{kind}: {error}"[:500]))
                if raising:
                    raise CheckpointError(f"the checkpoint failed: {error}") from error
                return None
            if lines is None:
                return None
            head: dict[str, Any] = lines[0]
            pending = lines[1]
            self.saw("checkpoint", head)
            start = 0
            while start < len(pending):
                batch, start = await anyio.to_thread.run_sync(render_batch, taker, pending, start)
                for line in batch:
                    self.saw("change", line)
            return head

    async def checkpoint(self) -> CheckpointMark:
        """Take a checkpoint of the session's folders now (it changes no turn's patches).

        :raises CheckpointError: the session takes no checkpoints, or this one failed.
        """
        if self._checkpointer is None:
            raise CheckpointError("this session takes no checkpoints (connect(checkpoints=...))")
        head = await self._checkpoint("request", self.projector.state.turn, raising=True)
        if head is None:  # a replay whose capture recorded no such checkpoint
            raise CheckpointError("no checkpoint was taken here")
        return CheckpointMark(
            id=head["id"],
            reason=head["reason"],
            turn=head["turn"],
            files=head["files"],
            notes=tuple(head["notes"]),
        )

    async def restore(self, checkpoint_id: str, *, dry_run: bool = False) -> list[str]:
        """Put the session's folders back as checkpoint ``checkpoint_id`` (one of
        ``session.timeline.state.checkpoints``, or :meth:`checkpoint`'s) had them: every file
        that differs now is written, removed, linked or given its mode again, through writes
        that follow no link (what the checkpoints leave out is left as it is). The paths
        written (with ``dry_run``, those that would be).

        :raises CheckpointError: the session takes no checkpoints of its folders, the store
            does not hold that checkpoint, or files cannot be put back (each named; nothing
            was written).
        """
        taker = self._checkpointer
        if not isinstance(taker, LiveCheckpoints):
            raise CheckpointError("this session takes no checkpoints of its folders")
        checkpoints = taker.checkpoints

        def work() -> list[str]:
            with taker.lock:
                record = checkpoints.store.checkpoint(checkpoint_id)
                done = checkpoints.restore(record, dry_run=dry_run)
            if done.conflicts:
                raise CheckpointError(
                    "cannot restore the checkpoint, nothing was written: "
                    + "; ".join(conflict.describe() for conflict in done.conflicts)
                )
            return [action.path for action in done.actions]

        async with self._checkpointing:
            return await anyio.to_thread.run_sync(work)

    async def tool_call_checkpoint(self, tool_call_id: str, paths: Sequence[str]) -> None:
        """A tool call completed: what the files it names are now, against what they were."""
        if self._checkpointer is not None and not self.projector.replaying:
            await self._checkpoint("tool_call", self.projector.state.turn, tool_call_id, paths)

    # --- the connection's ------------------------------------------------------------------------

    async def kill(self) -> None:
        """End the agent now: its terminals (every session's), and the agent killed at once
        (SIGKILL, its whole process group and, on Linux, what it detached); no
        ``session/cancel`` is sent. Leaving the ``async with`` afterwards has nothing left
        to wait for."""
        await self.agent.kill()

    async def _request(
        self, method: str, params: Any, meta: Mapping[str, Any] | None = None
    ) -> Any:
        return await self.agent.request(method, params, meta)

    async def _notify(
        self, method: str, params: Any, meta: Mapping[str, Any] | None = None
    ) -> bool:
        return await self.agent.notify(method, params, meta)

    async def authenticate(self, method_id: str, *, meta: Mapping[str, Any] | None = None) -> None:
        """Log in with one of the agent's login methods (see :meth:`Agent.authenticate`)."""
        await self.agent.authenticate(method_id, meta=meta)

    async def logout(self, *, meta: Mapping[str, Any] | None = None) -> None:
        """Log out (see :meth:`Agent.logout`)."""
        await self.agent.logout(meta=meta)

    async def list_sessions(
        self, cursor: str | None = None, *, meta: Mapping[str, Any] | None = None
    ) -> SessionPage:
        """One page of the agent's sessions in this session's folder (see
        :meth:`Agent.list_sessions`)."""
        return await self.agent.list_sessions(cwd=str(self.workspace.cwd), cursor=cursor, meta=meta)

    async def call_extension(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        meta: Mapping[str, Any] | None = None,
    ) -> Any:
        """Call one of the agent's extension methods (see :meth:`Agent.call_extension`)."""
        return await self.agent.call_extension(method, params, meta=meta)

    async def notify_extension(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        meta: Mapping[str, Any] | None = None,
    ) -> bool:
        """Send an extension notification (see :meth:`Agent.notify_extension`)."""
        return await self.agent.notify_extension(method, params, meta=meta)

    # --- opening ------------------------------------------------------------------------------

    def _session_params(
        self, mcp_servers: Sequence[McpServer | Mapping[str, Any]] | None = None, **extra: Any
    ) -> dict[str, Any]:
        """The params of ``session/new``, ``load``, ``resume`` and ``fork``: the folders and
        the MCP servers (``mcp_servers``, else the session's), as this agent takes them."""
        servers = as_servers(self.mcp_servers if mcp_servers is None else mcp_servers)
        agent = self.agent
        wire = wire_servers(
            servers, agent.version, agent.agent_capabilities, path=agent.agent_env.get("PATH")
        )
        params: dict[str, Any] = {"cwd": str(self.workspace.cwd), "mcpServers": wire, **extra}
        additional = [str(root) for root in self.workspace.roots[1:]]
        if additional:
            params["additionalDirectories"] = additional
        return params

    def _reopen(self) -> None:
        """Closed here before, the session is opened again on its agent."""
        self.closed = False
        if self.agent.task_group is not None:
            self.answers.start(self.agent.task_group)

    def _may_open(self, session_id: str | None) -> None:
        """A session follows one session of the agent: it may open it again, not another."""
        if self.closed:
            raise AcpAdaptersError("the session is closed")
        ours = self.session_id
        if ours is not None and session_id != ours:
            raise AcpAdaptersError(
                f"this session is {ours!r}: session.agent opens another one on this agent"
            )
        if session_id is not None and ours is None:
            other = self.agent.session(session_id)
            if other is not None:
                raise AcpAdaptersError(f"session {session_id!r} is open on this connection already")

    async def _open(
        self, method: str, params: dict[str, Any], meta: Mapping[str, Any] | None
    ) -> Any:
        """Send one of the requests that open this session; the traffic reader knows it
        for this session's by its id."""
        request_id = self.agent.connection.new_id()
        self.traffic.opening = request_key(request_id)
        result = await self.agent.guarded(method, params, meta, request_id=request_id)
        if self.session_id is None:
            raise RpcError(-32603, f"{method} answered without a sessionId")
        twin = next(
            (
                s
                for s in self.agent.sessions
                if s is not self and not s.closed and s.session_id == self.session_id
            ),
            None,
        )
        if twin is not None:
            self.closed = True
            raise AcpAdaptersError(
                f"the agent answered {method} with session {self.session_id!r}, which is "
                "open on this connection already"
            )
        # What came with the answer (a replayed history) is in the timeline now.
        self._catch_up()
        if self._checkpointer is not None and self.agent.task_group is not None:
            # The first look at the folders (the longest) runs while the application and
            # the agent get ready; the turn's start waits for it.
            self.agent.task_group.start_soon(self._checkpoint, "opened")
        return result

    async def new_session(
        self,
        *,
        mcp_servers: Sequence[McpServer | Mapping[str, Any]] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> str:
        """Start this session (``session/new``) in its folder; returns its id.

        A session that has one already does not start another: ``session.agent.new_session()``
        opens another session on the same agent.

        :param mcp_servers: the MCP servers for this session (default: ``connect``'s).
        :raises McpServerError: a server the agent does not take (nothing is sent).
        """
        if self.session_id is not None:
            raise AcpAdaptersError(
                f"this session is {self.session_id!r}: session.agent.new_session() opens "
                "another one on this agent"
            )
        self._may_open(None)
        await self._open("session/new", self._session_params(mcp_servers), meta)
        assert self.session_id is not None
        return self.session_id

    async def load_session(
        self,
        session_id: str,
        *,
        mcp_servers: Sequence[McpServer | Mapping[str, Any]] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        """Load an earlier session: the agent replays its history (marked ``replayed`` in
        the timeline), and this returns once the replay is over (v1 ``session/load``,
        when the agent offers it; v2: a resume that replays from the start).

        :raises CapabilityError: the agent does not offer it.
        """
        self._may_open(session_id)
        if self.version == 2:
            await self.resume_session(session_id, replay=True, mcp_servers=mcp_servers, meta=meta)
            return
        self.agent.require("session/load")
        params = self._session_params(mcp_servers, sessionId=session_id)
        await self._open("session/load", params, meta)

    async def resume_session(
        self,
        session_id: str,
        *,
        replay: bool = False,
        mcp_servers: Sequence[McpServer | Mapping[str, Any]] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        """Resume an earlier session without its history (``session/resume``; v2 can replay
        it from the start: ``replay=True``).

        :raises CapabilityError: the agent does not offer it.
        """
        self._may_open(session_id)
        self.agent.require("session/resume")
        params = self._session_params(mcp_servers, sessionId=session_id)
        if self.version == 2 and replay:
            params["replayFrom"] = {"type": "start"}
        await self._open("session/resume", params, meta)

    async def open_session(
        self,
        session_id: str,
        *,
        mcp_servers: Sequence[McpServer | Mapping[str, Any]] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        """Open an earlier session: resumed when the agent can, else loaded (its history
        replayed).

        :raises CapabilityError: the agent can do neither.
        """
        if self.agent.offers("session/resume"):
            await self.resume_session(session_id, mcp_servers=mcp_servers, meta=meta)
        elif self.agent.offers("session/load"):
            await self.load_session(session_id, mcp_servers=mcp_servers, meta=meta)
        else:
            raise CapabilityError(
                "the agent offers neither session/resume nor session/load", "session/resume"
            )

    async def _open_thread_session(self, session_id: str, *, renew: bool) -> None:
        """Open the earlier session ``session_id`` (:meth:`open_session`). With ``renew``
        (the session of the thread gone on with), an agent that no longer has it (-32002,
        not found: it keeps no sessions, or lost them) gets a new one instead: the thread
        goes on with it, after its earlier turns, and its timeline says so (a ``notice``)."""
        try:
            await self.open_session(session_id)
        except RpcError as error:
            # The traffic reader let the lost session go as the answer came (see
            # :class:`~acp_adapters.projection.traffic.Traffic`).
            if not (renew and error.code == RESOURCE_NOT_FOUND and self.session_id is None):
                raise
            await self.new_session()

    async def fork(
        self,
        *,
        cwd: str | None = None,
        mcp_servers: Sequence[McpServer | Mapping[str, Any]] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> Session:
        """A new session made from this one's context (``session/fork``, unstable:
        ``connect(unstable=True)``); this one goes on unchanged."""
        if self.session_id is None:
            raise AcpAdaptersError("the session has not started")
        return await self.agent.fork_session(
            self.session_id, cwd=cwd, mcp_servers=mcp_servers, meta=meta
        )

    async def close(self, *, meta: Mapping[str, Any] | None = None) -> bool:
        """Close the session: what is queued is dropped, its terminals are ended, and the
        agent is told (``session/close``) when it offers that, else a running turn is
        cancelled. Whether the agent was told. The agent process goes on (its other
        sessions too)."""
        if self.closed:
            return False
        self._drop_queued()
        told = False
        if self.session_id is not None and not self.agent.closed:
            if self.agent.offers("session/close"):
                await self._request("session/close", {"sessionId": self.session_id}, meta)
                told = True
            elif not self._turn_idle():
                await self.cancel()
        self.closed = True
        self._end_watchers()
        await self.answers.close()
        return told

    async def close_session(self, *, meta: Mapping[str, Any] | None = None) -> bool:
        """:meth:`close`, by its older name."""
        return await self.close(meta=meta)

    # --- configuration --------------------------------------------------------------------------

    async def set_mode(self, mode_id: str, *, meta: Mapping[str, Any] | None = None) -> None:
        """Switch the session's mode (v1 ``session/set_mode``; v2, and a v1 agent that has a
        mode config option but no modes: that option)."""
        state = self.projector.state
        has_option = any(o.category == "mode" for o in state.config_options)
        if self.version == 1 and (state.modes or not has_option):
            await self._request(
                "session/set_mode", {"sessionId": self.session_id, "modeId": mode_id}, meta
            )
            return
        option = next(
            (o for o in self.projector.state.config_options if o.category == "mode"), None
        )
        if option is None:
            raise AcpAdaptersError("this agent has no mode option")
        await self.set_config_option(option.id, mode_id, meta=meta)

    async def set_config_option(
        self, config_id: str, value: str | bool, *, meta: Mapping[str, Any] | None = None
    ) -> None:
        """Set one of the session's configuration options."""
        params: dict[str, Any] = {
            "sessionId": self.session_id,
            "configId": config_id,
            "value": value,
        }
        if isinstance(value, bool):
            params["type"] = "boolean"
        elif self.version == 2:
            params["type"] = "id"
        await self._request("session/set_config_option", params, meta)

    # --- turns ------------------------------------------------------------------------------

    def _queue_prompt(self) -> _Ticket:
        """The prompt's place: its turn at once when none runs and none waits."""
        ticket = _Ticket()
        if not self._turn_busy and not self._waiting:
            self._turn_busy = ticket.granted = True
            ticket.event.set()
        else:
            self._waiting.append(ticket)
        return ticket

    async def _wait_turn(self, ticket: _Ticket, blocks: list[dict[str, Any]]) -> None:
        # A prompt that waits is kept in the thread's queue in the store (it survives a
        # restart) until it is sent or dropped.
        writer = self._writer if not ticket.event.is_set() else None
        owner = self.lease.owner if self.lease is not None else None
        position = await writer.queued(blocks, owner) if writer is not None else None
        try:
            await ticket.event.wait()
        except BaseException:
            self._give_up(ticket)
            raise
        finally:
            if writer is not None:
                await writer.unqueued(position)
        if ticket.dropped:
            raise PromptCancelled("the prompt was cancelled before its turn came")

    def _give_up(self, ticket: _Ticket) -> None:
        """A prompt given up while it waited (a timeout around it, a close): out of the
        queue, or, if its turn had just come, the turn passed on."""
        if ticket.granted:
            self._next_turn()
        elif ticket in self._waiting:
            self._waiting.remove(ticket)

    def _next_turn(self) -> None:
        """The turn ended: the next prompt waiting takes it."""
        if self._waiting:
            ticket = self._waiting.popleft()
            ticket.granted = True
            ticket.event.set()
        else:
            self._turn_busy = False

    def _drop_queued(self) -> None:
        while self._waiting:
            ticket = self._waiting.popleft()
            ticket.dropped = True
            ticket.event.set()

    async def thread_queue(self) -> list[list[dict[str, Any]]]:
        """The prompts the session's thread keeps queued in the store (each a list of
        content blocks), in order; [] without a store."""
        if self._writer is None:
            return []
        queued = await self._writer.store.queued_prompts(self._writer.thread.id)
        return [list(prompt.prompt) for prompt in queued]

    @property
    def queued(self) -> int:
        """How many prompts wait for the running turn to end."""
        return len(self._waiting)

    async def prompt(
        self, prompt: str | Sequence[dict[str, Any]], *, meta: Mapping[str, Any] | None = None
    ) -> Turn:
        """Send a prompt and wait for the turn to end; the items of the turn, and why it stopped.

        A prompt sent while a turn runs waits for it (and those before it) to end, in
        order; :meth:`cancel` drops what waits (:class:`PromptCancelled`).
        v1: the prompt's answer ends the turn. v2: the answer only acknowledges it;
        the turn ends with ``state_update`` idle.

        :raises PromptCapabilityError: a block the agent does not take (an image, audio or
            an embedded resource beyond its ``promptCapabilities``); nothing is sent.
        """
        return await self._prompt(prompt, meta, self._checked_ticket(prompt))

    def _checked_ticket(self, prompt: str | Sequence[dict[str, Any]]) -> _Ticket:
        blocks = self._blocks(prompt)
        check_prompt(blocks, self.version, self.agent_capabilities)
        if self.closed:
            raise AcpAdaptersError("the session is closed")
        return self._queue_prompt()

    @staticmethod
    def _blocks(prompt: str | Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{"type": "text", "text": prompt}] if isinstance(prompt, str) else list(prompt)

    async def _prompt(
        self,
        prompt: str | Sequence[dict[str, Any]],
        meta: Mapping[str, Any] | None,
        ticket: _Ticket,
    ) -> Turn:
        await self._wait_turn(ticket, self._blocks(prompt))
        try:
            return await self._run_turn(self._blocks(prompt), meta)
        finally:
            self._next_turn()

    async def _run_turn(self, blocks: list[dict[str, Any]], meta: Mapping[str, Any] | None) -> Turn:
        if self.closed:
            raise AcpAdaptersError("the session is closed")
        if self.agent.closed and self.reconnect and self.session_id is not None:
            await self._reconnect()
        state = self.projector.state
        index = state.turn + 1  # the turn the prompt starts as it is sent
        self._idle = anyio.Event()
        # The folders as the turn starts: every file's true before.
        await self._checkpoint("turn_started", index)
        try:
            await self._request(
                "session/prompt", {"sessionId": self.session_id, "prompt": blocks}, meta
            )
            if self.version == 2 and not self._turn_idle():
                await self._idle.wait()
                if self.agent.closed and not self._turn_idle():
                    raise self.agent.gone or ConnectionClosed(
                        "the agent closed its output mid-turn",
                        self.process.exit_status,
                        self.stderr,
                    )
        except RpcError as error:
            await self._turn_checkpoint(index)
            if auth_required(error):
                raise AuthenticationRequiredError(error.message, self.auth_methods) from error
            raise
        except Exception:
            await self._turn_checkpoint(index)
            raise
        await self._turn_checkpoint(index)
        return Turn(
            index=index,
            stop_reason=state.turn_state.stop_reason,
            items=[item for item in self.projector.timeline() if item.turn == index],
        )

    async def _turn_checkpoint(self, index: int) -> None:
        """The turn ended (or failed): what changed in the folders that no tool call said."""
        if self._checkpointer is not None and self.projector.state.turn == index:
            with anyio.CancelScope(shield=True):
                await self._checkpoint("turn_ended", index)

    async def _reconnect(self) -> None:
        """The agent went away: start it again and open this session on it (resumed, else
        loaded: the history it replays is not added twice), the timeline going on."""
        await self._restart()
        session_id = self.session_id
        assert session_id is not None
        await self._open_thread_session(session_id, renew=self._writer is not None)

    async def _restart(
        self,
        command: Sequence[str] | None = None,
        *,
        protocol: int | None = None,
        grace: float = 2.0,
    ) -> None:
        """Start the agent again (``command``: another command line; by default its own)
        and negotiate with it (``protocol``: the version to ask for, by default the one
        asked before); nothing is opened. The agent still running is shut down first. The
        session leaves the old agent for the new one, its timeline going on: a replay plays
        a capture's connections so, one agent process each."""
        old = self.agent
        task_group = old.task_group
        if task_group is None:
            raise AcpAdaptersError("the session is not running")
        with anyio.CancelScope(shield=True):
            if not old.closed:
                await old.shutdown(grace)
            await self.answers.close()  # the old agent's terminals
        again = await old.restarted(command)
        # This session leaves the old agent (gone) for the new one.
        old.sessions.remove(self)
        again.sessions.append(self)
        self.agent = again
        self.answers.start(task_group)
        task_group.start_soon(again.run, task_group)
        await again.initialize(protocol or old.preferred, elicit=old.elicits)

    def _turn_idle(self) -> bool:
        return self.projector.state.turn_state.state == "idle"

    @overload
    def stream_prompt(
        self,
        prompt: str | Sequence[dict[str, Any]],
        *,
        meta: Mapping[str, Any] | None = None,
        session_events: Literal[False] = False,
    ) -> TurnStream[ItemChange]: ...

    @overload
    def stream_prompt(
        self,
        prompt: str | Sequence[dict[str, Any]],
        *,
        meta: Mapping[str, Any] | None = None,
        session_events: Literal[True],
    ) -> TurnStream[ItemChange | SessionChange]: ...

    def stream_prompt(
        self,
        prompt: str | Sequence[dict[str, Any]],
        *,
        meta: Mapping[str, Any] | None = None,
        session_events: bool = False,
    ) -> TurnStream[Any]:
        """Send a prompt; iterate (``async for``) over each item of its turn as it changes.

        The turn runs in the session, not in the loop that reads it: leaving the loop
        early (``break``) stops the updates, not the turn (``cancel()`` does that). A
        failure of the turn (``ConnectionClosed``, ...) is raised by the iteration. A
        prompt sent while a turn runs waits its turn, as with :meth:`prompt`; its stream
        starts when its turn does.

        :param session_events: also yield a :class:`SessionChange` each time the agent
            reports usage, session info, its commands, the mode or the configuration.
        """
        task_group = self.agent.task_group
        if task_group is None:
            raise AcpAdaptersError("the session is not running")
        ticket = self._checked_ticket(prompt)
        stream: TurnStream[Any] = TurnStream()
        projector = self.projector

        def session_changed(kind: str) -> None:
            stream._put_session(kind, session_json(projector.state))

        async def run() -> None:
            failure: Exception | None = None
            try:
                await self._wait_turn(ticket, self._blocks(prompt))
            except Exception as exc:
                stream._end(exc)
                return
            projector.listeners.append(stream._put)
            if session_events:
                projector.session_listeners.append(session_changed)
            try:
                await self._run_turn(self._blocks(prompt), meta)
            except Exception as exc:
                failure = exc
            finally:
                self._next_turn()
                with contextlib.suppress(ValueError):
                    projector.listeners.remove(stream._put)
                with contextlib.suppress(ValueError):
                    projector.session_listeners.remove(session_changed)
                stream._end(failure)

        task_group.start_soon(run)
        return stream

    def changes(self) -> TurnStream[ItemChange | SessionChange]:
        """Every change of the session from now on, turn or not (``async for``): each item as
        it appears or changes (:class:`ItemChange`), and each time the agent reports usage,
        session info, its commands, the mode or the configuration (:class:`SessionChange`),
        a mode switched with :meth:`set_mode` included. It ends when the session closes or
        the agent goes; ``aclose()`` stops it sooner."""
        stream: TurnStream[Any] = TurnStream()
        projector = self.projector

        def session_changed(kind: str) -> None:
            stream._put_session(kind, session_json(projector.state))

        def stop() -> None:
            with contextlib.suppress(ValueError):
                projector.listeners.remove(stream._put)
            with contextlib.suppress(ValueError):
                projector.session_listeners.remove(session_changed)
            with contextlib.suppress(ValueError):
                self._watchers.remove(end)

        def end() -> None:
            stop()
            stream._end(None)

        projector.listeners.append(stream._put)
        projector.session_listeners.append(session_changed)
        self._watchers.append(end)
        stream._on_close = stop
        if self.closed or self.agent.closed:
            end()
        return stream

    def _end_watchers(self) -> None:
        for end in list(self._watchers):
            end()

    async def cancel(self, *, meta: Mapping[str, Any] | None = None) -> bool:
        """Cancel the running turn and drop the prompts waiting for it; permission requests
        still open are answered ``cancelled``, and so are those the agent sends later in the
        cancelled turn.

        Never waits more than :data:`SEND_SECONDS` for the agent to take the
        notification (one that stopped reading its stdin would make it wait forever):
        returns whether ``session/cancel`` was sent; when not, ``session.problems``
        says so. :class:`ConnectionClosed` when the agent is gone.
        """
        self._drop_queued()
        self.answers.cancel_questions()
        # Shielded: called from an ``ask`` callback, the question's own scope is cancelled
        # above, and the agent must still hear of it.
        with anyio.CancelScope(shield=True):
            sent = await self._notify("session/cancel", {"sessionId": self.session_id}, meta)
        return sent

    # --- catching up ----------------------------------------------------------------------------

    def _catch_up(self) -> None:
        """Bring the timeline up to the messages handled (see :meth:`Projector.flush`)."""
        self._caught_up = time.monotonic()
        self.projector.flush()

    def caught_up_if_due(self) -> None:
        """Catch up now if the last catch-up is older than :data:`CATCH_UP_SECONDS`: a
        flood of updates may never let the inbox drain."""
        if time.monotonic() - self._caught_up > CATCH_UP_SECONDS:
            self._catch_up()

    def _drained(self) -> None:
        """Every message read is handled: catch up now, or soon if that was just done."""
        if not self.projector.stale:
            return  # the timeline holds every message handled (one update alone: the usual)
        if time.monotonic() - self._caught_up >= CATCH_UP_SECONDS:
            self._catch_up()
        elif not self._catching_up_later and self.agent.task_group is not None:
            self._catching_up_later = True
            self.agent.task_group.start_soon(self._catch_up_later)

    async def _catch_up_later(self) -> None:
        try:
            await anyio.sleep(max(0.0, self._caught_up + CATCH_UP_SECONDS - time.monotonic()))
            self._catch_up()
        finally:
            self._catching_up_later = False


def _agent_of(
    registry: ProviderRegistry, provider: str | None, command: Sequence[str] | None
) -> tuple[Provider, list[str]]:
    """The provider (the one asked for, else the one that claims the agent) and the command
    that starts the agent (the one given, else the provider's)."""
    chosen = registry.get(provider) if provider is not None else registry.for_agent(None)
    if command is None:
        if chosen.launch is None:
            raise AcpAdaptersError(
                f"provider {chosen.id!r} has no launch command: pass command=[...]"
            )
        return chosen, [chosen.launch.command, *chosen.launch.args]
    return chosen, list(command)


@asynccontextmanager
async def connect(
    provider: str | None = None,
    cwd: str | os.PathLike[str] = ".",
    *,
    command: Sequence[str] | None = None,
    env: Mapping[str, str] | None = None,
    policy: Policy | PolicyName = "ask",
    protocol: int | None = None,
    ask: AskCallback | None = None,
    elicit: ElicitCallback | None = None,
    additional_directories: Sequence[str | os.PathLike[str]] = (),
    missing_file_read: MissingFileRead = "error",
    new_session: bool = True,
    pm: pluggy.PluginManager | None = None,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    close_grace: float = 2.0,
    observe: Callable[[str, Any], None] | None = None,
    record: str | os.PathLike[str] | None = None,
    disk_patches: bool | DiskReader = True,
    terminals: TerminalFactory | None = None,
    max_terminals: int = DEFAULT_MAX_TERMINALS,
    subreaper: bool = True,
    max_elements: int = DEFAULT_MAX_ELEMENTS,
    max_pending_requests: int = DEFAULT_MAX_PENDING_REQUESTS,
    content_budget: int = CONTENT_BUDGET,
    mcp_servers: Sequence[McpServer | Mapping[str, Any]] = (),
    session_id: str | None = None,
    login: LoginCallback | None = None,
    unstable: bool = False,
    store: Store | str | os.PathLike[str] | None = None,
    thread: str | None = None,
    on_store_error: StoreErrorCallback | None = None,
    commit_interval: float = COMMIT_INTERVAL,
    run_queued: bool = True,
    reconnect: bool | None = None,
    checkpoints: bool | Checkpointing | CheckpointTaker | None = None,
    busy: Busy = "queue",
    lease_seconds: float = LEASE_SECONDS,
    owner: Owner | None = None,
    move: bool = False,
    start_timeout: float | None = DEFAULT_START_TIMEOUT,
) -> AsyncIterator[Session]:
    """Start an agent and open a session with it.

    :param provider: a provider id (``"claude"``, ``"codex"``, ``"registry:gemini"``, ...); its
        launch command starts the agent. Without it, ``command`` is required and the provider
        is the one that claims the agent's name, else the generic one.
    :param cwd: the session's folder; the agent may read and write only inside it (and
        ``additional_directories``).
    :param command: the command that starts the agent, instead of the provider's.
    :param env: environment variables for the agent, on top of this process's (for a
        provider whose launch does not inherit it, a registry agent's: on top of a minimal
        base, see :class:`~acp_adapters.plugin.providers.LaunchSpec`).
    :param policy: ``read-only``, ``workspace-write``, ``full-access`` or ``ask`` (the ``ask``
        callback decides; without one, requests are cancelled).
    :param protocol: the protocol version to ask for (default: the provider's, 2 for most);
        a v1 answer is accepted either way.
    :param ask: ``async (PermissionQuery) -> PermissionDecision | option id | None``.
    :param elicit: ``async (elicitation request params) -> response | None`` (None declines).
    :param missing_file_read: ``"error"`` (-32002) or ``"empty"`` (``{"content": ""}``, which
        some agents need to create a file).
    :param new_session: start a session right away (else call ``load_session`` or
        ``resume_session``).
    :param session_id: open this earlier session instead of a new one: resumed when the
        agent offers ``session/resume``, else loaded (``session/load``, its history
        replayed and marked ``replayed``); :class:`CapabilityError` when it offers neither.
    :param login: ``async (LoginCommand) -> exit status``: runs a terminal login method
        (``authenticate`` with one); given, the client offers ``auth.terminal``.
        :func:`~acp_adapters.client.auth.run_login_here` runs it on this terminal.
    :param unstable: allow the unstable methods of the schema (``session/fork``).
    :param store: keep the session in a store (a :class:`~acp_adapters.store.Store`, or
        what :func:`~acp_adapters.store.open_store` opens: a SQLite path, a
        ``postgresql://`` URL): its thread's event log, items and turns, committed as
        they come (``session.thread``).
    :param thread: the thread (an id, or a name) to go on with: read back from the store,
        and its agent session resumed (else loaded, without its history twice; an agent
        that no longer has it, -32002, gets a new session for the thread, noted in its
        timeline); a name no thread has yet starts a new thread of that name (not kept
        when the session ends without a turn). Without it, a new thread. A name is neither
        empty, nor only spaces, nor holds a control character
        (:class:`~acp_adapters.store.InvalidThreadName`).
    :param move: go on with the thread in ``cwd`` though it was kept for another folder:
        the thread moves there (its folder in the store, and a note in its timeline).
        Without it, :class:`~acp_adapters.store.ThreadMoved` is raised, before any agent
        starts.
    :param on_store_error: called with each :class:`~acp_adapters.store.StoreError` of a
        commit (the session goes on; the commit is tried again), and with the error of a
        store that cannot be opened: the session then runs without it (without the
        callback, that error is raised).
    :param commit_interval: the least time between two of the session's commits to the
        store (seconds, 0.1 by default): what comes in between goes into the next commit, so
        a fast agent costs the store a few commits a second. The commit at the session's end
        is never delayed.
    :param reconnect: a prompt sent after the agent went away (it crashed) starts the agent
        again and opens the session on it (resumed, else loaded), the timeline going on;
        default: when the session is kept in a store.
    :param run_queued: the prompts the thread's queue holds (queued by other processes, or
        left waiting by a process that ended) are sent, in order, as the session opens
        (``session.restored_turns``), and so are those queued while it lives, between its
        own turns. ``False`` leaves them queued.
    :param busy: what happens when another owner, alive, drives the thread (``thread``;
        see docs/workers.md): ``"queue"`` starts no agent, and yields a
        :class:`~acp_adapters.client.guest.GuestSession` whose prompts go into the thread's
        queue, each turn followed in the store as the owner commits it (and the thread
        taken over when the owner lets it go with a prompt still waiting); ``"fail"``
        raises :class:`~acp_adapters.store.ThreadBusy` naming the owner.
    :param lease_seconds: how long the session's lease on its thread lasts unless renewed
        (it is renewed every third of that while the session lives): an owner that dies
        loses its thread that long after its last renewal.
    :param owner: who the session is as its thread's owner (by default a new
        :class:`~acp_adapters.store.Owner` of this process): a worker passes the owner it
        claimed the thread as (:meth:`~acp_adapters.store.Store.claim_thread`), whose lease
        the session goes on with.
    :param observe: called with ``("out" | "in", message)`` for every message, as it goes,
        with ``("raw", text)`` for each line the agent printed that was not JSON, with
        ``("disk", {"toolCallId", "path", "phase", "content"})`` for each file read around an
        edit (``disk_patches``), and with ``("exit", {"code", "stderr"})`` when the agent
        exits on its own.
    :param record: a capture file to write the session's traffic to, as it goes (the
        workspace written ``<workspace>``, the home folder ``<home>``).
    :param disk_patches: read the files an edit names as it starts and as it completes, for
        its true patch. ``False`` reads nothing; a callable ``(path) -> text | None`` is read
        instead of the disk (a replay reads what its capture recorded: no agent edits the
        disk then).
    :param terminals: what answers the agent's ``terminal/*`` requests:
        ``(workspace, task_group) -> TerminalBackend``. Default: real processes in the
        session's folder (after the policy allowed each command); a replay answers from
        its capture and runs nothing.
    :param max_elements: the most values (strings, numbers, arrays, objects) one line from
        the agent may hold; a longer line is dropped and reported (``too_many_elements``).
    :param max_pending_requests: how many of the agent's requests may be in progress at
        once; one past it is answered -32000 at once.
    :param mcp_servers: the MCP servers the agent may use, sent with ``session/new`` (and
        ``load``, ``resume``): :class:`McpServer` values, or ``mcpServers`` entries with
        their ``name``. Each must be of a transport the agent takes (stdio; http and sse when
        its capabilities say so), else :class:`~acp_adapters.errors.McpServerError`.
    :param checkpoints: checkpoint the session's folders (the true before and after of every
        file, whoever wrote it: see docs/sessions.md): as the session opens, at each turn's
        start and end, as each edit tool call completes, and on ``session.checkpoint()``.
        ``True`` or a :class:`~acp_adapters.client.checkpointing.Checkpointing` (where the
        store is, what to leave out, the caps); ``False`` takes none. Default: on when
        ``disk_patches`` is ``True``. A replay gives the capture's
        (:class:`~acp_adapters.client.checkpointing.RecordedCheckpoints`).
    :param content_budget: how much file content (characters) the session keeps for true
        patches; past it the oldest contents are let go (see docs/security.md).
    :param max_terminals: how many terminals the agent may have at once (not yet released)
        with the default backend; past it ``terminal/create`` is refused (-32000).
    :param subreaper: on Linux, make this process a child subreaper (once, for the whole
        process, see :func:`~acp_adapters.transport.process.become_subreaper`), so that
        what the agent and its terminals leave orphaned is reparented here, and reaped
        when the session kills it. Either way, what they detached is found and killed at
        close where /proc shows it.
    :param start_timeout: the longest the agent may take to answer ``initialize`` and open
        the session (``session/new``, ``load`` or ``resume``), in seconds (60 by default;
        ``None`` waits for ever): past it the agent is stopped and
        :class:`~acp_adapters.errors.StartTimeoutError` raised.
    :raises AgentNotFoundError: the agent's command does not exist, or cannot be executed
        (not a program, no permission).
    :raises StartTimeoutError: the agent did not start within ``start_timeout``.
    :raises ProtocolVersionError: the agent speaks neither version.
    :raises AuthenticationRequiredError: the agent wants authentication before a session.
    :raises ConnectionClosed: the agent exited (with its exit status and stderr tail).
    """
    # What a session that takes the thread over (:mod:`.guest`) is opened with.
    arguments = dict(locals())
    pm = pm or get_plugin_manager()
    registry = ProviderRegistry.collect(pm)
    chosen, command = _agent_of(registry, provider, command)
    inherited: Mapping[str, str] = os.environ
    if chosen.launch is not None and not chosen.launch.inherit_env:
        inherited = base_environment(os.environ)  # no secret of this process, unless passed
    agent_env = {**inherited, **(chosen.launch.env if chosen.launch else {}), **(env or {})}
    the_policy = policy if isinstance(policy, Policy) else Policy(name=policy)
    workspace = Workspace(cwd, tuple(str(p) for p in additional_directories))
    if checkpoints is None:
        checkpoints = disk_patches is True
    taker: Checkpointing | CheckpointTaker | None
    if isinstance(checkpoints, bool):
        taker = Checkpointing() if checkpoints else None
    else:
        taker = checkpoints
    if isinstance(taker, Checkpointing):
        # The session's own files in its folders (its recording, its store) are not the
        # agent's changes: each commit or line written would be a file change of the turn.
        own = _ignore_lines(_own_files(record, store), workspace.roots)
        if own:
            taker = replace(taker, ignore=(*taker.ignore, *own))
    settings = SessionSettings(
        workspace=workspace,
        policy=the_policy,
        ask=ask,
        elicit=elicit,
        missing_file_read=missing_file_read,
        disk_patches=disk_patches,
        terminals=terminals or partial(Terminals, max_terminals=max_terminals),
        content_budget=content_budget,
        mcp_servers=tuple(as_servers(mcp_servers)),
        checkpoints=taker,
    )
    if not 0 <= commit_interval <= 3600:  # also refuses nan
        raise ValueError(f"commit_interval is from 0 to 3600 seconds, not {commit_interval!r}")
    if busy not in ("queue", "fail"):
        raise ValueError(f"busy is 'queue' or 'fail', not {busy!r}")
    if not 0.05 <= lease_seconds <= 86400:  # also refuses nan
        raise ValueError(f"lease_seconds is from 0.05 to 86400, not {lease_seconds!r}")
    if thread is not None:
        check_thread_name(thread)  # before a store is opened or made
    if start_timeout is not None and not 0 < start_timeout <= 86400:  # also refuses nan
        raise ValueError(f"start_timeout is more than 0, a day at most, not {start_timeout!r}")
    # The store first: one that cannot be opened fails before any agent starts (or, with
    # ``on_store_error``, is reported and the session runs kept nowhere).
    the_store: Store | None = store if isinstance(store, Store) else None
    opened_store: Store | None = None
    if store is not None and the_store is None:
        from ..store.open import open_store  # the backends load only when used

        try:
            the_store = opened_store = await open_store(store)  # type: ignore[arg-type]
        except StoreError as error:
            if on_store_error is None:
                raise
            on_store_error(error)
    try:
        held: HeldThread | None = None
        found: Thread | None = None
        if the_store is not None:
            # The thread, and its lease, before any agent starts: no two agents drive it.
            found, made = await _find_thread(
                the_store,
                thread,
                chosen,
                workspace,
                command,
                launch_record(the_policy, settings.mcp_servers, protocol),
                move=move,
            )
            owner = owner or Owner.here()
            thread_id = found.id

            async def take_over() -> None:
                again = {**arguments, "store": the_store, "thread": thread_id}
                again.update(busy="fail", run_queued=False, owner=None)
                async with connect(**again) as taken:
                    assert taken.lease is not None
                    await serve_queue(taken, taken.lease.owner, until_empty=True)

            try:
                lease = await the_store.acquire_lease(found.id, owner, seconds=lease_seconds)
            except ThreadBusy as refused:
                if _moved(found, workspace):
                    raise ThreadMoved(
                        f"the thread {thread} cannot move to {workspace.cwd} while "
                        f"{refused.lease.owner.describe()} drives it in {found.cwd}",
                        thread=str(thread),
                        folder=found.cwd,
                        cwd=str(workspace.cwd),
                        driven_by=refused.lease.owner,
                    ) from refused
                if busy == "fail":
                    raise
                async with _guest(
                    pm,
                    registry,
                    chosen,
                    provider is not None,
                    settings,
                    the_store,
                    found,
                    refused.lease,
                    take_over,
                ) as guest:
                    yield guest
                return
            held = HeldThread(the_store, found, owner, lease, seconds=lease_seconds, on_lost=_no_op)
            # Made here: let go with no turn (the agent did not start, a setting was refused),
            # it is not kept (unless another process queued a prompt for it meanwhile).
            held.forget_if_unused = made
            if _moved(found, workspace):
                try:
                    found = held.thread = await the_store.update_thread(
                        found.id,
                        cwd=str(workspace.cwd),
                        folders=[str(root) for root in workspace.roots[1:]],
                    )
                except BaseException:
                    await held.release()
                    raise
        async with _owner(
            held,
            found,
            the_store,
            command=command,
            chosen=chosen,
            provider=provider,
            registry=registry,
            pm=pm,
            agent_env=agent_env,
            settings=settings,
            workspace=workspace,
            record=record,
            observe=observe,
            max_line_bytes=max_line_bytes,
            max_elements=max_elements,
            max_pending_requests=max_pending_requests,
            login=login,
            unstable=unstable,
            subreaper=subreaper,
            reconnect=reconnect,
            session_id=session_id,
            on_store_error=on_store_error,
            commit_interval=commit_interval,
            protocol=protocol,
            elicit=elicit,
            new_session=new_session,
            run_queued=run_queued,
            close_grace=close_grace,
            start_timeout=start_timeout,
        ) as session:
            yield session
    finally:
        if opened_store is not None:
            with anyio.CancelScope(shield=True):
                await opened_store.close()


def _own_files(
    record: str | os.PathLike[str] | None, store: Store | str | os.PathLike[str] | None
) -> list[str]:
    """The files the session itself writes: its recording, and a SQLite store's file with
    the journal files SQLite keeps beside it."""
    files = [os.fspath(record)] if record is not None else []
    location = store.location if isinstance(store, Store) else store
    if isinstance(location, os.PathLike) or (
        isinstance(location, str) and "://" not in location and not location.startswith("file:")
    ):
        database = os.fspath(location)
        if database != ":memory:":
            files += [database, *(database + end for end in ("-wal", "-shm", "-journal"))]
    return files


def _ignore_lines(files: Sequence[str], roots: Sequence[Path]) -> list[str]:
    """Gitignore lines that leave ``files`` out of the checkpoints of ``roots``: each
    anchored to the root it lies in, its special characters escaped."""
    lines = []
    for file in files:
        real = Path(os.path.realpath(file))
        for root in roots:
            if root in real.parents:
                relative = real.relative_to(root).as_posix()
                lines.append("/" + re.sub(r"([\\*?\[\]]|\s$)", r"\\\1", relative))
    return lines


async def _no_op(error: Any) -> None:
    """Replaced once the session exists (see :func:`_owner`)."""


@asynccontextmanager
async def _owner(
    held: HeldThread | None,
    found: Thread | None,
    the_store: Store | None,
    *,
    command: Sequence[str],
    chosen: Provider,
    provider: str | None,
    registry: ProviderRegistry,
    pm: pluggy.PluginManager,
    agent_env: dict[str, str],
    settings: SessionSettings,
    workspace: Workspace,
    record: str | os.PathLike[str] | None,
    observe: Callable[[str, Any], None] | None,
    max_line_bytes: int,
    max_elements: int,
    max_pending_requests: int,
    login: LoginCallback | None,
    unstable: bool,
    subreaper: bool,
    reconnect: bool | None,
    session_id: str | None,
    on_store_error: StoreErrorCallback | None,
    commit_interval: float,
    protocol: int | None,
    elicit: ElicitCallback | None,
    new_session: bool,
    run_queued: bool,
    close_grace: float,
    start_timeout: float | None,
) -> AsyncIterator[Session]:
    """The session of an agent started here (its thread's lease ``held``, when kept in a
    store): :func:`connect` once the thread is its own."""
    recorder: CaptureRecorder | None = None
    try:
        if record is not None:
            # Before the agent starts: a capture that cannot be written (its folder missing,
            # none made for it) fails with no agent left behind.
            recorder = CaptureRecorder(
                record, workspace=workspace.cwd, agent_home=agent_env.get("HOME")
            )
        if subreaper:
            become_subreaper()
        try:
            process = await AgentProcess.start(command, cwd=workspace.cwd, env=agent_env)
        except FileNotFoundError as exc:
            program = shutil.which(command[0], path=agent_env.get("PATH")) or command[0]
            if os.path.isfile(program):
                # It is there: what is missing is what its #! line names.
                raise AgentNotFoundError(
                    f"cannot start the agent: {command[0]!r} cannot be executed (the "
                    "interpreter its #! line names was not found)",
                    reason="not executable",
                ) from exc
            raise AgentNotFoundError(
                f"cannot start the agent: {command[0]!r} was not found "
                "(install it, or pass command=[...])"
            ) from exc
        except OSError as exc:
            # A folder, a file without the execute bit or of no format the system runs (no
            # #! line), a path through a file: as missing to the user (no program to run
            # there), said as what it is.
            raise AgentNotFoundError(
                f"cannot start the agent: {command[0]!r} cannot be executed "
                f"({exc.strerror or exc}); pass the path of a program, or make it executable",
                reason="not executable",
            ) from exc
    except BaseException:
        if recorder is not None:
            recorder.close()
        if held is not None:
            await held.release()
        raise

    observers = [o for o in (recorder, observe) if o is not None]

    def observe_all(direction: str, message: Any) -> None:
        for observer in observers:
            observer(direction, message)

    agent = Agent(
        process=process,
        command=command,
        provider=chosen,
        registry=registry,
        hooks=Hooks(pm),
        fixed_provider=provider is not None,
        agent_env=agent_env,
        settings=settings,
        observe=observe_all if observers else None,
        max_line_bytes=max_line_bytes,
        max_elements=max_elements,
        max_pending_requests=max_pending_requests,
        login=login,
        unstable=unstable,
    )
    # The first session reads the negotiation itself; the others are told of it.
    session = Session(agent, settings)
    agent.sessions.append(session)
    session.reconnect = reconnect if reconnect is not None else the_store is not None
    writer: ThreadWriter | None = None
    try:
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(agent.run, task_group)
            try:
                asked = session_id  # the application's (else the thread's: renewed if lost)
                if the_store is not None and held is not None and found is not None:
                    # Read back (a thread gone on with) before the agent hears anything.
                    writer, session_id = await _thread_writer(
                        the_store,
                        found,
                        session,
                        session_id,
                        on_store_error,
                        recorder,
                        commit_interval,
                    )
                    session.lease = held
                    task_group.start_soon(writer.run)

                    async def lost(error: LeaseLost) -> None:
                        # Another may drive the thread now: this agent stops at once.
                        writer._failed(error)
                        await session.kill()

                    held._on_lost = lost
                    task_group.start_soon(held.keep)
                phase = "initialize"
                # Bounded: an agent that never answers (a wrong command, a hung start) must
                # not hold the caller for ever.
                with anyio.move_on_after(start_timeout) as starting:
                    await agent.initialize(
                        protocol or chosen.protocol_version, elicit=elicit is not None
                    )
                    if session_id is not None:
                        phase = "session/load or session/resume"
                        await session._open_thread_session(
                            session_id, renew=writer is not None and asked is None
                        )
                    elif new_session:
                        phase = "session/new"
                        await session.new_session()
                if starting.cancelled_caught:
                    assert start_timeout is not None
                    raise StartTimeoutError(
                        f"the agent did not answer {phase} within {start_timeout:g} s: "
                        "it was stopped",
                        phase,
                    )
                if writer is not None and held is not None and run_queued:
                    if session.session_id is not None:
                        # What waits in the thread's queue runs first, in order.
                        while (
                            queued := await writer.store.claim_prompt(held.thread.id, held.owner)
                        ) is not None:
                            session.restored_turns.append(stream_claimed(session, queued))
                    task_group.start_soon(serve_queue, session, held.owner)
                yield session
            finally:
                if held is not None:
                    # A prompt another process queued, running now, runs to its end.
                    await stop_serving(session)
                await agent.shutdown(close_grace)  # and the agents started again after it
                if session.agent is not agent:
                    # One started after the one before was shut down (a replay's next
                    # connection) is no successor of a shut one: it is shut down here.
                    await session.agent.shutdown(close_grace)
                if writer is not None:
                    with contextlib.suppress(StoreError):
                        await writer.flush()
                task_group.cancel_scope.cancel()
                if recorder is not None:
                    recorder.close()
    except BaseExceptionGroup as group:
        # One failure (the application's, or a typed error of the session) comes out as
        # itself, not wrapped in the task group's exception group.
        if len(group.exceptions) == 1:
            raise group.exceptions[0] from None
        raise
    finally:
        if held is not None:
            await held.release()


@asynccontextmanager
async def _guest(
    pm: pluggy.PluginManager,
    registry: ProviderRegistry,
    chosen: Provider,
    fixed_provider: bool,
    settings: SessionSettings,
    store: Store,
    thread: Thread,
    lease: Lease,
    take_over: Callable[[], Any],
) -> AsyncIterator[Session]:
    """A session that queues behind ``lease``'s owner (:mod:`.guest`)."""
    from .guest import GuestSession

    async with anyio.create_task_group() as task_group:
        guest = GuestSession(
            hooks=Hooks(pm),
            provider=chosen,
            registry=registry,
            fixed_provider=fixed_provider,
            settings=settings,
            store=store,
            thread=thread,
            lease=lease,
            task_group=task_group,
            take_over=take_over,
        )
        try:
            await guest.read_back()
            task_group.start_soon(guest.follow)
            yield guest
        finally:
            await guest.close()
            task_group.cancel_scope.cancel()


async def enqueue(
    store: Store | str | os.PathLike[str] | None,
    thread: str,
    prompt: str | Sequence[dict[str, Any]],
    *,
    provider: str | None = None,
    command: Sequence[str] | None = None,
    cwd: str | os.PathLike[str] = ".",
    additional_directories: Sequence[str | os.PathLike[str]] = (),
    policy: Policy | PolicyName = "ask",
    mcp_servers: Sequence[McpServer | Mapping[str, Any]] = (),
    protocol: int | None = None,
    pm: pluggy.PluginManager | None = None,
) -> QueuedPrompt:
    """Queue a prompt for a thread (a name or an id) and return at once: whoever owns the
    thread runs it (its live owner, a session that takes it, a worker). A name no thread has
    yet makes the thread, started as ``connect`` would start it (``provider`` or
    ``command``, ``cwd``, the folders, the policy, the MCP servers: what a worker reads).

    :raises StoreError: the store cannot be opened or written.
    """
    from ..store.open import open_store

    pm = pm or get_plugin_manager()
    registry = ProviderRegistry.collect(pm)
    chosen, command = _agent_of(registry, provider, command)
    the_policy = policy if isinstance(policy, Policy) else Policy(name=policy)
    workspace = Workspace(cwd, tuple(str(p) for p in additional_directories))
    launch = launch_record(the_policy, as_servers(mcp_servers), protocol)
    opened = store if isinstance(store, Store) else await open_store(store)
    try:
        # An existing thread keeps how its owner started it.
        # ``cwd`` is a new thread's: an existing one is queued for where it is.
        found, _ = await _find_thread(
            opened, thread, chosen, workspace, command, launch, False, move=True
        )
        return await opened.enqueue(found.id, Session._blocks(prompt))
    finally:
        if opened is not store:
            with anyio.CancelScope(shield=True):
                await opened.close()


async def _find_thread(
    store: Store,
    thread: str | None,
    provider: Provider,
    workspace: Workspace,
    command: Sequence[str],
    launch: dict[str, Any],
    launch_given: bool = True,
    *,
    move: bool = False,
) -> tuple[Thread, bool]:
    """The session's thread (``thread``: an id or a name): found, or made (and whether it
    was made here); how its agent is started kept up to date on it (for a worker to start
    it again). One kept for another folder is :class:`ThreadMoved` unless ``move``."""
    found: Thread | None = None
    if thread is not None:
        found = await store.thread_named(thread)
        if found is None:
            with contextlib.suppress(ThreadNotFound):
                found = await store.thread(thread)
    if found is None:
        try:
            made = await store.create_thread(
                provider=provider.id,
                cwd=str(workspace.cwd),
                name=thread,
                folders=[str(root) for root in workspace.roots[1:]],
                command=None if provider.launch is not None else list(command),
                launch=launch,
            )
        except StoreError:
            # Made meanwhile by another process: that one.
            again = await store.thread_named(thread) if thread is not None else None
            if again is None:
                raise
            found = again
        else:
            return made, True
    if _moved(found, workspace) and not move:
        # Going on elsewhere would have the agent load the session in another folder and
        # the store keep the old one: only when asked.
        raise ThreadMoved(
            f"the thread {thread} is kept for {found.cwd}, not {workspace.cwd}: go on with "
            f"it there (cwd={found.cwd!r}, `run --cwd`), or move it here (move=True, "
            "`run --move`)",
            thread=str(thread),
            folder=found.cwd,
            cwd=str(workspace.cwd),
        )
    if found.launch != launch and launch_given:
        found = await store.update_thread(found.id, launch=launch)
    return found, False


def _moved(thread: Thread, workspace: Workspace) -> bool:
    """Whether the thread is kept for another folder than the session's (each as its real
    path: a link to the same folder is the same folder)."""
    here = str(workspace.cwd)
    return thread.cwd != here and os.path.realpath(thread.cwd) != here


async def _thread_writer(
    store: Store,
    found: Thread,
    session: Session,
    session_id: str | None,
    on_error: StoreErrorCallback | None,
    recorder: CaptureRecorder | None = None,
    interval: float = COMMIT_INTERVAL,
) -> tuple[ThreadWriter, str | None]:
    """The writer of the session's thread; the thread is read back into the session first.
    The agent session to open: the one asked for, else the thread's."""
    writer = ThreadWriter(store, found, session, on_error=on_error, interval=interval)
    writer.attach()  # what the read back writes (a turn ended) is the thread's too
    await reopened(writer, recorder)
    session.thread = found
    session._writer = writer
    return writer, session_id or found.agent_session_id


__all__ = [
    "CLIENT_INFO",
    "DEFAULT_START_TIMEOUT",
    "Agent",
    "AgentNotFoundError",
    "AuthenticationRequiredError",
    "CapabilityError",
    "ItemChange",
    "PromptCancelled",
    "ProtocolVersionError",
    "Session",
    "SessionChange",
    "SessionPage",
    "SessionSettings",
    "StartTimeoutError",
    "Turn",
    "TurnStream",
    "connect",
    "enqueue",
]
