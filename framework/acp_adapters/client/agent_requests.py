"""What a live session does with what the agent sends it: notifications and requests.

:class:`AgentRequests` answers the agent's requests (permissions, files,
terminals, elicitation) and takes in its notifications. Every side effect the
client performs for the agent goes through one gate, whether or not the agent
asked permission for it: each ``terminal/create`` (a command the client would
run) and each ``fs/write_text_file`` (a file it would write) is a
:class:`~acp_adapters.permissions.ClientAction` decided by the
``decide_client_action`` hook under the session's policy, and asked of the
application when the decision is ``ask`` (refused when there is no ``ask``
callback). Every command the client runs, or refuses to run, is a
``command_execution`` item in the timeline.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from itertools import count
from typing import TYPE_CHECKING, Any, Literal, Protocol

import anyio
from anyio.abc import TaskGroup
from pydantic import ValidationError

from ..diff import diff_patch
from ..plugin.permissions import (
    ACTION_OPTIONS,
    EDIT_KINDS,
    ClientAction,
    PermissionDecision,
    PermissionQuery,
    kind_rank,
)
from ..projection.files import edit_result, fragments_by_path
from ..protocol import Version, agent_methods, parse_agent_request, parse_elicitation_answer
from ..runtime import Change, ToolCall
from ..runtime.commands import command_argv, command_line
from ..runtime.paths import tool_call_paths
from ..timeline.items import FileChangeItem
from ..transport import METHOD_NOT_FOUND, AnswerSent, Problem, RpcError
from ..transport.jsonrpc import INVALID_PARAMS
from .terminals import agent_variables
from .workspace import (
    FORBIDDEN,
    RESOURCE_NOT_FOUND,
    Expected,
    Identity,
    MissingFileRead,
    Workspace,
)

if TYPE_CHECKING:
    from .session import Session

#: What reads a file's text around an edit (``connect(disk_patches=...)``); None: no such file.
DiskReader = Callable[[str], "str | None"]
#: When a file is read around an edit: as the tool call starts, or as it completes.
DiskPhase = Literal["before", "after", "write", "missing"]
AskCallback = Callable[[PermissionQuery], Awaitable["PermissionDecision | str | None"]]
ElicitCallback = Callable[[dict[str, Any]], Awaitable["dict[str, Any] | None"]]

#: A read answer this large (characters) is written before the next file is read.
LARGE_READ_CHARS = 1024 * 1024
#: Files larger than this are not read around edits.
DISK_READ_LIMIT = 8 * 1024 * 1024
#: How many of the paths an edit names are read from the disk around it, at most.
DISK_PATHS = 16


class TerminalBackend(Protocol):
    """What answers the agent's ``terminal/*`` requests for a session.

    The default (:class:`~acp_adapters.client.terminals.Terminals`) runs real
    processes; a replay answers from its capture and runs nothing. Each method takes
    the request's params and returns its result (or raises ``RpcError``).
    """

    async def create(self, params: Any) -> dict[str, Any]: ...
    async def output(self, params: Any) -> dict[str, Any]: ...
    async def wait_for_exit(self, params: Any) -> dict[str, Any]: ...
    async def kill(self, params: Any) -> dict[str, Any]: ...
    async def release(self, params: Any) -> dict[str, Any]: ...
    async def close(self) -> None: ...


#: Makes a session's terminal backend once the session runs (``connect(terminals=...)``).
TerminalFactory = Callable[[Workspace, TaskGroup], TerminalBackend]


@dataclass
class _Grant:
    """The application allowed a tool call's permission request: the action it covers is
    not asked again, once, and only while that tool call is unfinished and is the one the
    action belongs to (its command, when it said which; its paths)."""

    kind: Literal["command", "write"]
    tool_call_id: str
    paths: tuple[str, ...] = ()
    command: str | None = None
    #: Each file an allowed edit names, as it was when allowed (by its path, resolved).
    files: dict[str, _Approved] = field(default_factory=dict)


@dataclass(frozen=True)
class _Approved:
    """A file as the application allowed an edit of it: the file behind its name then
    (None: there was none), and, where the question carried the edit, what it leads to."""

    identity: Identity | None
    result: str | None = None
    #: Whether ``result`` is known (an edit whose outcome could be worked out).
    bound_to_result: bool = False

    def covers(self, identity: Identity | None, content: str) -> str | None:
        """Why a write of ``content`` to the file now ``identity`` is not what was allowed;
        None when it is."""
        if identity != self.identity:
            return "another file is behind the name than the one allowed"
        if self.bound_to_result and content != self.result:
            return "the content is not what the allowed edit gives"
        return None


class AgentRequests:
    """The answers to one session's agent: its requests and its notifications."""

    def __init__(
        self,
        session: Session,
        *,
        ask: AskCallback | None,
        elicit: ElicitCallback | None,
        missing_file_read: MissingFileRead,
        disk_patches: bool | DiskReader,
        terminals: TerminalFactory,
    ) -> None:
        self.session = session
        self._ask = ask
        self._elicit = elicit
        self.missing_file_read = missing_file_read
        self._disk_patches = disk_patches is not False
        #: What is read instead of the disk, when the application gave a reader.
        self._reader: DiskReader | None = disk_patches if callable(disk_patches) else None
        #: Disk reads for true patches run in a worker thread, one at a time.
        self._disk_limiter = anyio.CapacityLimiter(1)
        self._terminal_factory = terminals
        self.terminals: TerminalBackend | None = None
        #: Questions to the application still open: cancelled with the turn or the session.
        self.asking: set[anyio.CancelScope] = set()
        #: The turn whose questions were cancelled: what the agent asks in it from then on
        #: (a request that was still on its way) is answered ``cancelled`` at once.
        self._cancelled_turn: int | None = None
        #: Disk reads made around edit tool calls: tool call id -> path -> phases read.
        self._disk_seen: dict[str, dict[str, set[str]]] = {}
        #: The tool calls whose completion the checkpoints looked at.
        self._checkpointed: set[str] = set()
        #: Allowed by the application through a permission request, not yet used.
        self._grants: list[_Grant] = []
        self._actions = count(1)
        #: Held while a large file is read and its answer written (see :meth:`_read`).
        self._large_read = anyio.Lock()

    @property
    def elicits(self) -> bool:
        """Whether the application answers elicitations (the client offers them then)."""
        return self._elicit is not None

    def start(self, task_group: TaskGroup) -> None:
        """The session runs: its terminals can be made."""
        self.terminals = self._terminal_factory(self.session.workspace, task_group)

    async def close(self) -> None:
        """Cancel open questions and end every terminal."""
        self.cancel_questions()
        if self.terminals is not None:
            await self.terminals.close()

    def cancel_questions(self) -> None:
        self._cancelled_turn = self.session.projector.state.turn
        for scope in list(self.asking):
            scope.cancel()

    # --- notifications ------------------------------------------------------------------------

    async def update_projected(self, changes: list[Change]) -> None:
        """An update of this session, projected as the connection took it in (``changes``:
        what it changed): the files of the edits it spoke of read, as they start and
        complete; a v2 session whose turn it ended is idle."""
        session = self.session
        session.caught_up_if_due()
        if self._disk_patches or session.checkpoints:
            state = session.projector.state
            for change in changes:
                call = state.tool_calls.get(change.key) if change.kind == "tool_call" else None
                if call is not None and call.reported:
                    await self._look_around(call)
        if session.projector.state.turn_state.state == "idle" and session.version == 2:
            session.wake_turn()

    async def on_notification(self, method: str, params: Any) -> None:
        """A notification of the agent that is no session's update."""
        session = self.session
        if method == "elicitation/complete":
            try:  # a URL elicitation is done: nothing to do but check it
                parse_agent_request(method, params, 2 if session.version == 2 else 1)
            except ValidationError as error:
                session.problems.append(Problem("invalid_notification", _first_error(error)))
        elif method.startswith("_"):
            session.problems.append(Problem("ignored_notification", method))
        else:
            session.problems.append(Problem("unknown_notification", method))

    async def _look_around(self, call: ToolCall) -> None:
        """Read the files an edit names from the disk, as it starts (or asks permission) and
        as it completes.

        Agents that edit files themselves may report only a fragment of the change, or
        none: with the file's content around the edit, the projection gives the true
        patch. Every path the tool call names counts (its diffs, its locations, the
        paths of its raw input), relative ones taken from the session's folder; at most
        :data:`DISK_PATHS` of them.
        """
        if call.kind not in EDIT_KINDS and not call.diffs_reported:
            return
        view = self.session.projector.state.view()
        named = [view.resolve(path) for path in tool_call_paths(call)]
        seen = self._disk_seen.setdefault(call.id, {})
        finished = call.status in ("completed", "failed", "cancelled")
        paths = list(dict.fromkeys([*seen, *named]))[:DISK_PATHS]
        completing = call.status == "completed" and call.id not in self._checkpointed
        for path in paths:
            phases = seen.setdefault(path, set())
            if not self._disk_patches or not self.session.workspace.contains(path):
                continue
            if not finished and not phases:
                phases.add("before")
                await self._disk_read(call.id, path, "before")
            elif call.status == "completed" and "after" not in phases:
                phases.add("after")
                await self._disk_read(call.id, path, "after")
        if completing:
            # The checkpoints' word on the files it names: before (the turn's start, or the
            # last tool call that completed with them) and now.
            self._checkpointed.add(call.id)
            await self.session.tool_call_checkpoint(call.id, paths)

    async def _read_known(self, path: str) -> tuple[bool, str | None]:
        """A file as the disk holds it now, for a true patch: ``(True, text)``, ``(True,
        None)`` when it does not exist, ``(False, None)`` when it is there but cannot be
        read as text (:meth:`Workspace.read_known`, at most :data:`DISK_READ_LIMIT`
        bytes). A ``disk_patches`` reader given to :func:`connect` is read instead."""
        if self._reader is not None:
            return True, self._reader(path)
        # In a worker thread, one at a time: reading (and decoding) a large file must not
        # stall the event loop that other sessions, and this one's answers, run on.
        return await anyio.to_thread.run_sync(
            self.session.workspace.read_known, path, DISK_READ_LIMIT, limiter=self._disk_limiter
        )

    async def _disk_read(self, tool_call_id: str | None, path: str, phase: DiskPhase) -> None:
        """Read one file for a true patch; the traffic reader and the observers get it.

        A reader that knows phases (a replay's, reading what its capture recorded) may
        say it has nothing for this one: then nothing is read, as nothing was recorded.
        """
        read_phase = getattr(self._reader, "read_phase", None)
        if callable(read_phase):
            found = read_phase(path, phase)
            if found is None:
                return
            known, content = found
        else:
            known, content = await self._read_known(path)
        read: dict[str, Any] = {
            "toolCallId": tool_call_id,
            "path": path,
            "phase": phase,
            "content": content,
        }
        if not known:
            read["unreadable"] = True
        self.session.saw("disk", read)

    # --- requests -----------------------------------------------------------------------------

    async def on_request(self, method: str, params: Any, request_id: Any) -> Any:
        version: Version = 2 if self.session.version == 2 else 1
        if method.startswith("_"):
            return self._extension(method, params)
        if method not in agent_methods(version) or method == "elicitation/complete":
            raise RpcError(METHOD_NOT_FOUND, f"method not found: {method}")
        # A request that names a session must name this one (an elicitation may name a
        # request instead, with a null session; the schema wants one in the others).
        ours = self.session.session_id
        named = params.get("sessionId") if isinstance(params, dict) else None
        if ours is not None and named is not None and named != ours:
            # Served for this session, it would land in this session's timeline.
            self.session.problems.append(
                Problem("other_session", f"{method} for session {str(named)[:100]!r}")
            )
            raise RpcError(INVALID_PARAMS, f"unknown session {str(named)[:100]!r}")
        if method == "session/request_permission":
            # The reducer reads it (and answers an unreadable one "cancelled").
            return await self._permission(str(request_id), params)
        try:
            request = parse_agent_request(method, params, version)
        except ValidationError as error:
            raise RpcError(INVALID_PARAMS, f"invalid params: {_first_error(error)}") from None
        # What the schema's rules kept: fields they dropped are gone, defaults are filled.
        wire = request.to_wire()
        if method == "elicitation/create":
            return await self._elicitation(wire, version)
        if method == "fs/read_text_file":
            return await self._read(wire, request_id)
        if method == "fs/write_text_file":
            return await self._write(wire)
        if method == "terminal/create":
            return await self._create_terminal(wire)
        return await self._terminal_request(method, wire)

    def _extension(self, method: str, params: Any) -> Any:
        """An extension request of the agent: the plugins answer (built-in: not found)."""
        session = self.session
        answer = session.hooks.answer_extension_request(
            session.provider, method, params, session.projector.state.view()
        )
        if answer.error_code is not None:
            raise RpcError(answer.error_code, answer.error_message, answer.error_data)
        return answer.result

    # --- permissions --------------------------------------------------------------------------

    async def _permission(self, request_id: str, params: Any) -> dict[str, Any]:
        session = self.session
        projector = session.projector
        # The traffic reader projected the request as the connection took it in.
        request = projector.state.permissions.get(request_id)
        if request is None:  # unreadable: refuse it
            return {"outcome": {"outcome": "cancelled"}}
        proposed = projector.state.tool_calls.get(request.tool_call_id or "")
        if proposed is not None and self._disk_patches:
            # The files as they are before the edit it proposes: its true patch, though
            # the agent may say no more of it (refused), or send a whole new text.
            await self._look_around(proposed)
        judged = self._judged(projector.state.tool_calls.get(request.tool_call_id or ""))
        query = PermissionQuery(
            request_id=request_id,
            title=request.title,
            tool_call=judged,
            options=request.options,
            # Only when someone may read it (the policy's rules, the application): it costs
            # a projection of the edit, and an agent may send thousands of requests.
            **(self._what_it_changes(judged) if self._reads_patches() else {}),
        )
        decision = session.hooks.decide_permission(session.provider, query, session.policy)
        asked = decision.outcome == "ask"
        if asked:
            decision = await self._ask_application(query)
        offered = [o.get("optionId") for o in query.options]
        if decision.outcome == "selected" and offered.count(decision.option_id) != 1:
            # The agent can only act on an option it offered, and only once: an id it
            # offered twice (an allow and a reject) says nothing the agent can be held to.
            why = "was not offered" if decision.option_id not in offered else "was offered twice"
            session.problems.append(
                Problem("invalid_answer", f"permission: {decision.option_id!r} {why}")
            )
            decision = PermissionDecision(
                outcome="cancelled", reason=f"{decision.option_id!r} {why}"
            )
        if asked and decision.outcome == "selected":
            self._grant(query, decision.option_id)
        return {"outcome": decision.to_wire()}

    def _what_it_changes(self, call: ToolCall | None) -> dict[str, Any]:
        """The real paths a tool call names and, for an edit, its true patch (what the
        session's evidence shows now: the disk was read before asking)."""
        if call is None:
            return {}
        view = self.session.projector.state.view()
        paths = tuple(
            dict.fromkeys(os.path.realpath(view.resolve(p)) for p in tool_call_paths(call))
        )
        found: dict[str, Any] = {"paths": paths[: DISK_PATHS * 4]}
        if call.kind in EDIT_KINDS or call.diffs_reported:
            try:
                item = self.session.hooks.project_tool_call(self.session.provider, call, view)
            except Exception:  # a plugin failing here must not leave the agent unanswered
                return found
            if isinstance(item, FileChangeItem):
                found.update(
                    patch=item.diff_str, additions=item.additions, deletions=item.deletions
                )
        return found

    def _judged(self, call: ToolCall | None) -> ToolCall | None:
        """The tool call as the policy judges it: of the most powerful kind it was ever said
        to be. An update cannot turn an announced command into a read for the policy."""
        if call is None:
            return None
        said = self.session.projector.state.kinds_said.get(call.id, ())
        worst = max((call.kind, *said), key=kind_rank)
        return call if worst == call.kind else call.model_copy(update={"kind": worst})

    def _grant(self, query: PermissionQuery, option_id: str | None) -> None:
        """The application allowed a tool call: the command it runs, or the edits it makes,
        are not asked about again."""
        kind = next((o.get("kind") for o in query.options if o.get("optionId") == option_id), None)
        call = query.tool_call
        if not (isinstance(kind, str) and kind.startswith("allow")) or call is None:
            return
        if call.kind == "execute":
            self._grants.append(_Grant("command", call.id, command=_said_command(call)))
        elif call.kind in EDIT_KINDS:  # a read, a search, a fetch allows no write
            paths = tuple(tool_call_paths(call))
            if paths:
                self._grants.append(_Grant("write", call.id, paths=paths, files=self._as_now(call)))

    def _as_now(self, call: ToolCall) -> dict[str, _Approved]:
        """Each file an allowed edit names, as it is now: the grant binds to these files
        (their identity: device and inode of the real path) and, where the edit's outcome
        can be worked out, to it."""
        view = self.session.projector.state.view()
        workspace = self.session.workspace
        found: dict[str, _Approved] = {}
        fragments = fragments_by_path(call, view)
        for named in tool_call_paths(call)[: DISK_PATHS * 4]:
            path = view.resolve(named)
            result = None
            if path in fragments:
                current = workspace.read_confined(path, DISK_READ_LIMIT)
                result = edit_result(current, fragments[path])
            found[path] = _Approved(workspace.identity(path), result, result is not None)
        return found

    def _use_grant(
        self,
        kind: Literal["command", "write"],
        owner: str | None,
        what: tuple[str, ...],
        *,
        content: str | None = None,
    ) -> Expected | bool:
        """Whether an allowed permission covers this action, and use it up: the action's
        tool call (``owner``) must be the granted one, still unfinished; a command must be
        the one its tool call said it would run; a write one of its paths, of the file that
        was there when it was allowed (none, for a new one), with the content the allowed
        edit gives (where that was known). A covered write gives what it must still find
        when it writes (:class:`Expected`)."""
        state = self.session.projector.state
        for grant in self._grants:
            if grant.kind != kind or grant.tool_call_id != owner:
                continue
            if owner not in state.open_calls:
                continue
            if kind == "write" and not set(what) & set(grant.paths):
                continue
            if kind == "command" and grant.command is not None and grant.command not in what:
                continue
            bound: Expected | bool = True
            if kind == "write":
                path = state.view().resolve(what[0])
                approved = grant.files.get(path)
                if approved is not None:
                    now = self.session.workspace.identity(path)
                    why = approved.covers(now, content or "")
                    if why is not None:
                        self.session.problems.append(
                            Problem("grant_changed", f"{path[:200]}: {why}: asked again")
                        )
                        continue
                    identity = approved.identity
                    bound = (
                        Expected(absent=True) if identity is None else Expected(identity=identity)
                    )
            self._grants.remove(grant)
            return bound
        return False

    async def _ask_application(self, query: PermissionQuery) -> PermissionDecision:
        cancelled = PermissionDecision(outcome="cancelled", reason="no answer")
        if self._ask is None:
            return cancelled
        if self._cancelled_turn == self.session.projector.state.turn:
            return PermissionDecision(
                outcome="cancelled", reason="the turn was cancelled", asked=False
            )
        answer: PermissionDecision | str | None = None
        with anyio.CancelScope() as scope:
            self.asking.add(scope)
            try:
                answer = await self._ask(query)
            finally:
                self.asking.discard(scope)
        if isinstance(answer, PermissionDecision):
            return answer
        if isinstance(answer, str):
            return PermissionDecision(
                outcome="selected", option_id=answer, reason="the application chose"
            )
        return cancelled

    async def _decide(self, action: ClientAction) -> tuple[bool, str]:
        """Whether the client may perform ``action``, and why: the hook, then maybe the
        application."""
        session = self.session
        decision = session.hooks.decide_client_action(session.provider, action, session.policy)
        if decision.outcome != "ask":
            return decision.outcome == "allow", decision.reason
        what = action.command_line if action.kind == "command" else action.path
        query = PermissionQuery(
            request_id=f"client-action-{next(self._actions)}",
            title=f"run {what}" if action.kind == "command" else f"write {what}",
            tool_call=action.tool_call,
            options=ACTION_OPTIONS,
            action=action,
        )
        if self._ask is None:
            return False, f"{decision.reason}, and there is no ask callback"
        answer = await self._ask_application(query)
        # The question and its answer are the session's (an approval of its timeline, a
        # line of its recording), as an agent's permission request is.
        call = action.tool_call
        if answer.asked:
            session.agent.saw(
                "decided",
                {
                    "sessionId": session.session_id,
                    "requestId": query.request_id,
                    "title": query.title,
                    "toolCallId": call.id if call is not None else None,
                    "options": list(ACTION_OPTIONS),
                    "outcome": answer.outcome,
                    "optionId": answer.option_id,
                },
            )
        if answer.outcome == "selected" and answer.option_id == "allow":
            return True, "the application allowed it"
        return False, "the application refused it"

    # --- elicitation --------------------------------------------------------------------------

    async def _elicitation(self, params: dict[str, Any], version: Version) -> dict[str, Any]:
        """The application answers (``elicit``); without it, or without an answer: decline."""
        declined = {"action": "decline"}
        if self._elicit is None:
            return declined
        answer = await self._elicit(params)
        if answer is None:
            return declined
        try:
            checked: dict[str, Any] = parse_elicitation_answer(answer, version).to_wire()
        except ValidationError as error:
            self.session.problems.append(
                Problem("invalid_answer", f"elicit: {_first_error(error)}")
            )
            return declined
        return checked

    # --- files --------------------------------------------------------------------------------

    async def _read(self, params: Any, request_id: Any) -> dict[str, Any]:
        """Answer ``fs/read_text_file``. Reads of large files go one at a time, each answer
        written before the next file is read: twenty pipelined reads of a 30 MiB file hold
        one copy at a time, not twenty, whether or not the agent reads its answers."""
        async with self._large_read:
            content = self._read_now(params)
            if len(content) >= LARGE_READ_CHARS and await self.session.connection.answer_now(
                request_id, {"content": content}
            ):
                raise AnswerSent
        return {"content": content}

    def _read_now(self, params: Any) -> str:
        if not isinstance(params, dict):
            raise RpcError(INVALID_PARAMS, "fs/read_text_file needs params")
        session = self.session
        path = params.get("path")
        try:
            return session.workspace.read_text(
                path, line=params.get("line"), limit=params.get("limit")
            )
        except RpcError as error:
            if error.code != RESOURCE_NOT_FOUND or self.missing_file_read != "empty":
                raise
        # No such file, answered as empty: the answer's "" is not the file's content, and
        # the traffic reader (live and from a recording) is told so.
        session.saw(
            "disk", {"toolCallId": None, "path": str(path), "phase": "missing", "content": None}
        )
        return ""

    async def _write(self, params: Any) -> dict[str, Any]:
        if not isinstance(params, dict):
            raise RpcError(INVALID_PARAMS, "fs/write_text_file needs params")
        session = self.session
        path, content = params.get("path"), params.get("content")
        if not isinstance(content, str):
            raise RpcError(INVALID_PARAMS, "content must be a string")
        try:
            real = str(session.workspace.resolve(path))
            inside = True
        except RpcError as error:
            if error.code != FORBIDDEN:
                raise
            real, inside = str(path), False
        owner = session.projector.reducer.writer_of(str(path))
        granted = self._use_grant("write", owner, (str(path), real), content=content)
        action = ClientAction(
            kind="write",
            path=real,
            inside=inside,
            patch=self._write_patch(str(path), content)
            if self._reads_patches() and inside
            else None,
            tool_call=self._judged(session.projector.state.tool_calls.get(owner or "")),
            approved=granted is not False,
        )
        allowed, why = await self._decide(action)
        if not allowed:
            raise RpcError(FORBIDDEN, f"writing {path} is not allowed: {why}")
        if self._disk_patches:
            # The file before it is written: a write through the client always has its
            # before and its after (the traffic reader sees the write as it is answered).
            await self._disk_read(owner, real, "write")
        # Allowed with its tool call: bound to the file allowed, up to the write itself.
        bound = granted if isinstance(granted, Expected) and action.approved else None
        session.workspace.write_text(path, content, expected=bound)
        return {}

    def _may_ask(self) -> bool:
        return self.session.policy.name == "ask" and self._ask is not None

    def _reads_patches(self) -> bool:
        """Whether a write's patch is wanted before it is decided: someone may be asked, or
        the policy has rules, which may read it."""
        return self._may_ask() or bool(self.session.policy.rules)

    def _write_patch(self, path: str, content: str) -> str | None:
        """The patch a write would apply to the file as it is now (for the question)."""
        try:
            old: str | None = self.session.workspace.read_text(path)
        except RpcError:
            old = None
        limits = self.session.projector.state.diff_limits
        return diff_patch(
            [{"type": "diff", "path": path, "oldText": old, "newText": content}],
            max_edits=limits.max_edits,
        )

    # --- terminals ----------------------------------------------------------------------------

    async def _create_terminal(self, params: dict[str, Any]) -> dict[str, Any]:
        session = self.session
        assert self.terminals is not None
        line = command_line(params)
        if line is None:
            raise RpcError(INVALID_PARAMS, "terminal/create needs a command")
        args = params.get("args")
        words = command_argv(params["command"], args if isinstance(args, list) else None)
        cwd = params.get("cwd") if isinstance(params.get("cwd"), str) else None
        # Where it would run, judged before anyone is asked: outside the folders is refused.
        try:
            where = str(session.workspace.resolve(cwd)) if cwd else str(session.workspace.cwd)
        except RpcError:
            raise  # the traffic reader shows the refusal, as the answer says it
        # A variable that would change what runs is refused before anyone is asked: no
        # answer would make it run (terminals.agent_variables).
        agent_variables(params.get("env"))
        env = params.get("env")
        names = tuple(
            str(v["name"])
            for v in (env if isinstance(env, list) else [])
            if isinstance(v, dict) and isinstance(v.get("name"), str)
        )
        projector = session.projector
        announced = projector.reducer.announcing_tool_call()
        action = ClientAction(
            kind="command",
            argv=tuple(str(w) for w in words),
            command_line=line,
            cwd=where,
            env_names=names,
            tool_call=self._judged(projector.state.tool_calls.get(announced or "")),
            approved=self._use_grant("command", announced, _command_forms(words, line)) is True,
        )
        allowed, why = await self._decide(action)
        if not allowed:
            # Not run: the timeline says what was asked and why not, as the answer says.
            raise RpcError(FORBIDDEN, f"running {line} is not allowed: {why}")
        return await self.terminals.create(params)

    async def _terminal_request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.terminals is not None
        handler: Mapping[str, Callable[[Any], Awaitable[dict[str, Any]]]] = {
            "terminal/output": self.terminals.output,
            "terminal/wait_for_exit": self.terminals.wait_for_exit,
            "terminal/kill": self.terminals.kill,
            "terminal/release": self.terminals.release,
        }
        return await handler[method](params)


def _said_command(call: ToolCall) -> str | None:
    """The command a tool call says it runs (``rawInput.command``), if it says."""
    raw = call.raw_input if isinstance(call.raw_input, dict) else {}
    command = raw.get("command", raw.get("cmd"))
    if isinstance(command, list) and all(isinstance(part, str) for part in command):
        return shlex.join(command)
    return command if isinstance(command, str) else None


def _command_forms(argv: list[str], line: str) -> tuple[str, ...]:
    """The ways a tool call may name the command ``argv`` runs: its line, its argv quoted,
    and the script of a shell that runs one (``sh -c SCRIPT``, ``bash -lc SCRIPT``)."""
    forms = [line, shlex.join(argv)]
    if len(argv) == 3 and os.path.basename(argv[0]) in _SHELLS and argv[1] in ("-c", "-lc"):
        forms.append(argv[2])
    return tuple(forms)


_SHELLS = frozenset({"sh", "bash", "zsh", "dash"})


def _first_error(error: ValidationError) -> str:
    """The first thing a validation found wrong, in a line."""
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "params"
    return f"{where}: {first['msg']}"[:300]


__all__ = [
    "DISK_PATHS",
    "DISK_READ_LIMIT",
    "LARGE_READ_CHARS",
    "AgentRequests",
    "AskCallback",
    "DiskPhase",
    "DiskReader",
    "ElicitCallback",
    "TerminalBackend",
    "TerminalFactory",
]
