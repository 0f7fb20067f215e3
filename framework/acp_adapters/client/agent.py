"""One agent process and its connection, and the sessions opened on it.

An :class:`Agent` is what :func:`~acp_adapters.connect` starts: the process, the
JSON-RPC connection, the negotiation (version, capabilities, login methods), and every
:class:`~.session.Session` opened on it. One agent process may hold many sessions at
once; each has its own timeline, state, policy and terminals, and what the agent sends
is routed to the session its ``sessionId`` names. What names no session (an extension
request, a request-scoped elicitation) goes to the first one, which refuses what is not
its own.

The connection's traffic is read once per session: every message goes to each
session's :class:`~acp_adapters.projection.traffic.Traffic`, which keeps what is its
own, and then to the observers (a recording holds the whole connection; projecting it
for one session gives that session's timeline).
"""

from __future__ import annotations

import functools
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import InitVar, dataclass, field, replace
from typing import TYPE_CHECKING, Any, Concatenate, NamedTuple, ParamSpec, TypedDict, TypeVar

import anyio
from anyio.abc import TaskGroup

from .. import _json
from ..capture.format import request_key
from ..capture.recorder import capture_entry
from ..errors import (
    AcpAdaptersError,
    AuthenticationRequiredError,
    CapabilityError,
    ProtocolVersionError,
)
from ..plugin.hooks import Hooks
from ..plugin.providers import Provider, ProviderRegistry
from ..projection.negotiation import negotiated_version
from ..projection.routing import Delivery, Route, Router
from ..projection.subscriptions import Subscribers
from ..transport import AgentProcess, Connection, ConnectionClosed, Problem, RpcError
from ..transport.jsonrpc import INVALID_PARAMS
from ..transport.process import EXIT_OUTPUT_SECONDS
from .auth import AuthMethod, LoginCallback, auth_methods, login_command, missing_variables
from .capabilities import agent_offers, client_capabilities

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from .mcp import McpServer
    from .session import Session, SessionSettings

CLIENT_INFO = {"name": "acp-adapters", "title": "acp-adapters", "version": "0.1.0"}
AUTH_REQUIRED = -32000
#: How long a notification the client sends on its own (``session/cancel``) may wait to
#: be written: an agent that stopped reading its stdin fills the pipe, and a cancel, or
#: a close, must not wait for it.
SEND_SECONDS = 1.0
#: How long, once the agent's output has ended, its exit status and the rest of its
#: stderr are waited for before the session reports it gone.
EXIT_WAIT_SECONDS = 2.0
#: The most pages :meth:`Agent.all_sessions` reads: an agent whose cursors never end
#: cannot keep it reading.
MAX_LIST_PAGES = 1000
#: The most updates waiting for their side effects: the connection handles each update
#: right after the router delivered it, so more than a batch's worth never wait.
MAX_UNSETTLED = 4096

P = ParamSpec("P")
R = TypeVar("R")


class TrafficEvent(NamedTuple):
    """One event of a connection's traffic (see :meth:`Agent.saw`), and when the router was
    given it."""

    direction: str
    payload: Any
    at: float


#: What an extension's params, or a request's ``_meta``, are given as: a mapping, or none.
Fields = Mapping[str, Any] | None


class SessionOpening(TypedDict, total=False):
    """What the request that opens a session is given besides the session's id (each method
    of a session that opens it takes these keywords): its MCP servers (left out: the
    session's), and the request's ``_meta``."""

    mcp_servers: Sequence[McpServer | Mapping[str, Any]] | None
    meta: Mapping[str, Any] | None


class SessionPlace(SessionOpening, total=False):
    """Where a session the agent opens is, and what it is given (each method that opens one
    takes these keywords; what is left out is ``connect``'s): its folder, the folders beside
    it, and what :class:`SessionOpening` holds."""

    cwd: str | None
    additional_directories: Sequence[str] | None


def check_keywords(method: str, given: Mapping[str, Any], taken: Any) -> None:
    """A keyword ``method`` does not take (those of the TypedDict ``taken``) is a
    :class:`TypeError`, as Python's own check of a signature would raise."""
    unknown = sorted(set(given) - (taken.__required_keys__ | taken.__optional_keys__))
    if unknown:
        raise TypeError(f"{method}() got an unexpected keyword argument {unknown[0]!r}")


class ConnectionLimits(TypedDict):
    """The bounds of an agent's connection (see :class:`~acp_adapters.client.Limits`): kept,
    for another connection of the same agent (a reconnect)."""

    max_line_bytes: int
    max_elements: int
    max_pending_requests: int


@dataclass(frozen=True, kw_only=True)
class AgentLaunch:
    """How an agent is started and spoken to: made once by ``connect``, and started again
    the same way by :meth:`Agent.restarted` (a reconnect)."""

    #: The command that starts it (a tuple).
    command: tuple[str, ...]
    #: Its environment (what ``connect`` kept of this process's, and what it was given).
    env: Mapping[str, str]
    #: The settings of the sessions opened on it.
    settings: SessionSettings
    #: The bounds of its connection.
    limits: ConnectionLimits
    #: What runs a terminal login method (:meth:`Agent.login`), if anything may.
    login: LoginCallback | None = None
    #: Whether the unstable methods of the schema (``session/fork``) may be used.
    unstable: bool = False


@dataclass(frozen=True)
class SessionPage:
    """One page of the agent's sessions (``session/list``): each a ``SessionInfo``
    (``sessionId``, ``cwd``, ``title``, ``updatedAt``, ...), and the cursor of the next
    page, if there is one."""

    sessions: list[dict[str, Any]] = field(default_factory=list)
    next_cursor: str | None = None


def auth_required(error: RpcError) -> bool:
    """Whether an error answer is ACP's "authentication required": -32000, which agents
    (and this client) also use for other refusals, so its message must say so."""
    return error.code == AUTH_REQUIRED and "auth" in error.message.lower()


def _with_meta(params: Any, meta: Mapping[str, Any] | None) -> Any:
    """A message's params, with ``meta`` as their ``_meta`` (when there is one)."""
    if meta is None:
        return params
    return {**(params or {}), "_meta": dict(meta)}


def _check_extension(method: str) -> None:
    if not (isinstance(method, str) and method.startswith("_") and len(method) > 1):
        raise ValueError(f"an extension method's name starts with '_': {method!r}")


def _page(result: Any) -> SessionPage:
    """A ``session/list`` answer, read as the schema's rules read it: a session that is
    not an object with a string ``sessionId`` and ``cwd`` is skipped, a cursor that is
    not a string is no cursor."""
    if not isinstance(result, dict):
        return SessionPage()
    sessions = result.get("sessions")
    cursor = result.get("nextCursor")
    return SessionPage(
        sessions=[
            entry
            for entry in (sessions if isinstance(sessions, list) else [])
            if isinstance(entry, dict)
            and isinstance(entry.get("sessionId"), str)
            and isinstance(entry.get("cwd"), str)
        ],
        next_cursor=cursor if isinstance(cursor, str) else None,
    )


class ProjectedWith(TypedDict):
    """What a session's timeline is projected with, as :class:`AgentBase` holds it: the
    plugins' hooks, the provider (``fixed_provider``: the one asked for, not one that
    claims the agent) and the registry."""

    hooks: Hooks
    provider: Provider
    registry: ProviderRegistry
    fixed_provider: bool


@dataclass(eq=False, repr=False, kw_only=True)
class AgentBase:
    """What a session reads of the agent it is opened on, a running one (:class:`Agent`) or
    the stand-in of a session that starts none (a guest's): what its traffic is projected
    with, and what the negotiation said (nothing, before there was one)."""

    hooks: Hooks
    provider: Provider
    registry: ProviderRegistry
    fixed_provider: bool
    #: The task group the sessions' answers run in, once there is one.
    task_group: TaskGroup | None = field(default=None, init=False)
    #: Every session opened on this connection, in the order they were made
    #: (:meth:`Agent.add_session`).
    sessions: list[Session] = field(default_factory=list, init=False)
    #: What the connection skipped or ignored (lines that were not JSON, unknown notifications).
    problems: list[Problem] = field(default_factory=list, init=False)
    version: int = field(default=1, init=False)
    agent_info: dict[str, Any] = field(default_factory=dict, init=False)
    agent_capabilities: dict[str, Any] = field(default_factory=dict, init=False)
    #: The agent's ``authMethods`` as it sent them; :attr:`login_methods` reads them.
    auth_methods: list[dict[str, Any]] = field(default_factory=list, init=False)
    login_methods: list[AuthMethod] = field(default_factory=list, init=False)
    #: How the agent went away (its exit status, its stderr), once it has.
    gone: ConnectionClosed | None = field(default=None, init=False)


def _auth_explained(
    request: Callable[Concatenate[Agent, P], Coroutine[Any, Any, R]],
) -> Callable[Concatenate[Agent, P], Coroutine[Any, Any, R]]:
    """``request`` (the same arguments), its "authentication required" answer a clear
    error: :class:`AuthenticationRequiredError`, with the agent's login methods."""

    @functools.wraps(request, assigned=())  # its signature is the request's
    async def guarded(agent: Agent, /, *args: P.args, **kwargs: P.kwargs) -> R:
        """A request whose "authentication required" answer becomes a clear error."""
        try:
            return await request(agent, *args, **kwargs)
        except RpcError as error:
            if auth_required(error):
                raise AuthenticationRequiredError(error.message, agent.auth_methods) from error
            raise

    return guarded


@dataclass(eq=False, repr=False, kw_only=True)
class Agent(AgentBase):
    """A running agent: its process, its connection, and the sessions opened on it."""

    process: AgentProcess
    #: What it was started with (a restart starts the same again).
    launch: AgentLaunch
    #: What the sessions it opens are (:class:`~.session.Session`, given by ``connect``:
    #: the agent module does not import the session's).
    session_class: type[Session]
    #: Called with each event of the traffic, ``(direction, payload)``.
    observe: InitVar[Callable[[str, Any], None] | None] = None

    def __post_init__(self, observe: Callable[[str, Any], None] | None) -> None:
        #: Whose each event of the connection's traffic is: the one decision, for the
        #: projection and the answers alike.
        self.router = Router()
        #: The command that started it, and its environment (the launch's).
        self.command = self.launch.command
        self.agent_env = self.launch.env
        #: The updates the router delivered whose side effects (disk reads around an
        #: edit) the connection has not handled yet.
        self._unsettled: deque[Delivery] = deque(maxlen=MAX_UNSETTLED)
        self.connection = Connection(
            self.process.stdout,
            self.process.stdin,
            on_request=self._on_request,
            on_notification=self._on_notification,
            on_problem=self._problem,
            on_message=self.saw,
            on_drained=self._drained,
            **self.launch.limits,
        )
        #: The agents started again after this one went away (:meth:`restarted`): they are
        #: shut down with it.
        self.successors: list[Agent] = []
        #: What :meth:`initialize` asked for (a restarted agent asks the same).
        self.preferred = 2
        self.elicits = False
        #: Who hears every event of the traffic, with the time the router was given it (a
        #: recording; a store, whose log rebuilds the timeline exactly): ``observe`` first.
        self.on_traffic: Subscribers[TrafficEvent] = Subscribers()
        if observe is not None:
            self.on_traffic.subscribe(lambda event: observe(event.direction, event.payload))
        self._closed = anyio.Event()
        self._shut: anyio.Event | None = None  # set once the agent is shut down
        self._finished = anyio.Event()  # both pipes read to their end
        self._shutting_down = False

    # --- what the application reads -----------------------------------------------------

    @property
    def stderr(self) -> str:
        """The end of what the agent wrote to stderr."""
        return self.process.stderr.text()

    @property
    def closed(self) -> bool:
        """Whether the agent is gone (or shut down)."""
        return self._closed.is_set()

    def add_session(self, session: Session) -> None:
        """A session opened on this connection: its traffic reader is routed to."""
        self.sessions.append(session)
        self.router.add(session.traffic)

    def remove_session(self, session: Session) -> None:
        """A session that leaves this connection (it failed to open, or moved to another)."""
        if session in self.sessions:
            self.sessions.remove(session)
        self.router.remove(session.traffic)

    def session(self, session_id: str) -> Session | None:
        """The open session of this connection with that id, if there is one."""
        for session in self.sessions:
            if session.session_id == session_id and not session.closed:
                return session
        return None

    def offers(self, method: str) -> bool:
        """Whether the agent said it takes ``method`` (see
        :func:`~acp_adapters.client.capabilities.agent_offers`); ``session/fork`` only
        with ``connect(unstable=True)``."""
        if method in ("logout", "auth/logout"):
            if self.version == 2:
                return bool(self.login_methods)
            return agent_offers("logout", 1, self.agent_capabilities)
        if method == "session/fork" and not self.launch.unstable:
            return False
        return agent_offers(method, self.version, self.agent_capabilities)

    def require(self, method: str) -> None:
        """:class:`CapabilityError` unless the agent takes ``method``."""
        if method == "session/fork" and not self.launch.unstable:
            raise CapabilityError(
                "session/fork is unstable: pass connect(unstable=True) to use it", method
            )
        if not self.offers(method):
            raise CapabilityError(
                f"the agent does not offer {method} (its initialize answer does not list it)",
                method,
            )

    async def restarted(self, command: Sequence[str] | None = None) -> Agent:
        """The same agent started again (its command, or ``command``; its environment,
        settings and bounds), in a new process, negotiated with the same version asked for:
        a session whose agent went away goes on with it (:meth:`Session.prompt` with
        ``reconnect``)."""
        command = tuple(command) if command is not None else self.command
        process = await AgentProcess.start(
            list(command), cwd=self.launch.settings.workspace.cwd, env=dict(self.agent_env)
        )
        # Made as this one was (its provider, settings, environment, bounds), but in the
        # new process, and with no observer: its listeners are this one's (below).
        again = replace(
            self, process=process, launch=replace(self.launch, command=command), observe=None
        )
        again.on_traffic = self.on_traffic  # the same recording, the same store
        again.preferred = self.preferred
        again.elicits = self.elicits
        self.successors.append(again)
        return again

    # --- the traffic ---------------------------------------------------------------------------

    def _problem(self, problem: Problem) -> None:
        """What the connection skipped: listed; a message of the agent it dropped over its
        limits is also an event of the traffic (``("dropped", ...)``), that the timeline
        shows and a recording keeps."""
        self.problems.append(problem)
        limit = {
            "line_too_long": self.connection.max_line_bytes,
            "too_many_elements": self.connection.max_elements,
            "too_deep": _json.MAX_DEPTH,
        }.get(problem.kind)
        if limit is not None:
            self.saw("dropped", {"reason": problem.kind, "limit": limit})

    def saw(self, direction: str, payload: Any) -> None:
        """One event of the connection's traffic: ``("out" | "in", message)`` as the
        connection writes or takes in a message, ``("raw", text)``, ``("disk", read)``,
        ``("checkpoint", taken)``, ``("change", found)``, ``("closed", {"sessionId"})`` and
        ``("exit", {"code", "stderr"})``. Each session's traffic reader projects what is its
        own, then the observers (a recording) see it."""
        self._mark_closed()
        self._see(direction, payload)

    def _see(self, direction: str, payload: Any) -> None:
        at = time.time()
        # Read as its recording's line is read: the live timeline is the recording's.
        deliveries = self.router.entry(capture_entry(direction, payload, at))
        # What an update the agent sent leaves to do, done as the connection handles it.
        self._unsettled.extend(d for d in deliveries if d.method == "session/update")
        self.on_traffic.publish(TrafficEvent(direction, payload, at))

    def _mark_closed(self) -> None:
        """Say (``("closed", {"sessionId"})``, to the traffic readers and the recording)
        that a session is closed, before the next event of the traffic: what the agent
        still sends for it is dropped (and listed, ``closed_session``), not projected, live
        and from the recording alike. Each session closed here since the last event (told
        to the agent or not), and every session once the connection is shutting down (the
        ``async with connect(...)`` block ended). Said when something comes after the close
        only, so a recording that ends with its close has no such line."""
        for session in self.sessions:
            if (
                (session.closed or self._shutting_down)
                and session.session_id is not None
                and not session.traffic.closed
            ):
                self._see("closed", {"sessionId": session.session_id})

    def _session_of(self, route: Route) -> Session | None:
        """The session a route of the router leads to."""
        return next((s for s in self.sessions if s.traffic is route.reader), None)

    async def _on_request(self, method: str, params: Any, request_id: Any) -> Any:
        # Where the router sent it as it came in: its session answers it.
        route = self.router.request_route(request_id)
        named = params.get("sessionId") if isinstance(params, dict) else None
        if route.unrouted == "closed" and (
            not isinstance(named, str) or self.session(named) is None
        ):
            # Closed here: nothing is read, written or run for it any more. (One the
            # connection's shutdown closed refuses it itself, as it closes.)
            self.problems.append(Problem("closed_session", f"{method} for a closed session"))
            raise RpcError(INVALID_PARAMS, "the session is closed")
        # One that names no session of the connection goes to the first, which refuses
        # what is not its own.
        session = self._session_of(route)
        if session is None and isinstance(named, str):
            session = self.session(named)
        return await (session or self.sessions[0]).answers.on_request(method, params, request_id)

    async def _on_notification(self, method: str, params: Any) -> None:
        """A notification of the agent, handled: what the router's deliveries of it (and of
        those before it) leave to do is done, in order."""
        while self._unsettled:
            delivery = self._unsettled.popleft()
            session = self._session_of(delivery.route)
            if session is not None:
                await session.answers.update_projected(delivery.changes)
            else:
                self.problems.append(_unrouted_update(delivery))
        if method != "session/update":
            await self.sessions[0].answers.on_notification(method, params)

    def _drained(self) -> None:
        for session in self.sessions:
            session.connection_drained()

    # --- running --------------------------------------------------------------------------

    async def run(self, task_group: TaskGroup) -> None:
        self.task_group = task_group
        for session in self.sessions:
            session.answers.start(task_group)
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
            self.gone = ConnectionClosed(reason, status, stderr)
            self.connection.fail_pending(self.gone)
            self._closed.set()
            for session in self.sessions:
                session.agent_gone()

    async def shutdown(self, grace: float) -> None:
        """End every session's terminals and the agent (once: a second call waits for the
        first)."""
        with anyio.CancelScope(shield=True):
            if self._shut is not None:
                await self._shut.wait()
                return
            self._shut = anyio.Event()
            self._shutting_down = True
            try:
                for successor in self.successors:
                    await successor.shutdown(grace)
                for session in self.sessions:
                    await session.answers.close()
                await self.process.close(grace=grace)
                # Until both of the agent's pipes are read to their end (or closed), their
                # transports stay open; an event loop closed before that leaves them to be
                # collected unclosed.
                with anyio.move_on_after(EXIT_WAIT_SECONDS):
                    await self._finished.wait()
            finally:
                self._shut.set()

    async def kill(self) -> None:
        """End the agent now: every session's terminals, and the agent killed at once
        (SIGKILL, its whole process group and, on Linux, what it detached)."""
        await self.shutdown(0)

    # --- sending --------------------------------------------------------------------------

    async def request(
        self,
        method: str,
        params: Any,
        meta: Mapping[str, Any] | None = None,
        *,
        request_id: Any = None,
    ) -> Any:
        """Send a request; its result. ``meta`` is sent as the params' ``_meta``.

        :raises RpcError: the agent answered with an error.
        :raises ConnectionClosed: the agent went away (with its exit status and stderr).
        """
        try:
            return await self.connection.request(
                method, _with_meta(params, meta), request_id=request_id
            )
        except ConnectionClosed as error:
            gone = await self._why_gone(error)
            if gone is error:
                raise
            raise gone from None

    guarded = _auth_explained(request)

    async def _why_gone(self, error: ConnectionClosed) -> ConnectionClosed:
        """How the agent went, with its exit status and stderr: a write that found its stdin
        closed fails before the session has seen it exit, so wait (bounded) for that."""
        if self.gone is None:
            with anyio.move_on_after(EXIT_WAIT_SECONDS + EXIT_OUTPUT_SECONDS):
                await self._closed.wait()
        return self.gone or error

    async def notify(self, method: str, params: Any, meta: Mapping[str, Any] | None = None) -> bool:
        """Send a notification, waiting :data:`SEND_SECONDS` at most; whether it was sent.

        An agent that stopped reading its stdin (a full pipe) would keep the write
        waiting forever: past the bound the notification is given up on (asyncio may
        still write it once the agent reads) and a ``not_sent`` problem is recorded.
        """
        with anyio.move_on_after(SEND_SECONDS) as scope:
            try:
                await self.connection.notify(method, _with_meta(params, meta))
            except ConnectionClosed as error:
                raise await self._why_gone(error) from None
        if scope.cancelled_caught:
            self.problems.append(
                Problem("not_sent", f"{method}: the agent is not reading its input")
            )
            return False
        return True

    # --- negotiation ------------------------------------------------------------------------

    async def initialize(self, preferred: int, *, elicit: bool) -> None:
        self.preferred, self.elicits = preferred, elicit
        login = self.launch.login is not None
        v1_params = {
            "protocolVersion": 1,
            "clientCapabilities": client_capabilities(1, elicit=elicit, login=login),
            "clientInfo": CLIENT_INFO,
        }
        if preferred == 2:
            # Both shapes in one request: a v2 agent reads info/capabilities, a v1 agent
            # that answers 1 still learns the client's fs and terminal capabilities.
            both = {
                **v1_params,
                "protocolVersion": 2,
                "info": CLIENT_INFO,
                "capabilities": client_capabilities(2, elicit=elicit, login=login),
            }
            try:
                result = await self.request("initialize", both)
            except RpcError as error:
                if error.code not in (-32602, -32600):
                    raise
                result = await self.request("initialize", v1_params)
        else:
            result = await self.request("initialize", v1_params)
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
        self.login_methods = auth_methods(methods, version)
        if self.sessions:
            # The traffic reader took the answer in: the connection's provider.
            self.provider = self.sessions[0].projector.provider

    # --- logging in -------------------------------------------------------------------------

    async def authenticate(self, method_id: str, *, meta: Mapping[str, Any] | None = None) -> None:
        """Log in with one of the agent's :attr:`login_methods`.

        An ``agent`` method is asked of the agent (v1 ``authenticate``, v2 ``auth/login``).
        A ``terminal`` method runs the agent's program with its arguments through the
        ``login`` callback of :func:`~acp_adapters.connect`; a non-zero exit status fails.
        An older ``env_var`` method reads its variables from the agent's environment:
        pass them in ``connect(env=...)``; a missing one fails here, before asking.

        :raises AcpAdaptersError: no such method, a variable missing, no ``login`` callback
            for a terminal method, or the terminal login failed.
        :raises RpcError: the agent refused.
        """
        method = next((m for m in self.login_methods if m.id == method_id), None)
        if method is None:
            offered = ", ".join(m.id for m in self.login_methods) or "none"
            raise AcpAdaptersError(
                f"the agent has no login method {method_id!r} (it offers: {offered})"
            )
        if method.runs_in_terminal:
            await self._terminal_login(method)
            return
        missing = missing_variables(method, self.agent_env)
        if missing:
            raise AcpAdaptersError(
                f"auth method {method_id!r} reads {', '.join(missing)}: pass it in connect(env=...)"
            )
        await self.request(
            "auth/login" if self.version == 2 else "authenticate", {"methodId": method_id}, meta
        )

    async def _terminal_login(self, method: AuthMethod) -> None:
        if self.launch.login is None:
            raise AcpAdaptersError(
                f"login method {method.id!r} runs in a terminal: pass connect(login=...) "
                "(acp_adapters.client.auth.run_login_here runs it on this terminal)"
            )
        command = login_command(
            method, self.command, self.agent_env, str(self.launch.settings.workspace.cwd)
        )
        status = await self.launch.login(command)
        if status != 0:
            raise AcpAdaptersError(
                f"the terminal login {method.id!r} failed (exit status {status})"
            )

    async def logout(self, *, meta: Mapping[str, Any] | None = None) -> None:
        """Log out (v1 ``logout``, v2 ``auth/logout``).

        :raises CapabilityError: the agent does not offer it.
        """
        self.require("logout")
        await self.request("auth/logout" if self.version == 2 else "logout", {}, meta)

    # --- sessions ---------------------------------------------------------------------------

    def _check_free(self, session_id: str) -> None:
        if self.session(session_id) is not None:
            raise AcpAdaptersError(
                f"session {session_id!r} is open on this connection already: "
                "agent.session(id) gives it"
            )

    async def _opened(
        self,
        open_it: Callable[[Session], Any],
        settings: SessionSettings | None,
        session_id: str | None = None,
    ) -> Session:
        """A session of this connection, opened by ``open_it``: the one closed here before
        with ``session_id``, opened again (its timeline goes on), else a new one; dropped
        (or closed again) if that fails."""
        closed = next(
            (s for s in reversed(self.sessions) if s.closed and s.session_id == session_id),
            None,
        )
        if session_id is not None and closed is not None:
            closed.reopen()
            try:
                await open_it(closed)
            except BaseException:
                with anyio.CancelScope(shield=True):
                    closed.closed = True
                    await closed.answers.close()
                raise
            return closed
        session = self.session_class(self, settings or self.launch.settings, primed=True)
        self.add_session(session)
        if self.task_group is not None:
            session.answers.start(self.task_group)
        try:
            await open_it(session)
        except BaseException:
            self.remove_session(session)
            with anyio.CancelScope(shield=True):
                await session.answers.close()
            raise
        return session

    def _settings(self, place: SessionPlace) -> SessionSettings | None:
        """The settings of a session opened in ``place`` (None: ``connect``'s)."""
        check_keywords("the agent's session opening", place, SessionPlace)
        cwd = place.get("cwd")
        additional_directories = place.get("additional_directories")
        mcp_servers = place.get("mcp_servers")
        if cwd is None and additional_directories is None and mcp_servers is None:
            return None
        return self.launch.settings.with_folders(cwd, additional_directories, mcp_servers)

    async def _earlier(
        self,
        session_id: str,
        place: SessionPlace,
        open_it: Callable[[Session, Mapping[str, Any] | None], Awaitable[None]],
    ) -> Session:
        """An earlier session of the agent opened on this connection, in ``place``, by
        ``open_it`` (given the session and the request's ``_meta``); one open here already
        is an error."""
        settings = self._settings(place)
        self._check_free(session_id)
        meta = place.get("meta")
        return await self._opened(lambda session: open_it(session, meta), settings, session_id)

    async def new_session(
        self,
        **place: Unpack[SessionPlace],
    ) -> Session:
        """Open another session on this agent (``session/new``): a :class:`Session` with its
        own timeline, in ``cwd`` (default: ``connect``'s folders and MCP servers)."""
        settings = self._settings(place)

        async def open_it(session: Session) -> None:
            await session.new_session(meta=place.get("meta"))

        return await self._opened(open_it, settings)

    async def load_session(
        self,
        session_id: str,
        **place: Unpack[SessionPlace],
    ) -> Session:
        """Open an earlier session with its history replayed (``session/load``; v2: a
        resume that replays from the start). See :meth:`Session.load_session`. A session
        closed here before is opened again: the same :class:`Session`, whose timeline goes
        on (what the agent replays of it is not added twice)."""
        return await self._earlier(
            session_id, place, lambda session, meta: session.load_session(session_id, meta=meta)
        )

    async def resume_session(
        self,
        session_id: str,
        *,
        replay: bool = False,
        **place: Unpack[SessionPlace],
    ) -> Session:
        """Open an earlier session without its history (``session/resume``)."""
        return await self._earlier(
            session_id,
            place,
            lambda session, meta: session.resume_session(session_id, replay=replay, meta=meta),
        )

    async def open_session(
        self,
        session_id: str,
        **place: Unpack[SessionPlace],
    ) -> Session:
        """Open an earlier session: resumed when the agent can, else loaded (its history
        replayed). :class:`CapabilityError` when it can do neither."""
        return await self._earlier(
            session_id, place, lambda session, meta: session.open_session(session_id, meta=meta)
        )

    async def fork_session(
        self,
        session_id: str,
        **place: Unpack[SessionPlace],
    ) -> Session:
        """A new session made from an earlier one's context (``session/fork``, unstable:
        ``connect(unstable=True)``); the earlier one goes on unchanged."""
        self.require("session/fork")
        settings = self._settings(place)

        async def open_it(session: Session) -> None:
            await session.fork_session(session_id, meta=place.get("meta"))

        return await self._opened(open_it, settings)

    async def list_sessions(
        self,
        *,
        cwd: str | None = None,
        cursor: str | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> SessionPage:
        """One page of the agent's sessions (``session/list``), those of ``cwd`` (default:
        the connection's folder); ``cursor`` is the previous page's ``next_cursor``.

        :raises CapabilityError: the agent does not offer it.
        """
        self.require("session/list")
        params: dict[str, Any] = {"cwd": cwd or str(self.launch.settings.workspace.cwd)}
        if cursor is not None:
            params["cursor"] = cursor
        return _page(await self.request("session/list", params, meta))

    async def all_sessions(
        self, *, cwd: str | None = None, meta: Mapping[str, Any] | None = None
    ) -> AsyncIterator[dict[str, Any]]:
        """Every session of :meth:`list_sessions`, page after page (``async for``). A cursor
        the agent gives twice ends the listing, as does :data:`MAX_LIST_PAGES`."""
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(MAX_LIST_PAGES):
            page = await self.list_sessions(cwd=cwd, cursor=cursor, meta=meta)
            for entry in page.sessions:
                yield entry
            cursor = page.next_cursor
            if cursor is None or cursor in seen:
                return
            seen.add(cursor)

    async def delete_session(
        self, session_id: str, *, meta: Mapping[str, Any] | None = None
    ) -> None:
        """Delete one of the agent's sessions (``session/delete``); an open one of this
        connection is closed here first.

        :raises CapabilityError: the agent does not offer it.
        """
        self.require("session/delete")
        open_one = self.session(session_id)
        if open_one is not None:
            await open_one.close(meta=meta)
        await self.request("session/delete", {"sessionId": session_id}, meta)

    # --- extensions ---------------------------------------------------------------------------

    async def call_extension(
        self, method: str, params: Fields = None, *, meta: Fields = None
    ) -> Any:
        """Call one of the agent's extension methods (its name starts with ``_``); its result.

        :raises RpcError: the agent answered with an error (-32601: it has no such method).
        :raises ValueError: ``method`` is not an extension method's name.
        """
        _check_extension(method)
        return await self.request(method, dict(params or {}), meta)

    async def notify_extension(
        self, method: str, params: Fields = None, *, meta: Fields = None
    ) -> bool:
        """Send an extension notification (its name starts with ``_``); whether it was sent
        (never waiting on an agent that stopped reading)."""
        _check_extension(method)
        return await self.notify(method, dict(params or {}), meta)


def _unrouted_update(delivery: Delivery) -> Problem:
    """The problem of an update the router gave to no session."""
    if delivery.route.unrouted == "closed":
        return Problem("closed_session", "session/update for a closed session")
    if delivery.route.unrouted == "unnamed":
        return Problem("invalid_notification", "session/update without a sessionId")
    return Problem("other_session", f"session/update for session {str(delivery.named)[:100]!r}")


__all__ = ["Agent", "AgentLaunch", "SessionPage", "TrafficEvent", "auth_required", "request_key"]
