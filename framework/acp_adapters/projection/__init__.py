"""The projection: session traffic in, timeline items out.

``traffic`` reads the traffic (a live session's, or a capture's) and drives the
``projector``, which keeps the session's state and asks the hooks for each item;
``negotiation`` reads what ``initialize`` says; the ``Timeline`` that comes out is
:mod:`acp_adapters.timeline`'s (importable from here too).
``files`` and ``tools`` are the helpers projections share, the built-in plugins' and
any provider plugin's; they are imported from here.
"""

from ..diff.content import DiffPatch, PatchOmitted, omitted_reason
from ..timeline.timeline import Timeline
from .files import (
    DiskContents,
    FileContents,
    checkpoint_operation,
    checkpointed_files,
    count_changes,
    diff_patch_of,
    edited_paths,
    file_change_from_checkpoint,
    file_change_from_contents,
    file_contents_from_disk,
    file_contents_from_fs,
    file_contents_from_known,
    file_contents_from_permission,
    with_proposed_diffs,
)
from .tools import command_item, content_text, tool_status

__all__ = [
    "DiffPatch",
    "DiskContents",
    "FileContents",
    "PatchOmitted",
    "Timeline",
    "checkpoint_operation",
    "checkpointed_files",
    "command_item",
    "content_text",
    "count_changes",
    "diff_patch_of",
    "edited_paths",
    "file_change_from_checkpoint",
    "file_change_from_contents",
    "file_contents_from_disk",
    "file_contents_from_fs",
    "file_contents_from_known",
    "file_contents_from_permission",
    "omitted_reason",
    "tool_status",
    "with_proposed_diffs",
]
