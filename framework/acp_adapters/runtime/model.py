"""Deprecated: ``acp_adapters.runtime.model`` held three ideas, each now a module of its own.

The values of a session (:mod:`.values`), what it saw of files (:mod:`.file_store`) and
its state with the view hooks get (:mod:`.state`); the public ones are still exported by
:mod:`acp_adapters.runtime`. A name read from here still works, with a
:class:`DeprecationWarning` naming its new module.
"""

from __future__ import annotations

from .._moved import moved_names

#: Each name this module had, and the module of :mod:`acp_adapters.runtime` it is in now.
_MOVED = {
    **dict.fromkeys(
        (
            "RuntimeModel",
            "Block",
            "ContentItem",
            "DiffChange",
            "PatchText",
            "DiffV1",
            "DiffV2",
            "TerminalRef",
            "UnknownContent",
            "ToolContent",
            "Location",
            "ToolCall",
            "MessageRole",
            "Message",
            "PlanEntry",
            "Plan",
            "ConfigChoice",
            "ConfigOption",
            "Mode",
            "Command",
            "Usage",
            "SessionInfo",
            "TurnStateName",
            "TurnState",
            "Terminal",
            "PermissionRequest",
            "FileSide",
            "PathChange",
            "CheckpointMark",
            "CheckpointedFile",
            "UnknownUpdate",
        ),
        "acp_adapters.runtime.values",
    ),
    **dict.fromkeys(
        ("FileEvent", "CONTENT_BUDGET", "content_digest", "FileStore"),
        "acp_adapters.runtime.file_store",
    ),
    **dict.fromkeys(("SessionState", "SessionView"), "acp_adapters.runtime.state"),
}


__getattr__ = moved_names(__name__, _MOVED)
