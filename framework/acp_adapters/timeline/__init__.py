"""Provider-neutral timeline items: plain data, and the JSON Schema they follow.

What builds them (the projector, the traffic reader) and the ``Timeline`` that holds
them are in :mod:`acp_adapters.projection`.
"""

from .items import (
    ITEM_TYPES,
    ApprovalRequestItem,
    AssistantMessageItem,
    CommandExecutionItem,
    ErrorItem,
    FetchItem,
    FileChangeItem,
    FileReadItem,
    FileSides,
    FileVersion,
    ItemBase,
    ItemStatus,
    NoticeItem,
    PatchOmittedReason,
    PatchSource,
    PlanItem,
    PlanStep,
    ReasoningItem,
    SearchItem,
    TimelineItem,
    ToolItem,
    UserMessageItem,
)
from .schema import timeline_json_schema

__all__ = [
    "ITEM_TYPES",
    "ApprovalRequestItem",
    "AssistantMessageItem",
    "CommandExecutionItem",
    "ErrorItem",
    "FetchItem",
    "FileChangeItem",
    "FileReadItem",
    "FileSides",
    "FileVersion",
    "ItemBase",
    "ItemStatus",
    "NoticeItem",
    "PatchOmittedReason",
    "PatchSource",
    "PlanItem",
    "PlanStep",
    "ReasoningItem",
    "SearchItem",
    "TimelineItem",
    "ToolItem",
    "UserMessageItem",
    "timeline_json_schema",
]
