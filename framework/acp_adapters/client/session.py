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
import functools
import os
import sys
import time
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import (
    TYPE_CHECKING,
    Any,
    Concatenate,
    Generic,
    Literal,
    NoReturn,
    ParamSpec,
    TypeVar,
    overload,
)

import anyio

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
    pass
from .._moved import homes, moved_names
from ..capture.format import request_key
from ..plugin.hooks import Hooks
from ..plugin.permissions import Policy
from ..plugin.providers import Provider, ProviderRegistry
from ..projection.projector import Projector
from ..projection.traffic import Traffic
from ..runtime import CheckpointMark, SessionState
from ..store.base import (
    Thread,
)
from ..timeline.timeline import Timeline, session_json
from ..transport import AgentProcess, Connection, ConnectionClosed, Problem, RpcError
from ..workspace.objects import CheckpointError
from .agent import CLIENT_INFO, Agent, SessionOpening, SessionPage, auth_required, check_keywords
from .agent_requests import (
    AgentRequests,
    AskCallback,
    DiskReader,
    ElicitCallback,
    TerminalFactory,
)
from .auth import AuthMethod
from .capabilities import check_prompt
from .checkpointing import Checkpointing, CheckpointTaker, SessionCheckpoints
from .mcp import McpServer, as_servers, wire_servers
from .ownership import (
    HeldThread,
    QueueServing,
)
from .persistence import ThreadWriter
from .prompt_queue import PromptQueue, Ticket
from .turns import ItemChange, SessionChange, Turn, TurnStream, prompt_blocks
from .workspace import RESOURCE_NOT_FOUND, MissingFileRead, Workspace

if TYPE_CHECKING:
    from typing_extensions import Unpack


T = TypeVar("T")
P = ParamSpec("P")
R = TypeVar("R")

#: How often, at most, the timeline catches up with the messages handled: a message
#: streamed in many chunks is projected again once per this, not once per chunk.
CATCH_UP_SECONDS = 0.02


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


class _OfAgent(Generic[T]):
    """An attribute of a session that is its agent's (read as a property is: it cannot be
    set on the session)."""

    def __init__(self, doc: str | None = None) -> None:
        self.__doc__ = doc
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, session: None, owner: type) -> _OfAgent[T]: ...

    @overload
    def __get__(self, session: Session, owner: type) -> T: ...

    def __get__(self, session: Session | None, owner: type) -> T | _OfAgent[T]:
        if session is None:
            return self
        value: T = getattr(session.agent, self.name)
        return value

    def __set__(self, session: Session, value: T) -> NoReturn:
        raise AttributeError(f"the session's {self.name} is its agent's (session.agent)")


def _agents_method(
    method: Callable[Concatenate[Agent, P], Coroutine[Any, Any, R]],
) -> Callable[Concatenate[Session, P], Coroutine[Any, Any, R]]:
    """A method of a session that is its agent's: the same arguments, the same documentation.
    It is looked up on the session's agent as it is called (a guest's stand-in refuses it
    then, naming it)."""
    name = method.__name__

    @functools.wraps(method)
    async def forwarded(session: Session, /, *args: P.args, **kwargs: P.kwargs) -> R:
        result: R = await getattr(session.agent, name)(*args, **kwargs)
        return result

    return forwarded


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
        self.traffic = Traffic(self.projector, agent.registry)
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
        #: The session's prompts: whether a turn runs, and the prompts waiting for it to end.
        self.prompts = PromptQueue()
        #: Whether a prompt after the agent went away starts it again and goes on
        #: (``connect(reconnect=...)``).
        self.reconnect = False
        #: The store's thread this session is kept in (``connect(store=...)``), if any.
        self.thread: Thread | None = None
        #: What writes the session into its thread.
        self.writer: ThreadWriter | None = None
        #: The session's lease on its thread (who it is as the thread's owner), if kept in
        #: a store.
        self.lease: HeldThread | None = None
        #: Serving the thread's queue: held while a claimed prompt runs (:mod:`.ownership`).
        self.serving = QueueServing()
        #: The turns of the prompts the thread's queue held when it was gone on with, run
        #: in order as the session opened (``connect(run_queued=True)``).
        self.restored_turns: list[TurnStream[ItemChange]] = []
        #: What ends the streams of :meth:`changes` (when the session closes or the agent goes).
        self._watchers: list[Callable[[], None]] = []
        #: The session's checkpoints of its folders (``taking`` none, unless asked).
        self.checkpointing = SessionCheckpoints(
            settings.checkpoints, self.workspace.roots, self.saw, agent.problems
        )

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

    # The connection's, shared by its sessions.
    stderr = _OfAgent[str]("The end of what the agent wrote to stderr.")
    process = _OfAgent[AgentProcess]()
    connection = _OfAgent[Connection]()
    problems = _OfAgent[list[Problem]](
        "What the connection skipped or ignored (lines that were not JSON, unknown "
        "notifications), for all the sessions of the agent."
    )
    version = _OfAgent[int]()
    agent_info = _OfAgent[dict[str, Any]]()
    agent_capabilities = _OfAgent[dict[str, Any]]()
    auth_methods = _OfAgent[list[dict[str, Any]]]()
    login_methods = _OfAgent[list[AuthMethod]]()
    registry = _OfAgent[ProviderRegistry]()
    hooks = _OfAgent[Hooks]()

    # --- the traffic ---------------------------------------------------------------------------

    def saw(self, direction: str, payload: Any) -> None:
        """One event of this session's making (a ``disk`` read around one of its edits, a
        checkpoint and its changes): the connection's traffic, with the session it is for."""
        own = direction in ("disk", "checkpoint", "change")
        if own and isinstance(payload, dict) and self.session_id is not None:
            payload = {**payload, "sessionId": self.session_id}
        self.agent.saw(direction, payload)

    # --- checkpoints ---------------------------------------------------------------------

    @property
    def checkpoints(self) -> bool:
        """Whether the session checkpoints its folders."""
        return self.checkpointing.taking

    async def checkpoint(self) -> CheckpointMark:
        """Take a checkpoint of the session's folders now (it changes no turn's patches).

        :raises CheckpointError: the session takes no checkpoints, or this one failed.
        """
        if not self.checkpointing.taking:
            raise CheckpointError("this session takes no checkpoints (connect(checkpoints=...))")
        head = await self.checkpointing.take("request", self.projector.state.turn, raising=True)
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
        return await self.checkpointing.restore(checkpoint_id, dry_run=dry_run)

    async def tool_call_checkpoint(self, tool_call_id: str, paths: Sequence[str]) -> None:
        """A tool call completed: what the files it names are now, against what they were."""
        if self.checkpointing.taking and not self.projector.replaying:
            await self.checkpointing.take(
                "tool_call", self.projector.state.turn, tool_call_id, paths
            )

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

    authenticate = _agents_method(Agent.authenticate)
    logout = _agents_method(Agent.logout)

    async def list_sessions(
        self, cursor: str | None = None, *, meta: Mapping[str, Any] | None = None
    ) -> SessionPage:
        """One page of the agent's sessions in this session's folder (see
        :meth:`Agent.list_sessions`)."""
        return await self.agent.list_sessions(cwd=str(self.workspace.cwd), cursor=cursor, meta=meta)

    call_extension = _agents_method(Agent.call_extension)
    notify_extension = _agents_method(Agent.notify_extension)

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

    def reopen(self) -> None:
        """Closed here before, the session is opened again on its agent (its terminals can
        be made again); :meth:`Agent.load_session` and the others call it."""
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
        if self.checkpointing.taking and self.agent.task_group is not None:
            # The first look at the folders (the longest) runs while the application and
            # the agent get ready; the turn's start waits for it.
            self.agent.task_group.start_soon(self.checkpointing.take, "opened")
        return result

    async def new_session(self, **opening: Unpack[SessionOpening]) -> str:
        """Start this session (``session/new``) in its folder; returns its id.

        A session that has one already does not start another: ``session.agent.new_session()``
        opens another session on the same agent.

        :param mcp_servers: the MCP servers for this session (default: ``connect``'s).
        :raises McpServerError: a server the agent does not take (nothing is sent).
        """
        check_keywords("new_session", opening, SessionOpening)
        if self.session_id is not None:
            raise AcpAdaptersError(
                f"this session is {self.session_id!r}: session.agent.new_session() opens "
                "another one on this agent"
            )
        self._may_open(None)
        await self._open(
            "session/new", self._session_params(opening.get("mcp_servers")), opening.get("meta")
        )
        assert self.session_id is not None
        return self.session_id

    async def fork_session(self, session_id: str, *, meta: Mapping[str, Any] | None = None) -> str:
        """Start this session as a fork of the agent's session ``session_id``
        (``session/fork``, unstable): a new session made from the earlier one's context;
        its id. :meth:`Agent.fork_session` opens one on the agent."""
        self._may_open(None)
        await self._open("session/fork", self._session_params(sessionId=session_id), meta)
        assert self.session_id is not None
        return self.session_id

    async def load_session(self, session_id: str, **opening: Unpack[SessionOpening]) -> None:
        """Load an earlier session: the agent replays its history (marked ``replayed`` in
        the timeline), and this returns once the replay is over (v1 ``session/load``,
        when the agent offers it; v2: a resume that replays from the start).

        :raises CapabilityError: the agent does not offer it.
        """
        check_keywords("load_session", opening, SessionOpening)
        self._may_open(session_id)
        if self.version == 2:
            await self.resume_session(session_id, replay=True, **opening)
            return
        self.agent.require("session/load")
        params = self._session_params(opening.get("mcp_servers"), sessionId=session_id)
        await self._open("session/load", params, opening.get("meta"))

    async def resume_session(
        self, session_id: str, *, replay: bool = False, **opening: Unpack[SessionOpening]
    ) -> None:
        """Resume an earlier session without its history (``session/resume``; v2 can replay
        it from the start: ``replay=True``).

        :raises CapabilityError: the agent does not offer it.
        """
        check_keywords("resume_session", opening, SessionOpening)
        self._may_open(session_id)
        self.agent.require("session/resume")
        params = self._session_params(opening.get("mcp_servers"), sessionId=session_id)
        if self.version == 2 and replay:
            params["replayFrom"] = {"type": "start"}
        await self._open("session/resume", params, opening.get("meta"))

    async def open_session(self, session_id: str, **opening: Unpack[SessionOpening]) -> None:
        """Open an earlier session: resumed when the agent can, else loaded (its history
        replayed).

        :raises CapabilityError: the agent can do neither.
        """
        check_keywords("open_session", opening, SessionOpening)
        if self.agent.offers("session/resume"):
            await self.resume_session(session_id, **opening)
        elif self.agent.offers("session/load"):
            await self.load_session(session_id, **opening)
        else:
            raise CapabilityError(
                "the agent offers neither session/resume nor session/load", "session/resume"
            )

    async def open_thread_session(self, session_id: str, *, renew: bool) -> None:
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
        self.prompts.drop_waiting()
        told = False
        if self.session_id is not None and not self.agent.closed:
            if self.agent.offers("session/close"):
                await self._request("session/close", {"sessionId": self.session_id}, meta)
                told = True
            elif not self._turn_idle():
                await self.cancel()
        self.closed = True
        self.end_changes()
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

    async def _wait_turn(self, ticket: Ticket, blocks: list[dict[str, Any]]) -> None:
        # A prompt that waits is kept in the thread's queue in the store (it survives a
        # restart) until it is sent or dropped.
        writer = self.writer if not ticket.event.is_set() else None
        owner = self.lease.owner if self.lease is not None else None
        position = await writer.queued(blocks, owner) if writer is not None else None
        try:
            await ticket.event.wait()
        except BaseException:
            self.prompts.give_up(ticket)
            raise
        finally:
            if writer is not None:
                await writer.unqueued(position)
        if ticket.dropped:
            raise PromptCancelled("the prompt was cancelled before its turn came")

    async def thread_queue(self) -> list[list[dict[str, Any]]]:
        """The prompts the session's thread keeps queued in the store (each a list of
        content blocks), in order; [] without a store."""
        if self.writer is None:
            return []
        queued = await self.writer.store.queued_prompts(self.writer.thread.id)
        return [list(prompt.prompt) for prompt in queued]

    @property
    def queued(self) -> int:
        """How many prompts wait for the running turn to end."""
        return len(self.prompts)

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

    def _checked_ticket(self, prompt: str | Sequence[dict[str, Any]]) -> Ticket:
        blocks = prompt_blocks(prompt)
        check_prompt(blocks, self.version, self.agent_capabilities)
        if self.closed:
            raise AcpAdaptersError("the session is closed")
        return self.prompts.take()

    async def _prompt(
        self,
        prompt: str | Sequence[dict[str, Any]],
        meta: Mapping[str, Any] | None,
        ticket: Ticket,
    ) -> Turn:
        await self._wait_turn(ticket, prompt_blocks(prompt))
        try:
            return await self.run_turn(prompt_blocks(prompt), meta)
        finally:
            self.prompts.next_turn()

    async def run_turn(self, blocks: list[dict[str, Any]], meta: Mapping[str, Any] | None) -> Turn:
        if self.closed:
            raise AcpAdaptersError("the session is closed")
        if self.agent.closed and self.reconnect and self.session_id is not None:
            await self._reconnect()
        state = self.projector.state
        index = state.turn + 1  # the turn the prompt starts as it is sent
        self._idle = anyio.Event()
        # The folders as the turn starts: every file's true before.
        await self.checkpointing.take("turn_started", index)
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
        if self.checkpointing.taking and self.projector.state.turn == index:
            with anyio.CancelScope(shield=True):
                await self.checkpointing.take("turn_ended", index)

    async def _reconnect(self) -> None:
        """The agent went away: start it again and open this session on it (resumed, else
        loaded: the history it replays is not added twice), the timeline going on."""
        await self.restart_agent()
        session_id = self.session_id
        assert session_id is not None
        await self.open_thread_session(session_id, renew=self.writer is not None)

    async def restart_agent(
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
        old.remove_session(self)
        again.add_session(self)
        self.agent = again
        self.answers.start(task_group)
        task_group.start_soon(again.run, task_group)
        await again.initialize(protocol or old.preferred, elicit=old.elicits)

    def wake_turn(self) -> None:
        """The turn may have ended (a v2 ``idle`` update, the agent gone): the turn that
        waits for its end looks again."""
        self._idle.set()

    def agent_gone(self) -> None:
        """The agent went away: the turn stops waiting, the change streams end."""
        self.wake_turn()
        self.end_changes()

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
            stream.put_session(kind, session_json(projector.state))

        async def run() -> None:
            failure: Exception | None = None
            try:
                await self._wait_turn(ticket, prompt_blocks(prompt))
            except Exception as exc:
                stream.end(exc)
                return
            items = projector.on_item.subscribe(stream.put_item)
            session = projector.on_session.subscribe(session_changed) if session_events else None
            try:
                await self.run_turn(prompt_blocks(prompt), meta)
            except Exception as exc:
                failure = exc
            finally:
                self.prompts.next_turn()
                items.cancel()
                if session is not None:
                    session.cancel()
                stream.end(failure)

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
            stream.put_session(kind, session_json(projector.state))

        items = projector.on_item.subscribe(stream.put_item)
        session = projector.on_session.subscribe(session_changed)

        def stop() -> None:
            items.cancel()
            session.cancel()
            with contextlib.suppress(ValueError):
                self._watchers.remove(end)

        def end() -> None:
            stop()
            stream.end(None)

        self._watchers.append(end)
        stream.on_close = stop
        if self.closed or self.agent.closed:
            end()
        return stream

    def end_changes(self) -> None:
        """End every stream of :meth:`changes` (the session closed, or its agent went)."""
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
        self.prompts.drop_waiting()
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

    def connection_drained(self) -> None:
        """Every message the connection read is handled (the agent calls it): catch up now,
        or soon if that was just done."""
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


#: The names that moved to :mod:`.connecting`, still found here for one release.
__getattr__ = moved_names(
    __name__,
    homes(
        "acp_adapters.client.connecting", ("connect", "enqueue", "Busy", "DEFAULT_START_TIMEOUT")
    ),
)


__all__ = [
    "CLIENT_INFO",
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
]
