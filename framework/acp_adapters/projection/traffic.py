"""The one reader of a session's traffic: what drives the projector, live and from a capture.

A live session feeds it each message as the connection reads or writes it, each
disk read it makes for a true patch, and the agent's exit; :func:`project_capture`
and the replay feed it the same events from a capture's lines (the format's words
are in :mod:`acp_adapters.capture.format`). What is true live is true in replay: a
recording projects to the timeline the live session showed, by construction.

It follows the requests of both sides to their answers and reports to a
:class:`~.projector.Projector`:

* the ``initialize`` answer gives the protocol version, judged by the body's
  shape (an agent that answers 2 with a v1 body speaks v1), and the agent's
  name, which picks the provider (unless one is given);
* ``session/new`` gives the session's folder (relative paths are resolved against it),
  its answer the session's id, modes and configuration; ``session/load`` and
  ``session/resume`` answers, ``session/set_mode`` and ``session/set_config_option``
  answers keep them current;
* prompts start turns; their answers end them (v1) or acknowledge them (v2);
* ``session/update`` notifications go through the reducer and the plugins (one for
  another session, or for none, is not this session's);
* permission requests and answers, the client's ``fs/read_text_file`` answers and
  ``fs/write_text_file`` services, ``terminal/*`` answers and the ``disk`` reads are
  recorded, so file edits show their true patch and commands their output;
* ``checkpoint`` and ``change`` lines (what the workspace's checkpoints found) give a
  completed tool call its true change, and a change no tool call claimed its own item;
* once the session is closed (the agent answered its ``session/close``, or a ``closed``
  line: the client closed it, told to the agent or not, or shut the connection down), what
  the agent sends on its own (updates, requests) no longer reaches the projector, until the
  session is opened again (``session/load``, ``session/resume``): a closed session's
  timeline is what it was when it closed.

Every line is untrusted: one that is not JSON, or not a message, is skipped
and listed in the timeline's ``problems``; nothing in a capture raises.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterable
from typing import Any

import pluggy

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
    UNRECORDED,
    ChangeLine,
    CheckpointLine,
    DecidedLine,
    DiskLine,
    DroppedLine,
    Unreadable,
    capture_values,
    change_line,
    checkpoint_line,
    closed_session,
    decided_line,
    disk_read,
    dropped_line,
    request_key,
)
from ..plugin.hooks import Hooks
from ..plugin.manager import get_plugin_manager
from ..plugin.providers import ProviderRegistry
from ..runtime.commands import command_line
from ..timeline.timeline import Timeline
from .negotiation import negotiated_version, provider_of
from .projector import Projector

#: How many requests of either side may wait for their answers: past it the oldest is
#: forgotten (its answer, if it ever comes, projects nothing), so a capture or an agent
#: that never answers cannot grow the reader's memory.
MAX_WAITING = 4096

#: The client's requests that open a session, and those of them that make a new one.
_OPENING = ("session/new", "session/load", "session/resume", "session/fork")
_CREATING = ("session/new", "session/fork")
#: Those that may replay the session's history before their answer.
_REPLAYING = ("session/load", "session/resume")
#: The error code of an agent that has no such resource (a session it lost): JSON-RPC's
#: "resource not found", as ACP uses it.
RESOURCE_NOT_FOUND = -32002

CaptureSource = str | os.PathLike[str] | Iterable[str] | Iterable[dict[str, Any]]


#: The lines of the client's own events, and how each is read (None: not one).
_CLIENT_LINES: dict[str, Callable[[dict[str, Any]], Any]] = {
    DISK_READ: disk_read,
    CHECKPOINT: checkpoint_line,
    FILE_CHANGE: change_line,
    SESSION_CLOSED: closed_session,
    CLIENT_DECISION: decided_line,
    MESSAGE_DROPPED: dropped_line,
}


def _entries(source: CaptureSource, problems: list[str]) -> Iterable[dict[str, Any]]:
    """The projectable entries of a capture, as its one line reader reads them (a file as it
    goes, cut at ``\\n`` only, with the live connection's limits); what is left out goes to
    ``problems``."""
    for number, entry in capture_values(source):
        if isinstance(entry, Unreadable):
            problems.append(f"line {number}: {entry.why}")
            continue
        if isinstance(entry, dict) and isinstance(entry.get("raw"), str):
            continue  # a line the agent printed that was not JSON: nothing to project
        if isinstance(entry, dict) and entry.get("dir") == AGENT_EXIT:
            yield entry
            continue
        kind = entry.get("dir") if isinstance(entry, dict) else None
        if kind == UNRECORDED:
            size = entry.get("bytes")
            problems.append(f"line {number}: an event too large to record ({size} bytes)")
            continue
        if isinstance(kind, str) and kind in _CLIENT_LINES:
            if _CLIENT_LINES[kind](entry) is None:
                problems.append(f"line {number}: not a {kind} entry")
            else:
                yield entry
            continue
        if not isinstance(entry, dict) or not isinstance(entry.get("msg"), dict | list):
            problems.append(f"line {number}: not a capture entry")
            continue
        yield entry


def _seconds(at: Any) -> float:
    return float(at) if isinstance(at, int | float) and not isinstance(at, bool) else 0.0


class Traffic:
    """Follows one session's traffic, both ways, and reports it to its projector.

    A connection may hold several sessions: the reader follows one. It is the session
    ``session_id`` names, else the one opened by the request :attr:`opening` names, else
    the first one the traffic opens; what names another session is left out.
    """

    def __init__(
        self,
        projector: Projector,
        registry: ProviderRegistry,
        *,
        session_id: str | None = None,
        others: Callable[[], Collection[str]] = tuple,
    ) -> None:
        self.projector = projector
        self.registry = registry
        if session_id is not None:
            projector.state.session_id = session_id
        #: The ids of the connection's other sessions (a live connection may hold several):
        #: what names one of them is never this session's, even before it has its own id.
        self._others = others
        #: The request that opens this session (its key), when the reader is told which
        #: (a live session is); else the first session the traffic opens is this one.
        self.opening: Any = None
        # Requests waiting for an answer, per side: id -> (method, params).
        self.client_requests: dict[Any, tuple[str, Any]] = {}
        self.agent_requests: dict[Any, tuple[str, Any]] = {}
        #: Files the client answered as empty though they did not exist: the answer's ""
        #: is not their content.
        self._missing: set[str] = set()
        #: The ``session/load`` (or replaying ``session/resume``) whose history is being
        #: replayed: what comes before its answer is marked as replayed.
        self._replaying: Any = None
        self._replay_known = False
        #: The session the agent said it no longer had (-32002), and what it said: the
        #: session opened next is this one's, with a note.
        self._lost: tuple[str, str] | None = None
        #: The session is closed: what the agent sends on its own is not projected. Set
        #: when the agent answers the session's ``session/close``, or by a ``closed`` line
        #: (:meth:`session_closed`); cleared when it is opened again.
        self.closed = False

    # --- what feeds it ------------------------------------------------------------------------

    def entry(self, entry: dict[str, Any]) -> None:
        """One line of a capture: a message either way, a disk read, or the agent's exit."""
        direction, at = entry.get("dir"), _seconds(entry.get("t"))
        if direction == AGENT_EXIT:
            code, stderr = entry.get("code"), entry.get("stderr")
            self.exited(
                code if isinstance(code, int) and not isinstance(code, bool) else None,
                stderr if isinstance(stderr, str) else "",
                at,
            )
        elif direction == DISK_READ:
            read = disk_read(entry)
            if read is not None:
                self.disk(read, at)
        elif direction == CHECKPOINT:
            taken = checkpoint_line(entry)
            if taken is not None:
                self.checkpoint(taken, at)
        elif direction == FILE_CHANGE:
            found = change_line(entry)
            if found is not None:
                self.change(found, at)
        elif direction == SESSION_CLOSED:
            closed = closed_session(entry)
            if closed is not None:
                self.session_closed(closed)
        elif direction == CLIENT_DECISION:
            decided = decided_line(entry)
            if decided is not None:
                self.decided(decided, at)
        elif direction == MESSAGE_DROPPED:
            dropped = dropped_line(entry)
            if dropped is not None:
                self.dropped(dropped, at)
        elif "msg" in entry:
            self.message(direction if isinstance(direction, str) else "", entry["msg"], at)

    def exited(self, code: int | None, stderr: str, at: float) -> None:
        """The agent exited on its own."""
        self.projector.agent_exited(code, stderr, at)

    def decided(self, line: DecidedLine, at: float) -> None:
        """The client asked its application about an action of the agent (a ``decided``
        line): an approval of the session it names."""
        if self.closed or (line.session_id is not None and not self._names_ours(line.session_id)):
            return
        self.projector.client_action_decided(line, at)

    def dropped(self, line: DroppedLine, at: float) -> None:
        """The connection dropped a message of the agent, unread (a ``dropped`` line): whose
        it was cannot be known, so every open session shows it (a closed one does not)."""
        if self.closed or self.projector.state.session_id is None:
            return
        self.projector.message_dropped(line.reason, line.limit, at)

    def session_closed(self, session_id: str) -> None:
        """The client closed session ``session_id`` (a ``closed`` line)."""
        if self._names_ours(session_id) and self.projector.state.session_id is not None:
            self.closed = True

    def disk(self, read: DiskLine, at: float) -> None:
        """The client looked at a file on the disk, for a true patch."""
        projector = self.projector
        if read.session_id is not None and not self._names_ours(read.session_id):
            return
        if read.phase == "missing":
            self._missing.add(read.path)
            projector.file_read(read.path, None, at)
        elif read.phase == "write":
            projector.file_found(read.tool_call_id, read.path, read.content, read.known, at)
        elif read.tool_call_id is not None:
            projector.disk_observed(
                read.tool_call_id,
                read.path,
                read.content,
                after=read.phase == "after",
                known=read.known,
                at=at,
            )

    def checkpoint(self, taken: CheckpointLine, at: float) -> None:
        """The client took a checkpoint of the session's folders."""
        if taken.session_id is not None and not self._names_ours(taken.session_id):
            return
        self.projector.checkpoint_taken(taken, at)

    def change(self, found: ChangeLine, at: float) -> None:
        """A checkpoint found a file changed (for a tool call, or at a turn's end)."""
        if found.session_id is not None and not self._names_ours(found.session_id):
            return
        self.projector.path_changed(found, at)

    def message(self, direction: str, message: Any, at: float) -> None:
        """A message (or a batch) the client sent (``client->agent``) or received."""
        if isinstance(message, list):  # a batch
            for part in message:
                self.message(direction, part, at)
            return
        if not isinstance(message, dict):
            return
        method = message.get("method")
        has_id = "id" in message
        if direction == CLIENT_TO_AGENT:
            if isinstance(method, str):
                if has_id:
                    self._wait(self.client_requests, message, method)
                self._client_sent(message, method, message.get("params"), at)
            elif has_id:
                self._client_answered(message, at)
        elif direction == AGENT_TO_CLIENT:
            if isinstance(method, str):
                if self.closed:
                    # The agent still talks to a session it was told is closed (or one the
                    # client closed): nothing of it is this timeline's any more.
                    return
                if has_id and self._ours(message.get("params")):
                    self._wait(self.agent_requests, message, method)
                self._agent_sent(message, method, at)
            elif has_id:
                self._agent_answered(message, at)

    # --- following requests -------------------------------------------------------------------

    @staticmethod
    def _wait(waiting: dict[Any, tuple[str, Any]], message: dict[str, Any], method: str) -> None:
        key = request_key(message["id"])
        waiting.pop(key, None)
        waiting[key] = (method, message.get("params"))
        if len(waiting) > MAX_WAITING:
            del waiting[next(iter(waiting))]

    def _ours(self, params: Any) -> bool:
        """Whether a request or update is this session's: one that names another session is
        not (nor, for an update, one that names none)."""
        named = params.get("sessionId") if isinstance(params, dict) else None
        return named is None or self._names_ours(named)

    def _names_ours(self, named: Any) -> bool:
        ours = self.projector.state.session_id
        if ours is None:
            return named not in self._others()
        return bool(named == ours)

    def _opens_ours(self, key: Any, session_id: Any) -> bool:
        """Whether the answer to an opening request (``session/new``, ``load``, ``resume``,
        ``fork``) with key ``key``, for ``session_id``, opens (or opens again) this session."""
        if not isinstance(session_id, str):
            return False
        ours = self.projector.state.session_id
        if ours is not None:
            return session_id == ours
        if self.opening is not None:
            return bool(key == self.opening)
        return session_id not in self._others()

    def _client_sent(self, message: dict[str, Any], method: str, params: Any, at: float) -> None:
        if method == "session/prompt" and isinstance(params, dict):
            if self._ours(params):
                self.projector.prompt_sent(params.get("prompt"), at)
        elif method in _REPLAYING and isinstance(params, dict) and "id" in message:
            replays = method == "session/load" or isinstance(params.get("replayFrom"), dict)
            key = request_key(message["id"])
            ours = self._opens_ours(key, params.get("sessionId"))
            if ours:
                self.closed = False  # opened again: what the agent sends is its own again
            if replays and ours:
                self._replaying = key
                self.projector.replaying = True
                # A session whose items are here already (opened again on the connection
                # that saw them): what the agent replays of it is not added twice.
                self._replay_known = bool(self.projector.items)

    def _agent_answered(self, message: dict[str, Any], at: float) -> None:
        key = request_key(message["id"])
        request = self.client_requests.pop(key, None)
        if request is None:
            return
        method, params = request
        result, error = message.get("result"), message.get("error")
        projector = self.projector
        if key == self._replaying:
            # The replay of the session's history is over (or failed): what comes is live.
            self._replaying = None
            projector.replaying = False
        if method == "session/prompt":
            if self._ours(params):
                projector.prompt_answered(result, error, at)
        elif error is not None:
            if method in _REPLAYING:
                self._maybe_lost(params, error)
            return
        elif method == "initialize":
            provider = provider_of(result, self.registry, projector.hooks)
            projector.initialized(negotiated_version(result), provider)
        elif method in _OPENING:
            self._opened(key, method, params, result, at)
        elif not (isinstance(params, dict) and self._ours(params)):
            return
        elif method == "session/close":
            self.closed = True
        elif method == "session/set_mode":
            if isinstance(params.get("modeId"), str):
                projector.mode_set(params["modeId"])
        elif method == "session/set_config_option" and isinstance(result, dict):
            options = result.get("configOptions")
            if isinstance(options, list):
                projector.session_created(
                    {"sessionId": projector.state.session_id, "configOptions": options}
                )

    def _maybe_lost(self, params: Any, error: Any) -> None:
        """The agent refused to open a session again: when it is this one and the agent
        says it has it no more (-32002, not found), the session is none of the agent's now,
        and the one the connection opens next is this one's (a thread goes on with a new
        agent session), with a note."""
        ours = self.projector.state.session_id
        if (
            ours is not None
            and isinstance(params, dict)
            and params.get("sessionId") == ours
            and isinstance(error, dict)
            and error.get("code") == RESOURCE_NOT_FOUND
        ):
            self._lost = (ours, str(error.get("message", ""))[:500])
            self.projector.state.session_id = None

    def _opened(self, key: Any, method: str, params: Any, result: Any, at: float = 0.0) -> None:
        """The agent opened a session: this one (its id, folder, modes and configuration),
        or another of the connection (nothing here)."""
        if not isinstance(params, dict) or not isinstance(result, dict):
            return
        # A new session (and a fork) gets its id in the answer; a loaded one has it already.
        session_id = result.get("sessionId") if method in _CREATING else params.get("sessionId")
        if not self._opens_ours(key, session_id):
            return
        state = self.projector.state
        state.session_id = session_id
        self.closed = False
        cwd = params.get("cwd")
        if isinstance(cwd, str):
            if state.cwd is not None and cwd != state.cwd:
                self.projector.session_noted(
                    "the session moved",
                    f"the session is in {cwd} now; it was in {state.cwd}",
                    {"cwd": cwd, "was": state.cwd},
                    at,
                )
            state.cwd = cwd
        if self._lost is not None:
            lost, why = self._lost
            self._lost = None
            self.projector.session_noted(
                "the agent no longer had the session",
                f"the agent no longer had session {lost} ({why or 'not found'}): a new "
                f"session {session_id} was started; the turns before it are not in its context",
                {"lost": lost, "session": session_id, "error": why},
                at,
            )
        self.projector.session_created({**result, "sessionId": session_id})

    def _agent_sent(self, message: dict[str, Any], method: str, at: float) -> None:
        params = message.get("params")
        if method == "session/update":
            named = params.get("sessionId") if isinstance(params, dict) else None
            if self._replaying is not None and self._replay_known:
                self.projector.reducer.last_changes = []  # nothing of it is new
                return
            if isinstance(named, str) and self._ours(params):
                self.projector.notification(params, at)
        elif method == "session/request_permission" and "id" in message and self._ours(params):
            self.projector.permission_requested(str(message["id"]), params, at)

    def _client_answered(self, message: dict[str, Any], at: float) -> None:
        request = self.agent_requests.pop(request_key(message["id"]), None)
        if request is None:
            return
        method, params = request
        result, error = message.get("result"), message.get("error")
        projector = self.projector
        if method == "session/request_permission":
            projector.permission_answered(str(message["id"]), result, at)
        elif method == "fs/write_text_file" and isinstance(params, dict):
            # Written when the client said it wrote it: a refused write changed nothing.
            path, content = params.get("path"), params.get("content")
            if error is None and isinstance(path, str) and isinstance(content, str):
                projector.file_written(path, content, at)
        elif method == "terminal/create":
            self._terminal_created(params, result, error, at)
        elif method in ("terminal/output", "terminal/wait_for_exit") and isinstance(params, dict):
            terminal_id = params.get("terminalId")
            if isinstance(terminal_id, str) and error is None:
                projector.command_answered(terminal_id, result, at)
        elif method == "fs/read_text_file" and isinstance(params, dict):
            self._read_answered(params, result, error, at)

    def _read_answered(self, params: dict[str, Any], result: Any, error: Any, at: float) -> None:
        """The client answered a read: the whole file's content (a range of lines is not),
        or "no such file"."""
        path = params.get("path")
        if not isinstance(path, str):
            return
        if isinstance(result, dict) and isinstance(result.get("content"), str):
            if path in self._missing and result["content"] == "":
                self._missing.discard(path)  # "" for a file that is not there: known already
            elif params.get("line") is None and params.get("limit") is None:
                self.projector.file_read(path, result["content"], at)
        elif isinstance(error, dict) and error.get("code") == -32002:
            self.projector.file_read(path, None, at)  # "resource not found": no such file

    def _terminal_created(self, params: Any, result: Any, error: Any, at: float) -> None:
        """The client ran a command for the agent, or refused to."""
        line = command_line(params)
        cwd = params.get("cwd") if isinstance(params, dict) else None
        cwd = cwd if isinstance(cwd, str) else None
        terminal_id = result.get("terminalId") if isinstance(result, dict) else None
        if isinstance(terminal_id, str):
            self.projector.command_started(terminal_id, line, cwd, at)
        elif isinstance(error, dict):
            self.projector.command_refused(line, cwd, str(error.get("message"))[:500], at)


def project_capture(
    source: CaptureSource,
    *,
    provider: str | None = None,
    pm: pluggy.PluginManager | None = None,
    session_id: str | None = None,
) -> Timeline:
    """The timeline of a capture: of one session of it (a connection may hold several).

    :param source: a path to a capture file, or its lines (strings or parsed dicts).
    :param session_id: the session whose timeline it is; by default the first one the
        capture opens (:func:`capture_sessions` lists them all).
    :param provider: a provider id to use whatever the agent says it is; by default the
        provider is the one that claims the agent's name in the ``initialize`` answer,
        else the generic one.
    :param pm: the plugin manager to use; by default a new one with the installed plugins.
    :raises CaptureError: when a capture file cannot be read.
    :raises UnknownProviderError: when ``provider`` names no loaded provider.
    """
    pm = pm or get_plugin_manager()
    registry = ProviderRegistry.collect(pm)
    fixed = registry.get(provider) if provider is not None else None
    projector = Projector(
        Hooks(pm), fixed or registry.for_agent(None), fixed_provider=fixed is not None
    )
    traffic = Traffic(projector, registry, session_id=session_id)
    problems: list[str] = []
    for entry in _entries(source, problems):
        traffic.entry(entry)
    timeline = projector.timeline()
    timeline.problems = problems
    return timeline


def capture_sessions(source: CaptureSource) -> list[str]:
    """The ids of the sessions a capture opens (``session/new``, ``load``, ``resume``,
    ``fork`` answered without an error), in the order they were opened."""
    requests: dict[Any, tuple[str, Any]] = {}
    found: dict[str, None] = {}
    for entry in _entries(source, []):
        message, direction = entry.get("msg"), entry.get("dir")
        for part in message if isinstance(message, list) else [message]:
            if not isinstance(part, dict) or "id" not in part:
                continue
            method = part.get("method")
            if direction == CLIENT_TO_AGENT and method in _OPENING:
                Traffic._wait(requests, part, str(method))
            elif direction == AGENT_TO_CLIENT and method is None:
                request = requests.pop(request_key(part["id"]), None)
                result = part.get("result")
                if request is None or not isinstance(result, dict):
                    continue
                opened, params = request
                named = (
                    result.get("sessionId")
                    if opened in _CREATING
                    else params.get("sessionId")
                    if isinstance(params, dict)
                    else None
                )
                if isinstance(named, str):
                    found.setdefault(named)
    return list(found)
