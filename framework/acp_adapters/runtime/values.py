"""The values of a session's state: what an agent said, one shape whatever its version.

Content blocks and tool-call content, tool calls, messages (chunks appended), plans,
configuration options, modes, commands, usage, session info, the turn state, terminals,
permission requests, what a checkpoint of the session's folders found, and every update
that could not be understood, kept as received.

They are frozen pydantic models: the reducer replaces them, nothing changes them in
place. The session's state that holds them is :mod:`.state`; the file events and their
contents are :mod:`.file_store`.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, computed_field

FrozenModel = TypeVar("FrozenModel", bound=BaseModel)


@cache
def _every_field(model: type[BaseModel]) -> set[str]:
    return set(model.model_fields)


def compact(value: FrozenModel) -> FrozenModel:
    """``value`` (a frozen model), its fields-set made the one set of all its class's fields,
    shared by every value of the class.

    Pydantic gives each model a set of the fields it was given (``model_fields_set``), about
    2 KB for a timeline item or a tool call: more than most values themselves. A projected
    value has every field decided (none is "unset"), and a frozen one never adds to the set
    (``model_copy`` copies it before it updates it), so one shared set says the same. Kept
    this way, a replay of 100,000 file changes peaks about 40% lower (docs/captures.md).
    Only for frozen models that forbid extra fields: nothing adds to the shared set."""
    object.__setattr__(value, "__pydantic_fields_set__", _every_field(type(value)))
    return value


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


# --- checkpoints of the session's folders -----------------------------------------------


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


# --- what could not be understood -------------------------------------------------------


class UnknownUpdate(RuntimeModel):
    """An update that could not be understood, kept as received, and why."""

    raw: Any
    reason: str
    seq: int = 0
    turn: int = 0
