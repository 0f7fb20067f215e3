"""Timeline items: what happened in a session, the same for every provider.

A discriminated union on ``kind``. Every item has an ``id`` (stable across
updates), its ``session_id`` and ``turn``, an ``ordinal`` (the order items
first appeared in; strictly increasing), a ``status``, ``created_at`` and
``updated_at`` (seconds: from the session's start for a capture, wall-clock
for a live session), where a tool call made it, ``tool_call_id``, and
``replayed``: whether it is history the agent replayed as the session was loaded.

Hooks build items without the host's bookkeeping: the projection sets
``id``, ``session_id``, ``turn``, ``ordinal``, the timestamps and
``tool_call_id`` on whatever item a hook returns.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

ItemStatus = Literal["pending", "running", "waiting", "completed", "failed", "cancelled"]

#: How a file_change's patch was obtained: from the workspace's checkpoints (the files as
#: they were before and after, whoever wrote them), as the agent reported the edit, from
#: the client's file-system traffic (the old content it read, the new content the
#: agent wrote), from the disk (a live client read the files around the
#: edit), or from provider metadata.
PatchSource = Literal[
    "checkpoint", "agent", "client_fs", "disk", "permission", "placed", "provider_meta"
]
#: Why a file_change has no patch text (or, beside a patch, why one file's is left out):
#: ``capped`` (the rewrite cap stopped the edit search), ``unchanged`` (no line changed: a
#: move, a mode changed, or nothing), ``no_diff`` (the agent reported no diff content),
#: ``binary`` (a file that is not text: named by its hash), ``too_large`` (a file over the
#: checkpoint's caps: recorded by size and hash only), ``not_kept`` (its text was let go
#: past the session's budget, or is not in the checkpoint store).
PatchOmittedReason = Literal["capped", "unchanged", "no_diff", "binary", "too_large", "not_kept"]


class ItemBase(BaseModel):
    """Fields every item has."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = ""
    session_id: str | None = None
    turn: int = 0
    ordinal: int = 0
    status: ItemStatus = "completed"
    created_at: float | None = None
    updated_at: float | None = None
    tool_call_id: str | None = None
    #: Part of the history the agent replayed as the session was loaded, not of a live turn.
    replayed: bool = False


class UserMessageItem(ItemBase):
    """What the user said: a prompt, or a user message the agent reported."""

    kind: Literal["user_message"] = "user_message"
    text: str = ""
    blocks: tuple[dict[str, Any], ...] = ()


class AssistantMessageItem(ItemBase):
    """What the agent said."""

    kind: Literal["assistant_message"] = "assistant_message"
    text: str = ""
    blocks: tuple[dict[str, Any], ...] = ()


class ReasoningItem(ItemBase):
    """The agent's thinking, as it shared it."""

    kind: Literal["reasoning"] = "reasoning"
    text: str = ""


class PlanStep(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    content: str
    priority: str
    status: str


class PlanItem(ItemBase):
    """A plan and the state of its steps."""

    kind: Literal["plan"] = "plan"
    plan_id: str = ""
    entries: tuple[PlanStep, ...] = ()


class ToolItemBase(ItemBase):
    """Fields of the items tool calls make."""

    title: str | None = None
    tool_kind: str = "other"


class FileVersion(BaseModel):
    """One side of a file as a workspace checkpoint recorded it: a file (``mode`` as git
    writes it, ``100644``; its SHA-256; ``binary`` when it is not UTF-8 text) or a link
    (``120000``, its ``target``). ``omitted`` says why its text is not known:
    ``too_large``, ``total_cap``, ``unhashed`` (not hashed: judged by size and times),
    ``missing``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["file", "link"]
    mode: str
    size: int = 0
    sha256: str | None = None
    binary: bool = False
    target: str | None = None
    omitted: str | None = None


class FileSides(BaseModel):
    """A path before and after, as the checkpoints recorded it (None: not there)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    before: FileVersion | None = None
    after: FileVersion | None = None


class FileChangeItem(ToolItemBase):
    """Files an edit changed, with the unified patch.

    ``operations`` maps each path to what happened to it (``add``,
    ``modify``, ``delete``, ``move``, ``copy``, or a v2 operation not known
    here); ``moved_from`` maps a moved or copied path to where it came from.
    ``diff_str`` is the patch, or None with ``diff_omitted_reason``
    (:data:`PatchOmittedReason`). Beside a patch, ``diff_omitted_reason`` says why one
    file's is left out (``capped``, ``binary``, ``too_large``, ``not_kept``).
    ``additions`` and ``deletions`` count the patch's ``+`` and ``-`` lines.
    ``checkpoint`` holds, where the patch comes from the workspace's checkpoints, what
    each path was before and after (mode, hash, link target). ``tool_kind``
    ``unattributed``: a change no tool call claimed, found at its turn's end.
    """

    kind: Literal["file_change"] = "file_change"
    paths: tuple[str, ...] = ()
    operations: dict[str, str] = Field(default_factory=dict)
    moved_from: dict[str, str] = Field(default_factory=dict)
    diff_str: str | None = None
    diff_omitted_reason: PatchOmittedReason | None = None
    additions: int = 0
    deletions: int = 0
    patch_source: PatchSource | None = None
    #: Why the patch is what it is, where that needs saying (an agent's fragment that
    #: could not be placed in the file, so the agent's own patch is kept).
    patch_note: str | None = None
    checkpoint: dict[str, FileSides] = Field(default_factory=dict)


class CommandExecutionItem(ToolItemBase):
    """A shell command: what ran, where, its output and exit code where known."""

    kind: Literal["command_execution"] = "command_execution"
    command: str | None = None
    cwd: str | None = None
    output: str | None = None
    exit_code: int | None = None
    terminal_id: str | None = None
    #: The command line the client ran for it, as it ran (where the client ran it).
    client_command: str | None = None
    #: Why the client refused to run it (its policy, or the application), if it did.
    refused: str | None = None


class FileReadItem(ToolItemBase):
    """Files the agent read."""

    kind: Literal["file_read"] = "file_read"
    paths: tuple[str, ...] = ()


class SearchItem(ToolItemBase):
    """A search the agent ran."""

    kind: Literal["search"] = "search"
    query: str | None = None
    paths: tuple[str, ...] = ()


class FetchItem(ToolItemBase):
    """Something the agent fetched."""

    kind: Literal["fetch"] = "fetch"
    url: str | None = None


class ToolItem(ToolItemBase):
    """Any other tool call, MCP tools included: its input and output as sent."""

    kind: Literal["tool"] = "tool"
    input: Any = None
    output: Any = None
    text: str | None = None


class ApprovalRequestItem(ItemBase):
    """A permission the agent asked for, and the answer once there is one."""

    kind: Literal["approval_request"] = "approval_request"
    request_id: str = ""
    title: str | None = None
    options: tuple[dict[str, Any], ...] = ()
    outcome: str | None = None
    option_id: str | None = None
    option_kind: str | None = None


class NoticeItem(ItemBase):
    """Something the agent said outside the protocol's known updates (kept as sent)."""

    kind: Literal["notice"] = "notice"
    title: str | None = None
    text: str | None = None
    severity: str | None = None
    raw: Any = None


class ErrorItem(ItemBase):
    """A failure: a prompt the agent refused, or an answer that could not be understood."""

    kind: Literal["error"] = "error"
    message: str = ""
    code: int | None = None
    data: Any = None


TimelineItem = Annotated[
    UserMessageItem
    | AssistantMessageItem
    | ReasoningItem
    | PlanItem
    | FileChangeItem
    | CommandExecutionItem
    | FileReadItem
    | SearchItem
    | FetchItem
    | ToolItem
    | ApprovalRequestItem
    | NoticeItem
    | ErrorItem,
    Field(discriminator="kind"),
]

#: Every item class, for ``isinstance`` checks of what hooks return.
ITEM_TYPES: tuple[type[ItemBase], ...] = (
    UserMessageItem,
    AssistantMessageItem,
    ReasoningItem,
    PlanItem,
    FileChangeItem,
    CommandExecutionItem,
    FileReadItem,
    SearchItem,
    FetchItem,
    ToolItem,
    ApprovalRequestItem,
    NoticeItem,
    ErrorItem,
)

#: Items a tool call becomes.
TOOL_ITEM_TYPES: tuple[type[ToolItemBase], ...] = (
    FileChangeItem,
    CommandExecutionItem,
    FileReadItem,
    SearchItem,
    FetchItem,
    ToolItem,
)
