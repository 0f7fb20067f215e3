"""The command line's JSON schema: one flat object per timeline item.

``--format json`` prints a JSON array of these rows, and the text format is
rendered from them, so both show the same facts. Every row has every field
(``null``, ``[]``, ``{}`` or ``0`` where the item's kind has no such thing),
so a reader can rely on a key being there whatever the kind; docs/cli.md
documents each field. Fields may be added; none is renamed or removed.
"""

from __future__ import annotations

import json
import os
from typing import Any

from ..capture.format import WORKSPACE_MARK, folder_pattern
from ..timeline.items import (
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
    TimelineItem,
    ToolItem,
    ToolItemBase,
    UserMessageItem,
)
from .render import escaped_json

#: The fields of a row, in the order they are printed.
FIELDS = (
    "ordinal",
    "id",
    "kind",
    "status",
    "turn",
    "session_id",
    "tool_call_id",
    "replayed",
    "created_at",
    "updated_at",
    "title",
    "text",
    "tool_kind",
    "paths",
    "operations",
    "moved_from",
    "diff_str",
    "diff_omitted_reason",
    "additions",
    "deletions",
    "patch_source",
    "patch_note",
    "command",
    "cwd",
    "output",
    "exit_code",
    "client_command",
    "refused",
    "input",
    "entries",
    "outcome",
    "option_id",
    "option_kind",
    "code",
)


def item_row(item: TimelineItem) -> dict[str, Any]:
    """The row of one timeline item."""
    row: dict[str, Any] = {
        "ordinal": item.ordinal,
        "id": item.id,
        "kind": item.kind,
        "status": item.status,
        "turn": item.turn,
        "session_id": item.session_id,
        "tool_call_id": item.tool_call_id,
        "replayed": item.replayed,
        "created_at": item.created_at,
        "updated_at": item.updated_at,
        "title": None,
        "text": None,
        "tool_kind": None,
        "paths": [],
        "operations": {},
        "moved_from": {},
        "diff_str": None,
        "diff_omitted_reason": None,
        "additions": 0,
        "deletions": 0,
        "patch_source": None,
        "patch_note": None,
        "command": None,
        "cwd": None,
        "output": None,
        "exit_code": None,
        "client_command": None,
        "refused": None,
        "input": None,
        "entries": [],
        "outcome": None,
        "option_id": None,
        "option_kind": None,
        "code": None,
    }
    if isinstance(item, ToolItemBase):
        row["title"] = item.title
        row["tool_kind"] = item.tool_kind
    if isinstance(item, UserMessageItem | AssistantMessageItem | ReasoningItem):
        row["text"] = item.text
    elif isinstance(item, PlanItem):
        row["entries"] = [step.model_dump(mode="json") for step in item.entries]
    elif isinstance(item, FileChangeItem):
        row.update(
            paths=list(item.paths),
            operations=dict(item.operations),
            moved_from=dict(item.moved_from),
            diff_str=item.diff_str,
            diff_omitted_reason=item.diff_omitted_reason,
            additions=item.additions,
            deletions=item.deletions,
            patch_source=item.patch_source,
            patch_note=item.patch_note,
        )
    elif isinstance(item, CommandExecutionItem):
        row.update(
            command=item.command,
            cwd=item.cwd,
            output=item.output,
            exit_code=item.exit_code,
            client_command=item.client_command,
            refused=item.refused,
        )
    elif isinstance(item, FileReadItem):
        row["paths"] = list(item.paths)
    elif isinstance(item, SearchItem):
        row["text"] = item.query
        row["paths"] = list(item.paths)
    elif isinstance(item, FetchItem):
        row["text"] = item.url
    elif isinstance(item, ToolItem):
        row["text"] = item.text
        row["input"] = _json_ready(item.input)
        if item.output is not None:
            row["output"] = (
                item.output
                if isinstance(item.output, str)
                else json.dumps(_json_ready(item.output), ensure_ascii=False)
            )
    elif isinstance(item, ApprovalRequestItem):
        row.update(
            title=item.title,
            outcome=item.outcome,
            option_id=item.option_id,
            option_kind=item.option_kind,
        )
    elif isinstance(item, NoticeItem):
        row.update(title=item.title, text=item.text)
    elif isinstance(item, ErrorItem):
        row.update(text=item.message, code=item.code)
    return row


def item_rows(items: list[TimelineItem]) -> list[dict[str, Any]]:
    """The rows of items, in timeline order."""
    return [item_row(item) for item in sorted(items, key=lambda item: item.ordinal)]


#: What ``--format json`` writes as a ``\\uXXXX`` escape though ``json`` writes it as it
#: is: a surrogate, alone in a string (JSON can carry one, UTF-8 cannot); DEL and the C1
#: controls and the bidirectional ones, which a terminal acts on (``json`` escapes only
#: C0); and U+0085, U+2028, U+2029, which some readers take for line breaks.


def dumps(rows: list[dict[str, Any]]) -> str:
    """Rows as the JSON array ``--format json`` prints: text as it is, but what a terminal
    would act on (or UTF-8 cannot hold) escaped.

    Written as ``\\uXXXX``, such a character reads back as the same string: the data is
    the same, and the output stays UTF-8 and safe to print. Outside strings, JSON text
    is ASCII, so every such character of the text is inside a string.
    """
    return escaped_json(rows, indent=2)


def dumps_line(value: Any) -> str:
    """One JSON value on one line, as ``--format jsonl`` writes each: compact, and escaped
    as :func:`dumps` escapes (so no line break, U+2028 and U+2029 included, is inside it)."""
    return escaped_json(value)


def portable(value: Any, folder: str | os.PathLike[str]) -> Any:
    """``value`` with ``folder`` (as given, or as its real path) written ``<workspace>``.

    A replay runs in a temporary folder that is gone once it ends; written as
    captures write it, its output is the same from one run to the next.
    """
    spellings = sorted({os.fspath(folder), os.path.realpath(folder)}, key=len, reverse=True)
    patterns = [folder_pattern(spelling) for spelling in spellings]  # its whole name only

    def convert(value: Any) -> Any:
        if isinstance(value, str):
            for pattern in patterns:
                value = pattern.sub(WORKSPACE_MARK, value)
            return value
        if isinstance(value, dict):
            return {convert(key): convert(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [convert(item) for item in value]
        return value

    return convert(value)


def _json_ready(value: Any) -> Any:
    """A tool's input or output as JSON data (it came from JSON; tuples become lists)."""
    return json.loads(json.dumps(value, default=str))
