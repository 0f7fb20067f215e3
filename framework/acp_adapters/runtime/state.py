"""The state of one session, as the reducer builds it, and the read-only view hooks get.

:class:`SessionState` is the reducer's mutable store: the values of :mod:`.values` (by
id where they have one), the file events of :mod:`.file_store`, the turn, and the
indexes the reducer keeps so that no update looks at every tool call. Hooks see it
through :class:`SessionView`.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from ..diff.limits import DiffLimits
from .file_store import CONTENT_BUDGET, FileEvent, FileStore
from .folders import resolved_path
from .values import (
    CheckpointedFile,
    CheckpointMark,
    Command,
    ConfigOption,
    Message,
    Mode,
    PathChange,
    PermissionRequest,
    Plan,
    SessionInfo,
    Terminal,
    ToolCall,
    TurnState,
    UnknownUpdate,
    Usage,
)


class SessionState:
    """The reducer's store for one session. Read it through :meth:`view`."""

    def __init__(
        self,
        session_id: str | None = None,
        version: int = 1,
        diff_limits: DiffLimits | None = None,
        content_budget: int = CONTENT_BUDGET,
    ) -> None:
        self.session_id = session_id
        self.version = version
        #: The session's folder, as the client named it (``session/new``): relative paths
        #: agents send are taken from it.
        self.cwd: str | None = None
        #: The position at which the current turn started.
        self.turn_seq = 0
        self.diff_limits = diff_limits or DiffLimits()
        self.seq = 0
        #: ``session/update`` notifications applied (what names a message sent without an id).
        self.updates = 0
        self.turn = 0
        self.turn_state = TurnState()
        self.tool_calls: dict[str, ToolCall] = {}
        self.messages: dict[str, Message] = {}
        self.plans: dict[str, Plan] = {}
        self.config_options: tuple[ConfigOption, ...] = ()
        self.modes: tuple[Mode, ...] = ()
        self.current_mode: str | None = None
        self.commands: tuple[Command, ...] = ()
        self.usage: Usage | None = None
        self.info = SessionInfo()
        self.terminals: dict[str, Terminal] = {}
        #: The client terminal each tool call announced or embeds (the latest): call id -> id.
        self.terminal_of_call: dict[str, str] = {}
        self.permissions: dict[str, PermissionRequest] = {}
        #: The file events (reads, writes, disk reads) and their contents, within a budget.
        self.file_store = FileStore(content_budget)
        self.unknown: list[UnknownUpdate] = []
        #: The checkpoints taken of the session's folders, and what they found changed: each
        #: change, and those of each tool call (by its id).
        self.checkpoints: list[CheckpointMark] = []
        self.path_changes: list[PathChange] = []
        self.changes_of_call: dict[str, list[int]] = {}
        # Unfinished tool calls, oldest first, and the paths each names, indexed by path:
        # what a write belongs to is found without looking at every tool call. Kept here,
        # not in a reducer, so that every reducer of this state sees them.
        self.open_calls: dict[str, None] = {}
        self.open_by_path: dict[str, dict[str, None]] = {}
        self.paths_of: dict[str, tuple[str, ...]] = {}
        #: Every kind each tool call was said to be, in any update or request: what a policy
        #: judges it by is the most powerful of them (a command relabelled a read stays one).
        self.kinds_said: dict[str, tuple[str, ...]] = {}
        #: Unfinished ``execute`` tool calls with no terminal yet, oldest first.
        self.open_commands: dict[str, None] = {}
        #: Tool calls a turn ended on while they were not finished, and the stop reason.
        self.ended_tool_calls: dict[str, str] = {}
        #: The message a chunk without a message id continues (per role), while nothing else
        #: came in between.
        self.open_message: dict[str, str] = {}
        self._view = SessionView(self)

    def view(self) -> SessionView:
        return self._view

    def snapshot(self) -> dict[str, Any]:
        """Everything, as JSON-ready data: for comparisons and debugging."""
        return {
            "session_id": self.session_id,
            "turn_state": self.turn_state.model_dump(mode="json"),
            "tool_calls": {
                k: v.model_dump(mode="json", exclude={"first_seq", "last_seq"})
                for k, v in self.tool_calls.items()
            },
            "messages": {
                k: v.model_dump(mode="json", exclude={"first_seq", "last_seq"})
                for k, v in self.messages.items()
            },
            "plans": {
                k: v.model_dump(mode="json", exclude={"first_seq", "last_seq"})
                for k, v in self.plans.items()
            },
            "config_options": [c.model_dump(mode="json") for c in self.config_options],
            "current_mode": self.current_mode,
            "commands": [c.model_dump(mode="json") for c in self.commands],
            "usage": self.usage.model_dump(mode="json") if self.usage else None,
            "info": self.info.model_dump(mode="json"),
            "terminals": {k: v.model_dump(mode="json") for k, v in self.terminals.items()},
            "unknown": [u.model_dump(mode="json", exclude={"seq"}) for u in self.unknown],
        }


class SessionView:
    """A read-only window on a session's state, as hooks receive it."""

    __slots__ = ("_state",)

    def __init__(self, state: SessionState) -> None:
        self._state = state

    @property
    def session_id(self) -> str | None:
        return self._state.session_id

    @property
    def version(self) -> int:
        """The protocol version the session speaks (1 or 2)."""
        return self._state.version

    @property
    def turn(self) -> int:
        return self._state.turn

    @property
    def diff_limits(self) -> DiffLimits:
        """How far the session's diffs may search (the rewrite cap)."""
        return self._state.diff_limits

    @property
    def turn_state(self) -> TurnState:
        return self._state.turn_state

    @property
    def tool_calls(self) -> Mapping[str, ToolCall]:
        return MappingProxyType(self._state.tool_calls)

    @property
    def messages(self) -> Mapping[str, Message]:
        return MappingProxyType(self._state.messages)

    @property
    def plans(self) -> Mapping[str, Plan]:
        return MappingProxyType(self._state.plans)

    @property
    def terminals(self) -> Mapping[str, Terminal]:
        return MappingProxyType(self._state.terminals)

    @property
    def permissions(self) -> Mapping[str, PermissionRequest]:
        return MappingProxyType(self._state.permissions)

    @property
    def files(self) -> tuple[FileEvent, ...]:
        return tuple(self._state.file_store.events)

    @property
    def config_options(self) -> tuple[ConfigOption, ...]:
        return self._state.config_options

    @property
    def current_mode(self) -> str | None:
        return self._state.current_mode

    @property
    def usage(self) -> Usage | None:
        return self._state.usage

    @property
    def info(self) -> SessionInfo:
        return self._state.info

    @property
    def ended_tool_calls(self) -> Mapping[str, str]:
        """Tool calls a turn ended on before they finished, with the turn's stop reason."""
        return MappingProxyType(self._state.ended_tool_calls)

    def file_before(self, path: str, seq: int) -> FileEvent | None:
        """The latest read, write or found content of ``path`` before position ``seq`` (its
        ``kept`` False when the session does not know what the file held). ``path`` may be
        relative to the session's folder."""
        return self._state.file_store.before(self.resolve(path), seq)

    def resolve(self, path: str) -> str:
        """A path as the session's file events name it: relative ones taken from its folder."""
        return resolved_path(path, self._state.cwd)

    @property
    def cwd(self) -> str | None:
        """The session's folder, as the client named it."""
        return self._state.cwd

    def terminal_of(self, tool_call_id: str) -> Terminal | None:
        """The client terminal a tool call announced or embeds, if any (the latest)."""
        terminal_id = self._state.terminal_of_call.get(tool_call_id)
        return self._state.terminals.get(terminal_id) if terminal_id is not None else None

    def disk_of(self, tool_call_id: str) -> tuple[FileEvent, ...]:
        """What the client read from the disk around a tool call, in order (the reads whose
        content the session let go are left out)."""
        return tuple(
            e
            for e in self._state.file_store.of_call(tool_call_id, "disk_before", "disk_after")
            if e.kept
        )

    @property
    def checkpoints(self) -> tuple[CheckpointMark, ...]:
        """The checkpoints taken of the session's folders, in order."""
        return tuple(self._state.checkpoints)

    def checkpointed(self, tool_call_id: str) -> tuple[CheckpointedFile, ...]:
        """What the checkpoint taken as a tool call completed says of the files it names, in
        order (empty: no checkpoint covers it)."""
        state = self._state
        return tuple(self.path_change(n) for n in state.changes_of_call.get(tool_call_id, ()))

    def path_change(self, index: int) -> CheckpointedFile:
        """Change ``index`` of :attr:`SessionState.path_changes`, with its texts."""
        change = self._state.path_changes[index]
        events = self._state.file_store.events
        known = True
        texts: list[str | None] = []
        for side, position in (
            (change.before, change.before_text),
            (change.after, change.after_text),
        ):
            if side is None or position is None:
                texts.append(None)
                continue
            event = events[position]
            known = known and event.kept
            texts.append(event.content if event.kept else None)
        return CheckpointedFile(
            path=change.path,
            moved_from=change.moved_from,
            before=change.before,
            after=change.after,
            old_text=texts[0],
            new_text=texts[1],
            known=known,
        )

    def writes_of(self, tool_call_id: str) -> tuple[FileEvent, ...]:
        """The file writes that belong to a tool call, in order."""
        return self._state.file_store.of_call(tool_call_id, "write")
