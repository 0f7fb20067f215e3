"""acp-adapters: drive coding agents that speak the Agent Client Protocol.

The public API. Plugins write ``from acp_adapters import hookimpl``. Names are
imported when first used: ``python -m acp_adapters.replay`` (a subprocess that
plays an agent) starts without loading the rest of the package.

* live sessions: ``connect`` (a ``Session``: ``prompt``, ``stream_prompt``, ``cancel``, ...) and
  its options, ``Limits``, ``Timeouts`` and ``Persistence``;
  ``Checkpointing`` and ``CheckpointLimits`` (how a session checkpoints its folders);
* diffs: ``diff_patch`` (the default diff hook), ``file_patches``, ``unified_diff``;
* timelines: ``project_capture`` and the item classes;
* plugins: ``hookimpl``, ``for_provider`` (a hook of one provider), ``get_plugin_manager``,
  ``Hooks``, ``Provider``, ``LaunchSpec``, ``ProviderRegistrar`` (what ``register_providers``
  is handed);
* helpers for projections: ``tool_status``, ``count_changes``, ``FileContents``,
  ``file_contents_from_fs``, ``file_change_from_contents``, ``with_proposed_diffs``,
  ``command_item``, ``DiffPatch`` and ``diff_patch_of`` (what ``project_diff_patch`` answers).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .client import (
        Agent,
        AgentNotFoundError,
        AuthenticationRequiredError,
        AuthMethod,
        ItemChange,
        Limits,
        LoginCommand,
        McpServer,
        Persistence,
        ProtocolVersionError,
        Session,
        SessionChange,
        SessionPage,
        Timeouts,
        Turn,
        TurnStream,
        connect,
        mcp_servers_from_config,
    )
    from .client.checkpointing import Checkpointing
    from .diff import (
        DEFAULT_MAX_EDITS,
        FilePatch,
        OmittedReason,
        diff_patch,
        file_patches,
        unified_diff,
    )
    from .diff.content import DiffPatch
    from .diff.limits import DiffLimits
    from .errors import (
        AcpAdaptersError,
        CapabilityError,
        CaptureError,
        CheckpointError,
        DuplicateProviderError,
        McpServerError,
        PluginError,
        PluginLoadError,
        PromptCancelled,
        PromptCapabilityError,
        StartTimeoutError,
        UnknownProviderError,
    )
    from .plugin.hooks import Hooks
    from .plugin.hookspecs import for_provider, hookimpl
    from .plugin.manager import get_plugin_manager
    from .plugin.permissions import (
        ActionDecision,
        ClientAction,
        PermissionDecision,
        PermissionQuery,
        Policy,
    )
    from .plugin.providers import (
        GENERIC_PROVIDER_ID,
        LaunchSpec,
        Provider,
        ProviderRegistrar,
        ProviderRegistry,
    )
    from .plugin.rules import PermissionRule, RulesError, load_rules, rules_from_config
    from .projection.files import (
        FileContents,
        count_changes,
        diff_patch_of,
        file_change_from_contents,
        file_contents_from_fs,
        with_proposed_diffs,
    )
    from .projection.tools import command_item, tool_status
    from .projection.traffic import capture_sessions, project_capture
    from .runtime import DiffChange, DiffV1, DiffV2, SessionView, ToolCall, ToolContent
    from .store import Store, StoreError, Thread
    from .store.open import open_store
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
    from .workspace.scan import CheckpointLimits

#: Each public name and the module that defines it.
_EXPORTS = {
    "DEFAULT_MAX_EDITS": ".diff",
    "GENERIC_PROVIDER_ID": ".plugin.providers",
    "AcpAdaptersError": ".errors",
    "CheckpointError": ".errors",
    "Checkpointing": ".client.checkpointing",
    "CheckpointLimits": ".workspace.scan",
    "AgentNotFoundError": ".errors",
    "StartTimeoutError": ".errors",
    "ApprovalRequestItem": ".timeline",
    "AssistantMessageItem": ".timeline",
    "AuthenticationRequiredError": ".errors",
    "CaptureError": ".errors",
    "CommandExecutionItem": ".timeline",
    "DiffLimits": ".diff.limits",
    "DiffPatch": ".diff.content",
    "DiffChange": ".runtime",
    "DiffV1": ".runtime",
    "DiffV2": ".runtime",
    "DuplicateProviderError": ".errors",
    "ErrorItem": ".timeline",
    "FetchItem": ".timeline",
    "FileChangeItem": ".timeline",
    "FileContents": ".projection",
    "FilePatch": ".diff",
    "FileReadItem": ".timeline",
    "Hooks": ".plugin.hooks",
    "Agent": ".client",
    "AuthMethod": ".client",
    "CapabilityError": ".errors",
    "LoginCommand": ".client",
    "PromptCancelled": ".errors",
    "SessionPage": ".client",
    "ItemChange": ".client",
    "McpServer": ".client",
    "McpServerError": ".errors",
    "PromptCapabilityError": ".errors",
    "LaunchSpec": ".plugin.providers",
    "NoticeItem": ".timeline",
    "OmittedReason": ".diff",
    "ActionDecision": ".plugin.permissions",
    "ClientAction": ".plugin.permissions",
    "PermissionDecision": ".plugin.permissions",
    "PermissionQuery": ".plugin.permissions",
    "PermissionRule": ".plugin.rules",
    "PlanItem": ".timeline",
    "PluginError": ".errors",
    "PluginLoadError": ".errors",
    "Policy": ".plugin.permissions",
    "ProtocolVersionError": ".errors",
    "Provider": ".plugin.providers",
    "ProviderRegistrar": ".plugin.providers",
    "ProviderRegistry": ".plugin.providers",
    "RulesError": ".plugin.rules",
    "ReasoningItem": ".timeline",
    "SearchItem": ".timeline",
    "Session": ".client",
    "Limits": ".client",
    "Persistence": ".client",
    "Timeouts": ".client",
    "Store": ".store",
    "StoreError": ".store",
    "Thread": ".store",
    "open_store": ".store.open",
    "SessionChange": ".client",
    "SessionView": ".runtime",
    "Timeline": ".timeline",
    "TimelineItem": ".timeline",
    "ToolCall": ".runtime",
    "ToolContent": ".runtime",
    "ToolItem": ".timeline",
    "Turn": ".client",
    "TurnStream": ".client",
    "UnknownProviderError": ".errors",
    "UserMessageItem": ".timeline",
    "connect": ".client",
    "mcp_servers_from_config": ".client",
    "command_item": ".projection",
    "count_changes": ".projection",
    "diff_patch": ".diff",
    "diff_patch_of": ".projection",
    "file_change_from_contents": ".projection",
    "file_contents_from_fs": ".projection",
    "file_patches": ".diff",
    "get_plugin_manager": ".plugin.manager",
    "hookimpl": ".plugin.hookspecs",
    "for_provider": ".plugin.hookspecs",
    "load_rules": ".plugin.rules",
    "project_capture": ".projection.traffic",
    "capture_sessions": ".projection.traffic",
    "rules_from_config": ".plugin.rules",
    "timeline_json_schema": ".timeline",
    "tool_status": ".projection",
    "with_proposed_diffs": ".projection",
    "unified_diff": ".diff",
}

__all__ = [
    "DEFAULT_MAX_EDITS",
    "GENERIC_PROVIDER_ID",
    "AcpAdaptersError",
    "ActionDecision",
    "Agent",
    "AgentNotFoundError",
    "ApprovalRequestItem",
    "AssistantMessageItem",
    "AuthMethod",
    "AuthenticationRequiredError",
    "CapabilityError",
    "CaptureError",
    "CheckpointError",
    "CheckpointLimits",
    "Checkpointing",
    "ClientAction",
    "CommandExecutionItem",
    "DiffChange",
    "DiffLimits",
    "DiffPatch",
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
    "Limits",
    "LoginCommand",
    "McpServer",
    "McpServerError",
    "NoticeItem",
    "OmittedReason",
    "PermissionDecision",
    "PermissionQuery",
    "PermissionRule",
    "Persistence",
    "PlanItem",
    "PluginError",
    "PluginLoadError",
    "Policy",
    "PromptCancelled",
    "PromptCapabilityError",
    "ProtocolVersionError",
    "Provider",
    "ProviderRegistrar",
    "ProviderRegistry",
    "ReasoningItem",
    "RulesError",
    "SearchItem",
    "Session",
    "SessionChange",
    "SessionPage",
    "SessionView",
    "StartTimeoutError",
    "Store",
    "StoreError",
    "Thread",
    "Timeline",
    "TimelineItem",
    "Timeouts",
    "ToolCall",
    "ToolContent",
    "ToolItem",
    "Turn",
    "TurnStream",
    "UnknownProviderError",
    "UserMessageItem",
    "capture_sessions",
    "command_item",
    "connect",
    "count_changes",
    "diff_patch",
    "diff_patch_of",
    "file_change_from_contents",
    "file_contents_from_fs",
    "file_patches",
    "for_provider",
    "get_plugin_manager",
    "hookimpl",
    "load_rules",
    "mcp_servers_from_config",
    "open_store",
    "project_capture",
    "rules_from_config",
    "timeline_json_schema",
    "tool_status",
    "unified_diff",
    "with_proposed_diffs",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # the next use is a plain lookup
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
