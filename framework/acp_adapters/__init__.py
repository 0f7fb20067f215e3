"""acp-adapters: drive coding agents that speak the Agent Client Protocol.

The public API. Plugins write ``from acp_adapters import hookimpl``.

* live sessions: ``connect`` (a ``Session``: ``prompt``, ``stream_prompt``, ``cancel``, ...);
* diffs: ``diff_patch`` (the default diff hook), ``file_patches``, ``unified_diff``;
* timelines: ``project_capture`` and the item classes;
* plugins: ``hookimpl``, ``get_plugin_manager``, ``Hooks``, ``Provider``, ``LaunchSpec``;
* helpers for projections: ``tool_status``, ``count_changes``, ``FileContents``,
  ``file_contents_from_fs``, ``file_change_from_contents``.
"""

from .client import (
    AgentNotFoundError,
    AuthenticationRequiredError,
    ItemChange,
    ProtocolVersionError,
    Session,
    Turn,
    TurnStream,
    connect,
)
from .diff import (
    DEFAULT_MAX_EDITS,
    FilePatch,
    OmittedReason,
    diff_patch,
    file_patches,
    unified_diff,
)
from .diff.limits import DiffLimits
from .errors import (
    AcpAdaptersError,
    CaptureError,
    DuplicateProviderError,
    PluginError,
    PluginLoadError,
    UnknownProviderError,
)
from .hooks import Hooks
from .hookspecs import hookimpl
from .permissions import PermissionDecision, PermissionQuery, Policy
from .plugins import get_plugin_manager
from .projection import (
    FileContents,
    count_changes,
    file_change_from_contents,
    file_contents_from_fs,
    tool_status,
)
from .providers import GENERIC_PROVIDER_ID, LaunchSpec, Provider, ProviderRegistry
from .runtime import DiffV1, DiffV2, SessionView, ToolCall
from .timeline import (
    ApprovalRequestItem,
    AssistantMessageItem,
    CommandExecutionItem,
    ErrorItem,
    FetchItem,
    FileChangeItem,
    FileReadItem,
    NoticeItem,
    PlanItem,
    ReasoningItem,
    SearchItem,
    Timeline,
    TimelineItem,
    ToolItem,
    UserMessageItem,
    timeline_json_schema,
)
from .timeline.capture import project_capture

__all__ = [
    "DEFAULT_MAX_EDITS",
    "GENERIC_PROVIDER_ID",
    "AcpAdaptersError",
    "AgentNotFoundError",
    "ApprovalRequestItem",
    "AssistantMessageItem",
    "AuthenticationRequiredError",
    "CaptureError",
    "CommandExecutionItem",
    "DiffLimits",
    "DiffV1",
    "DiffV2",
    "DuplicateProviderError",
    "ErrorItem",
    "FetchItem",
    "FileChangeItem",
    "FileContents",
    "FilePatch",
    "FileReadItem",
    "Hooks",
    "ItemChange",
    "LaunchSpec",
    "NoticeItem",
    "OmittedReason",
    "PermissionDecision",
    "PermissionQuery",
    "PlanItem",
    "PluginError",
    "PluginLoadError",
    "Policy",
    "ProtocolVersionError",
    "Provider",
    "ProviderRegistry",
    "ReasoningItem",
    "SearchItem",
    "Session",
    "SessionView",
    "Timeline",
    "TimelineItem",
    "ToolCall",
    "ToolItem",
    "Turn",
    "TurnStream",
    "UnknownProviderError",
    "UserMessageItem",
    "connect",
    "count_changes",
    "diff_patch",
    "file_change_from_contents",
    "file_contents_from_fs",
    "file_patches",
    "get_plugin_manager",
    "hookimpl",
    "project_capture",
    "timeline_json_schema",
    "tool_status",
    "unified_diff",
]
