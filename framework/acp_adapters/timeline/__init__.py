"""Provider-neutral timeline items: plain data, the JSON Schema they follow, and the
``Timeline`` that holds them in order.

What builds them (the projector, the traffic reader) is in :mod:`acp_adapters.projection`.
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
from .timeline import Timeline, TimelineProvider, TimelineState

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
    "Timeline",
    "TimelineItem",
    "TimelineProvider",
    "TimelineState",
    "ToolItem",
    "UserMessageItem",
    "timeline_json_schema",
]
