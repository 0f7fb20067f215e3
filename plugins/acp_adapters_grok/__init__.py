"""acp-adapters provider plugin for Grok Build.

Registers the ``grok`` provider, identifies Grok Build by its ``initialize``
answer (it gives no name), and overrides ``project_file_change`` for what
Grok's reports get wrong:

* a diff that claims an empty old file (``oldText: ""``) for a file the session
  has seen with content is a stale first report: it is not shown as a
  whole-file addition; the item waits for the real report (no patch yet,
  ``diff_omitted_reason`` ``no_diff``);
* when a tool call's content repeats a path, only the last report of it counts;
* a write the session shows creating the file (its read, or a live client's read of
  the disk, found nothing) is an ``add``;
* a refused edit keeps the diff it proposed (the refusal's update replaces it).

What the client's file system showed (the built-in ``client_fs`` patch) still wins.
"""

from __future__ import annotations

from typing import Any

from acp_adapters import (
    DiffV1,
    FileChangeItem,
    FileContents,
    Provider,
    SessionView,
    ToolCall,
    file_change_from_contents,
    file_contents_from_fs,
    hookimpl,
    tool_status,
    with_proposed_diffs,
)
from acp_adapters.providers import ProviderRegistrar

from .provider import PROVIDER, PROVIDER_ID, XAI_META_PREFIX


@hookimpl
def register_providers(register: ProviderRegistrar) -> None:
    register(PROVIDER)


@hookimpl
def identify_agent(initialize_result: dict[str, Any]) -> str | None:
    """Grok Build sends no ``agentInfo``: its ``_meta`` keys are in xAI's ``x.ai/`` namespace."""
    for meta in (
        initialize_result.get("_meta"),
        _get(initialize_result.get("agentCapabilities"), "_meta"),
    ):
        if isinstance(meta, dict) and any(
            isinstance(key, str) and key.startswith(XAI_META_PREFIX) for key in meta
        ):
            return PROVIDER_ID
    return None


def _get(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, dict) else None


@hookimpl
def project_file_change(
    provider: Provider, tool_call: ToolCall, session: SessionView
) -> FileChangeItem | None:
    if provider.id != PROVIDER_ID or file_contents_from_fs(tool_call, session):
        return None  # the built-in true patch
    tool_call = with_proposed_diffs(tool_call)  # a refusal replaces the diff with its text
    reports: dict[str, DiffV1] = {}
    for item in tool_call.content:
        if isinstance(item, DiffV1):
            reports[item.path] = item  # the last report of a path wins
    if not reports:
        return None
    status = tool_status(tool_call, session)
    files: list[FileContents] = []
    # What a live client read of the disk as the edit started (None: no such file).
    on_disk = {e.path: e.content for e in session.disk_of(tool_call.id) if e.op == "disk_before"}
    for path, report in reports.items():
        known = session.file_before(path, 1 << 62)
        if report.old_text == "" and known is not None and known.content:
            # A stale first report: the file has content, the agent says it was empty.
            return FileChangeItem(
                status=status,
                title=tool_call.title,
                tool_kind=tool_call.kind,
                paths=tuple(reports),
                operations=dict.fromkeys(reports, "modify"),
                diff_omitted_reason="no_diff",
            )
        if known is not None:
            absent = known.content is None and known.kept  # not kept: not known to be absent
        else:
            absent = on_disk.get(path, "") is None
        created = report.old_text in (None, "") and absent
        files.append(FileContents(path, None if created else report.old_text, report.new_text))
    return file_change_from_contents(
        tool_call, files, patch_source="agent", limits=session.diff_limits, status=status
    )
