"""``acp-adapters replay`` and ``demo``: the timeline of a capture, live or offline.

Offline, the capture is projected as it is (:func:`acp_adapters.project_capture`).
Live, the replay agent (``python -m acp_adapters.replay``) plays the capture's
agent side as a real subprocess, and this client plays the capture's client
side through :func:`acp_adapters.connect`, in a temporary folder seeded with
the files the capture started from:

* the same requests and notifications, in the same order (``initialize``
  asking for the version the capture asked for, ``session/new``, prompts,
  ``session/cancel``, ...), each sent once the agent has sent what the capture
  shows before it, so that a cancel lands inside its turn;
* permission requests answered as the capture answered them; the agent's file
  requests answered by this client, as in any session, inside the temporary folder
  only (the session's confinement refuses any path out of it);
* the agent's terminals answered from the capture (:class:`RecordedTerminals`): a
  replay runs no command a capture holds;
* a capture of several connections (a thread's export, one run each; an agent started
  again after a crash) is played one connection after the other, on the one session: the
  replay agent is started again for each (``--connection N``), the one before let go
  first as the recording client let it go, and the timeline goes on, as the thread's did.

The folder is written ``<workspace>`` in the output, as captures write it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import tempfile
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from functools import partial
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import anyio

from .. import replay
from ..capture.format import AGENT_EXIT, AGENT_TO_CLIENT, CLIENT_TO_AGENT, WORKSPACE_MARK
from ..client import Session, connect
from ..client.connecting import Limits
from ..errors import AcpAdaptersError, CaptureError, McpServerError
from ..projection.traffic import project_capture
from ..replay import (
    DEFAULT_TIMEOUT,
    Capture,
    RecordedTerminals,
    RequestKey,
    connections,
    recorded_answers,
    recorded_checkpoints,
    recorded_disk,
    recorded_limits,
    request_key,
    seed_workspace,
)
from ..replay.matching import fill_marks
from ..transport import RpcError
from .errors import Failure
from .live import Outcome
from .mcp_servers import recorded_servers
from .rows import item_rows, portable

Match = Literal["exact", "methods"]

#: The bundled capture ``acp-adapters demo`` replays (written by tools/generate_demo.py).
DEMO_CAPTURE = "data/grok-demo-v1.jsonl"


@contextlib.contextmanager
def demo_capture() -> Iterator[Path]:
    """The bundled demo capture as a file on disk (for as long as the block runs)."""
    with resources.as_file(resources.files(__package__).joinpath(DEMO_CAPTURE)) as path:
        yield path


def read_capture(path: str | os.PathLike[str], *, keep: bool = True) -> Capture:
    """The capture's entries, in order, and the lines left out (``Capture.warnings``);
    ``keep=False``: only the lines left out, read one line at a time.

    :raises CaptureError: the file is missing, cannot be read, is not a regular file
        (``/dev/zero``, a FIFO, a folder), is not UTF-8, or has no capture line.
    """
    shown = os.fspath(path)
    if not os.path.lexists(shown):
        raise CaptureError(f"no capture at {shown!r}")
    capture = replay.read_capture(shown, keep=keep)
    if not capture.messages:
        raise CaptureError(
            f"{shown!r} is not a capture: no line is a message "
            '({"dir": ..., "t": ..., "msg": {...}})'
        )
    return capture


@dataclass
class ClientStep:
    """A request or notification the capture's client sent, and where it sent it.

    ``after`` counts the agent's lines the capture has before it; ``answered_at``,
    for a request, the agent's lines up to and including its answer (None: never
    answered), and ``refused`` whether that answer was an error. ``connection`` is the
    capture's connection it was sent on (from 1: see
    :func:`~acp_adapters.capture.reader.connections`).
    """

    method: str
    params: dict[str, Any]
    is_request: bool
    after: int
    answered_at: int | None = None
    refused: bool = False
    connection: int = 1


def client_steps(capture: Capture) -> list[ClientStep]:
    """What the capture's client sent, in order, each placed among the agent's lines."""
    steps: list[ClientStep] = []
    waiting: dict[RequestKey, ClientStep] = {}
    agent_lines = 0
    for number, entries in enumerate(connections(capture.entries), 1):
        waiting.clear()  # each connection's request ids are its own
        agent_lines = _steps_of(entries, number, steps, waiting, agent_lines)
    return steps


def _steps_of(
    entries: list[Any],
    connection: int,
    steps: list[ClientStep],
    waiting: dict[RequestKey, ClientStep],
    agent_lines: int,
) -> int:
    """The client steps of one connection's entries (added to ``steps``); the agent's lines
    counted so far."""
    for entry in entries:
        if entry.direction == AGENT_TO_CLIENT:
            agent_lines += 1
            for part in entry.parts:
                if part.kind == "answer":
                    answered = waiting.pop(request_key(part.message["id"]), None)
                    if answered is not None:
                        answered.answered_at = agent_lines
                        answered.refused = "error" in part.message
        elif entry.direction == CLIENT_TO_AGENT:
            for part in entry.parts:
                if part.method is None:
                    continue  # an answer to one of the agent's requests: this client answers
                params = part.message.get("params")
                step = ClientStep(
                    method=part.method,
                    params=params if isinstance(params, dict) else {},
                    is_request=part.kind == "request",
                    after=agent_lines,
                    connection=connection,
                )
                steps.append(step)
                if step.is_request:
                    waiting[request_key(part.message["id"])] = step
    return agent_lines


def replay_offline(path: str | os.PathLike[str], *, provider: str | None) -> Outcome:
    """The timeline of a capture, projected without any process.

    The capture is read twice, each time a line at a time (for its warnings, then
    for the projection): memory follows the timeline, not the file.
    """
    capture = read_capture(path, keep=False)
    timeline = project_capture(path, provider=provider)
    return Outcome(
        rows=item_rows(timeline.items),
        provider=timeline.provider.id,
        version=timeline.version,
        stop_reason=timeline.state.turn_state.stop_reason,
        skipped=capture.warnings,
    )


async def replay_live(
    path: str | os.PathLike[str],
    *,
    provider: str | None,
    match: Match,
    timeout: float = DEFAULT_TIMEOUT,
) -> Outcome:
    """The timeline of a capture played by the replay agent, with this client as its client.

    A replay that goes as captured gives the capture's timeline, also where the
    capture's session failed (an error answer, the agent exiting): that is what
    was recorded, and ``Outcome.ended`` says it.

    :raises Failure: the replay agent found this client doing otherwise than the
        capture's client (or waited for it in vain).
    """
    capture = Path(path).resolve()  # the agent runs in the temporary folder
    read = read_capture(capture)
    steps = client_steps(read)
    asked = next((s.params.get("protocolVersion") for s in steps if s.method == "initialize"), None)
    with tempfile.TemporaryDirectory(prefix="acp-adapters-replay-") as root:
        workspace = Path(root) / "workspace"
        workspace.mkdir()
        seed_workspace(capture, workspace)

        def status_of(connection: int) -> Path:
            return Path(root) / f"status-{connection}.json"

        def command_of(connection: int) -> list[str]:
            """The replay agent playing one connection of the capture."""
            return [
                sys.executable,
                # Isolated: the agent runs in the folder the capture seeded, and Python
                # would import a module the capture wrote there before the package's own.
                "-I",
                "-m",
                "acp_adapters.replay",
                "--match",
                match,
                "--timeout",
                str(timeout),
                "--connection",
                str(connection),
                "--status",
                str(status_of(connection)),
                str(capture),
            ]

        played = connections(read.entries)
        exiting = {n for n, entries in enumerate(played, 1) if entries[-1:] and _exits(entries[-1])}
        player = _Player(steps, timeout, len(played), command_of, status_of, exiting)
        terminals = RecordedTerminals(capture)  # the capture's commands never run
        line_bytes, elements = recorded_limits(capture)
        try:
            async with connect(
                provider,
                workspace,
                command=command_of(1),
                env=_recorded_credentials(read),
                policy="ask",
                ask=recorded_answers(capture),
                protocol=asked if asked in (1, 2) else None,
                new_session=False,
                # The replay agent edits nothing: the files read around edits are those the
                # capture's client read, if it recorded them.
                disk_patches=recorded_disk(capture, workspace) if read.disk else False,
                # Nor does it change the folder: the checkpoints are those the capture's
                # client took, played back where it took them.
                checkpoints=recorded_checkpoints(capture, workspace) if read.checkpoints else False,
                observe=player.observe,
                terminals=terminals,
                unstable=True,  # a capture's client may have forked a session
                # The recording client's limits, where a message dropped over them says so:
                # the replay agent sends such a message again, and it is dropped again.
                limits=Limits(max_line_bytes=line_bytes, max_elements=elements),
            ) as session:
                await player.play(session)
                timeline = session.timeline
                stop_reason = session.projector.state.turn_state.stop_reason
        except AcpAdaptersError as error:  # before the session opened
            _check_status(status_of(1), capture, error, match)
            # As recorded: the agent failed before a session was open (it died before its
            # answer to initialize). The capture's timeline, and how it ended, as offline.
            offline = replay_offline(capture, provider=provider)
            offline.ended = " ".join(str(portable(str(error), workspace)).split())
            return offline
        failure = player.ended
        _check_status(status_of(player.connection), capture, player.stopped or failure, match)
        rows = portable(item_rows(timeline.items), workspace)
    return Outcome(
        rows=rows,
        provider=timeline.provider.id,
        version=timeline.version,
        stop_reason=stop_reason,
        ended=" ".join(str(portable(str(failure), workspace)).split()) if failure else None,
        skipped=[*read.warnings, *terminals.warnings],
    )


class _Player:
    """Sends the capture's client steps through a session, each at its place among the
    agent's; a connection after another on an agent started again for it."""

    def __init__(
        self,
        steps: list[ClientStep],
        timeout: float,
        count: int = 1,
        command_of: Callable[[int], list[str]] | None = None,
        status_of: Callable[[int], Path] | None = None,
        exiting: Collection[int] = (),
    ) -> None:
        self.steps = steps
        #: The connections whose agent exits on its own, as the capture's last line says.
        self.exiting = exiting
        self._exits = 0
        self.timeout = timeout
        #: How many connections the capture has; what starts the replay agent for one, and
        #: the status file it writes.
        self.count = count
        self._command_of = command_of
        self._status_of = status_of
        #: The failures of the requests sent, in order (``ended``: the one the session
        #: ended with; ``stopped``: the one that stopped the replay, when one did).
        self.failures: list[AcpAdaptersError] = []
        self.ended: AcpAdaptersError | None = None
        self.stopped: AcpAdaptersError | None = None
        #: The connection played now (the last one played, once the play is over).
        self.connection = 1
        self._received = 0
        self._done: set[int] = set()
        self._changed = anyio.Event()

    def observe(self, direction: str, _message: Any) -> None:
        if direction in ("in", "exit"):
            if direction == "in":
                self._received += 1
            else:
                self._exits += 1
            self._wake()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def play(self, session: Session) -> None:
        folder = str(session.workspace.cwd)
        sessions = _Sessions(session)
        for connection in range(1, self.count + 1):
            self.connection = connection
            exits = self._exits
            indices = [i for i, step in enumerate(self.steps) if step.connection == connection]
            opening = next((i for i in indices if self.steps[i].method == "initialize"), None)
            if connection > 1:
                await self._start_again(session, opening, connection)
            async with anyio.create_task_group() as task_group:
                for index in indices:
                    step = self.steps[index]
                    if step.method == "initialize":
                        continue  # connect (or the start again) sent it
                    await self._until_due(index)
                    if self.stopped is not None:
                        break
                    params = _localized(step.params, folder)
                    if step.is_request:
                        task_group.start_soon(self._request, sessions, index, step, params)
                    elif step.method == "session/cancel":
                        await sessions.of(params).cancel()
                    # Other notifications have no counterpart in the session API.
                if connection < self.count:
                    # All that its agent sent came, then it goes, as the recording client let
                    # it go (the requests it never answered end with it).
                    if self.stopped is None:
                        await self._until_received(self._lines_before(connection + 1))
                    if connection in self.exiting:
                        # It exits on its own, as recorded: the timeline says so.
                        await self._until(partial(self._exited_since, exits))
                    await session.agent.shutdown(2.0)
            if connection < self.count and not self._went_as_recorded(connection):
                return  # the replay agent says how it went otherwise: that is the report

    async def _start_again(self, session: Session, opening: int | None, connection: int) -> None:
        """The next connection: the replay agent started again, to play it."""
        assert self._command_of is not None
        asked = self.steps[opening].params.get("protocolVersion") if opening is not None else None
        self.stopped = self.ended = None  # what ended the one before was its own
        await session.restart_agent(
            self._command_of(connection), protocol=asked if asked in (1, 2) else None
        )

    def _went_as_recorded(self, connection: int) -> bool:
        if self._status_of is None:
            return True
        try:
            report = json.loads(self._status_of(connection).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
        return isinstance(report, dict) and report.get("status") == "ok"

    def _lines_before(self, connection: int) -> int:
        """How many agent lines the capture has before connection ``connection``."""
        return next((s.after for s in self.steps if s.connection == connection), self._received)

    def _exited_since(self, exits: int) -> bool:
        return self._exits > exits

    async def _until_received(self, lines: int) -> None:
        await self._until(lambda: self._received >= lines)

    async def _until(self, done: Callable[[], bool]) -> None:
        """Wait until ``done()``, at most the replay's timeout (the replay agent's report
        says why, when its agent stopped short)."""
        with anyio.move_on_after(self.timeout):
            while not done():
                await self._changed.wait()

    async def _until_due(self, position: int) -> None:
        """Wait until the agent has sent what the capture has before step ``position``.

        That is: as many lines as the capture's agent sent before it, and the
        answers among them to this client's earlier requests handled. Bounded: when
        the agent stops short (it failed), the replay agent's report says why.
        """
        step = self.steps[position]
        earlier = [
            index
            for index, other in enumerate(self.steps[:position])
            if other.is_request
            and other.method != "initialize"
            and other.connection == step.connection
            and other.answered_at is not None
            and other.answered_at <= step.after
        ]
        with anyio.move_on_after(self.timeout):
            while self.stopped is None and (
                self._received < step.after or any(i not in self._done for i in earlier)
            ):
                await self._changed.wait()

    async def _request(
        self, sessions: _Sessions, index: int, step: ClientStep, params: dict[str, Any]
    ) -> None:
        try:
            await _send(sessions, step.method, params)
        except AcpAdaptersError as error:
            self.failures.append(error)
            self.ended = error
            # An error answer where the capture has one is the recorded session's: the
            # replay goes on as it did (a lost session's load refused, then a new one).
            if not (step.refused and isinstance(error, RpcError)):
                self.stopped = error
        else:
            if self.ended is not None and self.stopped is None:
                self.ended = None  # the session went on after that failure
        finally:
            self._done.add(index)
            self._wake()


class _Sessions:
    """The sessions a replay opens on its agent, by id: the first on the session ``connect``
    made, the others on the same agent, as the capture's client opened them."""

    def __init__(self, first: Session) -> None:
        self.first = first

    def of(self, params: dict[str, Any]) -> Session:
        named = params.get("sessionId")
        found = self.first.agent.session(named) if isinstance(named, str) else None
        return found or self.first

    async def open(self, method: str, params: dict[str, Any]) -> None:
        """``session/new``, ``load``, ``resume`` or ``fork``, with the MCP servers the
        capture's carried (``<home>`` in them written as this user's home folder, as the
        replay agent reads it).

        Servers the session would not send (of a transport the capture's agent did not
        offer) are left out: the replay agent then reports the difference.
        """
        recorded = fill_marks(params.get("mcpServers"), None, os.path.expanduser("~"))
        for servers in (recorded_servers(recorded), []):
            try:
                await self._open(method, params, servers)
            except McpServerError:
                if not servers:
                    raise
                continue  # nothing was sent
            return

    async def _open(self, method: str, params: dict[str, Any], servers: list[Any]) -> None:
        session_id = str(params.get("sessionId"))
        agent, first = self.first.agent, self.first
        again = agent.session(session_id) if method != "session/new" else None
        # The first session opened goes on the session connect made; one opened again on
        # the session that has it; any other on the same agent.
        target = again or (first if first.session_id is None and not first.closed else None)
        if method == "session/fork":
            await agent.fork_session(session_id, mcp_servers=servers)
        elif target is None:
            if method == "session/new":
                await agent.new_session(mcp_servers=servers)
            elif method == "session/load":
                await agent.load_session(session_id, mcp_servers=servers)
            else:
                await agent.resume_session(session_id, mcp_servers=servers)
        elif method == "session/new":
            await target.new_session(mcp_servers=servers)
        elif method == "session/load":
            await target.load_session(session_id, mcp_servers=servers)
        else:
            await target.resume_session(session_id, mcp_servers=servers)


async def _send(sessions: _Sessions, method: str, params: dict[str, Any]) -> None:
    """Send one of the capture's client requests the way the session API sends it."""
    if method in _SESSION_METHODS:
        await sessions.open(method, params)
        return
    session = sessions.of(params)
    if method == "session/prompt":
        await session.prompt(params.get("prompt") or [])
    elif method in ("authenticate", "auth/login"):
        method_id = str(params.get("methodId"))
        if any(m.id == method_id and not m.runs_in_terminal for m in session.login_methods):
            await session.authenticate(method_id)
        else:  # a method the agent did not list (or lists otherwise): as the capture sent it
            await session.agent.request(method, {"methodId": method_id})
    elif method == "session/set_mode":
        await session.set_mode(str(params.get("modeId")))
    elif method == "session/set_config_option":
        value = params.get("value")
        await session.set_config_option(
            str(params.get("configId")), value if isinstance(value, bool) else str(value)
        )
    elif method in _AS_SENT:
        # What the session API sends only to an agent that offers it: as the capture's
        # client sent it, whatever the capture's agent said it takes.
        await session.agent.request(method, params)


_SESSION_METHODS = ("session/new", "session/load", "session/resume", "session/fork")
_AS_SENT = ("session/close", "session/list", "session/delete", "logout", "auth/logout")


#: What the name of a variable a capture's auth method reads may be: a plain name, and
#: none of those that change how a program starts (a capture is untrusted).
_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
_STARTUP_VARIABLES = ("PYTHON", "LD_", "DYLD_", "NODE_", "BASH_", "ENV", "PATH", "HOME", "SHELL")


def _recorded_credentials(capture: Capture) -> dict[str, str]:
    """Stand-ins for the variables the capture's ``env_var`` auth methods read.

    The session checks that an ``env_var`` method's variables are set before it
    authenticates; the replay agent reads none of them, so a stand-in is enough
    (a variable already set is left as it is, and one whose name could change how
    a program starts is never set).
    """
    needed: dict[str, str] = {}
    for entry in capture.entries:
        for part in entry.parts:
            result = part.message.get("result")
            methods = result.get("authMethods") if isinstance(result, dict) else None
            for method in methods if isinstance(methods, list) else []:
                variables = method.get("vars") if isinstance(method, dict) else None
                for variable in variables if isinstance(variables, list) else []:
                    name = variable.get("name") if isinstance(variable, dict) else None
                    if (
                        isinstance(name, str)
                        and _VARIABLE_NAME.fullmatch(name)
                        and not name.upper().startswith(_STARTUP_VARIABLES)
                        and name not in os.environ
                    ):
                        needed[name] = "replay"
    return needed


def _exits(entry: Any) -> bool:
    """Whether a capture's entry is the agent's exit."""
    return bool(entry.direction == AGENT_EXIT)


def _localized(value: Any, folder: str) -> Any:
    """``<workspace>`` in what the capture's client sent, written as this replay's folder."""
    if isinstance(value, str):
        return value.replace(WORKSPACE_MARK, folder)
    if isinstance(value, dict):
        return {key: _localized(item, folder) for key, item in value.items()}
    if isinstance(value, list):
        return [_localized(item, folder) for item in value]
    return value


def _check_status(status: Path, capture: Path, failure: BaseException | None, match: Match) -> None:
    """Fail when the replay agent reports that this client went otherwise than the capture's.

    The agent's ``--status`` file says ``ok`` (played to the end, or to the
    recorded exit), ``mismatch``, ``timeout`` or ``error``, with a one-line report.
    """
    try:
        report = json.loads(status.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        report = None
    verdict = report.get("status") if isinstance(report, dict) else None
    if verdict == "ok":
        return
    if failure is None and verdict in ("running", None):
        # The session went on to its end, but the agent did not: it stopped (or was
        # stopped) before it played the whole capture.
        raise Failure(
            f"the replay agent of {capture.name} ended before the capture did "
            f"(its status: {verdict or 'none'}): the timeline shows only what it played"
        )
    if isinstance(report, dict) and verdict in ("mismatch", "timeout", "error"):
        line = f" (capture line {report['line']})" if report.get("line") else ""
        hint = "--match methods, or --offline" if match == "exact" else "--offline"
        raise Failure(
            f"the replay of {capture.name} went otherwise than the capture: {verdict}{line}: "
            f"{report.get('report') or 'no report'}; try {hint}"
        ) from failure
    if failure is not None:  # no verdict: the failure is this session's own
        raise failure
