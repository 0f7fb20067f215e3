"""acp-adapters provider plugin for Claude (claude-agent-acp).

Registers the ``claude`` provider and overrides ``project_file_change``: where a
tool call's metadata shows the file's true old and new content, the patch is
the file's true patch (``patch_source`` ``provider_meta``); otherwise the
built-in projection answers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acp_adapters import for_provider, hookimpl

from .provider import PROVIDER, PROVIDER_ID, tool_response, true_contents

if TYPE_CHECKING:
    from acp_adapters import FileChangeItem, Provider, ProviderRegistrar, SessionView, ToolCall

# The projection's helpers are imported by the hooks that use them: loading the plugin
# (``acp-adapters providers`` loads every plugin) does not load the models.


@hookimpl
def register_providers(register: ProviderRegistrar) -> None:
    register(PROVIDER)


@hookimpl
@for_provider(PROVIDER_ID)
def project_file_change(
    provider: Provider, tool_call: ToolCall, session: SessionView
) -> FileChangeItem | None:
    response = tool_response(tool_call.meta_seen)
    truth = true_contents(response) if response is not None else None
    if truth is None:
        return None
    from acp_adapters import FileContents, file_change_from_contents, tool_status

    path, old, new = truth
    return file_change_from_contents(
        tool_call,
        [FileContents(path, old, new)],
        patch_source="provider_meta",
        limits=session.diff_limits,
        status=tool_status(tool_call, session),
    )
