"""The built-in projection of tool calls: each kind of tool call its item; edits go to ``files``.

Registered last, like every built-in plugin (``trylast``): a provider plugin that returns
an item for its own provider overrides it. It also registers the generic provider, the
one an agent no plugin claims gets.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

from ..plugin.hooks import Hooks
from ..plugin.hookspecs import hookimpl
from ..plugin.providers import GENERIC_PROVIDER_ID, Provider, ProviderRegistrar

if TYPE_CHECKING:
    from ..runtime import SessionView, ToolCall
    from ..timeline.items import TimelineItem

# The projection and the models are imported by the hooks that project: the plugin manager
# is built (``acp-adapters providers``) without them.


def is_file_change(tool_call: ToolCall, session: SessionView) -> bool:
    """An edit kind, any diff in its content, or a file written through the client for it."""
    from ..plugin.permissions import EDIT_KINDS

    return (
        tool_call.kind in EDIT_KINDS
        or bool(tool_call.diffs_reported)
        or bool(session.writes_of(tool_call.id))
    )


class ToolItems:
    """The built-in ``project_tool_call`` and the generic provider, bound to their manager."""

    def __init__(self, pm: pluggy.PluginManager) -> None:
        self.hooks = Hooks(pm)

    @hookimpl(trylast=True)
    def register_providers(self, register: ProviderRegistrar) -> None:
        register(
            Provider(
                id=GENERIC_PROVIDER_ID,
                name="ACP agent",
                description="Any agent that speaks ACP, with the built-in behaviour only.",
            )
        )

    @hookimpl(trylast=True)
    def project_tool_call(
        self, provider: Provider, tool_call: ToolCall, session: SessionView
    ) -> TimelineItem:
        from ..projection import command_item, content_text, tool_status
        from ..runtime.paths import tool_call_paths
        from ..timeline.items import FetchItem, FileReadItem, SearchItem, ToolItem

        if is_file_change(tool_call, session):
            return self.hooks.project_file_change(provider, tool_call, session)
        raw = tool_call.raw_input if isinstance(tool_call.raw_input, dict) else {}
        common: dict[str, Any] = {
            "status": tool_status(tool_call, session),
            "title": tool_call.title,
            "tool_kind": tool_call.kind,
        }
        if tool_call.kind == "execute":
            return command_item(tool_call, session, **common)
        if tool_call.kind == "read":
            return FileReadItem(paths=tuple(tool_call_paths(tool_call)), **common)
        if tool_call.kind == "search":
            query = next(
                (raw[k] for k in ("query", "pattern", "regex") if isinstance(raw.get(k), str)), None
            )
            return SearchItem(query=query, paths=tuple(tool_call_paths(tool_call)), **common)
        if tool_call.kind == "fetch":
            url = raw.get("url") if isinstance(raw.get("url"), str) else None
            return FetchItem(url=url, **common)
        return ToolItem(
            input=tool_call.raw_input,
            output=tool_call.raw_output,
            text=content_text(tool_call.content),
            **common,
        )


def plugin(pm: pluggy.PluginManager) -> ToolItems:
    """The built-in tool items for one plugin manager."""
    return ToolItems(pm)
