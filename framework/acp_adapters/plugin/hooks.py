"""A typed facade over ``pm.hook``: one method per hook, results checked at the boundary.

A plugin that raises, or returns a value of the wrong type, surfaces as a
:class:`~acp_adapters.errors.PluginError` that names it. Which plugin raised is
read from the traceback (the frame of its hook function); which plugin returned
a bad value is found by asking each implementation again, in call order, which
is safe because projection hooks are pure.
"""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING, Any

import pluggy

from ..errors import PluginError

if TYPE_CHECKING:
    from ..diff.content import DiffPatch
    from ..diff.limits import DiffLimits
    from ..protocol import Notification
    from ..runtime import SessionView, ToolCall, ToolContent
    from ..timeline.items import FileChangeItem, TimelineItem
    from .extensions import ExtensionAnswer
    from .permissions import (
        ActionDecision,
        ClientAction,
        PermissionDecision,
        PermissionQuery,
        Policy,
    )
    from .providers import Provider

# The types each hook's answer is checked against are imported by the method that checks:
# a plugin manager is built (``acp-adapters providers``) without loading the models.


def _content_types() -> tuple[type, ...]:
    """What tool-call content is made of: what ``normalize_diff_content`` may answer."""
    from ..runtime import ContentItem, DiffV1, DiffV2, TerminalRef, UnknownContent

    return (ContentItem, DiffV1, DiffV2, TerminalRef, UnknownContent)


def __getattr__(name: str) -> Any:
    if name == "CONTENT_TYPES":  # the constant this module had
        return _content_types()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Hooks:
    """Call the hooks of one plugin manager."""

    def __init__(self, pm: pluggy.PluginManager) -> None:
        self.pm = pm

    def project_tool_call(
        self, provider: Provider, tool_call: ToolCall, session: SessionView
    ) -> TimelineItem:
        """A tool call's item: one of the tool item kinds (a file_change, a command, ...)."""
        from ..timeline.items import TOOL_ITEM_TYPES

        result: TimelineItem = self._first(
            "project_tool_call",
            TOOL_ITEM_TYPES,
            provider.id,
            provider=provider,
            tool_call=tool_call,
            session=session,
        )
        return result

    def project_file_change(
        self, provider: Provider, tool_call: ToolCall, session: SessionView
    ) -> FileChangeItem:
        from ..timeline.items import FileChangeItem

        result: FileChangeItem = self._first(
            "project_file_change",
            (FileChangeItem,),
            provider.id,
            provider=provider,
            tool_call=tool_call,
            session=session,
        )
        return result

    def normalize_diff_content(
        self,
        provider: Provider,
        tool_call: ToolCall,
        content: tuple[ToolContent, ...],
        session: SessionView,
    ) -> tuple[ToolContent, ...]:
        """The content to build a file_change from: a tuple of tool content items."""
        kwargs: dict[str, Any] = {
            "provider": provider,
            "tool_call": tool_call,
            "content": content,
            "session": session,
        }
        result: tuple[ToolContent, ...] = self._first(
            "normalize_diff_content", (tuple,), provider.id, **kwargs
        )
        types = _content_types()
        for item in result:
            if not isinstance(item, types):
                plugin = _answering(self.pm.hook.normalize_diff_content, kwargs)
                raise PluginError(
                    f"plugin {plugin!r} returned {type(item).__name__} in "
                    "normalize_diff_content, expected tool content (DiffV1, DiffV2, ...)",
                    hook="normalize_diff_content",
                    plugin=plugin,
                    provider_id=provider.id,
                )
        return result

    def project_diff_patch(
        self, provider: Provider, content: tuple[ToolContent, ...], limits: DiffLimits
    ) -> DiffPatch:
        """The patch and, where there is none, why; a plugin's plain ``str`` is a patch."""
        from ..diff.content import DiffPatch

        result: DiffPatch | str = self._first(
            "project_diff_patch",
            (DiffPatch, str),
            provider.id,
            provider=provider,
            content=content,
            limits=limits,
        )
        return DiffPatch(result) if isinstance(result, str) else result

    def decide_permission(
        self, provider: Provider, request: PermissionQuery, policy: Policy
    ) -> PermissionDecision:
        from .permissions import PermissionDecision

        result: PermissionDecision = self._first(
            "decide_permission",
            (PermissionDecision,),
            provider.id,
            provider=provider,
            request=request,
            policy=policy,
        )
        return result

    def decide_client_action(
        self, provider: Provider, action: ClientAction, policy: Policy
    ) -> ActionDecision:
        from .permissions import ActionDecision

        result: ActionDecision = self._first(
            "decide_client_action",
            (ActionDecision,),
            provider.id,
            provider=provider,
            action=action,
            policy=policy,
        )
        return result

    def answer_extension_request(
        self, provider: Provider, method: str, params: Any, session: SessionView
    ) -> ExtensionAnswer:
        """The answer to an agent's extension request (the built-in: method not found)."""
        from .extensions import ExtensionAnswer

        result: ExtensionAnswer = self._first(
            "answer_extension_request",
            (ExtensionAnswer,),
            provider.id,
            provider=provider,
            method=method,
            params=params,
            session=session,
        )
        return result

    def identify_agent(self, initialize_result: dict[str, Any]) -> str | None:
        result: str | None = self._first(
            "identify_agent", (str,), None, required=False, initialize_result=initialize_result
        )
        return result

    def render_item_text(self, item: TimelineItem, provider: Provider | None = None) -> str:
        """The item as text for another agent (``provider``: the plugins that answer for
        it, then the built-in rendering)."""
        result: str = self._first(
            "render_item_text",
            (str,),
            provider.id if provider is not None else None,
            item=item,
            provider=provider,
        )
        return result

    def on_session_update(
        self, provider: Provider, update: Notification, session: SessionView
    ) -> None:
        caller = self.pm.hook.on_session_update
        if not caller.get_hookimpls():
            return  # once per update: a flood costs nothing here when no plugin listens
        try:
            caller(provider=provider, update=update, session=session)
        except Exception as exc:
            plugin = _culprit(exc.__traceback__, caller.get_hookimpls())
            raise PluginError(
                f"plugin {plugin!r} failed in on_session_update: {exc}",
                hook="on_session_update",
                plugin=plugin,
                provider_id=provider.id,
            ) from exc

    def _first(
        self,
        name: str,
        types: tuple[type, ...],
        provider_id: str | None,
        *,
        required: bool = True,
        **kwargs: Any,
    ) -> Any:
        caller = getattr(self.pm.hook, name)
        try:
            result = caller(**kwargs)
        except Exception as exc:
            plugin = _culprit(exc.__traceback__, caller.get_hookimpls())
            raise PluginError(
                f"plugin {plugin!r} failed in {name}: {exc}",
                hook=name,
                plugin=plugin,
                provider_id=provider_id,
            ) from exc
        if result is None:
            if required:
                raise PluginError(
                    f"no plugin answered {name} (is the built-in plugin registered?)",
                    hook=name,
                    plugin=None,
                    provider_id=provider_id,
                )
            return None
        if not isinstance(result, types):
            plugin = _answering(caller, kwargs)
            expected = " or ".join(t.__name__ for t in types)
            raise PluginError(
                f"plugin {plugin!r} returned {type(result).__name__} from {name}, "
                f"expected {expected}",
                hook=name,
                plugin=plugin,
                provider_id=provider_id,
            )
        return result


def _culprit(trace: TracebackType | None, impls: list[pluggy.HookImpl]) -> str | None:
    """The plugin whose hook function is on the traceback, the innermost one."""
    codes = {getattr(impl.function, "__code__", None): impl.plugin_name for impl in impls}
    found = None
    while trace is not None:
        found = codes.get(trace.tb_frame.f_code, found)
        trace = trace.tb_next
    return found


def _answering(caller: Any, kwargs: dict[str, Any]) -> str | None:
    """The plugin whose implementation gives the first non-None result, in call order."""
    for impl in reversed(caller.get_hookimpls()):
        if impl.hookwrapper or impl.wrapper:
            continue
        if impl.function(**{arg: kwargs[arg] for arg in impl.argnames}) is not None:
            return str(impl.plugin_name)
    return None
