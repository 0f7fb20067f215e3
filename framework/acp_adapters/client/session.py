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
The agent's requests are answered here: permissions through the
``decide_permission`` hook and the policy (``ask``: the application's
callback), the file system inside the session's folders only, terminals as
real processes, elicitation by the application (default: decline).
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Generic, Literal, TypeVar, overload

import anyio
import pluggy
from anyio.abc import TaskGroup

from ..errors import (
    AcpAdaptersError,
    AgentNotFoundError,
    AuthenticationRequiredError,
    ProtocolVersionError,
)

if sys.version_info < (3, 11):
    from exceptiongroup import BaseExceptionGroup
from ..capture.format import AGENT_TO_CLIENT, CLIENT_TO_AGENT, DiskLine, disk_read
from ..capture.recorder import CaptureRecorder
from ..plugin.hooks import Hooks
from ..plugin.manager import get_plugin_manager
from ..plugin.permissions import Policy, PolicyName
from ..plugin.providers import Provider, ProviderRegistry
from ..projection.negotiation import negotiated_version
from ..projection.projector import Projector
from ..projection.timeline import Timeline, session_json
from ..projection.traffic import Traffic
from ..runtime import CONTENT_BUDGET, SessionState
from ..timeline.items import TimelineItem
from ..transport import (
    AgentProcess,
    Connection,
    ConnectionClosed,
    Problem,
    RpcError,
)
from ..transport.jsonrpc import (
    DEFAULT_MAX_ELEMENTS,
    DEFAULT_MAX_LINE_BYTES,
    DEFAULT_MAX_PENDING_REQUESTS,
)
from ..transport.process import EXIT_OUTPUT_SECONDS, become_subreaper
from .answers import (
    AgentRequests,
    AskCallback,
    DiskReader,
    ElicitCallback,
    TerminalFactory,
)
from .capabilities import check_prompt, client_capabilities
from .mcp import McpServer, as_servers, wire_servers
from .terminals import DEFAULT_MAX_TERMINALS, Terminals
from .workspace import MissingFileRead, Workspace

CLIENT_INFO = {"name": "acp-adapters", "title": "acp-adapters", "version": "0.1.0"}
AUTH_REQUIRED = -32000
#: How often, at most, the timeline catches up with the messages handled: a message
#: streamed in many chunks is projected again once per this, not once per chunk.
CATCH_UP_SECONDS = 0.02
#: How long a notification the client sends on its own (``session/cancel``) may wait to
#: be written: an agent that stopped reading its stdin fills the pipe, and a cancel, or
#: a close, must not wait for it.
SEND_SECONDS = 1.0
#: How long, once the agent's output has ended, its exit status and the rest of its
#: stderr are waited for before the session reports it gone.
EXIT_WAIT_SECONDS = 2.0


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


class Session:
    """A live session with one agent. Made by :func:`connect`."""

    def __init__(
        self,
        *,
        process: AgentProcess,
        provider: Provider,
        registry: ProviderRegistry,
        hooks: Hooks,
        workspace: Workspace,
        policy: Policy,
        ask: AskCallback | None,
        elicit: ElicitCallback | None,
        missing_file_read: MissingFileRead,
        max_line_bytes: int,
        fixed_provider: bool,
        agent_env: Mapping[str, str],
        observe: Callable[[str, Any], None] | None = None,
        disk_patches: bool | DiskReader = True,
        terminals: TerminalFactory,
        max_elements: int = DEFAULT_MAX_ELEMENTS,
        max_pending_requests: int = DEFAULT_MAX_PENDING_REQUESTS,
        content_budget: int = CONTENT_BUDGET,
        mcp_servers: Sequence[McpServer | Mapping[str, Any]] = (),
    ) -> None:
        #: What the connection skipped or ignored (lines that were not JSON, unknown notifications).
        self.problems: list[Problem] = []
        self.process = process
        self.provider = provider
        self.registry = registry
        self.hooks = hooks
        self.workspace = workspace
        self.policy = policy
        self.projector = Projector(
            hooks,
            provider,
            fixed_provider=fixed_provider,
            state=SessionState(content_budget=content_budget),
        )
        #: The one reader of the session's traffic (the one a recording is projected with):
        #: every message in and out, the disk reads and the agent's exit go through it.
        self.traffic = Traffic(self.projector, registry)
        #: What answers the agent's requests and takes in its notifications.
        self.answers = AgentRequests(
            self,
            ask=ask,
            elicit=elicit,
            missing_file_read=missing_file_read,
            disk_patches=disk_patches,
            terminals=terminals,
        )
        self.connection = Connection(
            process.stdout,
            process.stdin,
            on_request=self.answers.on_request,
            on_notification=self.answers.on_notification,
            on_problem=self.problems.append,
            on_message=self.saw,
            on_drained=self._drained,
            max_line_bytes=max_line_bytes,
            max_elements=max_elements,
            max_pending_requests=max_pending_requests,
        )
        self.version = 1
        self.agent_info: dict[str, Any] = {}
        self.agent_capabilities: dict[str, Any] = {}
        self.auth_methods: list[dict[str, Any]] = []
        self._idle = anyio.Event()
        self._closed = anyio.Event()
        #: How the agent went away (its exit status, its stderr), once it has.
        self._gone: ConnectionClosed | None = None
        self._shut: anyio.Event | None = None  # set once the session is shut down
        self._finished = anyio.Event()  # both pipes read to their end
        self._caught_up = time.monotonic()
        self._catching_up_later = False
        self._task_group: TaskGroup | None = None
        self._agent_env = agent_env
        self._observe = observe
        self._shutting_down = False
        #: The MCP servers every session of this connection gets, unless told otherwise.
        self.mcp_servers = as_servers(mcp_servers)

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
    def stderr(self) -> str:
        """The end of what the agent wrote to stderr."""
        return self.process.stderr.text()

    # --- the traffic ---------------------------------------------------------------------------

    def saw(self, direction: str, payload: Any) -> None:
        """One event of the session's traffic: ``("out" | "in", message)`` as the connection
        writes or takes in a message, ``("raw", text)``, ``("disk", read)`` and ``("exit",
        {"code", "stderr"})``. The traffic reader projects it, then the observers (a
        recording) see it: a recording holds exactly what the timeline was made of."""
        at = time.time()
        if direction == "out":
            self.traffic.message(CLIENT_TO_AGENT, payload, at)
        elif direction == "in":
            self.traffic.message(AGENT_TO_CLIENT, payload, at)
        elif direction == "disk":
            read = disk_read(payload)
            if isinstance(read, DiskLine):
                self.traffic.disk(read, at)
        elif direction == "exit":
            self.traffic.exited(payload.get("code"), str(payload.get("stderr", "")), at)
        if self._observe is not None:
            self._observe(direction, payload)

    # --- running --------------------------------------------------------------------------

    async def _run(self, task_group: TaskGroup) -> None:
        self._task_group = task_group
        self.answers.start(task_group)
        try:
            await self._serve()
        finally:
            # Also when cancelled (a timeout around the session): nothing reads the pipes
            # any more, so a close has nothing to wait for.
            self._finished.set()

    async def _serve(self) -> None:
        async with anyio.create_task_group() as inner:
            inner.start_soon(self.process.collect_stderr)
            # Its exit, not only the end of its output: a process it left running may
            # hold the output open long after (the watcher then closes this side).
            inner.start_soon(self.process.watch_exit)
            await self.connection.serve(inner)
            # Its exit status and the rest of its stderr say why it went: wait for them.
            with anyio.move_on_after(EXIT_WAIT_SECONDS):
                await self.process.process.wait()
                await self.process.stderr_ended.wait()
            status, stderr = self.process.exit_status, self.stderr
            if not self._shutting_down:
                # Nobody asked it to go: the timeline (and a recording) says it exited.
                self.saw("exit", {"code": status, "stderr": stderr})
            reason = "the agent exited" if status is not None else "the agent closed its output"
            self._gone = ConnectionClosed(reason, status, stderr)
            self.connection.fail_pending(self._gone)
            self._closed.set()
            self._idle.set()

    async def _shutdown(self, grace: float) -> None:
        """End the terminals and the agent (once: a second call waits for the first)."""
        with anyio.CancelScope(shield=True):
            if self._shut is not None:
                await self._shut.wait()
                return
            self._shut = anyio.Event()
            self._shutting_down = True
            try:
                await self.answers.close()
                await self.process.close(grace=grace)
                # Until both of the agent's pipes are read to their end (or closed), their
                # transports stay open; an event loop closed before that leaves them to be
                # collected unclosed.
                with anyio.move_on_after(EXIT_WAIT_SECONDS):
                    await self._finished.wait()
            finally:
                self._shut.set()

    async def kill(self) -> None:
        """End the session now: its terminals, and the agent killed at once (SIGKILL, its
        whole process group and, on Linux, what it detached); no ``session/cancel`` is
        sent. Leaving the ``async with`` afterwards has nothing left to wait for."""
        await self._shutdown(0)

    async def _request(
        self, method: str, params: Any, meta: Mapping[str, Any] | None = None
    ) -> Any:
        if meta is not None:
            params = {**(params or {}), "_meta": dict(meta)}
        try:
            return await self.connection.request(method, params)
        except ConnectionClosed as error:
            gone = await self._why_gone(error)
            if gone is error:
                raise
            raise gone from None

    async def _why_gone(self, error: ConnectionClosed) -> ConnectionClosed:
        """How the agent went, with its exit status and stderr: a write that found its stdin
        closed fails before the session has seen it exit, so wait (bounded) for that."""
        if self._gone is None:
            with anyio.move_on_after(EXIT_WAIT_SECONDS + EXIT_OUTPUT_SECONDS):
                await self._closed.wait()
        return self._gone or error

    async def _notify(
        self, method: str, params: Any, meta: Mapping[str, Any] | None = None
    ) -> bool:
        """Send a notification, waiting :data:`SEND_SECONDS` at most; whether it was sent.

        An agent that stopped reading its stdin (a full pipe) would keep the write
        waiting forever: past the bound the notification is given up on (asyncio may
        still write it once the agent reads) and a ``not_sent`` problem is recorded.
        """
        if meta is not None:
            params = {**(params or {}), "_meta": dict(meta)}
        with anyio.move_on_after(SEND_SECONDS) as scope:
            try:
                await self.connection.notify(method, params)
            except ConnectionClosed as error:
                raise await self._why_gone(error) from None
        if scope.cancelled_caught:
            self.problems.append(
                Problem("not_sent", f"{method}: the agent is not reading its input")
            )
            return False
        return True

    # --- negotiation and sessions -------------------------------------------------------------

    async def _initialize(self, preferred: int) -> None:
        elicit = self.answers.elicits
        v1_params = {
            "protocolVersion": 1,
            "clientCapabilities": client_capabilities(1, elicit=elicit),
            "clientInfo": CLIENT_INFO,
        }
        if preferred == 2:
            # Both shapes in one request: a v2 agent reads info/capabilities, a v1 agent
            # that answers 1 still learns the client's fs and terminal capabilities.
            both = {
                **v1_params,
                "protocolVersion": 2,
                "info": CLIENT_INFO,
                "capabilities": client_capabilities(2, elicit=elicit),
            }
            try:
                result = await self._request("initialize", both)
            except RpcError as error:
                if error.code not in (-32602, -32600):
                    raise
                result = await self._request("initialize", v1_params)
        else:
            result = await self._request("initialize", v1_params)
        if not isinstance(result, dict) or result.get("protocolVersion") not in (1, 2):
            answered = result.get("protocolVersion") if isinstance(result, dict) else result
            raise ProtocolVersionError(
                f"the agent answered protocol version {answered!r}; this client speaks 1 and 2"
            )
        version = negotiated_version(result)
        if version > preferred:
            raise ProtocolVersionError(
                f"asked for version {preferred}, the agent answered {version}"
            )
        self.version = version
        info = result.get("agentInfo", result.get("info"))
        self.agent_info = info if isinstance(info, dict) else {}
        caps = result.get("agentCapabilities", result.get("capabilities"))
        self.agent_capabilities = caps if isinstance(caps, dict) else {}
        methods = result.get("authMethods")
        self.auth_methods = (
            [m for m in methods if isinstance(m, dict)] if isinstance(methods, list) else []
        )
        # The traffic reader took the answer in: the session's version and provider.
        self.provider = self.projector.provider

    def _session_params(
        self, mcp_servers: Sequence[McpServer | Mapping[str, Any]] | None = None, **extra: Any
    ) -> dict[str, Any]:
        """The params of ``session/new``, ``load`` and ``resume``: the folders and the MCP
        servers (``mcp_servers``, else the session's), as this agent takes them."""
        servers = as_servers(self.mcp_servers if mcp_servers is None else mcp_servers)
        wire = wire_servers(
            servers, self.version, self.agent_capabilities, path=self._agent_env.get("PATH")
        )
        params: dict[str, Any] = {"cwd": str(self.workspace.cwd), "mcpServers": wire, **extra}
        additional = [str(root) for root in self.workspace.roots[1:]]
        if additional:
            params["additionalDirectories"] = additional
        return params

    async def new_session(
        self,
        *,
        mcp_servers: Sequence[McpServer | Mapping[str, Any]] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> str:
        """Start a new session of the agent in the workspace; returns its id.

        :param mcp_servers: the MCP servers for this session (default: ``connect``'s).
        :raises McpServerError: a server the agent does not take (nothing is sent).
        """
        await self._guarded("session/new", self._session_params(mcp_servers), meta)
        if self.session_id is None:
            raise RpcError(-32603, "session/new answered without a sessionId")
        return self.session_id

    async def load_session(
        self,
        session_id: str,
        *,
        mcp_servers: Sequence[McpServer | Mapping[str, Any]] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        """Load an earlier session (v1 ``session/load``; v2: resume, replayed from the start)."""
        if self.version == 2:
            await self.resume_session(session_id, replay=True, mcp_servers=mcp_servers, meta=meta)
            return
        params = self._session_params(mcp_servers, sessionId=session_id)
        await self._guarded("session/load", params, meta)

    async def resume_session(
        self,
        session_id: str,
        *,
        replay: bool = False,
        mcp_servers: Sequence[McpServer | Mapping[str, Any]] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        """Resume an earlier session without replaying it (v2 can replay from the start)."""
        params = self._session_params(mcp_servers, sessionId=session_id)
        if self.version == 2 and replay:
            params["replayFrom"] = {"type": "start"}
        await self._guarded("session/resume", params, meta)

    async def list_sessions(
        self, cursor: str | None = None, *, meta: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """The agent's sessions in this workspace: ``{"sessions": [...], "nextCursor": ...}``."""
        params: dict[str, Any] = {"cwd": str(self.workspace.cwd)}
        if cursor is not None:
            params["cursor"] = cursor
        result = await self._request("session/list", params, meta)
        return result if isinstance(result, dict) else {"sessions": []}

    async def close_session(self, *, meta: Mapping[str, Any] | None = None) -> None:
        """Ask the agent to close the current session."""
        await self._request("session/close", {"sessionId": self.session_id}, meta)

    async def authenticate(self, method_id: str, *, meta: Mapping[str, Any] | None = None) -> None:
        """Authenticate with one of the agent's ``auth_methods``.

        An ``env_var`` method reads its variables from the agent's environment: pass
        them in ``connect(env=...)``; a missing one is an error here, before asking.
        """
        method = next(
            (m for m in self.auth_methods if m.get("id", m.get("methodId")) == method_id), None
        )
        if method is not None and method.get("type") == "env_var":
            environment = self._agent_env
            missing = [
                v["name"]
                for v in method.get("vars", [])
                if isinstance(v, dict)
                and isinstance(v.get("name"), str)
                and v["name"] not in environment
            ]
            if missing:
                raise AcpAdaptersError(
                    f"auth method {method_id!r} reads {', '.join(missing)}: "
                    "pass it in connect(env=...)"
                )
        await self._request(
            "auth/login" if self.version == 2 else "authenticate", {"methodId": method_id}, meta
        )

    async def set_mode(self, mode_id: str, *, meta: Mapping[str, Any] | None = None) -> None:
        """Switch the session's mode (v1 ``session/set_mode``; v2: its mode config option)."""
        if self.version == 1:
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

    async def _guarded(
        self, method: str, params: Any, meta: Mapping[str, Any] | None = None
    ) -> Any:
        """A request whose "authentication required" answer becomes a clear error."""
        try:
            return await self._request(method, params, meta)
        except RpcError as error:
            if _auth_required(error):
                raise AuthenticationRequiredError(error.message, self.auth_methods) from error
            raise

    # --- turns ------------------------------------------------------------------------------

    async def prompt(
        self, prompt: str | Sequence[dict[str, Any]], *, meta: Mapping[str, Any] | None = None
    ) -> Turn:
        """Send a prompt and wait for the turn to end; the items of the turn, and why it stopped.

        v1: the prompt's answer ends the turn. v2: the answer only acknowledges it;
        the turn ends with ``state_update`` idle.

        :raises PromptCapabilityError: a block the agent does not take (an image, audio or
            an embedded resource beyond its ``promptCapabilities``); nothing is sent.
        """
        blocks = [{"type": "text", "text": prompt}] if isinstance(prompt, str) else list(prompt)
        check_prompt(blocks, self.version, self.agent_capabilities)
        state = self.projector.state
        index = state.turn + 1  # the turn the prompt starts as it is sent
        self._idle = anyio.Event()
        try:
            await self._request(
                "session/prompt", {"sessionId": self.session_id, "prompt": blocks}, meta
            )
        except RpcError as error:
            if _auth_required(error):
                raise AuthenticationRequiredError(error.message, self.auth_methods) from error
            raise
        if self.version == 2 and not self._turn_idle():
            await self._idle.wait()
            if self._closed.is_set() and not self._turn_idle():
                raise self._gone or ConnectionClosed(
                    "the agent closed its output mid-turn", self.process.exit_status, self.stderr
                )
        return Turn(
            index=index,
            stop_reason=state.turn_state.stop_reason,
            items=[item for item in self.projector.timeline() if item.turn == index],
        )

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
        failure of the turn (``ConnectionClosed``, ...) is raised by the iteration.

        :param session_events: also yield a :class:`SessionChange` each time the agent
            reports usage, session info, its commands, the mode or the configuration.
        """
        if self._task_group is None:
            raise AcpAdaptersError("the session is not running")
        stream: TurnStream[Any] = TurnStream()
        projector = self.projector

        def session_changed(kind: str) -> None:
            stream._put_session(kind, session_json(projector.state))

        async def run() -> None:
            failure: Exception | None = None
            try:
                await self.prompt(prompt, meta=meta)
            except Exception as exc:
                failure = exc
            finally:
                with contextlib.suppress(ValueError):
                    projector.listeners.remove(stream._put)
                with contextlib.suppress(ValueError):
                    projector.session_listeners.remove(session_changed)
                stream._end(failure)

        projector.listeners.append(stream._put)
        if session_events:
            projector.session_listeners.append(session_changed)
        self._task_group.start_soon(run)
        return stream

    async def cancel(self, *, meta: Mapping[str, Any] | None = None) -> bool:
        """Cancel the running turn; permission requests still open are answered ``cancelled``.

        Never waits more than :data:`SEND_SECONDS` for the agent to take the
        notification (one that stopped reading its stdin would make it wait forever):
        returns whether ``session/cancel`` was sent; when not, ``session.problems``
        says so. :class:`ConnectionClosed` when the agent is gone.
        """
        self.answers.cancel_questions()
        return await self._notify("session/cancel", {"sessionId": self.session_id}, meta)

    # --- extensions ---------------------------------------------------------------------------

    async def call_extension(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        meta: Mapping[str, Any] | None = None,
    ) -> Any:
        """Call one of the agent's extension methods (its name starts with ``_``); its result.

        :raises RpcError: the agent answered with an error (-32601: it has no such method).
        :raises ValueError: ``method`` is not an extension method's name.
        """
        _check_extension(method)
        return await self._request(method, dict(params or {}), meta)

    async def notify_extension(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        meta: Mapping[str, Any] | None = None,
    ) -> bool:
        """Send an extension notification (its name starts with ``_``); whether it was sent
        (as :meth:`cancel`, never waiting on an agent that stopped reading)."""
        _check_extension(method)
        return await self._notify(method, dict(params or {}), meta)

    # --- the agent's requests -----------------------------------------------------------------

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
        if time.monotonic() - self._caught_up >= CATCH_UP_SECONDS:
            self._catch_up()
        elif not self._catching_up_later and self._task_group is not None:
            self._catching_up_later = True
            self._task_group.start_soon(self._catch_up_later)

    async def _catch_up_later(self) -> None:
        try:
            await anyio.sleep(max(0.0, self._caught_up + CATCH_UP_SECONDS - time.monotonic()))
            self._catch_up()
        finally:
            self._catching_up_later = False


def _auth_required(error: RpcError) -> bool:
    """Whether an error answer is ACP's "authentication required": -32000, which agents
    (and this client) also use for other refusals, so its message must say so."""
    return error.code == AUTH_REQUIRED and "auth" in error.message.lower()


def _check_extension(method: str) -> None:
    if not (isinstance(method, str) and method.startswith("_") and len(method) > 1):
        raise ValueError(f"an extension method's name starts with '_': {method!r}")


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
) -> AsyncIterator[Session]:
    """Start an agent and open a session with it.

    :param provider: a provider id (``"claude"``, ``"codex"``, ``"registry:gemini"``, ...); its
        launch command starts the agent. Without it, ``command`` is required and the provider
        is the one that claims the agent's name, else the generic one.
    :param cwd: the session's folder; the agent may read and write only inside it (and
        ``additional_directories``).
    :param command: the command that starts the agent, instead of the provider's.
    :param env: environment variables for the agent, on top of this process's.
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
    :param content_budget: how much file content (characters) the session keeps for true
        patches; past it the oldest contents are let go (see docs/security.md).
    :param max_terminals: how many terminals the agent may have at once (not yet released)
        with the default backend; past it ``terminal/create`` is refused (-32000).
    :param subreaper: on Linux, make this process a child subreaper (once, for the whole
        process, see :func:`~acp_adapters.transport.process.become_subreaper`), so that
        what the agent and its terminals leave orphaned is reparented here, and reaped
        when the session kills it. Either way, what they detached is found and killed at
        close where /proc shows it.
    :raises AgentNotFoundError: the agent's command does not exist.
    :raises ProtocolVersionError: the agent speaks neither version.
    :raises AuthenticationRequiredError: the agent wants authentication before a session.
    :raises ConnectionClosed: the agent exited (with its exit status and stderr tail).
    """
    pm = pm or get_plugin_manager()
    registry = ProviderRegistry.collect(pm)
    chosen = registry.get(provider) if provider is not None else registry.for_agent(None)
    if command is None:
        if chosen.launch is None:
            raise AcpAdaptersError(
                f"provider {chosen.id!r} has no launch command: pass command=[...]"
            )
        command = [chosen.launch.command, *chosen.launch.args]
    agent_env = {**os.environ, **(chosen.launch.env if chosen.launch else {}), **(env or {})}
    the_policy = policy if isinstance(policy, Policy) else Policy(name=policy)
    workspace = Workspace(cwd, tuple(str(p) for p in additional_directories))
    if not the_policy.workspace:
        the_policy = the_policy.model_copy(
            update={"workspace": tuple(str(r) for r in workspace.roots)}
        )
    if subreaper:
        become_subreaper()
    try:
        process = await AgentProcess.start(command, cwd=workspace.cwd, env=agent_env)
    except FileNotFoundError as exc:
        raise AgentNotFoundError(
            f"cannot start the agent: {command[0]!r} was not found "
            "(install it, or pass command=[...])"
        ) from exc
    recorder = (
        CaptureRecorder(record, workspace=workspace.cwd, agent_home=agent_env.get("HOME"))
        if record is not None
        else None
    )
    observers = [o for o in (recorder, observe) if o is not None]

    def observe_all(direction: str, message: Any) -> None:
        for observer in observers:
            observer(direction, message)

    session = Session(
        process=process,
        provider=chosen,
        registry=registry,
        hooks=Hooks(pm),
        workspace=workspace,
        policy=the_policy,
        ask=ask,
        elicit=elicit,
        missing_file_read=missing_file_read,
        max_line_bytes=max_line_bytes,
        fixed_provider=provider is not None,
        agent_env=agent_env,
        observe=observe_all if observers else None,
        disk_patches=disk_patches,
        terminals=terminals or partial(Terminals, max_terminals=max_terminals),
        max_elements=max_elements,
        max_pending_requests=max_pending_requests,
        content_budget=content_budget,
        mcp_servers=mcp_servers,
    )
    try:
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(session._run, task_group)
            try:
                await session._initialize(protocol or chosen.protocol_version)
                if new_session:
                    await session.new_session()
                yield session
            finally:
                await session._shutdown(close_grace)
                task_group.cancel_scope.cancel()
                if recorder is not None:
                    recorder.close()
    except BaseExceptionGroup as group:
        # One failure (the application's, or a typed error of the session) comes out as
        # itself, not wrapped in the task group's exception group.
        if len(group.exceptions) == 1:
            raise group.exceptions[0] from None
        raise


__all__ = [
    "AgentNotFoundError",
    "AuthenticationRequiredError",
    "ItemChange",
    "ProtocolVersionError",
    "Session",
    "SessionChange",
    "Turn",
    "TurnStream",
    "connect",
]
