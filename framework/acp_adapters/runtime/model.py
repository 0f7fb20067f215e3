"""The version-neutral state of one session, as the reducer builds it.

Everything an agent has said in a session, in one shape whatever protocol
version it spoke: messages (chunks appended), tool calls (by id), plans (by
id; v1's single plan is one of them), configuration, modes, commands, usage,
session info, the turn state, terminals the agent owns (v2), what the client's
file system answered and was asked to write, and every update that could not
be understood, kept as received.

Items are frozen pydantic models: the reducer replaces them, nothing changes
them in place. :class:`SessionState` itself is the reducer's mutable store;
hooks see it through the read-only :class:`SessionView`.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
from collections import deque
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, computed_field

from ..diff.limits import DiffLimits
from .folders import resolved_path


class RuntimeModel(BaseModel):
    """Base of the runtime items: frozen, strict about its own field names."""

    model_config = ConfigDict(frozen=True, extra="forbid")


# --- content ----------------------------------------------------------------------------


class Block(RuntimeModel):
    """A content block (text, image, audio, resource link, resource, or another kind), as sent."""

    type: str
    data: dict[str, Any] = Field(default_factory=dict)

    @property
    def text(self) -> str | None:
        """The text of a text block (None for other kinds)."""
        value = self.data.get("text") if self.type == "text" else None
        return value if isinstance(value, str) else None


class ContentItem(RuntimeModel):
    """Tool-call content that is a content block."""

    kind: Literal["content"] = "content"
    block: Block


class DiffChange(RuntimeModel):
    """One file-level change of a v2 diff (``changes`` entry)."""

    operation: str
    path: str | None = None
    old_path: str | None = None
    file_type: str | None = None
    mime_type: str | None = None


class PatchText(RuntimeModel):
    """The renderable patch of a v2 diff."""

    format: str
    text: str


class DiffV1(RuntimeModel):
    """A v1 diff: one file's whole old text (None: a new file) and new text."""

    kind: Literal["diff_v1"] = "diff_v1"
    path: str
    old_text: str | None = None
    new_text: str

    @property
    def type(self) -> Literal["diff"]:
        """The wire type, so the diff engine reads this item as it reads a wire dict."""
        return "diff"


class DiffV2(RuntimeModel):
    """A v2 diff: structured changes and, maybe, their patch text."""

    kind: Literal["diff_v2"] = "diff_v2"
    changes: tuple[DiffChange, ...] = ()
    patch: PatchText | None = None

    @property
    def type(self) -> Literal["diff"]:
        """The wire type, so the diff engine reads this item as it reads a wire dict."""
        return "diff"


class TerminalRef(RuntimeModel):
    """Tool-call content that points at a terminal."""

    kind: Literal["terminal"] = "terminal"
    terminal_id: str


class UnknownContent(RuntimeModel):
    """Tool-call content of a type not known here (v2 keeps these), as received."""

    kind: Literal["unknown"] = "unknown"
    raw: dict[str, Any]


ToolContent = Annotated[
    ContentItem | DiffV1 | DiffV2 | TerminalRef | UnknownContent, Field(discriminator="kind")
]


# --- session items ----------------------------------------------------------------------


class Location(RuntimeModel):
    """A file a tool call touches, and a line in it."""

    path: str
    line: int | None = None


class ToolCall(RuntimeModel):
    """A tool call, with everything its updates said so far.

    ``kind`` and ``status`` keep the agent's words (v2 may send values not
    known here). ``first_seq`` and ``last_seq`` are the positions of the first
    and the latest message that spoke of it; ``turn`` is the turn it appeared in.
    """

    id: str
    title: str | None = None
    kind: str = "other"
    status: str = "pending"
    content: tuple[ToolContent, ...] = ()
    locations: tuple[Location, ...] = ()
    raw_input: Any = None
    raw_output: Any = None
    meta: dict[str, Any] | None = None
    #: Every ``_meta`` the tool call's messages carried, merged key by key (later wins):
    #: agents spread metadata over several updates, and each update's ``_meta`` replaces
    #: ``meta``.
    meta_seen: dict[str, Any] = Field(default_factory=dict)
    extra: dict[str, Any] = Field(default_factory=dict)
    #: The diffs of the latest content that had any. An update may replace a diff with
    #: other content (claude-agent-acp answers a refused edit with the error text only):
    #: what the edit proposed is still known here.
    diffs_reported: tuple[ToolContent, ...] = ()
    #: The diffs a permission request for it carried (the latest such request's): what the
    #: edit proposed as a whole, when its updates report only a fragment later.
    diffs_proposed: tuple[ToolContent, ...] = ()
    #: Whether a session/update spoke of it (False: only a permission request did so far).
    reported: bool = False
    turn: int = 0
    first_seq: int = 0
    last_seq: int = 0


MessageRole = Literal["user", "agent", "thought"]


class Message(RuntimeModel):
    """A user message, an agent message, or an agent thought: its blocks in order.

    Chunks of plain text that follow each other are one text block. A message
    grows by a chunk at a time, sometimes by hundreds of thousands: its versions
    share one append-only store of chunks (:class:`_Chunks`), each version
    seeing the part of it that had come when it was made, so that a chunk costs
    the same however long the message already is. ``blocks`` and ``text`` are
    joined when read, from where the last reading stopped.
    """

    id: str
    role: MessageRole
    turn: int = 0
    first_seq: int = 0
    last_seq: int = 0
    _store: _Chunks = PrivateAttr(default_factory=lambda: _Chunks())
    _seen: tuple[int, int] = PrivateAttr(default=(0, 0))

    def with_blocks(self, blocks: Iterable[Block], *, append: bool, **changes: Any) -> Message:
        """A new version with ``blocks`` added after its own (``append``) or instead of them."""
        # This runs once per chunk: what model_copy does, without its per-attribute checks.
        private = self.__pydantic_private__ or {}
        store: _Chunks = private.get("_store") or _Chunks()
        if not append:
            store = _Chunks()
        elif store.shape() != private.get("_seen", (0, 0)):
            store = _Chunks.of(self.blocks)  # an older version grows apart: copy
        for block in blocks:
            store.add(block)
        new = object.__new__(Message)
        object.__setattr__(new, "__dict__", {**self.__dict__, **changes})
        object.__setattr__(
            new, "__pydantic_fields_set__", {*self.__pydantic_fields_set__, *changes}
        )
        object.__setattr__(new, "__pydantic_extra__", None)
        object.__setattr__(new, "__pydantic_private__", {"_store": store, "_seen": store.shape()})
        return new

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Message):
            return NotImplemented
        return self.__dict__ == other.__dict__ and self.blocks == other.blocks

    def __hash__(self) -> int:
        return hash((self.id, self.role, self.turn, self.first_seq, self.last_seq))

    @computed_field  # type: ignore[prop-decorator]
    @property
    def blocks(self) -> tuple[Block, ...]:
        """The blocks, each run of plain-text chunks joined into one text block."""
        return self._store.blocks(self._seen)

    @property
    def text(self) -> str:
        """The text of its text blocks, joined."""
        return "".join(block.text or "" for block in self.blocks)


def _plain_text(block: Block) -> bool:
    return block.type == "text" and set(block.data) <= {"type", "text"}


class _TextRun:
    """Plain-text chunks that followed each other: the text joined so far, and parts since."""

    __slots__ = ("joined", "length", "parts")

    def __init__(self) -> None:
        self.joined = ""
        self.parts: list[str] = []
        self.length = 0

    def add(self, text: str) -> None:
        self.parts.append(text)
        self.length += len(text)

    def text(self, length: int) -> str:
        """The run's first ``length`` characters (a version sees the run as it was)."""
        if length > len(self.joined):
            self.joined += "".join(self.parts)  # the parts are let go: the text alone stays
            self.parts.clear()
        return self.joined if length == len(self.joined) else self.joined[:length]


class _Chunks:
    """The blocks of a message as they came: other blocks as they are, text in runs.

    Append-only: only the last entry, when it is a text run, grows. Its shape,
    ``(entries, characters of the last entry)``, says how much a version of the
    message saw.
    """

    __slots__ = ("_entries",)

    def __init__(self) -> None:
        self._entries: list[Block | _TextRun] = []

    @classmethod
    def of(cls, blocks: Iterable[Block]) -> _Chunks:
        store = cls()
        for block in blocks:
            store.add(block)
        return store

    def add(self, block: Block) -> None:
        entries = self._entries
        if _plain_text(block):
            if not entries or not isinstance(entries[-1], _TextRun):
                entries.append(_TextRun())
            run = entries[-1]
            assert isinstance(run, _TextRun)
            run.add(block.text or "")
        else:
            entries.append(block)

    def shape(self) -> tuple[int, int]:
        entries = self._entries
        last = entries[-1] if entries else None
        return len(entries), last.length if isinstance(last, _TextRun) else 0

    def blocks(self, shape: tuple[int, int]) -> tuple[Block, ...]:
        count, last_length = shape
        blocks = []
        for index in range(count):
            entry = self._entries[index]
            if isinstance(entry, Block):
                blocks.append(entry)
                continue
            text = entry.text(last_length if index == count - 1 else entry.length)
            blocks.append(Block(type="text", data={"type": "text", "text": text}))
        return tuple(blocks)


class PlanEntry(RuntimeModel):
    content: str
    priority: str
    status: str


class Plan(RuntimeModel):
    """A plan: its entries, replaced whole by each update."""

    id: str
    entries: tuple[PlanEntry, ...] = ()
    turn: int = 0
    first_seq: int = 0
    last_seq: int = 0


class ConfigChoice(RuntimeModel):
    value: str
    name: str
    description: str | None = None
    group: str | None = None


class ConfigOption(RuntimeModel):
    """A session configuration option (v1 ``id``, v2 ``configId``)."""

    id: str
    name: str
    type: str
    current_value: Any = None
    description: str | None = None
    category: str | None = None
    choices: tuple[ConfigChoice, ...] = ()


class Mode(RuntimeModel):
    id: str
    name: str
    description: str | None = None


class Command(RuntimeModel):
    name: str
    description: str
    input_hint: str | None = None


class Usage(RuntimeModel):
    used: int
    size: int
    cost_amount: float | None = None
    cost_currency: str | None = None


class SessionInfo(RuntimeModel):
    title: str | None = None
    updated_at: str | None = None


TurnStateName = Literal["idle", "running", "requires_action"]


class TurnState(RuntimeModel):
    """Where the agent's foreground work is: running, idle (with why it stopped), or blocked."""

    state: TurnStateName = "idle"
    stop_reason: str | None = None


class Terminal(RuntimeModel):
    """A terminal: an agent-owned one (v2), or one the client ran for the agent (v1
    ``terminal/create``, ``client``): its command, its output bytes and how it ended.

    For a client terminal, ``tool_call_id`` is the tool call that announced it (an
    unfinished ``execute`` tool call of the turn, or the one whose content embeds it),
    and ``refused`` says why the client did not run it, when it did not.
    """

    id: str
    command: str | None = None
    cwd: str | None = None
    output: bytes = b""
    exited: bool = False
    exit_code: int | None = None
    signal: str | None = None
    client: bool = False
    tool_call_id: str | None = None
    refused: str | None = None

    @property
    def text(self) -> str:
        """The output as text; a character split across chunks is whole here."""
        return self.output.decode("utf-8", errors="replace")


class PermissionRequest(RuntimeModel):
    """A permission the agent asked for, and how it was answered (None: not yet)."""

    request_id: str
    tool_call_id: str | None = None
    title: str | None = None
    options: tuple[dict[str, Any], ...] = ()
    outcome: str | None = None
    option_id: str | None = None
    option_kind: str | None = None
    turn: int = 0
    seq: int = 0


class FileEvent(RuntimeModel):
    """What the session showed of a file.

    ``read``: the client's answer to the agent's ``fs/read_text_file``; ``write``:
    the agent's ``fs/write_text_file``; ``found``: the file as the client found it
    on the disk just before it served that write; ``disk_before`` and
    ``disk_after``: what a live client read from the disk itself when an edit tool
    call started (or asked permission) and when it completed; ``checkpoint_before`` and
    ``checkpoint_after``: the texts of a checkpoint's change (:class:`PathChange`), its
    ``tool_call_id`` the tool call's, or ``change:N`` for one no tool call claimed. ``content`` None
    means the file did not exist (unless ``kept`` is False). ``path`` is the file's
    one spelling (:func:`~acp_adapters.runtime.paths.resolved_path`).
    ``tool_call_id`` is the tool call the event belongs to, where there is one.
    """

    op: Literal[
        "read",
        "write",
        "found",
        "disk_before",
        "disk_after",
        "checkpoint_before",
        "checkpoint_after",
    ]
    path: str
    content: str | None
    seq: int
    tool_call_id: str | None = None
    #: False when the session does not know the content: its budget of file contents
    #: (:data:`CONTENT_BUDGET`) was spent (``digest`` then says what it was, so two reads
    #: can still be told apart), or the file could not be read as text (no digest).
    kept: bool = True
    digest: str | None = None


#: How much file content (characters) a session keeps, in all, for true patches: the
#: contents of reads and writes through the client and of the disk reads around edits.
#: Past it the oldest contents no later patch needs are let go (only their digest is kept);
#: the same content read again costs nothing.
CONTENT_BUDGET = 64 * 1024 * 1024


#: The events that say what a file held at their point, looked up by path.
_KNOWN_BY_PATH = ("read", "write", "found")


def content_digest(text: str) -> str:
    """The SHA-256 of a text's UTF-8 bytes (lone surrogates escaped), as hex."""
    return hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()


class FileStore:
    """The file events of a session and what it keeps of their contents, within a budget.

    Indexed by path (reads and writes: what a file held before a position) and by
    tool call (its writes and disk reads), so no question looks at every event.
    A content equal to the last one kept for its path is that same string, charged
    once: reading an unchanged 30 MiB file twenty times keeps it once. Past the
    budget, the oldest contents are let go, from every event that holds them, except
    a path's latest read or write (what its next write is judged against).
    """

    def __init__(self, budget: int = CONTENT_BUDGET) -> None:
        self.budget = budget
        self.events: list[FileEvent] = []
        #: The characters of content kept now.
        self.kept_size = 0
        self._by_path: dict[str, list[int]] = {}
        self._by_call: dict[str, list[int]] = {}
        #: The last content kept for each path, and its number.
        self._last: dict[str, tuple[str, int]] = {}
        # Each content kept (by its number), oldest first, and the positions of the events
        # that hold it.
        self._kept: deque[int] = deque()
        self._holders: dict[int, list[int]] = {}
        self._numbers = itertools.count()

    def add(self, event: FileEvent) -> FileEvent:
        """Store ``event``, its content kept if the budget allows; the event as stored."""
        position = len(self.events)
        text = event.content
        if text is not None:
            same = self._last.get(event.path)
            if same is not None and same[0] == text:
                event = event.model_copy(update={"content": same[0]})
                self._holders[same[1]].append(position)
            elif len(text) > self.budget:
                event = event.model_copy(
                    update={"content": None, "kept": False, "digest": content_digest(text)}
                )
            else:
                number = next(self._numbers)
                self._last[event.path] = (text, number)
                self.kept_size += len(text)
                self._kept.append(number)
                self._holders[number] = [position]
        self.events.append(event)
        if event.op in _KNOWN_BY_PATH:
            self._by_path.setdefault(event.path, []).append(position)
        if event.tool_call_id is not None:
            self._by_call.setdefault(event.tool_call_id, []).append(position)
        self._within_budget()
        return self.events[position]

    def _within_budget(self) -> None:
        """Let go of the oldest contents until the rest fit the budget: first those no path's
        next write is judged against, then, if that is not enough, any."""
        for spare_latest in (True, False):
            protected: list[int] = []
            while self.kept_size > self.budget and self._kept:
                key = self._kept.popleft()
                if spare_latest and any(self._is_latest(p) for p in self._holders[key]):
                    protected.append(key)
                else:
                    self._let_go(key)
            self._kept.extendleft(reversed(protected))
            if self.kept_size <= self.budget:
                return

    def _let_go(self, key: int) -> None:
        """Keep only the digest of one content, in every event that holds it."""
        holders = self._holders.pop(key)
        first = self.events[holders[0]]
        text = first.content
        assert text is not None
        digest = content_digest(text)
        for position in holders:
            self.events[position] = self.events[position].model_copy(
                update={"content": None, "kept": False, "digest": digest}
            )
        if self._last.get(first.path, ("", -1))[1] == key:
            del self._last[first.path]
        self.kept_size -= len(text)

    def _is_latest(self, position: int) -> bool:
        """Whether the event at ``position`` is the latest read or write of its path."""
        event = self.events[position]
        positions = self._by_path.get(event.path) or [-1]
        return event.op in _KNOWN_BY_PATH and positions[-1] == position

    def before(self, path: str, seq: int) -> FileEvent | None:
        """The latest read, write or found content of ``path`` before position ``seq``."""
        positions = self._by_path.get(path, [])
        index = bisect.bisect_left(positions, seq, key=lambda p: self.events[p].seq)
        return self.events[positions[index - 1]] if index else None

    def claim(self, path: str, tool_call_id: str, since: int) -> bool:
        """Give the writes of ``path`` after position ``since`` that belong to no tool call
        (and what was found before each) to ``tool_call_id``; whether there was any.

        An agent may write through the client first and only then tell which tool
        call did it."""
        claimed = False
        for position in reversed(self._by_path.get(path, ())):
            event = self.events[position]
            if event.seq <= since:
                break
            if event.tool_call_id is None and event.op in ("write", "found"):
                self.events[position] = event.model_copy(update={"tool_call_id": tool_call_id})
                self._by_call.setdefault(tool_call_id, []).append(position)
                claimed = True
        if claimed:
            self._by_call[tool_call_id].sort()
        return claimed

    def unowned_writes(self, since: int) -> list[int]:
        """The positions (in :attr:`events`) of the writes after position ``since`` that
        belong to no tool call, in order."""
        found: list[int] = []
        for position in range(len(self.events) - 1, -1, -1):
            event = self.events[position]
            if event.seq <= since:
                break
            if event.op == "write" and event.tool_call_id is None:
                found.append(position)
        return found[::-1]

    def of_call(self, tool_call_id: str, *ops: str) -> tuple[FileEvent, ...]:
        """The events of a tool call, in order, of the kinds ``ops``."""
        return tuple(
            e for e in (self.events[p] for p in self._by_call.get(tool_call_id, ())) if e.op in ops
        )


class FileSide(RuntimeModel):
    """What a workspace checkpoint says one path held: a file (its permission bits, size and
    SHA-256; ``binary`` when it is not UTF-8 text) or a link (its ``target``). ``omitted``
    says why its text is not known: ``too_large``, ``total_cap``, ``unhashed`` (not even
    hashed: judged by its size and times), ``missing``."""

    kind: Literal["file", "link"]
    mode: int
    size: int = 0
    oid: str | None = None
    binary: bool = False
    target: str | None = None
    omitted: str | None = None

    def same(self, other: FileSide | None) -> bool:
        """Whether ``other`` is the same content, kind and mode."""
        if other is None:
            return False
        return (self.kind, self.mode, self.oid, self.size) == (
            other.kind,
            other.mode,
            other.oid,
            other.size,
        )


class PathChange(RuntimeModel):
    """What a workspace checkpoint found at one path: the file before and after (None: not
    there), where it moved from, the tool call it is reported to (None: at a turn's end, no
    tool call claimed it). Its texts are in the session's file store (``before_text``,
    ``after_text``: their positions; None: no text carried)."""

    path: str
    moved_from: str | None = None
    before: FileSide | None = None
    after: FileSide | None = None
    tool_call_id: str | None = None
    checkpoint: str | None = None
    turn: int = 0
    seq: int = 0
    before_text: int | None = None
    after_text: int | None = None


class CheckpointMark(RuntimeModel):
    """A checkpoint of the session's folders: why it was taken, in which turn."""

    id: str
    reason: str
    turn: int = 0
    tool_call_id: str | None = None
    files: int = 0
    notes: tuple[str, ...] = ()


class CheckpointedFile(RuntimeModel):
    """A path a checkpoint reported, as a hook reads it: its sides and their texts
    (``old_text``/``new_text`` None where the side is absent or has no text; ``known``
    False when the session let a text go past its budget)."""

    path: str
    moved_from: str | None = None
    before: FileSide | None = None
    after: FileSide | None = None
    old_text: str | None = None
    new_text: str | None = None
    known: bool = True


class UnknownUpdate(RuntimeModel):
    """An update that could not be understood, kept as received, and why."""

    raw: Any
    reason: str
    seq: int = 0
    turn: int = 0


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
