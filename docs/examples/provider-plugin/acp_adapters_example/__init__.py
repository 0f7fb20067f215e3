"""An example provider plugin for acp-adapters.

It provides the "example" provider for the scripted edit agent of the official
ACP Python SDK (its ``agentInfo.name`` is ``sdk-scripted-edit-agent``) and
overrides one projection: that agent rewrites whole files, and its users want
more of the file in view, so its edits' patches carry ten lines of context
instead of three. Everything else is the built-in behaviour.
"""

from __future__ import annotations

from acp_adapters import (
    DiffPatch,
    FileChangeItem,
    LaunchSpec,
    Provider,
    ProviderRegistrar,
    SessionView,
    ToolCall,
    count_changes,
    file_contents_from_fs,
    for_provider,
    hookimpl,
    tool_status,
    unified_diff,
)

# start: provider
PROVIDER_ID = "example"

PROVIDER = Provider(
    id=PROVIDER_ID,
    name="Scripted edit agent",
    description="The ACP Python SDK's scripted edit agent.",
    launch=LaunchSpec(command="python", args=("-m", "scripted_edit_agent")),
    agent_names=("sdk-scripted-edit-agent",),
    protocol_version=1,
)


@hookimpl
def register_providers(register: ProviderRegistrar) -> None:
    register(PROVIDER)


# end: provider


# start: file-change
CONTEXT = 10


@hookimpl
@for_provider(PROVIDER_ID)  # not ours: None, and the next plugin (the built-in one) answers
def project_file_change(
    provider: Provider, tool_call: ToolCall, session: SessionView
) -> FileChangeItem | None:
    files = file_contents_from_fs(tool_call, session)
    if not files:
        return None
    patches = [
        unified_diff(
            f.path if f.old is not None else "/dev/null",
            f.path,
            f.old or "",
            f.new,
            context=CONTEXT,
            max_edits=session.diff_limits.max_edits if f.old and f.new else None,
        )
        for f in files
    ]
    text = "\n".join(p for p in patches if p is not None) or None
    # unified_diff gives None only where the rewrite cap stopped it: said beside a patch too.
    found = DiffPatch(text, "capped" if None in patches else None)
    additions, deletions = count_changes(found.patch)
    return FileChangeItem(
        status=tool_status(tool_call, session),
        title=tool_call.title,
        tool_kind=tool_call.kind,
        paths=tuple(f.path for f in files),
        operations={f.path: "add" if f.old is None else "modify" for f in files},
        diff_str=found.patch,
        diff_omitted_reason=found.omitted_reason,
        additions=additions,
        deletions=deletions,
        patch_source="client_fs",
    )


# end: file-change
