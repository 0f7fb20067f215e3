"""What a store keeps, and the one interface its backends implement.

A store keeps an application's **threads** (its conversation with one agent session), their
**turns**, the **event log** (every message in and out, every disk observation and the agent's
exit: exactly what the session's traffic reader took in, in order, as capture entries) and the
**current timeline items**, in full. Each update of a session is one :meth:`Store.commit`: its
events and the items they changed, in one transaction. Rebuilding a thread's timeline from its
event log through the traffic reader gives its stored items (:func:`acp_adapters.project_capture`
over :meth:`Store.events`).

Backends: SQLite (:mod:`.sqlite`, the embedded default) and PostgreSQL (:mod:`.postgres`).
"""

from __future__ import annotations

import abc
import os
import re
import socket
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, TypedDict

if TYPE_CHECKING:
    # For annotations only (strings at run time): no dependency of the package's own.
    from typing_extensions import Required, Unpack

from .. import _json
from ..errors import AcpAdaptersError

#: The schema version this library writes; a store of an older version is migrated when
#: opened, one of a newer version is refused (:class:`StoreError`).
SCHEMA_VERSION = 2

TurnStatus = Literal["running", "completed", "failed", "cancelled"]
#: Where a queued prompt is: waiting for whoever owns its thread (``queued``), waiting in its
#: owner's process for the running turn (``held``), sent (``running``), or ended.
PromptState = Literal["queued", "held", "running", "completed", "failed", "cancelled"]
#: The states a prompt ends in.
ENDED_PROMPT_STATES = ("completed", "failed", "cancelled")
#: Why the turn of an owner that went away without releasing its thread failed.
OWNER_LOST = "its owner was lost"
#: How long a thread's lease lasts unless renewed (seconds): an owner that dies (SIGKILL, a
#: lost machine) loses its thread this long after its last renewal.
LEASE_SECONDS = 15.0


class StoreError(AcpAdaptersError):
    """The store cannot be opened, read or written: its path, and why."""


class ThreadNotFound(StoreError):
    """No thread of that id (or name)."""


class StoreNotFound(StoreError):
    """No store there (``open_store(..., create=False)``): no such SQLite file, or a database
    that holds no store."""


class InvalidThreadName(StoreError):
    """A thread's name is empty, only spaces, or holds a control character."""


#: What a thread's name may not hold: the C0 and C1 controls and DEL, the line and paragraph
#: separators, and the bidirectional controls (a name is shown and typed as it is).
_NOT_IN_NAMES = re.compile(
    "[\x00-\x1f\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
    # A lone surrogate: no UTF-8 holds it (a command line's byte that is not UTF-8 comes so).
    "\ud800-\udfff]"
)


def check_thread_name(name: str) -> str:
    """``name`` when it can name a thread; :class:`InvalidThreadName` when it is empty, only
    white space, or holds a control character (shown as its escape)."""
    if not isinstance(name, str) or not name.strip():
        raise InvalidThreadName(f"a session's name is neither empty nor only spaces, not {name!r}")
    refused = _NOT_IN_NAMES.search(name)
    if refused is not None:
        code = ord(refused.group())
        what = "a byte that is not UTF-8" if 0xD800 <= code <= 0xDFFF else "a control character"
        raise InvalidThreadName(f"a session's name cannot hold {what}: {name!r} holds U+{code:04X}")
    return name


@dataclass(frozen=True)
class Owner:
    """Who drives a thread: a process on a host, and a random id of its own (one per session
    opened, so that two sessions of one process are two owners)."""

    id: str
    host: str
    pid: int

    @classmethod
    def here(cls) -> Owner:
        """A new owner of this process."""
        return cls(uuid.uuid4().hex, socket.gethostname(), os.getpid())

    def describe(self) -> str:
        """The owner as its refusals name it: ``host pid 123 (owner 1a2b3c4d)``."""
        return f"{self.host} pid {self.pid} (owner {self.id[:8]})"


@dataclass(frozen=True)
class Lease:
    """A thread's owner and until when it holds the thread, by the store's clock (a
    PostgreSQL store's is the server's, so that machines whose clocks differ agree)."""

    thread_id: str
    owner: Owner
    taken_at: float
    expires_at: float
    #: Whether it had not expired when it was read.
    live: bool = True
    #: The owner whose expired lease this one replaced (its running turn was ended as
    #: failed, :data:`OWNER_LOST`), when there was one.
    replaced: Owner | None = None


class ThreadBusy(StoreError):
    """Another owner, alive, drives the thread (``lease``: who, and until when it renews)."""

    def __init__(self, message: str, lease: Lease) -> None:
        super().__init__(message)
        self.lease = lease


class ThreadMoved(StoreError):
    """The thread is kept for another folder than the one it is gone on with: it moves only
    when asked (``connect(move=True)``, ``run --move``)."""

    def __init__(
        self, message: str, *, thread: str, folder: str, cwd: str, driven_by: Owner | None = None
    ) -> None:
        super().__init__(message)
        #: The thread's name (or id), its folder, and the folder it was gone on with.
        self.thread = thread
        self.folder = folder
        self.cwd = cwd
        #: Who drives it (in its folder), when a move was asked while another owner does.
        self.driven_by = driven_by


def busy_error(thread: str, lease: Lease) -> ThreadBusy:
    """The refusal for a thread that ``lease``'s owner drives: who, and what to do."""
    return ThreadBusy(
        f"the thread {thread} is driven by {lease.owner.describe()}: queue the prompt "
        "behind its turns (busy='queue', `run --busy queue`, `sessions send`), or wait for "
        "its owner to let it go (an owner that died loses it when its lease expires)",
        lease,
    )


@dataclass(frozen=True)
class Thread:
    """An application's conversation with one agent session."""

    id: str
    provider: str
    cwd: str
    #: The name the application (or ``run -s NAME``) gave it; unique in the store.
    name: str | None = None
    #: The agent's own session id, once the agent has given one.
    agent_session_id: str | None = None
    #: The other folders the session may use (``additional_directories``).
    folders: tuple[str, ...] = ()
    title: str | None = None
    created_at: float = 0.0
    updated_at: float = 0.0
    #: The agent's command line, when it was not the provider's.
    command: tuple[str, ...] | None = None
    #: How its owner started the agent, for a worker to start it again: the policy (its
    #: name, folders and rules), the MCP servers, the protocol version asked for.
    launch: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Turn:
    """One prompt of a thread, and how it ended."""

    thread_id: str
    index: int
    status: TurnStatus = "running"
    stop_reason: str | None = None
    #: Why the turn failed (the agent crashed, the connection closed), when it did.
    error: str | None = None
    started_at: float = 0.0
    ended_at: float | None = None


@dataclass(frozen=True)
class StoredEvent:
    """One event of a thread's log: its place (``seq``, from 1, no gaps) and the capture
    entry the traffic reader took in (``{"dir", "t", "msg"}``, a disk read, an exit)."""

    thread_id: str
    seq: int
    entry: dict[str, Any]


@dataclass(frozen=True)
class QueuedPrompt:
    """A prompt of a thread's queue (kept across restarts): waiting for its turn, or run."""

    thread_id: str
    position: int
    prompt: list[dict[str, Any]]
    queued_at: float = 0.0
    #: Its id (what ``run --no-wait`` and ``sessions send`` print).
    id: str = ""
    state: PromptState = "queued"
    #: The turn it ran as, once sent.
    turn: int | None = None
    #: Why it failed or was cancelled, when it did.
    error: str | None = None
    #: The owner holding it (``held``) or running it (``running``).
    owner: str | None = None
    ended_at: float | None = None

    @property
    def ended(self) -> bool:
        return self.state in ENDED_PROMPT_STATES


class EncodedEvent(str):
    """An event already as the JSON text a store keeps it (:func:`encoded_event`): a store
    writes it as it is. A live session encodes each event as it comes, so that what waits
    for the next commit is text, which Python's garbage collector has no need to look at."""


def dumps(value: Any, what: str) -> str:
    """JSON text as the store keeps it (:func:`acp_adapters._json.dumps`: UTF-8, lone
    surrogates escaped); :class:`StoreError` for what JSON cannot hold."""
    try:
        return _json.dumps(value)
    except (TypeError, ValueError, RecursionError) as exc:
        raise StoreError(f"{what} cannot be stored as JSON: {exc}") from exc


def encoded_event(entry: Mapping[str, Any]) -> EncodedEvent:
    """``entry`` as the JSON text a store keeps (UTF-8, lone surrogates escaped).

    :raises StoreError: it holds what JSON cannot (NaN, an object JSON has no form for).
    """
    return EncodedEvent(dumps(dict(entry), "an event"))


def event_text(entry: Mapping[str, Any] | EncodedEvent) -> str:
    """An event's JSON text: an :class:`EncodedEvent` as it is."""
    return entry if isinstance(entry, EncodedEvent) else encoded_event(entry)


@dataclass
class Commit:
    """One update of a session, written in one transaction: the new events (appended in
    order; each an entry, or its :func:`encoded_event`), the items they changed (each the
    whole item as JSON: ``id`` is its key), the turns they started or ended, and the
    thread's fields that changed."""

    events: Sequence[Mapping[str, Any] | EncodedEvent] = ()
    items: Sequence[Mapping[str, Any]] = ()
    turns: Sequence[Turn] = ()
    thread: Mapping[str, Any] = field(default_factory=dict)


#: A prompt as a store takes it: its content blocks.
PromptBlocks = Sequence[Mapping[str, Any]]


class NewThread(TypedDict, total=False):
    """What a new thread is made with (:meth:`Store.create_thread`'s keywords): its
    ``provider`` and ``cwd``; its ``name`` (unique, or None), the ``folders`` beside ``cwd``,
    the agent's session, its title, the command that starts its agent (when no provider's
    launch does) and how its agent was started (``launch``, for a worker)."""

    provider: Required[str]
    cwd: Required[str]
    name: str | None
    folders: Sequence[str]
    agent_session_id: str | None
    title: str | None
    command: Sequence[str] | None
    launch: Mapping[str, Any] | None


class PromptEnd(TypedDict, total=False):
    """Where a claimed prompt is (:meth:`Store.end_prompt`'s keywords): the ``turn`` it runs
    as, and why it failed or was cancelled (``error``)."""

    turn: int | None
    error: str | None


class Store(abc.ABC):
    """The store interface: one for every backend (``async with`` closes it)."""

    #: Where it is: a file path, or the database URL without its password.
    location: str

    # --- threads ------------------------------------------------------------------------

    @abc.abstractmethod
    async def create_thread(self, **thread: Unpack[NewThread]) -> Thread:
        """A new thread of ``thread``'s fields (:class:`NewThread`). :class:`StoreError` when
        its ``name`` is taken."""

    @abc.abstractmethod
    async def thread(self, thread_id: str) -> Thread:
        """The thread of that id; :class:`ThreadNotFound` when there is none."""

    @abc.abstractmethod
    async def thread_named(self, name: str) -> Thread | None:
        """The thread of that name, if there is one."""

    @abc.abstractmethod
    async def threads(self) -> list[Thread]:
        """Every thread, the most recently updated first."""

    @abc.abstractmethod
    async def update_thread(self, thread_id: str, **fields: Any) -> Thread:
        """Change a thread's ``name``, ``agent_session_id``, ``title``, ``folders``,
        ``launch``; its
        ``updated_at`` moves to now. :class:`ThreadNotFound`."""

    @abc.abstractmethod
    async def delete_thread(self, thread_id: str) -> None:
        """Forget a thread, its turns, events, items and queued prompts."""

    # --- what a session writes ----------------------------------------------------------

    @abc.abstractmethod
    async def commit(self, thread_id: str, commit: Commit) -> int:
        """Write one update in one transaction: all of it, or (on an error) none of it.
        Returns the ``seq`` of the thread's last event."""

    # --- what is read back --------------------------------------------------------------

    @abc.abstractmethod
    async def events(self, thread_id: str, *, after: int = 0) -> list[StoredEvent]:
        """The thread's events after ``seq`` ``after``, in order."""

    @abc.abstractmethod
    async def items(self, thread_id: str) -> list[dict[str, Any]]:
        """The thread's current timeline items (as JSON), in timeline order (``ordinal``)."""

    @abc.abstractmethod
    async def turns(self, thread_id: str) -> list[Turn]:
        """The thread's turns, in order."""

    @abc.abstractmethod
    def follow(self, thread_id: str, *, after: int = 0) -> AsyncIterator[StoredEvent]:
        """The thread's events after ``after`` as they are committed, by this process or
        another (``async for``; it never ends by itself)."""

    # --- the prompt queue ---------------------------------------------------------------

    async def queue_prompt(self, thread_id: str, prompt: PromptBlocks) -> int:
        """Put a prompt at the end of the thread's queue, for whoever owns the thread; its
        position (:meth:`enqueue` gives its id too)."""
        return (await self.enqueue(thread_id, prompt)).position

    @abc.abstractmethod
    async def enqueue(
        self, thread_id: str, prompt: PromptBlocks, *, held_by: Owner | None = None
    ) -> QueuedPrompt:
        """Put a prompt at the end of the thread's queue: ``queued``, for whoever owns the
        thread to run, or (``held_by``: the owner's own prompt, waiting in its process for
        the running turn) ``held``. :class:`ThreadNotFound`."""

    @abc.abstractmethod
    async def queued_prompts(self, thread_id: str) -> list[QueuedPrompt]:
        """The thread's prompts waiting for a turn (``queued`` and ``held``), in order."""

    @abc.abstractmethod
    async def prompts(
        self, thread_id: str, states: Sequence[PromptState] = ("queued", "held", "running")
    ) -> list[QueuedPrompt]:
        """The thread's prompts in those states (by default: those not ended), in order."""

    @abc.abstractmethod
    async def queued_prompt(self, prompt_id: str) -> QueuedPrompt | None:
        """The prompt of that id, in whatever state it is; None when there is none (its
        thread was deleted)."""

    @abc.abstractmethod
    async def take_prompt(self, thread_id: str, position: int) -> None:
        """Take a prompt out of the queue (it was sent, or dropped)."""

    @abc.abstractmethod
    async def claim_prompt(self, thread_id: str, owner: Owner) -> QueuedPrompt | None:
        """The thread's first ``queued`` prompt, now ``running`` for ``owner``; None when
        none waits, or ``owner`` does not hold the thread's live lease."""

    @abc.abstractmethod
    async def end_prompt(
        self, prompt_id: str, state: PromptState, **where: Unpack[PromptEnd]
    ) -> None:
        """Say where a claimed prompt is: ``running`` as ``turn``, or ended (with ``error``,
        why: :class:`PromptEnd`)."""

    @abc.abstractmethod
    async def withdraw_prompt(self, prompt_id: str, why: str) -> bool:
        """Cancel a prompt still ``queued`` (not yet claimed): whether it was."""

    # --- who drives a thread ------------------------------------------------------------

    @abc.abstractmethod
    async def acquire_lease(
        self, thread_id: str, owner: Owner, *, seconds: float = LEASE_SECONDS
    ) -> Lease:
        """Take the thread for ``owner`` until ``seconds`` from now (again, for the owner
        that holds it: a renewal). An expired lease is replaced: its owner's running turn
        and prompts fail (:data:`OWNER_LOST`), its held prompts go back to the queue
        (``Lease.replaced`` says whose it was).

        :raises ThreadBusy: another owner's lease has not expired.
        :raises ThreadNotFound: no thread of that id.
        """

    @abc.abstractmethod
    async def renew_lease(
        self, thread_id: str, owner: Owner, *, seconds: float = LEASE_SECONDS
    ) -> bool:
        """Extend ``owner``'s lease to ``seconds`` from now; False when it holds none (it
        expired and another took the thread, or the thread is gone)."""

    @abc.abstractmethod
    async def release_lease(self, thread_id: str, owner: Owner) -> None:
        """Let the thread go (when ``owner`` holds it); whoever waits for it may take it."""

    @abc.abstractmethod
    async def forget_unused(self, thread_id: str, owner: Owner) -> bool:
        """Forget the thread, as :meth:`delete_thread` does, when ``owner`` holds its lease
        and it holds no turn and no prompt (queued or ended): what a session that made it
        leaves when it fails before its first turn. Whether it was forgotten (a thread
        another process queued a prompt for meanwhile is kept)."""

    @abc.abstractmethod
    async def lease(self, thread_id: str) -> Lease | None:
        """Who holds the thread (``live``: whether the lease has not expired); None when
        no one has."""

    @abc.abstractmethod
    async def claim_thread(
        self, owner: Owner, *, seconds: float = LEASE_SECONDS, skip: Sequence[str] = ()
    ) -> Thread | None:
        """A thread with a ``queued`` prompt and no live owner (the one waiting longest,
        not in ``skip``), leased to ``owner`` (as :meth:`acquire_lease`); None when there
        is none. Two workers never claim one thread (PostgreSQL: ``FOR UPDATE SKIP
        LOCKED``)."""

    @abc.abstractmethod
    async def lost_threads(self) -> list[str]:
        """The threads whose lease expired while a turn or a prompt of theirs ran: the
        turns that someone should end as failed (:func:`~.recovery.end_lost_turn`)."""

    @abc.abstractmethod
    def queue_changes(self) -> int:
        """A count that :meth:`wait_queue` waits to see move."""

    @abc.abstractmethod
    async def wait_queue(self, seen: int, timeout: float) -> None:
        """Return when a prompt was queued or a thread released (by any process) since
        :meth:`queue_changes` was ``seen``, or after ``timeout`` seconds."""

    # --- the store ----------------------------------------------------------------------

    @property
    @abc.abstractmethod
    def schema_version(self) -> int:
        """The schema version of the store as opened (after any migration)."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Close the store (what was committed stays)."""

    async def __aenter__(self) -> Store:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()


@dataclass(frozen=True)
class PreparedCommit:
    """A commit as a backend's transaction writes it (for the backends, not their callers):
    its events and items encoded, its thread's fields as columns."""

    thread_id: str
    events: list[str]
    #: Each item's row: its id, its ordinal, its JSON.
    items: list[tuple[str, int, str]]
    turns: list[Turn]
    columns: dict[str, Any]
    #: The name the commit gives its thread (for the error when it is taken).
    name: Any
