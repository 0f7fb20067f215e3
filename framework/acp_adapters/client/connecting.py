"""Start an agent and open a session with it: :func:`connect`, and what it is given.

:func:`connect` starts the provider's agent (or ``command``), asks for protocol version 2
and accepts 1, opens a session in ``cwd`` and yields a
:class:`~acp_adapters.client.session.Session`. Leaving the block kills the session's
terminals and closes the agent (stdin closed, then terminate, then kill, whole process
group), and on Linux whatever the agent and its terminals detached from their groups too
(see :mod:`acp_adapters.transport.families`). A session kept in a store
(``connect(store=...)``) takes its thread's lease first (:mod:`.ownership`); one whose thread
another owner drives queues behind it (:mod:`.guest`). :func:`enqueue` queues a prompt for a
thread from any process.

Its options are grouped in small typed objects: :class:`Limits` (how much the agent may
send and the session keep), :class:`Timeouts` (how long it may take to start, and to
close), :class:`Persistence` (how a session kept in a store shares its thread).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import sys
import warnings
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, fields, replace
from functools import partial
from pathlib import Path
from typing import Any, Literal

import anyio
import pluggy

from ..errors import (
    AcpAdaptersError,
    AgentNotFoundError,
    StartTimeoutError,
)

if sys.version_info < (3, 11):
    from exceptiongroup import BaseExceptionGroup
from ..capture.recorder import CaptureRecorder
from ..plugin.hooks import Hooks
from ..plugin.manager import get_plugin_manager
from ..plugin.permissions import Policy, PolicyName
from ..plugin.providers import Provider, ProviderRegistry
from ..runtime import CONTENT_BUDGET
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
from ..transport import AgentProcess
from ..transport.environment import base_environment
from ..transport.families import become_subreaper
from ..transport.jsonrpc import (
    DEFAULT_MAX_ELEMENTS,
    DEFAULT_MAX_LINE_BYTES,
    DEFAULT_MAX_PENDING_REQUESTS,
)
from .agent import Agent, AgentLaunch, ConnectionLimits, ProjectedWith
from .agent_requests import (
    AskCallback,
    DiskReader,
    ElicitCallback,
    TerminalFactory,
)
from .auth import LoginCallback
from .checkpointing import (
    Checkpointing,
    CheckpointTaker,
)
from .mcp import McpServer, as_servers
from .ownership import (
    HeldThread,
    LeaseLost,
    launch_record,
    serve_queue,
    stop_serving,
    stream_claimed,
)
from .persistence import COMMIT_INTERVAL, StoreErrorCallback, ThreadWriter, reopened
from .session import Session, SessionSettings
from .terminals import DEFAULT_MAX_TERMINALS, Terminals
from .turns import prompt_blocks
from .workspace import MissingFileRead, Workspace

#: What ``connect`` does when another owner drives the thread (see :func:`connect`).
Busy = Literal["queue", "fail"]

#: How long ``connect`` waits for the agent to answer ``initialize`` and open the session.
DEFAULT_START_TIMEOUT = 60.0


@dataclass(frozen=True)
class Limits:
    """How much the agent may send, and the session keep (``connect(limits=...)``).

    :param max_line_bytes: the longest line read from the agent; a longer one is dropped and
        reported (``line_too_long``).
    :param max_elements: the most values (strings, numbers, arrays, objects) one line from
        the agent may hold; a line with more is dropped and reported (``too_many_elements``).
    :param max_pending_requests: how many of the agent's requests may be in progress at
        once; one past it is answered -32000 at once.
    :param content_budget: how much file content (characters) the session keeps for true
        patches; past it the oldest contents are let go (see docs/security.md).
    :param max_terminals: how many terminals the agent may have at once (not yet released)
        with the default backend; past it ``terminal/create`` is refused (-32000).
    """

    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    max_elements: int = DEFAULT_MAX_ELEMENTS
    max_pending_requests: int = DEFAULT_MAX_PENDING_REQUESTS
    content_budget: int = CONTENT_BUDGET
    max_terminals: int = DEFAULT_MAX_TERMINALS

    def connection(self) -> ConnectionLimits:
        """The bounds of the agent's connection, as :class:`~.agent.Agent` takes them."""
        return {
            "max_line_bytes": self.max_line_bytes,
            "max_elements": self.max_elements,
            "max_pending_requests": self.max_pending_requests,
        }


@dataclass(frozen=True)
class Timeouts:
    """How long the agent may take (``connect(timeouts=...)``), in seconds.

    :param start: the longest the agent may take to answer ``initialize`` and open the
        session (``session/new``, ``load`` or ``resume``); ``None`` waits for ever. Past it
        the agent is stopped and :class:`~acp_adapters.errors.StartTimeoutError` raised.
    :param close_grace: how long the agent has to exit once its stdin is closed, as the
        session ends, before it is terminated (then killed).
    """

    start: float | None = DEFAULT_START_TIMEOUT
    close_grace: float = 2.0

    def __post_init__(self) -> None:
        if self.start is not None and not 0 < self.start <= 86400:  # also refuses nan
            raise ValueError(f"the start timeout is more than 0, a day at most, not {self.start!r}")


@dataclass(frozen=True)
class Persistence:
    """How a session kept in a store (``connect(store=..., thread=...)``) shares its thread
    (``connect(persistence=...)``; see docs/store.md and docs/workers.md).

    :param move: go on with the thread in ``cwd`` though it was kept for another folder: the
        thread moves there (its folder in the store, and a note in its timeline). Without
        it, :class:`~acp_adapters.store.ThreadMoved` is raised, before any agent starts.
    :param busy: what happens when another owner, alive, drives the thread: ``"queue"``
        starts no agent, and yields a :class:`~acp_adapters.client.guest.GuestSession`
        whose prompts go into the thread's queue, each turn followed in the store as the
        owner commits it (and the thread taken over when the owner lets it go with a prompt
        still waiting); ``"fail"`` raises :class:`~acp_adapters.store.ThreadBusy` naming the
        owner.
    :param run_queued: the prompts the thread's queue holds (queued by other processes, or
        left waiting by a process that ended) are sent, in order, as the session opens
        (``session.restored_turns``), and so are those queued while it lives, between its
        own turns. ``False`` leaves them queued.
    :param commit_interval: the least time between two of the session's commits to the
        store (seconds, 0.1 by default): what comes in between goes into the next commit, so
        a fast agent costs the store a few commits a second. The commit at the session's
        end is never delayed.
    :param lease_seconds: how long the session's lease on its thread lasts unless renewed
        (it is renewed every third of that while the session lives): an owner that dies
        loses its thread that long after its last renewal.
    :param owner: who the session is as its thread's owner (by default a new
        :class:`~acp_adapters.store.Owner` of this process): a worker passes the owner it
        claimed the thread as (:meth:`~acp_adapters.store.Store.claim_thread`), whose lease
        the session goes on with.
    :param on_store_error: called with each :class:`~acp_adapters.store.StoreError` of a
        commit (the session goes on; the commit is tried again), and with the error of a
        store that cannot be opened: the session then runs without it (without the
        callback, that error is raised).
    """

    move: bool = False
    busy: Busy = "queue"
    run_queued: bool = True
    commit_interval: float = COMMIT_INTERVAL
    lease_seconds: float = LEASE_SECONDS
    owner: Owner | None = None
    on_store_error: StoreErrorCallback | None = None

    def __post_init__(self) -> None:
        if not 0 <= self.commit_interval <= 3600:  # also refuses nan
            raise ValueError(
                f"commit_interval is from 0 to 3600 seconds, not {self.commit_interval!r}"
            )
        if self.busy not in ("queue", "fail"):
            raise ValueError(f"busy is 'queue' or 'fail', not {self.busy!r}")
        if not 0.05 <= self.lease_seconds <= 86400:  # also refuses nan
            raise ValueError(f"lease_seconds is from 0.05 to 86400, not {self.lease_seconds!r}")


#: The keywords ``connect`` took flat before its options were grouped: each one's group
#: and its field there. Still taken for one release, with a :class:`DeprecationWarning`.
MOVED_KEYWORDS: dict[str, tuple[str, str]] = {
    **{name: ("limits", name) for name in (f.name for f in fields(Limits))},
    "start_timeout": ("timeouts", "start"),
    "close_grace": ("timeouts", "close_grace"),
    **{name: ("persistence", name) for name in (f.name for f in fields(Persistence))},
}
_GROUPS = {"limits": ("Limits", Limits), "timeouts": ("Timeouts", Timeouts)}
_GROUPS["persistence"] = ("Persistence", Persistence)


def grouped_options(
    limits: Limits | None,
    timeouts: Timeouts | None,
    persistence: Persistence | None,
    flat: Mapping[str, Any],
) -> tuple[Limits, Timeouts, Persistence]:
    """``connect``'s option objects, with what was passed as flat keywords of before put in
    them (each named in a :class:`DeprecationWarning`).

    :raises TypeError: a keyword ``connect`` never took.
    """
    unknown = sorted(set(flat) - set(MOVED_KEYWORDS))
    if unknown:
        raise TypeError(f"connect() got an unexpected keyword argument {unknown[0]!r}")
    given: dict[str, Any] = {"limits": limits, "timeouts": timeouts, "persistence": persistence}
    changes: dict[str, dict[str, Any]] = {}
    for name, value in flat.items():
        group, field_name = MOVED_KEYWORDS[name]
        changes.setdefault(group, {})[field_name] = value
        class_name = _GROUPS[group][0]
        warnings.warn(
            f"connect({name}=...) is connect({group}={class_name}({field_name}=...)) now; "
            "the flat keyword is taken for one release only",
            DeprecationWarning,
            stacklevel=4,  # the caller of ``connect``, through the context manager
        )
    made = {
        group: replace(given[group] or kind(), **changes.get(group, {}))
        if group in changes
        else given[group] or kind()
        for group, (_, kind) in _GROUPS.items()
    }
    return made["limits"], made["timeouts"], made["persistence"]


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
    mcp_servers: Sequence[McpServer | Mapping[str, Any]] = (),
    missing_file_read: MissingFileRead = "error",
    new_session: bool = True,
    session_id: str | None = None,
    store: Store | str | os.PathLike[str] | None = None,
    thread: str | None = None,
    reconnect: bool | None = None,
    record: str | os.PathLike[str] | None = None,
    observe: Callable[[str, Any], None] | None = None,
    disk_patches: bool | DiskReader = True,
    checkpoints: bool | Checkpointing | CheckpointTaker | None = None,
    terminals: TerminalFactory | None = None,
    subreaper: bool = True,
    login: LoginCallback | None = None,
    unstable: bool = False,
    pm: pluggy.PluginManager | None = None,
    limits: Limits | None = None,
    timeouts: Timeouts | None = None,
    persistence: Persistence | None = None,
    **moved: Any,
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
        (:func:`~acp_adapters.client.auth.run_login_here` runs it on this terminal).
    :param unstable: allow the unstable methods of the schema (``session/fork``).
    :param store: keep the session in a store (a :class:`~acp_adapters.store.Store`, or a
        SQLite path or ``postgresql://`` URL :func:`~acp_adapters.store.open_store` opens).
    :param thread: the thread (an id, or a name) to go on with, read back from the store
        (docs/store.md); a name no thread has yet starts a thread of that name. Without
        it, a new thread.
    :param reconnect: a prompt sent after the agent went away (it crashed) starts the agent
        again and opens the session on it (resumed, else loaded), the timeline going on;
        default: when the session is kept in a store.
    :param observe: called with each event of the traffic, ``(direction, payload)``, as it
        goes (see :meth:`Agent.saw <acp_adapters.client.agent.Agent.saw>`; the same as
        ``session.agent.on_traffic``, without the time).
    :param record: a capture file to write the session's traffic to, as it goes (the
        workspace written ``<workspace>``, the home folder ``<home>``).
    :param disk_patches: read the files an edit names as it starts and as it completes, for
        its true patch; ``False`` reads nothing; a callable ``(path) -> text | None`` is
        read instead of the disk.
    :param terminals: what answers the agent's ``terminal/*`` requests:
        ``(workspace, task_group) -> TerminalBackend``; default: real processes.
    :param mcp_servers: the MCP servers the agent may use (:class:`McpServer` values, or
        ``mcpServers`` entries), each of a transport the agent takes, else
        :class:`~acp_adapters.errors.McpServerError`.
    :param checkpoints: checkpoint the session's folders, the true before and after of
        every file (docs/sessions.md): ``True`` or a
        :class:`~acp_adapters.client.checkpointing.Checkpointing`; default: on when
        ``disk_patches`` is ``True``.
    :param subreaper: on Linux, make this process a child subreaper
        (:func:`~acp_adapters.transport.families.become_subreaper`): what the agent leaves
        orphaned is reaped here when the session kills it.
    :param limits: how much the agent may send and the session keep (:class:`Limits`:
        the longest line, the most values in one, the requests in progress at once, the file
        content kept, the terminals).
    :param timeouts: how long the agent may take to start and to close (:class:`Timeouts`).
    :param persistence: how a session kept in a store shares its thread
        (:class:`Persistence`: moving it, another owner driving it, its queue, its commits,
        its lease, the store's errors).
    :param moved: the keywords of before the options were grouped (``max_line_bytes=``,
        ``start_timeout=``, ``busy=``, ... see :data:`MOVED_KEYWORDS`): taken for one
        release, each with a :class:`DeprecationWarning`.
    :raises AgentNotFoundError: the agent's command does not exist, or cannot be executed
        (not a program, no permission).
    :raises StartTimeoutError: the agent did not start within ``Timeouts.start``.
    :raises ProtocolVersionError: the agent speaks neither version.
    :raises AuthenticationRequiredError: the agent wants authentication before a session.
    :raises ConnectionClosed: the agent exited (with its exit status and stderr tail).
    """
    limits, timeouts, persistence = grouped_options(limits, timeouts, persistence, moved)
    del moved
    # What a session that takes the thread over (:mod:`.guest`) is opened with.
    arguments = dict(locals())
    move, busy, owner = persistence.move, persistence.busy, persistence.owner
    lease_seconds, on_store_error = persistence.lease_seconds, persistence.on_store_error
    pm = pm or get_plugin_manager()
    registry = ProviderRegistry.collect(pm)
    chosen, command = _agent_of(registry, provider, command)
    # The same for the agent started here and for a guest's stand-in.
    projecting = ProjectedWith(
        hooks=Hooks(pm), provider=chosen, registry=registry, fixed_provider=provider is not None
    )
    inherited: Mapping[str, str] = os.environ
    if chosen.launch is not None and not chosen.launch.inherit_env:
        inherited = base_environment(os.environ)  # no secret of this process, unless passed
    agent_env = {**inherited, **(chosen.launch.env if chosen.launch else {}), **(env or {})}
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
        policy=Policy.of(policy),
        ask=ask,
        elicit=elicit,
        missing_file_read=missing_file_read,
        disk_patches=disk_patches,
        terminals=terminals or partial(Terminals, max_terminals=limits.max_terminals),
        content_budget=limits.content_budget,
        mcp_servers=tuple(as_servers(mcp_servers)),
        checkpoints=taker,
    )
    launch = AgentLaunch(
        command=tuple(command),
        env=agent_env,
        settings=settings,
        limits=limits.connection(),
        login=login,
        unstable=unstable,
    )
    if thread is not None:
        check_thread_name(thread)  # before a store is opened or made
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
                launch_record(settings.policy, settings.mcp_servers, protocol),
                move=move,
            )
            owner = owner or Owner.here()
            thread_id = found.id

            async def take_over() -> None:
                again = {**arguments, "store": the_store, "thread": thread_id}
                again["persistence"] = replace(
                    persistence, busy="fail", run_queued=False, owner=None
                )
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
                    projecting, settings, the_store, found, refused.lease, take_over
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
            launch,
            projecting,
            timeouts=timeouts,
            persistence=persistence,
            record=record,
            observe=observe,
            subreaper=subreaper,
            reconnect=reconnect,
            session_id=session_id,
            protocol=protocol,
            new_session=new_session,
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
    launch: AgentLaunch,
    projecting: ProjectedWith,
    *,
    timeouts: Timeouts,
    persistence: Persistence,
    record: str | os.PathLike[str] | None,
    observe: Callable[[str, Any], None] | None,
    subreaper: bool,
    reconnect: bool | None,
    session_id: str | None,
    protocol: int | None,
    new_session: bool,
) -> AsyncIterator[Session]:
    """The session of an agent started here (its thread's lease ``held``, when kept in a
    store): :func:`connect` once the thread is its own."""
    command, agent_env, settings = launch.command, launch.env, launch.settings
    workspace = settings.workspace
    start_timeout, close_grace = timeouts.start, timeouts.close_grace
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
        session_class=Session,
        process=process,
        launch=launch,
        observe=observe_all if observers else None,
        **projecting,
    )
    # The first session reads the negotiation itself; the others are told of it.
    session = Session(agent, settings)
    agent.add_session(session)
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
                        persistence.on_store_error,
                        recorder,
                        persistence.commit_interval,
                    )
                    session.lease = held
                    task_group.start_soon(writer.run)

                    async def lost(error: LeaseLost) -> None:
                        # Another may drive the thread now: this agent stops at once.
                        writer.failed(error)
                        await session.kill()

                    held.on_lost = lost
                    task_group.start_soon(held.keep)
                phase = "initialize"
                # Bounded: an agent that never answers (a wrong command, a hung start) must
                # not hold the caller for ever.
                with anyio.move_on_after(start_timeout) as starting:
                    await agent.initialize(
                        protocol or projecting["provider"].protocol_version,
                        elicit=settings.elicit is not None,
                    )
                    if session_id is not None:
                        phase = "session/load or session/resume"
                        await session.open_thread_session(
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
                if writer is not None and held is not None and persistence.run_queued:
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
    projecting: ProjectedWith,
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
            store,
            thread,
            lease,
            settings=settings,
            task_group=task_group,
            take_over=take_over,
            **projecting,
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
    workspace = Workspace(cwd, tuple(str(p) for p in additional_directories))
    launch = launch_record(Policy.of(policy), as_servers(mcp_servers), protocol)
    opened = store if isinstance(store, Store) else await open_store(store)
    try:
        # An existing thread keeps how its owner started it.
        # ``cwd`` is a new thread's: an existing one is queued for where it is.
        found, _ = await _find_thread(
            opened, thread, chosen, workspace, command, launch, False, move=True
        )
        return await opened.enqueue(found.id, prompt_blocks(prompt))
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
            f"it there (cwd={found.cwd!r}, `run --cwd`), or move it here "
            "(persistence=Persistence(move=True), `run --move`)",
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
    session.writer = writer
    return writer, session_id or found.agent_session_id
