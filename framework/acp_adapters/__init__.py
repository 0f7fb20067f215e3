"""acp-adapters: drive coding agents that speak the Agent Client Protocol.

The public API. ``diff_patch`` is the default diff hook: the unified patch of
a tool call's diff content, built from ACP v1 ``oldText``/``newText`` when no
v2 patch text was sent.
"""

from .diff import (
    DEFAULT_MAX_EDITS,
    FilePatch,
    OmittedReason,
    diff_patch,
    file_patches,
    unified_diff,
)

__all__ = [
    "DEFAULT_MAX_EDITS",
    "FilePatch",
    "OmittedReason",
    "diff_patch",
    "file_patches",
    "unified_diff",
]
