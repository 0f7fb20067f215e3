"""Every hook of acp-adapters.

Three shapes only:

* ``register_*`` is collected from every plugin, which calls the callback it is given;
* ``normalize_*``, ``project_*``, ``decide_*`` and ``render_*`` stop at the first
  result that is not None: return None for providers you do not own, and the
  built-in plugin, which runs last, answers;
* ``on_*`` notifies every plugin; what it returns is ignored.

Hooks are synchronous. Their inputs are frozen (tool calls, items, providers)
or read-only (the session view): return new objects, never change what you got.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

import pluggy

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
    from .providers import Provider, ProviderRegistrar

PROJECT_NAME = "acp_adapters"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)

_Hook = TypeVar("_Hook", bound=Callable[..., Any])


def for_provider(provider_id: str) -> Callable[[_Hook], _Hook]:
    """A hook implementation that answers for one provider only: for any other it returns
    None (the next implementation answers), without being called. Under ``@hookimpl``::

        @hookimpl
        @for_provider("mine")
        def project_file_change(provider, tool_call, session): ...

    The hook's own parameters stay as they are (pluggy reads them through the wrapper); it
    must take ``provider``.
    """

    def decorate(function: _Hook) -> _Hook:
        names = list(inspect.signature(function).parameters)
        if "provider" not in names:
            raise TypeError(f"{function.__qualname__} takes no provider: for_provider needs it")
        position = names.index("provider")

        @functools.wraps(function)
        def answer(*args: Any, **kwargs: Any) -> Any:
            provider = kwargs["provider"] if "provider" in kwargs else args[position]
            if getattr(provider, "id", None) != provider_id:
                return None
            return function(*args, **kwargs)

        return cast(_Hook, answer)

    return decorate


@hookspec
def register_providers(register: ProviderRegistrar) -> None:
    """Register the providers a plugin brings, by calling ``register(provider)`` for each.

    Collected from every plugin when a registry is built. A provider id registered by
    two plugins is an error that names both.

    :param register: call it with each :class:`~acp_adapters.Provider`.
    :returns: nothing.

    .. versionadded:: 0.1
    """


@hookspec(firstresult=True)
def identify_agent(initialize_result: dict[str, Any]) -> str | None:
    """Name the provider of an agent that no provider claims by its name.

    Called when the ``initialize`` answer gives no name (``agentInfo.name`` in v1,
    ``info.name`` in v2) or one that no provider lists in ``agent_names``; some
    agents say who they are only in ``_meta``. Stops at first non-None result; an
    id that is not registered is ignored, and the generic provider is used.

    :param initialize_result: the ``initialize`` answer's ``result``, as the agent sent it
        (untrusted: read it with care).
    :returns: the id of one of your providers, or None.

    .. versionadded:: 0.1
    """


@hookspec(firstresult=True)
def project_tool_call(
    provider: Provider, tool_call: ToolCall, session: SessionView
) -> TimelineItem | None:
    """Project a tool call into its timeline item.

    Called whenever a tool call changes. The built-in projection maps the tool
    kind: edits (and any tool call with a diff) to ``file_change`` through
    ``project_file_change``, ``execute`` to ``command_execution``, ``read`` to
    ``file_read``, ``search`` to ``search``, ``fetch`` to ``fetch``, anything else
    to ``tool``. Stops at first non-None result.

    :param provider: the provider of the session.
    :param tool_call: the tool call as everything received so far made it.
    :param session: the session, read-only.
    :returns: a tool item (``file_change``, ``command_execution``, ``file_read``,
        ``search``, ``fetch`` or ``tool``: any other kind is an error naming the plugin),
        or None to leave it to the next plugin.

    .. versionadded:: 0.1
    """


@hookspec(firstresult=True)
def project_file_change(
    provider: Provider, tool_call: ToolCall, session: SessionView
) -> FileChangeItem | None:
    """Project a tool call that edits files into a ``file_change`` item.

    The built-in projection works from the content ``normalize_diff_content`` gives, and
    takes, where the session shows the file's true old and new content (the client's
    answer to ``fs/read_text_file``, the agent's ``fs/write_text_file``, a live client's
    disk reads around the edit), the true patch; else the patch and omitted reason of
    ``project_diff_patch``. It always answers, even when the patch was capped. Stops at
    first non-None result.

    :param provider: the provider of the session.
    :param tool_call: the tool call.
    :param session: the session, read-only.
    :returns: a file_change item, or None to leave it to the next plugin.

    .. versionadded:: 0.1
    """


@hookspec(firstresult=True)
def normalize_diff_content(
    provider: Provider,
    tool_call: ToolCall,
    content: tuple[ToolContent, ...],
    session: SessionView,
) -> tuple[ToolContent, ...] | None:
    """Fix a provider's quirks in a tool call's diff content, before a file_change is built.

    Called by the built-in ``project_file_change`` before it looks for the true patch
    (the client's file system, the disk) and before ``project_diff_patch``: everything
    after it sees the content it gives (an agent that repeats a path, or says
    ``oldText: ""`` for a file it creates, is put right here, not by rebuilding the
    whole item). The built-in answer is the content as it is. Stops at first non-None
    result.

    :param provider: the provider of the session.
    :param tool_call: the tool call (a refused edit with the diffs it proposed again).
    :param content: its content items.
    :param session: the session, read-only.
    :returns: the content to build the file_change from (a tuple of ``DiffV1``,
        ``DiffV2``, ... items), or None to leave it to the next plugin.

    .. versionadded:: 0.2
    """


@hookspec(firstresult=True)
def project_diff_patch(
    provider: Provider, content: tuple[ToolContent, ...], limits: DiffLimits
) -> DiffPatch | str | None:
    """The unified patch of a tool call's diff content, and why there is none.

    The built-in answer is :func:`acp_adapters.diff_patch_of`: v2 patch text as sent,
    else each v1 ``{path, oldText, newText}`` built into a jsdiff-identical patch,
    capped at ``limits.max_edits`` line edits per file, with the reason a file has no
    patch (``capped``, ``unchanged``, ``no_diff``). Stops at first non-None result.

    :param provider: the provider of the session.
    :param content: the tool call's content items.
    :param limits: how far the edit search may go.
    :returns: a :class:`~acp_adapters.DiffPatch`; or a plain ``str``, which is a patch
        (the answer of 0.1); or None to leave it to the next plugin.

    .. versionadded:: 0.1
    .. versionchanged:: 0.2
       answers a ``DiffPatch``: the patch, or why there is none.
    """


@hookspec(firstresult=True)
def decide_permission(
    provider: Provider, request: PermissionQuery, policy: Policy
) -> PermissionDecision | None:
    """Answer a permission request of the agent.

    The built-in answer follows the policy with the options offered (an allow-once
    option before an allow-always one). Stops at first non-None result.

    :param provider: the provider of the session.
    :param request: the request, with the tool call it is about.
    :param policy: the session's permission policy.
    :returns: the decision (``outcome`` ``ask`` hands it to the application), or None.

    .. versionadded:: 0.1
    """


@hookspec(firstresult=True)
def decide_client_action(
    provider: Provider, action: ClientAction, policy: Policy
) -> ActionDecision | None:
    """Allow or refuse a side effect the client would perform for the agent.

    Called before every command the client would run (``terminal/create``) and every
    file it would write (``fs/write_text_file``), whether or not the agent asked
    permission for it. The built-in answer follows the policy: ``read-only`` refuses
    both; ``workspace-write`` allows writes inside the session's folders and asks
    before any command; ``full-access`` allows; ``ask`` asks (an action the
    application already allowed through the tool call's permission request is not
    asked again). A write outside the session's folders is refused whatever this
    answers. Stops at first non-None result.

    :param provider: the provider of the session.
    :param action: what would be done: a command (its argv, cwd and the names of the
        variables the agent sets) or a write (its path and patch).
    :param policy: the session's permission policy.
    :returns: the decision (``outcome`` ``ask`` hands it to the application, and with
        no ``ask`` callback it is refused), or None.

    .. versionadded:: 0.1
    """


@hookspec(firstresult=True)
def render_item_text(item: TimelineItem, provider: Provider | None) -> str | None:
    """Render a timeline item as text, for another agent to read.

    The built-in rendering gives each kind a line or a block; a file_change shows its
    paths, ``+A -D`` and the patch. Stops at first non-None result. Given a provider, only
    the plugins that may answer for it are asked (a provider's plugin renders its own
    agent's items); an implementation may leave ``provider`` out of its arguments.

    :param item: the item.
    :param provider: the provider of the session the item is of, when known.
    :returns: the text, or None to leave it to the next plugin.

    .. versionadded:: 0.1
    .. versionchanged:: 0.1 ``provider``.
    """


@hookspec(firstresult=True)
def answer_extension_request(
    provider: Provider, method: str, params: Any, session: SessionView
) -> ExtensionAnswer | None:
    """Answer one of the agent's extension requests (a method whose name starts with ``_``).

    A provider plugin answers the extension methods of its own agent; the built-in answer
    is an error, -32601 (method not found). The agent's params are untrusted: check them.
    Stops at first non-None result.

    :param provider: the provider of the session.
    :param method: the method's name, with its leading ``_``.
    :param params: the request's params, as the agent sent them (any JSON value, or None).
    :param session: the session, read-only.
    :returns: an :class:`~acp_adapters.plugin.extensions.ExtensionAnswer` (a result, or an
        error), or None to leave it to the next plugin.

    .. versionadded:: 0.1
    """


@hookspec
def on_session_update(provider: Provider, update: Notification, session: SessionView) -> None:
    """Observe every session/update the agent sent, after the session's state took it in.

    For metrics and logs. What it returns is ignored. Updates that could not be read
    are not passed (the session keeps them as unknown updates).

    :param provider: the provider of the session.
    :param update: the notification as the wire model of the session's version.
    :param session: the session, read-only, already updated.
    :returns: nothing.

    .. versionadded:: 0.1
    """
