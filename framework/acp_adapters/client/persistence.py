"""A live session kept in a store: its thread, its event log, its items, its turns.

:class:`ThreadWriter` follows one :class:`~.session.Session`: every event of the
connection's traffic (exactly what the traffic reader takes in, with the time it was given
for it) and every item that appeared or changed. A background task commits them: each
commit is the events that came since the last one and the items as they are now, in one
transaction (:meth:`~acp_adapters.store.Store.commit`). While a commit runs, what comes
waits for the next, so a fast agent makes fewer, larger commits, never a backlog of small
ones; and commits are spaced (:data:`COMMIT_INTERVAL`, and longer after a large one:
:data:`COMMIT_BYTES_PER_SECOND`), so that a store shared by hundreds of sessions writes a
few commits a second for each (written together: see :mod:`acp_adapters.store.group`),
whatever their agents send, and a session whose commits are large (a flood, a long message
written again each time) commits less often rather than taking the store from
the others. A commit that fails (the store went away, the disk is full) is kept and tried again;
the session goes on, and the failure is reported (:attr:`ThreadWriter.failures`, and the
application's ``on_store_error`` callback).

A thread opened again (:func:`reopened`) is first read back from its log: the session's
traffic reader takes in the stored events before the agent starts, so the timeline goes on
where it was (ids, ordinals, turns), and the history the agent replays as its session is
loaded is not added twice.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

import anyio

from ..capture.recorder import capture_entry, entry_event
from ..store.base import (
    OWNER_LOST,
    Commit,
    EncodedEvent,
    Owner,
    Store,
    StoreError,
    Thread,
    Turn,
    TurnStatus,
    encoded_event,
)
from ..timeline.items import TimelineItem

if TYPE_CHECKING:
    from .agent import TrafficEvent
    from .session import Session

#: A session commits at most this often (seconds; ``connect(commit_interval=)``): what comes
#: in between goes into the next commit. A turn's start and end, and the commit at the
#: session's end, are not delayed.
COMMIT_INTERVAL = 0.1
#: And a commit starts no sooner after the one before than that one's size (its events and
#: the text of its items, in bytes) allows at this rate: a session that writes much, writes
#: seldom, in large commits (the memory this costs is what its agent sent in that time).
COMMIT_BYTES_PER_SECOND = 256 * 1024
#: The most events one commit holds: a backlog goes in several, one after the other.
MAX_COMMIT_EVENTS = 2000
#: How long a failed commit waits before it is tried again, at most (it doubles from 0.1 s).
RETRY_SECONDS = 5.0
#: How many times the commit at a session's end is tried (about 3 s in all).
FLUSH_ATTEMPTS = 5

StoreErrorCallback = Callable[[StoreError], None]


#: The longest title a thread keeps (an agent's session info is the agent's to fill).
MAX_TITLE = 1000


def _plain_text(value: Any) -> str | None:
    """A string every backend's text column holds: no NUL, no lone surrogate (each shown
    as U+FFFD), :data:`MAX_TITLE` characters at most. An agent's title with a NUL would
    otherwise fail every commit of the thread."""
    if not isinstance(value, str):
        return None
    cleaned = "".join(
        "\ufffd" if ch == "\x00" or "\ud800" <= ch <= "\udfff" else ch for ch in value
    )
    return cleaned[:MAX_TITLE]


def turn_status(stop_reason: str | None) -> Literal["completed", "failed", "cancelled"]:
    """How a turn that ended with ``stop_reason`` ended, as the store keeps it."""
    if stop_reason == "cancelled":
        return "cancelled"
    if stop_reason in ("error", "agent_exited"):
        return "failed"
    return "completed"


def item_json(item: TimelineItem) -> dict[str, Any]:
    """An item as the store keeps it."""
    return item.model_dump(mode="json")


class ThreadWriter:
    """Writes one session's traffic and items into its thread of a store."""

    def __init__(
        self,
        store: Store,
        thread: Thread,
        session: Session,
        *,
        on_error: StoreErrorCallback | None = None,
        interval: float = COMMIT_INTERVAL,
    ) -> None:
        self.store = store
        #: The least time between the starts of two commits (seconds).
        self.interval = interval
        #: When the last commit started (``anyio.current_time``) and its size (bytes).
        self._last_commit: tuple[float, int] | None = None
        self._size = 0
        #: Set when what is pending should not wait for the interval (a turn began or ended).
        self._due_now = anyio.Event()
        self.thread = thread
        self.session = session
        self._on_error = on_error
        #: The commits that failed, in order (the last one is being tried again).
        self.failures: list[StoreError] = []
        self._events: list[EncodedEvent] = []
        self._items: dict[str, TimelineItem] = {}
        self._turns: dict[int, Turn] = {}
        self._thread_fields: dict[str, Any] = {}
        self._more = anyio.Event()
        self._committing = anyio.Lock()
        self._idle = anyio.Event()
        self._idle.set()
        self._reading_back = False
        self._known_session = thread.agent_session_id
        self._known_title = thread.title

    # --- what it hears ----------------------------------------------------------------

    def attach(self) -> None:
        """Start hearing the session's traffic and items."""
        self.session.agent.on_traffic.subscribe(self.event)
        self.session.projector.on_item.subscribe(self.item)
        self.session.projector.on_session.subscribe(self.changed)

    def event(self, event: TrafficEvent) -> None:
        if self._reading_back:
            return
        try:
            # Text from here on: what waits for the commit is nothing the collector scans.
            entry = capture_entry(event.direction, event.payload, event.at)
            self._events.append(encoded_event(entry))
        except StoreError as error:  # nothing JSON can hold: that event alone is not kept
            self.failed(error)
            return
        self._wake()

    def item(self, item: TimelineItem) -> None:
        if self._reading_back:
            return
        self._items[item.id] = item
        self._wake()

    def changed(self, kind: str) -> None:
        if self._reading_back:
            return
        state = self.session.projector.state
        if state.session_id is not None and state.session_id != self._known_session:
            self._known_session = state.session_id
            self._thread_fields["agent_session_id"] = state.session_id
        title = _plain_text(state.info.title)
        if title is not None and title != self._known_title:
            self._known_title = title
            self._thread_fields["title"] = title
        if kind == "turn" and state.turn > 0:
            self._turns[state.turn] = self._turn(state)
            self._due_now.set()  # a turn's start and end are committed without delay
        self._wake()

    def _turn(self, state: Any) -> Turn:
        turn_state = state.turn_state
        stop = turn_state.stop_reason
        status: TurnStatus = turn_status(stop) if turn_state.state == "idle" else "running"
        previous = self._turns.get(state.turn)
        return Turn(
            thread_id=self.thread.id,
            index=state.turn,
            status=status,
            stop_reason=stop,
            error=self.why_failed(state.turn, stop) if status == "failed" else None,
            started_at=previous.started_at if previous else 0.0,
        )

    def why_failed(self, turn: int, stop: str | None) -> str:
        """Why a turn failed: the last error of the turn (the agent's exit, with its status;
        an error answer), else its stop reason."""
        errors = [
            item
            for item in self.session.projector.items.values()
            if item.kind == "error" and item.turn == turn
        ]
        if errors:
            last = max(errors, key=lambda item: item.ordinal)
            data = getattr(last, "data", None)
            stderr = data.get("stderr") if isinstance(data, dict) else None
            if isinstance(stderr, str) and stderr.startswith(OWNER_LOST):
                return stderr[:2000]  # no agent exited: its owner went away
            return str(getattr(last, "message", "") or stop)[:2000]
        return f"the turn ended: {stop}"

    def _wake(self) -> None:
        self._idle = anyio.Event() if self._idle.is_set() else self._idle
        self._more.set()

    # --- committing -------------------------------------------------------------------

    async def run(self) -> None:
        """Commit what comes, until cancelled (then :meth:`flush` writes the rest)."""
        delay = 0.1
        while True:
            await self._more.wait()
            await self._spaced()
            self._more = anyio.Event()
            self._due_now = anyio.Event()
            started = anyio.current_time()
            try:
                await self._commit_pending()
            except StoreError as error:
                self.failed(error)
                await anyio.sleep(delay)
                delay = min(delay * 2, RETRY_SECONDS)
                self._more.set()
                continue
            finally:
                self._last_commit = (started, self._size)
            delay = 0.1

    async def _spaced(self) -> None:
        """Wait until the next commit is due (see :data:`COMMIT_INTERVAL`)."""
        if self._last_commit is None:
            return  # the first commit goes at once
        started, size = self._last_commit
        due = started + max(self.interval, size / COMMIT_BYTES_PER_SECOND)
        wait = due - anyio.current_time()
        if wait > 0:
            with anyio.move_on_after(wait):
                await self._due_now.wait()

    def failed(self, error: StoreError) -> None:
        """A commit (or a claim) failed: kept, and told to the application's callback."""
        self.failures.append(error)
        del self.failures[:-100]  # the most recent: a store down for long fails often
        if self._on_error is not None:
            self._on_error(error)

    async def _commit_pending(self) -> None:
        """One commit of what is pending; on a failure it stays pending, in order. One at a
        time: the commit at the session's end waits for the one in flight."""
        async with self._committing:
            await self._commit_locked()

    async def _commit_locked(self) -> None:
        self.session.projector.flush()  # the items as the messages handled make them
        events, items = self._events, self._items
        turns, fields = self._turns, self._thread_fields
        if not (events or items or turns or fields):
            self._idle.set()
            return
        if len(events) > MAX_COMMIT_EVENTS:
            # A backlog (a flood) goes in commits of a bounded size, the oldest first, so that
            # the other sessions' commits, written with them, never wait for a huge one. The
            # items, turns and fields go with the last: they describe all the events.
            events, rest = events[:MAX_COMMIT_EVENTS], events[MAX_COMMIT_EVENTS:]
            self._events, items, turns, fields = rest, {}, {}, {}
            self._more.set()
            self._due_now.set()  # the rest goes next, with the commits written then
        else:
            self._events, self._items, self._turns, self._thread_fields = [], {}, {}, {}
        commit = Commit(
            events=events,
            items=[item_json(item) for item in items.values()],
            turns=list(turns.values()),
            thread=fields,
        )
        self._size = _size_of(commit)
        try:
            await self.store.commit(self.thread.id, commit)
        except BaseException:
            # Kept for the next commit, before what came meanwhile.
            self._events = events + self._events
            self._items = {**items, **self._items}
            self._turns = {**turns, **self._turns}
            self._thread_fields = {**fields, **self._thread_fields}
            raise
        if not (self._events or self._items or self._turns or self._thread_fields):
            self._idle.set()

    async def flush(self, attempts: int = FLUSH_ATTEMPTS) -> None:
        """Commit everything pending now (at the session's end), trying again after a
        failure (each reported); the last failure raises."""
        delay = 0.1
        with anyio.CancelScope(shield=True):
            for attempt in range(attempts):
                try:
                    while True:  # a backlog takes several commits
                        await self._commit_pending()
                        if not self._events:
                            return
                except StoreError as error:
                    self.failed(error)
                    if attempt == attempts - 1:
                        raise
                await anyio.sleep(delay)
                delay = min(delay * 2, RETRY_SECONDS)

    # --- the prompt queue ---------------------------------------------------------------

    async def queued(self, blocks: list[dict[str, Any]], owner: Owner | None) -> int | None:
        """A prompt waits for the running turn: kept in the thread's queue, held by the
        session's ``owner`` (no one else runs it; it waits for the next owner if this one
        dies); its position (None when the store failed: reported, and the prompt waits
        all the same)."""
        try:
            return (await self.store.enqueue(self.thread.id, blocks, held_by=owner)).position
        except StoreError as error:
            self.failed(error)
            return None

    async def unqueued(self, position: int | None) -> None:
        """The prompt was sent, or dropped: out of the thread's queue."""
        if position is None:
            return
        with anyio.CancelScope(shield=True):
            try:
                await self.store.take_prompt(self.thread.id, position)
            except StoreError as error:
                self.failed(error)

    # --- a thread opened again ----------------------------------------------------------

    async def read_back(self, recorder: Callable[[str, Any], None] | None = None) -> int:
        """Feed the thread's stored events to the session's traffic reader (before the
        agent starts): the timeline is where the thread left it. How many events.

        ``recorder`` (the session's capture recorder) gets them too: a recording of a
        thread gone on with holds all that its timeline was made of.
        """
        events = await self.store.events(self.thread.id)
        self._reading_back = True
        try:
            traffic = self.session.traffic
            for stored in events:
                traffic.entry(stored.entry)
                event = entry_event(stored.entry) if recorder is not None else None
                if recorder is not None and event is not None:
                    recorder(*event)
            self.session.projector.flush()
        finally:
            self._reading_back = False
        return len(events)


def _size_of(commit: Commit) -> int:
    """About how many bytes a commit writes: its events, and the text of its items' fields
    (a message's text, a patch, a command's output: what makes an item large)."""
    size = sum(len(event) for event in commit.events if isinstance(event, str))
    for item in commit.items:
        size += sum(len(value) for value in item.values() if isinstance(value, str))
    return size


async def reopened(
    writer: ThreadWriter, recorder: Callable[[str, Any], None] | None = None
) -> None:
    """Read a thread back into its session, before the agent starts: the stored events go
    through the traffic reader. A turn the log leaves running (the process that ran it
    ended mid-turn) is ended here as the agent's exit ends one: failed, with the reason,
    written to the log like any event."""
    if not await writer.read_back(recorder):
        return
    if writer.session.projector.state.turn_state.state != "idle":
        writer.session.agent.saw(
            "exit",
            {"code": None, "stderr": f"{OWNER_LOST}: the process that ran it ended mid-turn"},
        )
