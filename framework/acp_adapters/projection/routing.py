"""Whose each event of one connection's traffic is: decided once, by one router.

A connection may hold several sessions, each with its traffic reader
(:class:`~.traffic.Traffic`). The :class:`Router` follows the whole connection (the
requests of both sides, to their answers) and gives each event to the reader of the session
it is for, and to no other: an update or a request of the agent to the session its
``sessionId`` names; a request of the client, and its answer, to the session it names
(``initialize`` to every one; an opening request to the session it opens); the client's own
lines (disk reads, checkpoints, decisions) to the session they name, or to every one when
they name none.

A capture is read the same way: :func:`~.traffic.project_capture` routes it to one reader,
the session it follows, and what is another session's goes nowhere. A live connection routes
to the reader of each of its sessions (:class:`~acp_adapters.client.agent.Agent`), and the
side effects of what the agent sends (its requests answered, the disk read around an edit)
follow the same decision: :meth:`Router.message` says where each message went
(:class:`Delivery`), and :meth:`Router.request_route` where a request of the agent did.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ..capture.format import (
    AGENT_EXIT,
    AGENT_TO_CLIENT,
    CHECKPOINT,
    CLIENT_DECISION,
    CLIENT_TO_AGENT,
    DISK_READ,
    FILE_CHANGE,
    MESSAGE_DROPPED,
    SESSION_CLOSED,
    DroppedLine,
    change_line,
    checkpoint_line,
    closed_session,
    decided_line,
    disk_read,
    dropped_line,
    request_key,
)

if TYPE_CHECKING:
    from ..runtime.reducer import Change
    from .traffic import Traffic

#: How many requests of either side may wait for their answers: past it the oldest is
#: forgotten (its answer, if it ever comes, projects nothing), so a capture or an agent
#: that never answers cannot grow the router's memory.
MAX_WAITING = 4096

#: The client's requests that open a session, and those of them that make a new one.
OPENING = ("session/new", "session/load", "session/resume", "session/fork")
CREATING = ("session/new", "session/fork")

#: Why a message of the agent reached no session: it named none (or not as a string), the
#: session it names is closed, or no session of the connection has that id.
Unrouted = Literal["unnamed", "closed", "other"]


@dataclass(frozen=True)
class Route:
    """Where a message of the agent goes: the reader of its session, or none, and why."""

    reader: Traffic | None
    unrouted: Unrouted | None = None


@dataclass(frozen=True)
class Delivery:
    """A message of the agent as the router gave it: its method, its route, and what the
    reader's projection of it changed (a ``session/update``'s changes; none for a request)."""

    method: str
    route: Route
    #: The ``sessionId`` it named, as it named it.
    named: Any = None
    changes: list[Change] = field(default_factory=list)


@dataclass(frozen=True)
class _Waiting:
    """A request waiting for its answer, and the readers it went to."""

    method: str
    params: Any
    readers: tuple[Traffic, ...]


def remember_waiting(waiting: dict[Any, Any], key: Any, value: Any) -> None:
    """A request waiting for its answer, remembered by its key: the newest last, the oldest
    forgotten past :data:`MAX_WAITING`."""
    waiting.pop(key, None)
    waiting[key] = value
    if len(waiting) > MAX_WAITING:
        del waiting[next(iter(waiting))]


def _seconds(at: Any) -> float:
    return float(at) if isinstance(at, int | float) and not isinstance(at, bool) else 0.0


class Router:
    """Routes one connection's traffic to its sessions' readers (see the module's text)."""

    def __init__(self, readers: Iterable[Traffic] = ()) -> None:
        #: The readers, in the order their sessions were made (the first takes what an
        #: unopened session would).
        self.readers: list[Traffic] = list(readers)
        # Requests waiting for an answer, per side: key -> what it was, and whose.
        self.client_requests: dict[Any, _Waiting] = {}
        self.agent_requests: dict[Any, _Waiting] = {}
        #: The route of each request of the agent still waiting for its answer.
        self._request_routes: dict[Any, Route] = {}

    def add(self, reader: Traffic) -> None:
        self.readers.append(reader)

    def remove(self, reader: Traffic) -> None:
        if reader in self.readers:
            self.readers.remove(reader)

    # --- the decisions ------------------------------------------------------------------

    def owner(self, named: Any) -> Route:
        """The reader of the session a message of the agent names: the open one with that
        id, else (no session has it) the first session not opened yet."""
        if not isinstance(named, str):
            return Route(None, "unnamed")
        matching = [reader for reader in self.readers if reader.session_id == named]
        for reader in matching:
            if not reader.closed:
                return Route(reader)
        if matching:
            return Route(None, "closed")
        unopened = self._unopened()
        return Route(unopened) if unopened is not None else Route(None, "other")

    def _unopened(self) -> Traffic | None:
        return next((reader for reader in self.readers if reader.session_id is None), None)

    def _named(self, named: Any) -> tuple[Traffic, ...]:
        """The readers of what names session ``named`` (closed ones too): every reader when
        it names none; those with that id; else the first session not opened yet."""
        if named is None:
            return tuple(self.readers)
        matching = tuple(reader for reader in self.readers if reader.session_id == named)
        if matching:
            return matching
        unopened = self._unopened()
        return (unopened,) if unopened is not None else ()

    def _opens(self, key: Any, session_id: Any) -> Traffic | None:
        """The reader of the session an opening request (key ``key``) opens, or opens again,
        for ``session_id``: the session with that id; else the one that sent the request
        (a live session says which it sent); else the first session not opened yet that
        sent none (a capture's)."""
        if not isinstance(session_id, str):
            return None
        for reader in self.readers:
            if reader.session_id == session_id:
                return reader
        for reader in self.readers:
            if reader.session_id is None and reader.opening is not None and reader.opening == key:
                return reader
        taken = {reader.session_id for reader in self.readers}
        for reader in self.readers:
            if reader.session_id is None and reader.opening is None and session_id not in taken:
                return reader
        return None

    def request_route(self, request_id: Any) -> Route:
        """Where a request of the agent (by its id) went, as it came in."""
        return self._request_routes.get(request_key(request_id), Route(None, "other"))

    # --- what feeds it ------------------------------------------------------------------

    def entry(self, entry: dict[str, Any]) -> list[Delivery]:
        """One line of a capture: a message either way, a client line, or the agent's exit;
        where each message of the agent in it went."""
        direction, at = entry.get("dir"), _seconds(entry.get("t"))
        if direction == AGENT_EXIT:
            code, stderr = entry.get("code"), entry.get("stderr")
            self.exited(
                code if isinstance(code, int) and not isinstance(code, bool) else None,
                stderr if isinstance(stderr, str) else "",
                at,
            )
        elif isinstance(direction, str) and direction in CLIENT_LINES:
            line = CLIENT_LINES[direction](entry)
            if line is None:
                return []  # not a line of its kind: nothing to route
            if direction == SESSION_CLOSED:
                self.session_closed(line)
            elif direction == MESSAGE_DROPPED:
                self.dropped(line, at)
            else:
                # A line of a session's (a disk read, a checkpoint, a change, a decision):
                # the session it names takes it, every one when it names none.
                take = _TAKEN_BY[direction]
                for reader in self._named(line.session_id):
                    take(reader, line, at)
        elif "msg" in entry:
            return self.message(direction if isinstance(direction, str) else "", entry["msg"], at)
        return []

    def exited(self, code: int | None, stderr: str, at: float) -> None:
        """The agent exited on its own: every session's."""
        for reader in self.readers:
            reader.take_exit(code, stderr, at)

    def dropped(self, line: DroppedLine, at: float) -> None:
        """The connection dropped a message of the agent, unread: whose it was cannot be
        known, so every session is told."""
        for reader in self.readers:
            reader.take_dropped(line, at)

    def session_closed(self, session_id: str) -> None:
        """The client closed session ``session_id``."""
        for reader in self._named(session_id):
            if reader.session_id is not None:
                reader.take_closed()

    def message(self, direction: str, message: Any, at: float) -> list[Delivery]:
        """A message (or a batch) the client sent (``client->agent``) or received; where
        each message of the agent in it went."""
        if isinstance(message, list):  # a batch
            return [delivery for part in message for delivery in self.message(direction, part, at)]
        if not isinstance(message, dict):
            return []
        method = message.get("method")
        has_id = "id" in message
        if direction == CLIENT_TO_AGENT:
            if isinstance(method, str):
                self._client_sent(message, method, at)
            elif has_id:
                self._client_answered(message, at)
        elif direction == AGENT_TO_CLIENT:
            if isinstance(method, str):
                return [self._agent_sent(message, method, at)]
            if has_id:
                self._agent_answered(message, at)
        return []

    # --- following requests -------------------------------------------------------------

    def _client_sent(self, message: dict[str, Any], method: str, at: float) -> None:
        params = message.get("params")
        key = request_key(message["id"]) if "id" in message else None
        named = params.get("sessionId") if isinstance(params, dict) else None
        readers: tuple[Traffic, ...]
        if method == "initialize":
            readers = tuple(self.readers)
        elif method in CREATING:
            readers = ()  # whose it is, its answer says
        elif method in OPENING:
            opened = self._opens(key, named)
            readers = (opened,) if opened is not None else ()
        elif isinstance(named, str):
            readers = tuple(reader for reader in self._named(named) if reader.session_id)
        else:
            readers = ()
        if key is not None:
            remember_waiting(self.client_requests, key, _Waiting(method, params, readers))
        for reader in readers:
            reader.take_client_request(message, method, params, key, at)

    def _agent_answered(self, message: dict[str, Any], at: float) -> None:
        key = request_key(message["id"])
        request = self.client_requests.pop(key, None)
        if request is None:
            return
        method, params, readers = request.method, request.params, request.readers
        result, error = message.get("result"), message.get("error")
        if method in OPENING:
            # Whose session it opens is decided as the answer comes: another session may
            # have opened meanwhile. One that began replaying for it hears the replay end.
            named = params.get("sessionId") if isinstance(params, dict) else None
            if method in CREATING:
                named = result.get("sessionId") if isinstance(result, dict) else None
            opened = self._opens(key, named)
            for reader in readers:
                if reader is not opened:
                    reader.take_replay_end(key)
            readers = (opened,) if opened is not None else ()
        for reader in readers:
            reader.take_agent_answer(key, method, params, result, error, at)

    def _agent_sent(self, message: dict[str, Any], method: str, at: float) -> Delivery:
        params = message.get("params")
        named = params.get("sessionId") if isinstance(params, dict) else None
        route = self.owner(named)
        if "id" in message:
            key = request_key(message["id"])
            readers = (route.reader,) if route.reader is not None else ()
            remember_waiting(self.agent_requests, key, _Waiting(method, params, readers))
            remember_waiting(self._request_routes, key, route)
        changes = route.reader.take_agent_message(message, method, at) if route.reader else []
        return Delivery(method, route, named, changes)

    def _client_answered(self, message: dict[str, Any], at: float) -> None:
        key = request_key(message["id"])
        self._request_routes.pop(key, None)
        request = self.agent_requests.pop(key, None)
        if request is None:
            return
        for reader in request.readers:
            reader.take_client_answer(message, request.method, request.params, at)


#: The client's own lines of a capture, each read as the format reads it (None: not one).
CLIENT_LINES: dict[str, Callable[[dict[str, Any]], Any]] = {
    DISK_READ: disk_read,
    CHECKPOINT: checkpoint_line,
    FILE_CHANGE: change_line,
    SESSION_CLOSED: closed_session,
    CLIENT_DECISION: decided_line,
    MESSAGE_DROPPED: dropped_line,
}
#: The lines of a session's own, and how its reader takes each.
_TAKEN_BY: dict[str, Callable[[Traffic, Any, float], None]] = {
    DISK_READ: lambda reader, line, at: reader.take_disk(line, at),
    CHECKPOINT: lambda reader, line, at: reader.take_checkpoint(line, at),
    FILE_CHANGE: lambda reader, line, at: reader.take_change(line, at),
    CLIENT_DECISION: lambda reader, line, at: reader.take_decided(line, at),
}
