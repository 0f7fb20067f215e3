"""The projection: session traffic in, timeline items out.

:class:`Projector` owns one session's state and reducer. The traffic reader
(a capture, or later the live client) tells it what happened: the protocol
version and agent, prompts and their answers, ``session/update``
notifications, permission requests and answers, the client's file reads and
the agent's writes. After each event it projects what changed, through the
hooks, into items; each item keeps its id and ordinal as it is re-projected.
"""

from __future__ import annotations

from itertools import count
from typing import Any, ClassVar

from pydantic import TypeAdapter, ValidationError

from ..capture.format import ChangeLine, CheckpointLine, DecidedLine
from ..errors import PluginError
from ..plugin.hooks import Hooks
from ..plugin.providers import Provider
from ..protocol import v1, v2
from ..runtime import Change, CheckpointMark, PathChange, Reducer, SessionState, ToolCall
from ..runtime.values import compact
from ..timeline.items import (
    ApprovalRequestItem,
    AssistantMessageItem,
    CommandExecutionItem,
    ErrorItem,
    FileChangeItem,
    ItemBase,
    ItemStatus,
    NoticeItem,
    PlanItem,
    PlanStep,
    ReasoningItem,
    TimelineItem,
    UserMessageItem,
)
from ..timeline.timeline import Timeline
from .files import (
    FileContents,
    checkpoint_operation,
    checkpointed_files,
    file_change_from_checkpoint,
    file_change_from_contents,
    side_of,
    with_proposed_diffs,
)
from .subscriptions import Subscribers

#: What of a file_change the checkpoints say: the patch and every fact of the files.
_PATCH_FIELDS = (
    "paths",
    "operations",
    "moved_from",
    "diff_str",
    "diff_omitted_reason",
    "additions",
    "deletions",
    "patch_source",
    "checkpoint",
)

_NEW_SESSION: dict[int, TypeAdapter[Any]] = {
    1: TypeAdapter(v1.NewSessionResponse),
    2: TypeAdapter(v2.NewSessionResponse),
}


class Projector:
    """Turns one session's traffic into its timeline."""

    def __init__(
        self,
        hooks: Hooks,
        provider: Provider,
        *,
        version: int = 1,
        fixed_provider: bool = False,
        state: SessionState | None = None,
    ) -> None:
        self.hooks = hooks
        self.provider = provider
        self.fixed_provider = fixed_provider
        self.state = state or SessionState(version=version)
        self.reducer = Reducer(self.state)
        self.items: dict[str, TimelineItem] = {}
        self._ordinals = count(1)
        self._now = 0.0
        self._errors = count(1)
        self._refusals = count(1)
        self._notes = count(1)
        #: Tool calls shown by the item of the client terminal they embed: call id -> item key.
        self._shown_as: dict[str, str] = {}
        #: v2 user messages that are the prompt of their turn: message id -> prompt item key.
        self._prompt_of: dict[str, str] = {}
        #: Who hears every item as it is stored (new, or projected again).
        self.on_item: Subscribers[TimelineItem] = Subscribers()
        #: Who hears what of the session changed (``usage``, ``info``, ``commands``,
        #: ``mode``, ``config``, ``turn``): see
        #: :func:`~acp_adapters.timeline.timeline.session_json`.
        self.on_session: Subscribers[str] = Subscribers()
        #: Agent messages and thoughts grown by chunks since their item was last stored:
        #: message key -> time of the last chunk. See :meth:`flush`.
        self._stale: dict[str, float] = {}
        #: The agent is replaying the session's history (``session/load``): the items it
        #: makes are marked ``replayed``.
        self.replaying = False

    # --- what the traffic reader reports ------------------------------------------------

    def initialized(self, version: int, provider: Provider | None) -> None:
        """The agent answered ``initialize``: the session's version, and maybe its provider."""
        self.state.version = version
        if provider is not None and not self.fixed_provider:
            self.provider = provider

    def session_created(self, result: Any) -> None:
        """The agent answered session/new (or load): its id, modes and configuration."""
        try:
            response = _NEW_SESSION[2 if self.state.version == 2 else 1].validate_python(result)
        except ValidationError:
            return  # an answer that cannot be read adds nothing
        if self.state.session_id is None:
            self.state.session_id = response.session_id
        modes = getattr(response, "modes", None)
        if modes is not None:
            self.reducer.set_modes(modes.current_mode_id, modes.available_modes)
            self._session_changed("mode")
        if response.config_options is not None:
            self.reducer.set_config_options(response.config_options)
            self._session_changed("config")

    def session_noted(self, title: str, text: str, raw: dict[str, Any], at: float) -> None:
        """What the traffic shows of the session itself (not an update of the agent's): the
        agent no longer had it and another was started, it was opened in another folder. A
        ``notice`` item (severity ``warning``) says so, where it happened in the timeline."""
        self._now = at
        self._put(
            f"notice:{next(self._notes)}",
            NoticeItem(title=title, text=text, severity="warning", raw=raw, status="completed"),
        )

    def mode_set(self, mode_id: str) -> None:
        """The agent took the client's ``session/set_mode``: the session's current mode."""
        self.state.current_mode = mode_id
        self._session_changed("mode")

    def prompt_sent(self, prompt: Any, at: float) -> None:
        """The client sent a prompt: a turn starts; the prompt is the user's message."""
        self._now = at
        self._apply(self.reducer.start_turn())
        blocks = tuple(b for b in prompt if isinstance(b, dict)) if isinstance(prompt, list) else ()
        text = "".join(b["text"] for b in blocks if isinstance(b.get("text"), str))
        self._put(
            f"prompt:{self.state.turn}",
            UserMessageItem(text=text, blocks=blocks, status="completed"),
        )

    def prompt_answered(self, result: Any, error: Any, at: float) -> None:
        """The agent answered the prompt (v1: the turn ends; v2: it only acknowledges)."""
        self._now = at
        if isinstance(error, dict):
            self._put(
                f"error:{next(self._errors)}",
                ErrorItem(
                    message=str(error.get("message", "the prompt failed")),
                    code=error["code"] if isinstance(error.get("code"), int) else None,
                    data=error.get("data"),
                    status="failed",
                ),
            )
            self._apply(self.reducer.end_turn("error"))
            return
        if self.state.version == 2:
            message_id = result.get("messageId") if isinstance(result, dict) else None
            if isinstance(message_id, str):
                self._prompt_of[message_id] = f"prompt:{self.state.turn}"
            return
        reason = result.get("stopReason") if isinstance(result, dict) else None
        self._apply(self.reducer.end_turn(reason if isinstance(reason, str) else None))

    def agent_exited(self, exit_status: int | None, stderr: str, at: float) -> None:
        """The agent went away on its own: an error item says so, and what ran ends with it."""
        self._now = at
        status = "its exit status unknown" if exit_status is None else f"exit status {exit_status}"
        self._put(
            f"error:{next(self._errors)}",
            ErrorItem(
                message=f"the agent exited ({status})",
                data={"exit_status": exit_status, "stderr": stderr[-2000:]},
                status="failed",
            ),
        )
        self._apply(self.reducer.agent_exited())

    def client_action_decided(self, line: DecidedLine, at: float) -> None:
        """The client asked its application whether it may do what the agent asked of it:
        an approval, as an agent's permission request is, with its answer."""
        self._now = at
        option = next((o for o in line.options if o.get("optionId") == line.option_id), None)
        kind = option.get("kind") if option is not None else None
        item = ApprovalRequestItem(
            request_id=line.request_id,
            title=line.title,
            options=line.options,
            outcome=line.outcome,
            option_id=line.option_id,
            option_kind=kind if isinstance(kind, str) else None,
            status="completed" if line.outcome == "selected" else "cancelled",
        )
        self._put(f"decided:{line.request_id}", item, tool_call_id=line.tool_call_id)

    def message_dropped(self, reason: str, limit: int, at: float) -> None:
        """The connection dropped a message of the agent over its limits, unread: an error
        item says so, naming the limit (what the agent said there is missing)."""
        self._now = at
        what = {
            "line_too_long": f"a line longer than {limit} bytes",
            "too_many_elements": f"a message of more than {limit} values",
        }.get(reason, f"a message nested deeper than {limit} levels")
        self._put(
            f"error:{next(self._errors)}",
            ErrorItem(
                message=f"the agent sent {what}: it was dropped, unread, and what it said "
                "is missing here",
                data={"reason": reason, "limit": limit},
                status="failed",
            ),
        )

    def notification(self, params: Any, at: float) -> list[Change]:
        """A ``session/update`` notification arrived; what it changed of the state."""
        self._now = at
        applied = self.reducer.apply_update(params)
        if applied.notification is not None:
            self.hooks.on_session_update(self.provider, applied.notification, self.state.view())
        self._apply(applied.changes)
        return applied.changes

    def permission_requested(self, request_id: str, params: Any, at: float) -> None:
        self._now = at
        self._apply(self.reducer.apply_permission_request(request_id, params))

    def permission_answered(self, request_id: str, result: Any, at: float) -> None:
        self._now = at
        self._apply(self.reducer.apply_permission_answer(request_id, result))

    def file_read(self, path: str, content: str | None, at: float) -> None:
        self._now = at
        self._apply(self.reducer.apply_file_read(path, content))

    def file_written(self, path: str, content: str, at: float) -> None:
        self._now = at
        self._apply(self.reducer.apply_file_write(path, content))

    def file_found(
        self, tool_call_id: str | None, path: str, content: str | None, known: bool, at: float
    ) -> None:
        """The client found a file so on the disk just before it wrote it for the agent."""
        self._now = at
        self._apply(self.reducer.apply_file_found(tool_call_id, path, content, known=known))

    def disk_observed(
        self,
        tool_call_id: str,
        path: str,
        content: str | None,
        *,
        after: bool,
        at: float,
        known: bool = True,
    ) -> None:
        """A live client read a file an edit touches, as it started (or asked permission) or
        completed."""
        self._now = at
        self._apply(
            self.reducer.apply_disk_snapshot(tool_call_id, path, content, after=after, known=known)
        )

    def checkpoint_taken(self, taken: CheckpointLine, at: float) -> None:
        """The client took a checkpoint of the session's folders."""
        self._now = at
        mark = CheckpointMark(
            id=taken.id,
            reason=taken.reason,
            turn=taken.turn,
            tool_call_id=taken.tool_call_id,
            files=taken.files,
            notes=taken.notes,
        )
        self._apply(self.reducer.apply_checkpoint(mark))

    def path_changed(self, found: ChangeLine, at: float) -> None:
        """A checkpoint found a path changed (or, for a tool call, as it was)."""
        self._now = at
        change = PathChange(
            path=found.path,
            moved_from=found.moved_from,
            before=side_of(found.before),
            after=side_of(found.after),
            tool_call_id=found.tool_call_id,
            checkpoint=found.checkpoint,
        )
        old = found.before.text if found.before is not None else None
        new = found.after.text if found.after is not None else None
        self._apply(self.reducer.apply_path_change(change, old, new))

    def command_started(
        self, terminal_id: str, command: str | None, cwd: str | None, at: float
    ) -> None:
        """The client started a command for the agent (``terminal/create``)."""
        self._now = at
        self._apply(self.reducer.client_terminal(terminal_id, command, cwd))

    def command_refused(self, command: str | None, cwd: str | None, reason: str, at: float) -> None:
        """The client refused to run a command the agent asked for."""
        self._now = at
        terminal_id = f"refused-{next(self._refusals)}"
        self._apply(self.reducer.client_terminal(terminal_id, command, cwd, refused=reason))

    def command_answered(self, terminal_id: str, result: Any, at: float) -> None:
        """The client answered ``terminal/output`` or ``terminal/wait_for_exit``."""
        self._now = at
        self._apply(self.reducer.client_terminal_answer(terminal_id, result))

    def flush(self) -> None:
        """Store the items of messages that grew since they were last stored.

        A message item is stored once when its first chunk comes; the chunks after
        it only mark it stale, and a flush projects it again, once for however many
        chunks came. Reading the timeline flushes; a live session also flushes as
        soon as no message waits to be read, so listeners see text as it streams.
        """
        now = self._now
        while self._stale:
            key, self._now = self._stale.popitem()
            self._project_message(key)
        self._now = now

    @property
    def stale(self) -> bool:
        """Whether a message grew since it was last stored (a :meth:`flush` would store it)."""
        return bool(self._stale)

    def timeline(self) -> Timeline:
        self.flush()
        return Timeline(
            sorted(self.items.values(), key=lambda item: item.ordinal),
            provider=self.provider,
            version=self.state.version,
            session_id=self.state.session_id,
            state=self.state,
        )

    # --- projection -----------------------------------------------------------------------

    def _apply(self, changes: list[Change]) -> None:
        for change in dict.fromkeys(changes) if len(changes) > 1 else changes:
            if change.kind == "message" and self._grows(change.key):
                self._stale[change.key] = self._now
                continue
            name = self._PROJECTIONS.get(change.kind)
            if name is None:
                raise ValueError(f"no projection for a change of kind {change.kind!r}")
            getattr(self, name)(change.key)

    #: Every kind of change the reducer reports (``ChangeKind``), and the method that
    #: projects it.
    _PROJECTIONS: ClassVar[dict[str, str]] = {
        "tool_call": "_project_tool_call",
        "message": "_project_message",
        "plan": "_project_plan",
        "permission": "_project_permission",
        "terminal": "_project_terminal",
        "unknown": "_project_unknown",
        "write": "_project_write",
        "checkpoint": "_project_checkpoint",
        # Modes, commands, configuration, usage, info, the turn's state: no item shows
        # them; the session listeners hear of them.
        "session": "_session_changed",
    }

    def _project_tool_call(self, key: str) -> None:
        call = self.state.tool_calls.get(key)
        if call is None or not (call.reported or self._refused_edit(call.id)):
            return  # only a permission request named it: its approval item shows it
        item = self.hooks.project_tool_call(self.provider, call, self.state.view())
        if not isinstance(item, ItemBase):
            raise PluginError(
                "project_tool_call gave no item", hook="project_tool_call", plugin=None
            )
        if isinstance(item, FileChangeItem) and item.patch_source != "checkpoint":
            item = self._as_the_workspace_has_it(call, item)
        self._put(self._tool_item_key(key), item, turn=call.turn, tool_call_id=key)

    def _as_the_workspace_has_it(self, call: ToolCall, item: FileChangeItem) -> FileChangeItem:
        """A plugin's file_change of a completed tool call that the checkpoints cover: its
        patch is the workspace's (a plugin's account of an edit is evidence, never truer than
        the files before and after); the rest of the item is the plugin's."""
        if call.status != "completed":
            return item
        view = self.state.view()
        checked = checkpointed_files(with_proposed_diffs(call), view)
        if checked is None:
            return item
        truth = file_change_from_checkpoint(
            call, checked, limits=self.state.diff_limits, status=item.status
        )
        note = item.patch_note
        if item.diff_str != truth.diff_str:
            note = f"the {item.patch_source or 'plugin'}'s patch is not the workspace's change"
        return item.model_copy(
            update={**{name: getattr(truth, name) for name in _PATCH_FIELDS}, "patch_note": note}
        )

    def _refused_edit(self, key: str) -> bool:
        """Whether a tool call only a permission request named proposed an edit that was
        refused: its file_change shows what it proposed, though the agent says no more."""
        call = self.state.tool_calls[key]
        if not call.diffs_proposed:
            return False
        return any(
            request.tool_call_id == key
            and request.outcome is not None
            and not (request.option_kind or "").startswith("allow")
            for request in self.state.permissions.values()
        )

    def _tool_item_key(self, key: str) -> str:
        """The key of a tool call's item: its own, or, for a tool call that first appeared
        after the client ran its command, the command's item (one item for both)."""
        shown = self._shown_as.get(key)
        if shown is not None:
            return shown
        terminal_id = self.state.terminal_of_call.get(key)
        own = f"tool:{key}"
        if terminal_id is not None and own not in self.items:
            shown = f"terminal:{terminal_id}"
            if shown in self.items:
                self._shown_as[key] = shown
                return shown
        return own

    def _project_terminal(self, key: str) -> None:
        """A client terminal changed: its tool call's item shows it, or an item of its own."""
        terminal = self.state.terminals.get(key)
        if terminal is None or not terminal.client:
            return  # an agent's terminal (v2): the tool calls that embed it show it
        own = f"terminal:{key}"
        owner = self.state.tool_calls.get(terminal.tool_call_id or "")
        if owner is not None and owner.reported:
            self._project_tool_call(owner.id)
            if own not in self.items or self._shown_as.get(owner.id) == own:
                return  # the tool call's item shows the command
            # The command had an item of its own before a tool call named it: kept current.
        if terminal.refused is not None:
            status: ItemStatus = "failed"
        elif terminal.exited:
            status = "completed" if terminal.exit_code == 0 else "failed"
        else:
            status = "running"
        item = CommandExecutionItem(
            title=terminal.command,
            command=terminal.command,
            cwd=terminal.cwd,
            output=terminal.text or None,
            exit_code=terminal.exit_code,
            terminal_id=key,
            refused=terminal.refused,
            status=status,
        )
        self._put(own, item, tool_call_id=terminal.tool_call_id)

    def _session_changed(self, key: str) -> None:
        self.on_session.publish(key)

    def _project_write(self, key: str) -> None:
        """A write the client served for the agent that no tool call owns: its own item, with
        the file as it was just before (the client's own action, as a client command is)."""
        event = self.state.file_store.events[int(key)]
        if event.tool_call_id is not None or event.content is None:
            return  # claimed since, or its content let go: nothing true to show
        before = self.state.file_store.before(event.path, event.seq)
        if before is None or not before.kept:
            return  # what the file was is not known: no patch that might not apply to it
        call = ToolCall(id=f"write-{event.seq}", title=f"write {event.path}", kind="edit")
        old = before.content
        item = file_change_from_contents(
            call,
            [FileContents(event.path, old, event.content)],
            patch_source="client_fs",
            limits=self.state.diff_limits,
            note="written through the client; no tool call said it made this write",
        )
        self._put(f"write:{event.seq}", item)

    def _project_checkpoint(self, key: str) -> None:
        """A change at a turn's end that no tool call claimed: an item of its own (or, for a
        file the client wrote for the agent with no tool call, that write's item)."""
        index = int(key)
        change = self.state.path_changes[index]
        found = self.state.view().path_change(index)
        operation = checkpoint_operation(found)
        words = {"add": "created", "delete": "deleted", "move": "moved", "modify": "changed"}
        call = ToolCall(
            id=f"change-{index}", title=f"{words[operation]} {change.path}", kind="unattributed"
        )
        note = "changed in the workspace during the turn; no tool call said it made this change"
        item_key = f"change:{index}"
        written = self._unowned_write(change.path, change.turn)
        if written is not None:
            item_key = f"write:{written}"
            note = "written through the client; no tool call said it made this write"
        item = file_change_from_checkpoint(call, [found], limits=self.state.diff_limits, note=note)
        self._put(item_key, item, turn=change.turn)

    def _unowned_write(self, path: str, turn: int) -> int | None:
        """The seq of a write of ``path`` the client served in ``turn`` that no tool call
        claimed, whose item the checkpoint's change then updates."""
        store = self.state.file_store
        for position in reversed(store.unowned_writes(self.state.turn_seq)):
            event = store.events[position]
            if event.path == path and self.items.get(f"write:{event.seq}") is not None:
                shown = self.items[f"write:{event.seq}"]
                if shown.turn == turn:
                    return event.seq
        return None

    def _grows(self, key: str) -> bool:
        """Whether a change is to an agent message or thought already in the timeline."""
        message = self.state.messages.get(key)
        return message is not None and message.role != "user" and f"message:{key}" in self.items

    def _project_message(self, key: str) -> None:
        message = self.state.messages[key]
        blocks = tuple(b.data for b in message.blocks)
        item: TimelineItem
        if message.role == "user":
            prompt = self._prompt_of.get(key) or self._same_prompt(message.text, message.turn)
            if prompt is not None:
                self._prompt_of[key] = prompt
                return  # the prompt item already shows it
            item = UserMessageItem(text=message.text, blocks=blocks)
        elif message.role == "agent":
            item = AssistantMessageItem(text=message.text, blocks=blocks)
        else:
            item = ReasoningItem(text=message.text)
        self._put(f"message:{key}", item, turn=message.turn)

    def _same_prompt(self, text: str, turn: int) -> str | None:
        key = f"prompt:{turn}"
        prompt = self.items.get(key)
        if isinstance(prompt, UserMessageItem) and prompt.text == text:
            return key
        return None

    def _project_plan(self, key: str) -> None:
        plan = self.state.plans[key]
        steps = tuple(
            PlanStep(content=e.content, priority=e.priority, status=e.status) for e in plan.entries
        )
        done = all(step.status == "completed" for step in steps)
        status: ItemStatus = "completed" if done else "running"
        self._put(
            f"plan:{key}", PlanItem(plan_id=key, entries=steps, status=status), turn=plan.turn
        )

    def _project_permission(self, key: str) -> None:
        request = self.state.permissions[key]
        status: ItemStatus = "waiting"
        if request.outcome == "selected":
            status = "completed"
        elif request.outcome is not None:
            status = "cancelled"
        call = self.state.tool_calls.get(request.tool_call_id or "")
        item = ApprovalRequestItem(
            request_id=key,
            title=request.title or (call.title if call else None),
            options=request.options,
            outcome=request.outcome,
            option_id=request.option_id,
            option_kind=request.option_kind,
            status=status,
        )
        self._put(f"approval:{key}", item, turn=request.turn, tool_call_id=request.tool_call_id)

    def _project_unknown(self, key: str) -> None:
        unknown = self.state.unknown[int(key)]
        raw = unknown.raw if isinstance(unknown.raw, dict) else {}
        item: TimelineItem
        if unknown.reason.startswith("invalid"):
            item = ErrorItem(
                message=f"an update could not be read ({unknown.reason})",
                data=unknown.raw,
                status="failed",
            )
        else:
            text = raw.get("description", raw.get("message", raw.get("text")))
            item = NoticeItem(
                title=raw.get("title") if isinstance(raw.get("title"), str) else None,
                text=text if isinstance(text, str) else None,
                severity=raw.get("severity") if isinstance(raw.get("severity"), str) else None,
                raw=unknown.raw,
            )
        self._put(f"unknown:{key}", item, turn=unknown.turn)

    def _put(
        self,
        key: str,
        item: TimelineItem,
        *,
        turn: int | None = None,
        tool_call_id: str | None = None,
    ) -> None:
        """Store an item under its key; it keeps the ordinal and creation time it first had."""
        previous = self.items.get(key)
        stored = self.items[key] = compact(
            item.model_copy(
                update={
                    "id": key,
                    "session_id": self.state.session_id,
                    "turn": turn if turn is not None else self.state.turn,
                    "ordinal": previous.ordinal if previous else next(self._ordinals),
                    "created_at": previous.created_at if previous else self._now,
                    "updated_at": self._now,
                    "tool_call_id": tool_call_id,
                    "replayed": previous.replayed if previous else self.replaying,
                }
            )
        )
        self.on_item.publish(stored)
