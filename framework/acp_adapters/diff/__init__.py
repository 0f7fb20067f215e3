"""The diff engine: jsdiff-identical unified patches for ACP file edits.

A pure layer: no I/O, no state. ``content`` turns a tool call's diff content
(v1 or v2) into patch text; ``unified`` writes one file's patch; ``search``
finds the edit script jsdiff would; ``bounds`` keeps that search short.
"""

from .content import (
    DEFAULT_MAX_EDITS,
    DiffPatch,
    FilePatch,
    OmittedReason,
    PatchOmitted,
    diff_patch,
    file_patches,
    omitted_reason,
)
from .unified import unified_diff

__all__ = [
    "DEFAULT_MAX_EDITS",
    "DiffPatch",
    "FilePatch",
    "OmittedReason",
    "PatchOmitted",
    "diff_patch",
    "file_patches",
    "omitted_reason",
    "unified_diff",
]
