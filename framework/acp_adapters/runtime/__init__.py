"""The version-neutral runtime model of a session, and the reducer that builds it."""

from .file_store import CONTENT_BUDGET, FileEvent
from .paths import tool_call_paths
from .reducer import TERMINAL_STATUSES, Change, Reducer
from .state import SessionState, SessionView
from .values import (
    Block,
    CheckpointedFile,
    CheckpointMark,
    ContentItem,
    DiffChange,
    DiffV1,
    DiffV2,
    FileSide,
    Location,
    Message,
    PatchText,
    PathChange,
    PermissionRequest,
    Plan,
    TerminalRef,
    ToolCall,
    ToolContent,
    TurnState,
    UnknownContent,
    UnknownUpdate,
)

__all__ = [
    "CONTENT_BUDGET",
    "TERMINAL_STATUSES",
    "Block",
    "Change",
    "CheckpointMark",
    "CheckpointedFile",
    "ContentItem",
    "DiffChange",
    "DiffV1",
    "DiffV2",
    "FileEvent",
    "FileSide",
    "Location",
    "Message",
    "PatchText",
    "PathChange",
    "PermissionRequest",
    "Plan",
    "Reducer",
    "SessionState",
    "SessionView",
    "TerminalRef",
    "ToolCall",
    "ToolContent",
    "TurnState",
    "UnknownContent",
    "UnknownUpdate",
    "tool_call_paths",
]
