"""acp-adapters provider plugin for Grok Build.

Registers the ``grok`` provider, identifies Grok Build by its ``initialize``
answer (it gives no name), and puts right in ``normalize_diff_content`` what
Grok's diff reports get wrong; the built-in projection builds the file_change:

* a diff that claims an empty old file (``oldText: ""``) for a file the session
  has seen with content is a stale first report: it is not shown as a
  whole-file addition; the file shows as modified with no patch yet
  (``diff_omitted_reason`` ``no_diff`` when no other file has one) until the
  real report comes;
* when a tool call's content repeats a path, only the last report of it counts;
* a write the session shows creating the file (its read, or a live client's read of
  the disk, found nothing) is an ``add``.

What the client's file system or the disk showed (the built-in ``client_fs`` and
``disk`` patches) still wins; a refused edit keeps the diff it proposed (the
built-in puts it back before this hook sees the content).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from acp_adapters import for_provider, hookimpl

from .provider import PROVIDER, PROVIDER_ID, XAI_META_PREFIX

if TYPE_CHECKING:
    from acp_adapters import (
        DiffV1,
        DiffV2,
        Provider,
        ProviderRegistrar,
        SessionView,
        ToolCall,
        ToolContent,
    )

# The projection's helpers are imported by the hooks that use them: loading the plugin
# (``acp-adapters providers`` loads every plugin) does not load the models.


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
@for_provider(PROVIDER_ID)
def normalize_diff_content(
    provider: Provider,
    tool_call: ToolCall,
    content: tuple[ToolContent, ...],
    session: SessionView,
) -> tuple[ToolContent, ...] | None:
    from acp_adapters import DiffV1, file_contents_from_fs

    if file_contents_from_fs(tool_call, session):
        return None  # the built-in true patch, from what the agent wrote through the client
    last: dict[str, DiffV1] = {}
    for item in content:
        if isinstance(item, DiffV1):
            last[item.path] = item  # the last report of a path wins
    if not last:
        return None
    # What a live client read of the disk as the edit started (None: no such file).
    on_disk = {e.path: e.content for e in session.disk_of(tool_call.id) if e.op == "disk_before"}
    fixed: list[ToolContent] = []
    done: set[str] = set()
    for item in content:
        if not isinstance(item, DiffV1):
            fixed.append(item)
        elif item.path not in done:  # in the place of its first report
            done.add(item.path)
            fixed.append(_fixed(last[item.path], session, on_disk))
    return tuple(fixed)


def _fixed(report: DiffV1, session: SessionView, on_disk: dict[str, str | None]) -> DiffV1 | DiffV2:
    """One file's report as it should have been."""
    from acp_adapters import DiffChange, DiffV2

    known = session.file_before(report.path, 1 << 62)
    if report.old_text == "" and known is not None and known.content:
        # A stale first report: the file has content, the agent says it was empty. The file
        # changes, with no patch yet: the real report follows.
        return DiffV2(changes=(DiffChange(operation="modify", path=report.path),))
    if known is not None:
        absent = known.content is None and known.kept  # not kept: not known to be absent
    else:
        absent = on_disk.get(report.path, "") is None
    if report.old_text == "" and absent:
        return report.model_copy(update={"old_text": None})  # a creation, from /dev/null
    return report
