"""One reducer for every update of both protocol versions.

:class:`Reducer` applies what arrives in a session to its
:class:`~acp_adapters.runtime.state.SessionState`: ``session/update``
notifications of either version, the tool call a permission request carries,
the client's file-system answers and the agent's writes, and turn boundaries.
It never raises on what an agent sends: an update that is invalid by its
version's schema, or of a kind not known here, is kept as an
:class:`~acp_adapters.runtime.values.UnknownUpdate`.

Update semantics:

* v1 ``tool_call`` and ``tool_call_update``: the fields present replace (a
  list present replaces the list); null and absent leave a field as it is; an
  update for an unknown id creates the tool call.
* v2 ``tool_call_update`` is an upsert: omitted leaves a field, null clears it,
  a value replaces it; ``tool_call_content_chunk`` appends one item.
* message chunks append to their message (by ``messageId``; v1 chunks without
  one continue the latest message of their role while nothing else came in
  between). v2 whole-message updates replace the content (null clears it).
* v1's ``plan`` is the session's single plan; v2's ``plan_update`` is by ``planId``.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from pydantic import TypeAdapter, ValidationError

from ..protocol import parse_notification, v1, v2
from .file_store import FileEvent
from .folders import resolved_path
from .paths import tool_call_paths
from .state import SessionState
from .values import (
    Block,
    CheckpointMark,
    Command,
    ConfigChoice,
    ConfigOption,
    ContentItem,
    DiffChange,
    DiffV1,
    DiffV2,
    Location,
    Message,
    MessageRole,
    Mode,
    PatchText,
    PathChange,
    PermissionRequest,
    Plan,
    PlanEntry,
    Terminal,
    TerminalRef,
    ToolCall,
    ToolContent,
    TurnState,
    UnknownContent,
    UnknownUpdate,
    Usage,
    compact,
)

#: The single plan of a v1 session.
V1_PLAN_ID = "plan"
#: Tool-call statuses after which a tool call does nothing more.
TERMINAL_STATUSES = frozenset({"completed", "failed", "cancelled"})
#: The tool kinds that change files (the writes the client served go to them).
_EDIT_KINDS = frozenset({"edit", "delete", "move"})
#: How much of a client terminal's output the session keeps (its end).
TERMINAL_TEXT_BYTES = 1024 * 1024

_PERMISSION: dict[int, TypeAdapter[Any]] = {
    1: TypeAdapter(v1.RequestPermissionRequest),
    2: TypeAdapter(v2.RequestPermissionRequest),
}


#: What a change touched: a tool call, a message, a plan, a permission request, the
#: session itself (modes, commands, configuration, usage, the turn's state), a terminal,
#: or an update that could not be understood.
ChangeKind = Literal[
    "tool_call",
    "message",
    "plan",
    "permission",
    "session",
    "terminal",
    "unknown",
    "write",
    "checkpoint",
]


@dataclass(frozen=True)
class Change:
    """What one applied message touched: ``kind`` and the key of the thing in the state."""

    kind: ChangeKind
    key: str


@dataclass(frozen=True)
class AppliedUpdate:
    """One ``session/update`` applied: the notification as read (None when it could not
    be), and what it changed."""

    notification: Any
    changes: list[Change]


class Reducer:
    """Applies messages to a session's state; every method returns what it changed."""

    def __init__(self, state: SessionState | None = None) -> None:
        self.state = state if state is not None else SessionState()
        self._by_type = self._handlers()

    # --- session/update ----------------------------------------------------------------

    def apply_notification(self, params: Any) -> list[Change]:
        """Apply the params of one ``session/update`` notification of the session's version;
        what it changed."""
        return self.apply_update(params).changes

    def apply_update(self, params: Any) -> AppliedUpdate:
        """Apply one ``session/update``'s params: the notification as read (None when it
        could not be), and what it changed."""
        state = self.state
        state.seq += 1
        state.updates += 1
        try:
            notification = parse_notification(params, 2 if state.version == 2 else 1)
        except ValidationError as error:
            return AppliedUpdate(None, [self._unknown(params, _reason(error))])
        if state.session_id is None:
            state.session_id = notification.session_id
        raw = params["update"]
        update = notification.update
        handler = self._by_type.get(type(update)) or self._handler_of(type(update))
        if handler is None:
            unknown = self._unknown(raw, f"update {raw.get('sessionUpdate')!r} is not known here")
            return AppliedUpdate(notification, [unknown])
        return AppliedUpdate(notification, handler(update, raw))

    def _handler_of(self, kind: type) -> Callable[[Any, dict[str, Any]], list[Change]] | None:
        """The handler of a subclass of an update type (then found at once the next time)."""
        handler = next((self._by_type[t] for t in kind.__mro__ if t in self._by_type), None)
        if handler is not None:
            self._by_type[kind] = handler
        return handler

    def _handlers(self) -> dict[type, Callable[[Any, dict[str, Any]], list[Change]]]:
        return {
            v1.ContentChunk: self._chunk,
            v2.ContentChunk: self._chunk,
            v1.ToolCall: self._tool_call_v1,
            v1.ToolCallUpdate: self._tool_call_v1,
            v2.ToolCallUpdate: self._tool_call_v2,
            v2.ToolCallContentChunk: self._tool_content_chunk,
            v1.Plan: self._plan_v1,
            v2.PlanUpdate: self._plan_v2,
            v1.AvailableCommandsUpdate: self._commands,
            v2.AvailableCommandsUpdate: self._commands,
            v1.CurrentModeUpdate: self._mode,
            v1.ConfigOptionUpdate: self._config,
            v2.ConfigOptionUpdate: self._config,
            v1.SessionInfoUpdate: self._info,
            v2.SessionInfoUpdate: self._info,
            v1.UsageUpdate: self._usage,
            v2.UsageUpdate: self._usage,
            v2.UserMessage: self._whole_message,
            v2.AgentMessage: self._whole_message,
            v2.AgentThought: self._whole_message,
            v2.RunningStateUpdate: self._state_update,
            v2.IdleStateUpdate: self._state_update,
            v2.RequiresActionStateUpdate: self._state_update,
            v2.TerminalUpdate: self._terminal,
            v2.TerminalOutputChunk: self._terminal_output,
        }

    # messages

    _ROLES: ClassVar[dict[str, MessageRole]] = {
        "user_message_chunk": "user",
        "agent_message_chunk": "agent",
        "agent_thought_chunk": "thought",
        "user_message": "user",
        "agent_message": "agent",
        "agent_thought": "thought",
    }

    def _chunk(self, update: Any, raw: dict[str, Any]) -> list[Change]:
        role = self._ROLES[raw["sessionUpdate"]]
        state = self.state
        # Without an id, a message is named by the update that began it: the same name
        # whatever else the session saw in between (disk reads, permission answers).
        key = update.message_id or state.open_message.get(role) or f"{role}-{state.updates}"
        message = state.messages.get(key) or self._new_message(key, role)
        state.messages[key] = message.with_blocks(
            (_block(update.content),), append=True, last_seq=state.seq
        )
        state.open_message = {role: key}
        return [Change("message", key)]

    def _whole_message(self, update: Any, raw: dict[str, Any]) -> list[Change]:
        role = self._ROLES[raw["sessionUpdate"]]
        state = self.state
        key = update.message_id
        message = state.messages.get(key) or self._new_message(key, role)
        if "content" in raw and (raw["content"] is None or update.content is not None):
            blocks = [_block(block) for block in update.content or ()]
            message = message.with_blocks(blocks, append=False)
        state.messages[key] = message.model_copy(update={"last_seq": state.seq})
        state.open_message = {role: key}
        return [Change("message", key)]

    def _new_message(self, key: str, role: MessageRole) -> Message:
        state = self.state
        return Message(id=key, role=role, turn=state.turn, first_seq=state.seq, last_seq=state.seq)

    # tool calls

    _TOOL_FIELDS: ClassVar[tuple[tuple[str, str], ...]] = (
        ("title", "title"),
        ("kind", "kind"),
        ("status", "status"),
        ("content", "content"),
        ("locations", "locations"),
        ("rawInput", "raw_input"),
        ("rawOutput", "raw_output"),
        ("_meta", "meta"),
    )
    _CLEARED: ClassVar[dict[str, Any]] = {
        "title": None,
        "kind": "other",
        "status": "pending",
        "content": (),
        "locations": (),
        "raw_input": None,
        "raw_output": None,
        "meta": None,
    }

    def _tool_call_v1(self, update: Any, raw: dict[str, Any]) -> list[Change]:
        return self.upsert_tool_call(update, raw, clear_on_null=False, reported=True)

    def _tool_call_v2(self, update: Any, raw: dict[str, Any]) -> list[Change]:
        return self.upsert_tool_call(update, raw, clear_on_null=True, reported=True)

    def upsert_tool_call(
        self, update: Any, raw: dict[str, Any], *, clear_on_null: bool, reported: bool
    ) -> list[Change]:
        """Apply a tool call (or an update of one), creating it when its id is new.

        ``reported``: a session/update said it (rather than a permission request).
        """
        state = self.state
        key = update.tool_call_id
        current = state.tool_calls.get(key) or ToolCall(
            id=key, turn=state.turn, first_seq=state.seq, last_seq=state.seq
        )
        changes: dict[str, Any] = {"last_seq": state.seq}
        if reported:
            changes["reported"] = True
        said = raw.get("kind")
        if isinstance(said, str) and said not in state.kinds_said.get(key, ()):
            state.kinds_said[key] = (*state.kinds_said.get(key, ()), said)
        for alias, field in self._TOOL_FIELDS:
            if alias not in raw:
                continue  # omitted: unchanged
            value = getattr(update, field)
            if raw[alias] is None:
                if clear_on_null:
                    changes[field] = self._CLEARED[field]
                continue
            if value is None:
                continue  # malformed: the schema's default is "no change"
            changes[field] = self._convert(field, value)
        if isinstance(changes.get("meta"), dict):
            changes["meta_seen"] = _merged(current.meta_seen, changes["meta"])
        diffs = _diffs(changes.get("content", ()))
        if diffs:
            changes["diffs_reported"] = diffs
            if not reported:
                changes["diffs_proposed"] = diffs
        extra = {k: v for k, v in (update.model_extra or {}).items() if k != "sessionUpdate"}
        if extra:
            changes["extra"] = {**current.extra, **extra}
        state.open_message = {}
        return self._stored(current.model_copy(update=changes))

    def _stored(self, call: ToolCall) -> list[Change]:
        """Store a tool call as it is now: its indexes, and the client terminal it embeds."""
        state = self.state
        state.tool_calls[call.id] = compact(call)
        paths = self._paths(call)
        self._index(call, paths)
        if (call.kind in _EDIT_KINDS or call.diffs_reported) and state.turn_state.state != "idle":
            # Writes the client served before the agent said which tool call made them (in
            # this turn: at its end, a write no tool call claimed is shown on its own).
            for path in paths:
                state.file_store.claim(path, call.id, state.turn_seq)
        changed = [Change("tool_call", call.id)]
        for item in call.content:
            if not isinstance(item, TerminalRef):
                continue
            terminal = state.terminals.get(item.terminal_id)
            if terminal is not None and terminal.client and terminal.tool_call_id != call.id:
                # The tool call shows the client's terminal: one item for both.
                state.terminals[terminal.id] = terminal.model_copy(update={"tool_call_id": call.id})
                state.terminal_of_call[call.id] = terminal.id
                changed.append(Change("terminal", terminal.id))
        return changed

    def _index(self, call: ToolCall, named: tuple[str, ...] | None = None) -> None:
        """Keep the indexes of unfinished tool calls up to date with ``call`` (``named``: the
        files it names, when they are known already)."""
        key = call.id
        finished = call.status in TERMINAL_STATUSES or key in self.state.ended_tool_calls
        paths = () if finished else (self._paths(call) if named is None else named)
        for path in set(self.state.paths_of.pop(key, ())) - set(paths):
            holders = self.state.open_by_path.get(path)
            if holders is not None:
                holders.pop(key, None)
                if not holders:
                    del self.state.open_by_path[path]
        if finished:
            self.state.open_calls.pop(key, None)
            self.state.open_commands.pop(key, None)
            return
        self.state.open_calls.setdefault(key, None)
        self.state.paths_of[key] = paths
        for path in paths:
            # setdefault: a path named again keeps its place, so each path's holders stay
            # in the order they first named it.
            self.state.open_by_path.setdefault(path, {}).setdefault(key, None)
        has_terminal = key in self.state.terminal_of_call or any(
            isinstance(item, TerminalRef) for item in call.content
        )
        if call.kind == "execute" and not has_terminal:
            self.state.open_commands.setdefault(key, None)
        else:
            self.state.open_commands.pop(key, None)

    def _paths(self, call: ToolCall) -> tuple[str, ...]:
        """The files a tool call names, each in its one spelling (relative paths resolved)."""
        cwd = self.state.cwd
        return tuple(dict.fromkeys(resolved_path(p, cwd) for p in tool_call_paths(call)))

    def _close(self, key: str) -> None:
        """A tool call ended (with its turn): out of the indexes of unfinished ones."""
        call = self.state.tool_calls.get(key)
        if call is not None:
            self._index(call)

    def _convert(self, field: str, value: Any) -> Any:
        if field == "content":
            return tuple(_content(item) for item in value)
        if field == "locations":
            return tuple(compact(Location(path=loc.path, line=loc.line)) for loc in value)
        return value

    def _tool_content_chunk(self, update: Any, raw: dict[str, Any]) -> list[Change]:
        state = self.state
        key = update.tool_call_id
        current = state.tool_calls.get(key) or ToolCall(
            id=key, turn=state.turn, first_seq=state.seq, last_seq=state.seq
        )
        content = (*current.content, _content(update.content))
        changes: dict[str, Any] = {"content": content, "last_seq": state.seq, "reported": True}
        diffs = _diffs(content)
        if diffs:
            changes["diffs_reported"] = diffs
        state.open_message = {}
        return self._stored(current.model_copy(update=changes))

    # plans, commands, configuration

    def _plan_v1(self, update: Any, raw: dict[str, Any]) -> list[Change]:
        return self._plan(V1_PLAN_ID, update.entries)

    def _plan_v2(self, update: Any, raw: dict[str, Any]) -> list[Change]:
        plan = update.plan
        if not isinstance(plan, v2.PlanItems):
            return [self._unknown(raw, f"plan of type {plan.type!r} is not known here")]
        return self._plan(plan.plan_id, plan.entries)

    def _plan(self, key: str, entries: list[Any]) -> list[Change]:
        state = self.state
        current = state.plans.get(key) or Plan(
            id=key, turn=state.turn, first_seq=state.seq, last_seq=state.seq
        )
        state.plans[key] = current.model_copy(
            update={
                "entries": tuple(
                    PlanEntry(content=e.content, priority=e.priority, status=e.status)
                    for e in entries
                ),
                "last_seq": state.seq,
            }
        )
        state.open_message = {}  # text after the plan is a new message, as after a tool call
        return [Change("plan", key)]

    def _commands(self, update: Any, raw: dict[str, Any]) -> list[Change]:
        self.state.commands = tuple(
            Command(
                name=c.name,
                description=c.description,
                input_hint=getattr(c.input, "hint", None) if c.input is not None else None,
            )
            for c in update.available_commands
        )
        return [Change("session", "commands")]

    def _mode(self, update: Any, raw: dict[str, Any]) -> list[Change]:
        self.state.current_mode = update.current_mode_id
        return [Change("session", "mode")]

    def _config(self, update: Any, raw: dict[str, Any]) -> list[Change]:
        self.set_config_options(update.config_options)
        return [Change("session", "config")]

    def set_config_options(self, options: list[Any]) -> None:
        """Replace the configuration options (from an update or a session/new answer)."""
        self.state.config_options = tuple(_config_option(o) for o in options)

    def set_modes(self, current: str | None, available: list[Any]) -> None:
        """Set the modes a session/new (or load) answer listed."""
        self.state.current_mode = current
        self.state.modes = tuple(
            Mode(id=m.id, name=m.name, description=m.description) for m in available
        )

    def _info(self, update: Any, raw: dict[str, Any]) -> list[Change]:
        state = self.state
        changes = {}
        for alias, field in (("title", "title"), ("updatedAt", "updated_at")):
            if alias in raw and (raw[alias] is None or getattr(update, field) is not None):
                changes[field] = getattr(update, field)
        state.info = state.info.model_copy(update=changes)
        return [Change("session", "info")]

    def _usage(self, update: Any, raw: dict[str, Any]) -> list[Change]:
        cost = update.cost
        self.state.usage = Usage(
            used=update.used,
            size=update.size,
            cost_amount=cost.amount if cost else None,
            cost_currency=cost.currency if cost else None,
        )
        return [Change("session", "usage")]

    # v2 state and terminals

    def _state_update(self, update: Any, raw: dict[str, Any]) -> list[Change]:
        if update.state == "idle":
            return self.end_turn(update.stop_reason)
        self.state.turn_state = TurnState(state=update.state)
        return [Change("session", "turn")]

    def _terminal(self, update: Any, raw: dict[str, Any]) -> list[Change]:
        state = self.state
        key = update.terminal_id
        current = state.terminals.get(key) or Terminal(id=key)
        changes: dict[str, Any] = {}
        for alias, field in (("command", "command"), ("cwd", "cwd")):
            if alias in raw and (raw[alias] is None or getattr(update, field) is not None):
                changes[field] = getattr(update, field)
        if "output" in raw and (raw["output"] is None or update.output is not None):
            changes["output"] = _b64(update.output.data) if update.output is not None else b""
        if "exitStatus" in raw and (raw["exitStatus"] is None or update.exit_status is not None):
            status = update.exit_status
            changes["exited"] = status is not None
            changes["exit_code"] = status.exit_code if status else None
            changes["signal"] = status.signal if status else None
        state.terminals[key] = current.model_copy(update=changes)
        return [Change("terminal", key)]

    def _terminal_output(self, update: Any, raw: dict[str, Any]) -> list[Change]:
        state = self.state
        key = update.terminal_id
        current = state.terminals.get(key) or Terminal(id=key)
        state.terminals[key] = current.model_copy(
            update={"output": current.output + _b64(update.data)}
        )
        return [Change("terminal", key)]

    # --- turns, permissions, files --------------------------------------------------------

    def start_turn(self) -> list[Change]:
        """A prompt was sent: a new turn runs."""
        state = self.state
        state.seq += 1
        state.turn += 1
        state.turn_seq = state.seq
        state.turn_state = TurnState(state="running")
        state.open_message = {}
        return [Change("session", "turn")]

    def end_turn(self, stop_reason: str | None) -> list[Change]:
        """The turn ended: tool calls still unfinished end with it."""
        state = self.state
        state.turn_state = TurnState(state="idle", stop_reason=stop_reason)
        state.open_message = {}
        changed = [Change("session", "turn")]
        # What the client wrote for the agent that no tool call owns: an edit all the same.
        changed += [
            Change("write", str(position))
            for position in state.file_store.unowned_writes(state.turn_seq)
        ]
        for key in list(self.state.open_calls):
            call = state.tool_calls[key]
            if call.status not in TERMINAL_STATUSES and key not in state.ended_tool_calls:
                state.ended_tool_calls[key] = stop_reason or "end_turn"
                changed.append(Change("tool_call", key))
            self._close(key)
        return changed

    def agent_exited(self) -> list[Change]:
        """The agent went away: its turn ends, and what waited for an answer is cancelled."""
        state = self.state
        state.seq += 1
        changed: list[Change] = []
        if state.turn_state.state != "idle":
            changed += self.end_turn("agent_exited")
        for request_id, request in state.permissions.items():
            if request.outcome is None:
                state.permissions[request_id] = request.model_copy(update={"outcome": "cancelled"})
                changed.append(Change("permission", request_id))
                if request.tool_call_id is not None:
                    changed.append(Change("tool_call", request.tool_call_id))
        return changed

    def apply_permission_request(self, request_id: str, params: Any) -> list[Change]:
        """The agent asked for permission; the tool call it names is updated (or created).

        v1 requests carry the tool call; v2 ones a subject: a tool call, or a
        command that may name one.
        """
        state = self.state
        state.seq += 1
        try:
            request = _PERMISSION[2 if state.version == 2 else 1].validate_python(params)
        except ValidationError as error:
            return [self._unknown(params, _reason(error))]
        changed: list[Change] = []
        call, raw_call = None, None
        if state.version == 2:
            subject = request.subject
            if isinstance(subject, v2.ToolCallPermissionSubject):
                call, raw_call = subject.tool_call, params["subject"]["toolCall"]
            tool_call_id = call.tool_call_id if call else getattr(subject, "tool_call_id", None)
        else:
            call, raw_call = request.tool_call, params["toolCall"]
            tool_call_id = call.tool_call_id
        if call is not None and isinstance(raw_call, dict):
            announced = state.tool_calls.get(call.tool_call_id)
            said = raw_call.get("kind")
            if isinstance(said, str) and said not in state.kinds_said.get(call.tool_call_id, ()):
                state.kinds_said[call.tool_call_id] = (
                    *state.kinds_said.get(call.tool_call_id, ()),
                    said,
                )
            if announced is not None and announced.reported and "kind" in raw_call:
                # What a tool call is was said when it was announced: a permission request
                # must not make a command look like a read to the policy.
                raw_call = {k: v for k, v in raw_call.items() if k != "kind"}
            changed = self.upsert_tool_call(
                call, raw_call, clear_on_null=state.version == 2, reported=False
            )
        state.permissions[request_id] = PermissionRequest(
            request_id=request_id,
            tool_call_id=tool_call_id,
            title=getattr(request, "title", None),
            options=tuple(o.to_wire() for o in request.options),
            turn=state.turn,
            seq=state.seq,
        )
        return [*changed, Change("permission", request_id)]

    def apply_permission_answer(self, request_id: str, result: Any) -> list[Change]:
        """The client answered a permission request (an error answer counts as cancelled)."""
        state = self.state
        current = state.permissions.get(request_id)
        if current is None:
            return []
        outcome = result.get("outcome") if isinstance(result, dict) else None
        kind = outcome.get("outcome") if isinstance(outcome, dict) else None
        option_id = outcome.get("optionId") if isinstance(outcome, dict) else None
        option_kind = next(
            (o.get("kind") for o in current.options if o.get("optionId") == option_id), None
        )
        state.permissions[request_id] = current.model_copy(
            update={
                "outcome": kind if isinstance(kind, str) else "cancelled",
                "option_id": option_id if isinstance(option_id, str) else None,
                "option_kind": option_kind,
            }
        )
        changed = [Change("permission", request_id)]
        if current.tool_call_id is not None:
            changed.append(Change("tool_call", current.tool_call_id))
        return changed

    def apply_file_read(self, path: str, content: str | None) -> list[Change]:
        """The client answered ``fs/read_text_file`` (``content`` None: no such file)."""
        state = self.state
        state.seq += 1
        where = resolved_path(path, state.cwd)
        state.file_store.add(FileEvent(op="read", path=where, content=content, seq=state.seq))
        return []

    def apply_file_found(
        self, tool_call_id: str | None, path: str, content: str | None, *, known: bool = True
    ) -> list[Change]:
        """The client found ``path`` so on the disk just before it wrote it for the agent
        (``content`` None: no such file; ``known`` False: a file it could not read)."""
        state = self.state
        state.seq += 1
        where = resolved_path(path, state.cwd)
        owner = tool_call_id or self.writer_of(where)
        state.file_store.add(
            FileEvent(
                op="found",
                path=where,
                content=content if known else None,
                kept=known,
                seq=state.seq,
                tool_call_id=owner,
            )
        )
        return []

    def apply_file_write(self, path: str, content: str) -> list[Change]:
        """The agent asked the client to write a file: it belongs to the tool call editing it."""
        state = self.state
        state.seq += 1
        where = resolved_path(path, state.cwd)
        owner = self.writer_of(where)
        state.file_store.add(
            FileEvent(op="write", path=where, content=content, seq=state.seq, tool_call_id=owner)
        )
        return [Change("tool_call", owner)] if owner else []

    def apply_disk_snapshot(
        self,
        tool_call_id: str,
        path: str,
        content: str | None,
        *,
        after: bool,
        known: bool = True,
    ) -> list[Change]:
        """A live client read ``path`` from the disk as a tool call started (or asked
        permission), or as it completed (``known`` False: a file it could not read)."""
        state = self.state
        state.seq += 1
        state.file_store.add(
            FileEvent(
                op="disk_after" if after else "disk_before",
                path=resolved_path(path, state.cwd),
                content=content if known else None,
                kept=known,
                seq=state.seq,
                tool_call_id=tool_call_id,
            )
        )
        return [Change("tool_call", tool_call_id)]

    def apply_checkpoint(self, mark: CheckpointMark) -> list[Change]:
        """The client took a checkpoint of the session's folders."""
        self.state.checkpoints.append(mark)
        return []

    def apply_path_change(
        self,
        change: PathChange,
        old_text: str | None,
        new_text: str | None,
    ) -> list[Change]:
        """A checkpoint found ``change`` (its texts beside it): the tool call it names gets
        it (one the session knows), else it is a change of its own (``checkpoint``)."""
        state = self.state
        state.seq += 1
        index = len(state.path_changes)
        known = change.tool_call_id is not None and change.tool_call_id in state.tool_calls
        owner = change.tool_call_id if known else f"change:{index}"
        positions: list[int | None] = []
        for op, side, text in (
            ("checkpoint_before", change.before, old_text),
            ("checkpoint_after", change.after, new_text),
        ):
            if side is None or text is None:
                positions.append(None)
                continue
            positions.append(len(state.file_store.events))
            state.file_store.add(
                FileEvent(
                    op=op,  # type: ignore[arg-type]
                    path=change.path,
                    content=text,
                    seq=state.seq,
                    tool_call_id=owner,
                )
            )
        state.path_changes.append(
            change.model_copy(
                update={
                    "tool_call_id": change.tool_call_id if known else None,
                    "turn": state.turn,
                    "seq": state.seq,
                    "before_text": positions[0],
                    "after_text": positions[1],
                }
            )
        )
        if known:
            assert change.tool_call_id is not None
            state.changes_of_call.setdefault(change.tool_call_id, []).append(index)
            return [Change("tool_call", change.tool_call_id)]
        return [Change("checkpoint", str(index))]

    def writer_of(self, path: str) -> str | None:
        """The unfinished tool call that names ``path``, the latest to name it first."""
        holders = self.state.open_by_path.get(resolved_path(path, self.state.cwd))
        # The index keeps them in the order they first named the path, the latest last.
        return next(reversed(holders)) if holders else None

    def announcing_tool_call(self) -> str | None:
        """The tool call a command the client is about to run belongs to: the latest
        unfinished ``execute`` tool call of the turn that has no terminal yet."""
        for key in reversed(self.state.open_commands):
            call = self.state.tool_calls[key]
            if call.turn == self.state.turn:
                return key
        return None

    def client_terminal(
        self,
        terminal_id: str,
        command: str | None,
        cwd: str | None,
        *,
        refused: str | None = None,
    ) -> list[Change]:
        """The client ran a command for the agent (or refused to: ``refused`` says why)."""
        state = self.state
        state.seq += 1
        owner = self.announcing_tool_call()
        state.terminals[terminal_id] = Terminal(
            id=terminal_id,
            command=command,
            cwd=cwd,
            client=True,
            tool_call_id=owner,
            refused=refused,
            exited=refused is not None,
        )
        if owner is not None:
            state.terminal_of_call[owner] = terminal_id
            self.state.open_commands.pop(owner, None)
        return [Change("terminal", terminal_id)]

    def client_terminal_answer(self, terminal_id: str, result: Any) -> list[Change]:
        """The client answered ``terminal/output`` or ``terminal/wait_for_exit``: what the
        terminal printed (the last :data:`TERMINAL_TEXT_BYTES` of it) and how it ended."""
        state = self.state
        current = state.terminals.get(terminal_id)
        if current is None or not current.client or not isinstance(result, dict):
            return []
        changes: dict[str, Any] = {}
        output = result.get("output")
        if isinstance(output, str):
            data = output.encode("utf-8", errors="replace")
            changes["output"] = data[-TERMINAL_TEXT_BYTES:]
        status = result.get("exitStatus", result if "exitCode" in result else None)
        if isinstance(status, dict):
            code, signal = status.get("exitCode"), status.get("signal")
            changes["exited"] = True
            changes["exit_code"] = (
                code if isinstance(code, int) and not isinstance(code, bool) else None
            )
            changes["signal"] = signal if isinstance(signal, str) else None
        if not changes:
            return []
        state.seq += 1
        state.terminals[terminal_id] = current.model_copy(update=changes)
        return [Change("terminal", terminal_id)]

    def _unknown(self, raw: Any, reason: str) -> Change:
        state = self.state
        state.unknown.append(UnknownUpdate(raw=raw, reason=reason, seq=state.seq, turn=state.turn))
        return Change("unknown", str(len(state.unknown) - 1))


def _reason(error: ValidationError) -> str:
    """The first thing wrong, in one line."""
    errors = error.errors()
    if not errors:
        return "invalid"
    where = ".".join(str(part) for part in errors[0]["loc"])
    return f"invalid: {where}: {errors[0]['msg']}"[:500]


def _merged(base: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """``base`` updated with ``new``, nested objects merged rather than replaced."""
    result = dict(base)
    for key, value in new.items():
        if isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = _merged(result[key], value)
        else:
            result[key] = value
    return result


def _b64(data: str) -> bytes:
    """Terminal bytes; what is not base64 is dropped (the rest of the message is kept)."""
    try:
        return base64.b64decode(data, validate=True)
    except ValueError:
        return b""


_PLAIN_TEXT: frozenset[str] = frozenset({"text", "type"})
_TEXT_BLOCKS: tuple[type, ...] = (v1.ContentBlockText, v2.ContentBlockText)


def _block(block: Any) -> Block:
    if (
        type(block) in _TEXT_BLOCKS
        and block.model_fields_set == _PLAIN_TEXT
        and not block.__pydantic_extra__
    ):
        # Most chunks of a message: what to_wire gives, in its key order, without a dump.
        return Block(type="text", data={"text": block.text, "type": "text"})
    data = block.to_wire()
    return Block(type=str(data.get("type", "unknown")), data=data)


def _diffs(content: tuple[ToolContent, ...]) -> tuple[ToolContent, ...]:
    """The diff items of a tool call's content."""
    return tuple(item for item in content if isinstance(item, DiffV1 | DiffV2))


def _content(item: Any) -> ToolContent:
    return compact(_content_value(item))  # each kept as long as its tool call


def _content_value(item: Any) -> ToolContent:
    if isinstance(item, v1.ToolCallContentDiff):
        return DiffV1(path=item.path, old_text=item.old_text, new_text=item.new_text)
    if isinstance(item, v2.ToolCallContentDiff):
        return DiffV2(
            changes=tuple(
                DiffChange(
                    operation=c.operation,
                    path=getattr(c, "path", None),
                    old_path=getattr(c, "old_path", None),
                    file_type=c.file_type,
                    mime_type=c.mime_type,
                )
                for c in item.changes
            ),
            patch=PatchText(format=item.patch.format, text=item.patch.text) if item.patch else None,
        )
    if isinstance(item, v1.ToolCallContentContent | v2.ToolCallContentContent):
        return ContentItem(block=_block(item.content))
    if isinstance(item, v1.ToolCallContentTerminal | v2.ToolCallContentTerminal):
        return TerminalRef(terminal_id=item.terminal_id)
    return UnknownContent(raw=item.to_wire())


def _config_option(option: Any) -> ConfigOption:
    choices: list[ConfigChoice] = []
    for entry in getattr(option, "options", None) or ():
        if hasattr(entry, "value"):
            choices.append(
                ConfigChoice(value=entry.value, name=entry.name, description=entry.description)
            )
        else:  # a group of choices
            group = getattr(entry, "group", None) or getattr(entry, "group_id", None)
            choices.extend(
                ConfigChoice(value=c.value, name=c.name, description=c.description, group=group)
                for c in entry.options
            )
    return ConfigOption(
        id=str(getattr(option, "id", None) or getattr(option, "config_id", "")),
        name=option.name,
        type=option.type,
        current_value=getattr(option, "current_value", None),
        description=option.description,
        category=option.category,
        choices=tuple(choices),
    )
