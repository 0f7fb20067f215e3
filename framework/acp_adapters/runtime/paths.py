"""The files a tool call names: from its diffs, its locations and its raw input."""

from __future__ import annotations

from typing import Any

from .values import DiffV1, DiffV2, ToolCall

#: Keys of a tool call's raw input that name a file, as agents in the wild send them.
PATH_KEYS = ("path", "file_path", "filePath", "abs_path", "absolute_path", "notebook_path")


def tool_call_paths(call: ToolCall) -> list[str]:
    """Every path the tool call names, first mention first, each once."""
    found: list[str] = []
    for item in call.content:
        if isinstance(item, DiffV1):
            found.append(item.path)
        elif isinstance(item, DiffV2):
            for change in item.changes:
                found.extend(p for p in (change.old_path, change.path) if p)
    found.extend(location.path for location in call.locations)
    found.extend(raw_input_paths(call.raw_input))
    return list(dict.fromkeys(found))


def raw_input_paths(raw_input: Any) -> list[str]:
    """Paths a raw input names under the usual keys, or as keys of a ``changes`` map."""
    if not isinstance(raw_input, dict):
        return []
    found = [raw_input[k] for k in PATH_KEYS if isinstance(raw_input.get(k), str)]
    changes = raw_input.get("changes")
    if isinstance(changes, dict):
        found.extend(k for k in changes if isinstance(k, str))
        for change in changes.values():
            moved = change.get("move_path") if isinstance(change, dict) else None
            if isinstance(moved, str):
                found.append(moved)
    return found
