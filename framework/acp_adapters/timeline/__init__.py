"""Provider-neutral timeline items and the timeline that holds them.

The projection that builds them (``projector``) and the capture reader
(``capture``) sit above the plugin layer; import them from their modules.
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
    ItemBase,
    ItemStatus,
    NoticeItem,
    PatchSource,
    PlanItem,
    PlanStep,
    ReasoningItem,
    SearchItem,
    TimelineItem,
    ToolItem,
    UserMessageItem,
)
from .timeline import Timeline, timeline_json_schema

__all__ = [
    "ITEM_TYPES",
    "ApprovalRequestItem",
    "AssistantMessageItem",
    "CommandExecutionItem",
    "ErrorItem",
    "FetchItem",
    "FileChangeItem",
    "FileReadItem",
    "ItemBase",
    "ItemStatus",
    "NoticeItem",
    "PatchSource",
    "PlanItem",
    "PlanStep",
    "ReasoningItem",
    "SearchItem",
    "Timeline",
    "TimelineItem",
    "ToolItem",
    "UserMessageItem",
    "timeline_json_schema",
]
