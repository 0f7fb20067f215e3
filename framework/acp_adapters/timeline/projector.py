"""The projection: session traffic in, timeline items out.

:class:`Projector` owns one session's state and reducer. The traffic reader
(a capture, or later the live client) tells it what happened: the protocol
version and agent, prompts and their answers, ``session/update``
notifications, permission requests and answers, the client's file reads and
the agent's writes. After each event it projects what changed, through the
hooks, into items; each item keeps its id and ordinal as it is re-projected.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import count
from typing import Any

from pydantic import TypeAdapter, ValidationError

from ..errors import PluginError
from ..hooks import Hooks
from ..protocol import v1, v2
from ..providers import Provider
from ..runtime import Change, Reducer, SessionState
from .items import (
    ApprovalRequestItem,
    AssistantMessageItem,
    ErrorItem,
    ItemBase,
    ItemStatus,
    NoticeItem,
    PlanItem,
    PlanStep,
    ReasoningItem,
    TimelineItem,
    UserMessageItem,
)
from .timeline import Timeline

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
        #: v2 user messages that are the prompt of their turn: message id -> prompt item key.
        self._prompt_of: dict[str, str] = {}
        #: Called with every item as it is stored (new, or projected again).
        self.listeners: list[Callable[[TimelineItem], None]] = []
        #: Agent messages and thoughts grown by chunks since their item was last stored:
        #: message key -> time of the last chunk. See :meth:`flush`.
        self._stale: dict[str, float] = {}

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
        if response.config_options is not None:
            self.reducer.set_config_options(response.config_options)

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

    def notification(self, params: Any, at: float) -> None:
        """A ``session/update`` notification arrived."""
        self._now = at
        changes = self.reducer.apply_notification(params)
        parsed = self.reducer.last_notification
        if parsed is not None:
            self.hooks.on_session_update(self.provider, parsed, self.state.view())
        self._apply(changes)

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

    def disk_observed(
        self, tool_call_id: str, path: str, content: str | None, *, after: bool, at: float
    ) -> None:
        """A live client read a file an edit touches, as it started or completed."""
        self._now = at
        self._apply(self.reducer.apply_disk_snapshot(tool_call_id, path, content, after=after))

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
        for change in dict.fromkeys(changes):
            if change.kind == "message" and self._grows(change.key):
                self._stale[change.key] = self._now
                continue
            project = getattr(self, f"_project_{change.kind}", None)
            if project is not None:
                project(change.key)

    def _project_tool_call(self, key: str) -> None:
        call = self.state.tool_calls.get(key)
        if call is None or not call.reported:
            return  # only a permission request named it: its approval item shows it
        item = self.hooks.project_tool_call(self.provider, call, self.state.view())
        if not isinstance(item, ItemBase):
            raise PluginError(
                "project_tool_call gave no item", hook="project_tool_call", plugin=None
            )
        self._put(f"tool:{key}", item, turn=call.turn, tool_call_id=key)

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
        stored = self.items[key] = item.model_copy(
            update={
                "id": key,
                "session_id": self.state.session_id,
                "turn": turn if turn is not None else self.state.turn,
                "ordinal": previous.ordinal if previous else next(self._ordinals),
                "created_at": previous.created_at if previous else self._now,
                "updated_at": self._now,
                "tool_call_id": tool_call_id,
            }
        )
        for listener in self.listeners:
            listener(stored)
