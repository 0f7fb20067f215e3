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
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Literal

from .. import _json
from ..errors import AcpAdaptersError

#: The schema version this library writes; a store of an older version is migrated when
#: opened, one of a newer version is refused (:class:`StoreError`).
SCHEMA_VERSION = 1

TurnStatus = Literal["running", "completed", "failed", "cancelled"]


class StoreError(AcpAdaptersError):
    """The store cannot be opened, read or written: its path, and why."""


class ThreadNotFound(StoreError):
    """No thread of that id (or name)."""


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
    """A prompt waiting for its thread's running turn to end (kept across restarts)."""

    thread_id: str
    position: int
    prompt: list[dict[str, Any]]
    queued_at: float = 0.0


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


class Store(abc.ABC):
    """The store interface: one for every backend (``async with`` closes it)."""

    #: Where it is: a file path, or the database URL without its password.
    location: str

    # --- threads ------------------------------------------------------------------------

    @abc.abstractmethod
    async def create_thread(
        self,
        *,
        provider: str,
        cwd: str,
        name: str | None = None,
        folders: Sequence[str] = (),
        agent_session_id: str | None = None,
        title: str | None = None,
        command: Sequence[str] | None = None,
    ) -> Thread:
        """A new thread. :class:`StoreError` when ``name`` is taken."""

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
        """Change a thread's ``name``, ``agent_session_id``, ``title``, ``folders``; its
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

    @abc.abstractmethod
    async def queue_prompt(self, thread_id: str, prompt: Sequence[Mapping[str, Any]]) -> int:
        """Put a prompt at the end of the thread's queue; its position."""

    @abc.abstractmethod
    async def queued_prompts(self, thread_id: str) -> list[QueuedPrompt]:
        """The thread's queued prompts, in order."""

    @abc.abstractmethod
    async def take_prompt(self, thread_id: str, position: int) -> None:
        """Take a prompt out of the queue (it was sent, or dropped)."""

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
