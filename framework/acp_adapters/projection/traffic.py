"""The one reader of a session's traffic: what drives the projector, live and from a capture.

A live session feeds it each message as the connection reads or writes it, each
disk read it makes for a true patch, and the agent's exit; :func:`project_capture`
and the replay feed it the same events from a capture's lines (the format's words
are in :mod:`acp_adapters.capture.format`). What is true live is true in replay: a
recording projects to the timeline the live session showed, by construction.

A :class:`~.routing.Router` follows the requests of both sides to their answers and
decides whose each event is, once; the reader of that session reports it to its
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
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import pluggy

from ..capture.format import (
    AGENT_EXIT,
    AGENT_TO_CLIENT,
    CLIENT_TO_AGENT,
    UNRECORDED,
    ChangeLine,
    CheckpointLine,
    DecidedLine,
    DiskLine,
    DroppedLine,
    Unreadable,
    capture_values,
    request_key,
)
from ..plugin.hooks import Hooks
from ..plugin.manager import get_plugin_manager
from ..plugin.providers import ProviderRegistry
from ..runtime.commands import command_line
from ..timeline.timeline import Timeline
from .negotiation import negotiated_version, provider_of
from .projector import Projector
from .routing import CLIENT_LINES, CREATING, OPENING, Router, remember_waiting

if TYPE_CHECKING:
    from ..runtime.reducer import Change

#: The client's requests that may replay the session's history before their answer.
_REPLAYING = ("session/load", "session/resume")
#: The error code of an agent that has no such resource (a session it lost): JSON-RPC's
#: "resource not found", as ACP uses it.
RESOURCE_NOT_FOUND = -32002

CaptureSource = str | os.PathLike[str] | Iterable[str] | Iterable[dict[str, Any]]


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
        if isinstance(kind, str) and kind in CLIENT_LINES:
            if CLIENT_LINES[kind](entry) is None:
                problems.append(f"line {number}: not a {kind} entry")
            else:
                yield entry
            continue
        if not isinstance(entry, dict) or not isinstance(entry.get("msg"), dict | list):
            problems.append(f"line {number}: not a capture entry")
            continue
        yield entry


class Traffic:
    """One session's traffic reader: what is this session's, projected.

    What feeds it is a :class:`~.routing.Router` that decided the session of each event
    (the ``take_*`` methods). Read on its own, the reader follows one session of a whole
    connection's traffic through a router of its own (:attr:`router`): :meth:`entry` takes a
    capture's line, :meth:`message` a message. It follows the session ``session_id``
    names, else the one opened by the request :attr:`opening` names, else the first one
    the traffic opens.
    """

    def __init__(
        self,
        projector: Projector,
        registry: ProviderRegistry,
        *,
        session_id: str | None = None,
    ) -> None:
        self.projector = projector
        self.registry = registry
        if session_id is not None:
            projector.state.session_id = session_id
        #: The request that opens this session (its key), when the reader is told which
        #: (a live session is); else the first session the traffic opens is this one.
        self.opening: Any = None
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
        #: when the agent answers the session's ``session/close``, or by a ``closed`` line;
        #: cleared when it is opened again.
        self.closed = False
        #: The router of this reader alone: what :meth:`entry` and :meth:`message` read.
        self.router = Router([self])

    @property
    def session_id(self) -> str | None:
        return self.projector.state.session_id

    # --- read on its own ----------------------------------------------------------------------

    def entry(self, entry: dict[str, Any]) -> None:
        """One line of a capture: a message either way, a client line, or the agent's exit."""
        self.router.entry(entry)

    def message(self, direction: str, message: Any, at: float) -> None:
        """A message (or a batch) the client sent (``client->agent``) or received."""
        self.router.message(direction, message, at)

    # --- what the router gives it -------------------------------------------------------------

    def take_exit(self, code: int | None, stderr: str, at: float) -> None:
        """The agent exited on its own."""
        self.projector.agent_exited(code, stderr, at)

    def take_decided(self, line: DecidedLine, at: float) -> None:
        """The client asked its application about an action of the agent (a ``decided``
        line): an approval of this session."""
        if not self.closed:
            self.projector.client_action_decided(line, at)

    def take_dropped(self, line: DroppedLine, at: float) -> None:
        """The connection dropped a message of the agent, unread (a ``dropped`` line): an
        open session shows it (a closed one does not)."""
        if not self.closed and self.session_id is not None:
            self.projector.message_dropped(line.reason, line.limit, at)

    def take_closed(self) -> None:
        """The client closed this session (a ``closed`` line)."""
        self.closed = True

    def take_disk(self, read: DiskLine, at: float) -> None:
        """The client looked at a file on the disk, for a true patch."""
        projector = self.projector
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

    def take_checkpoint(self, taken: CheckpointLine, at: float) -> None:
        """The client took a checkpoint of the session's folders."""
        self.projector.checkpoint_taken(taken, at)

    def take_change(self, found: ChangeLine, at: float) -> None:
        """A checkpoint found a file changed (for a tool call, or at a turn's end)."""
        self.projector.path_changed(found, at)

    def take_client_request(
        self, message: dict[str, Any], method: str, params: Any, key: Any, at: float
    ) -> None:
        """A request (or notification) of the client for this session."""
        if method == "session/prompt" and isinstance(params, dict):
            self.projector.prompt_sent(params.get("prompt"), at)
        elif method in _REPLAYING and isinstance(params, dict) and key is not None:
            self.closed = False  # opened again: what the agent sends is its own again
            if method == "session/load" or isinstance(params.get("replayFrom"), dict):
                self._replaying = key
                self.projector.replaying = True
                # A session whose items are here already (opened again on the connection
                # that saw them): what the agent replays of it is not added twice.
                self._replay_known = bool(self.projector.items)

    def take_replay_end(self, key: Any) -> None:
        """The request ``key`` was answered: if it replayed this session's history, the
        replay is over (or failed), and what comes is live."""
        if key == self._replaying:
            self._replaying = None
            self.projector.replaying = False

    def take_agent_answer(
        self, key: Any, method: str, params: Any, result: Any, error: Any, at: float
    ) -> None:
        """The agent's answer to a request of the client that was this session's."""
        projector = self.projector
        self.take_replay_end(key)
        if method == "session/prompt":
            projector.prompt_answered(result, error, at)
        elif error is not None:
            if method in _REPLAYING:
                self._maybe_lost(params, error)
        elif method == "initialize":
            provider = provider_of(result, self.registry, projector.hooks)
            projector.initialized(negotiated_version(result), provider)
        elif method in OPENING:
            self._opened(method, params, result, at)
        elif not isinstance(params, dict):
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

    def _opened(self, method: str, params: Any, result: Any, at: float) -> None:
        """The agent opened this session: its id, folder, modes and configuration."""
        if not isinstance(params, dict) or not isinstance(result, dict):
            return
        # A new session (and a fork) gets its id in the answer; a loaded one has it already.
        session_id = result.get("sessionId") if method in CREATING else params.get("sessionId")
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

    def take_agent_message(self, message: dict[str, Any], method: str, at: float) -> list[Change]:
        """A notification or request of the agent for this session; what it changed."""
        if self.closed:
            # The agent still talks to a session it was told is closed (or one the client
            # closed): nothing of it is this timeline's any more.
            return []
        params = message.get("params")
        if method == "session/update":
            if self._replaying is not None and self._replay_known:
                return []  # the history of a session that is here already: nothing is new
            return self.projector.notification(params, at)
        if method == "session/request_permission" and "id" in message:
            self.projector.permission_requested(str(message["id"]), params, at)
        return []

    def take_client_answer(
        self, message: dict[str, Any], method: str, params: Any, at: float
    ) -> None:
        """The client's answer to a request of the agent that was this session's."""
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
            if direction == CLIENT_TO_AGENT and method in OPENING:
                remember_waiting(
                    requests, request_key(part["id"]), (str(method), part.get("params"))
                )
            elif direction == AGENT_TO_CLIENT and method is None:
                request = requests.pop(request_key(part["id"]), None)
                result = part.get("result")
                if request is None or not isinstance(result, dict):
                    continue
                opened, params = request
                named = (
                    result.get("sessionId")
                    if opened in CREATING
                    else params.get("sessionId")
                    if isinstance(params, dict)
                    else None
                )
                if isinstance(named, str):
                    found.setdefault(named)
    return list(found)
