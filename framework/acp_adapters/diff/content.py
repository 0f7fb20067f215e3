"""The patch of a tool call's diff content, whatever protocol version sent it.

ACP v2 diffs (``{"type": "diff", "changes": [...], "patch": {"format", "text"}}``)
carry their patch text: the first one that has a string ``patch.text`` is the
patch, as sent. ACP v1 diffs (``{"type": "diff", "path", "oldText", "newText"}``)
carry both sides of one file instead, and the patch is built here:

* ``oldText`` null, absent or not a string: a new file, ``--- /dev/null``;
* ``oldText`` ``""``: the file existed and was empty, both headers name it;
* a file whose old and new text are equal gets no patch ("unchanged");
* when both sides have text, the search stops after ``max_edits`` line edits
  and that file gets no patch ("capped"); a created or emptied file needs no
  search and is never capped;
* the patches of several files are joined with one blank line between them.

Everything here accepts any value (content arrives from an untrusted agent):
what is not a list, not a diff entry, or lacks a string ``path`` or
``newText`` is skipped, never raised on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from .unified import DEV_NULL, unified_diff

#: The edit count past which a rewrite gets no patch text.
DEFAULT_MAX_EDITS: Final = 1000

#: Why a file got no patch text: the edit search gave up, or nothing changed.
OmittedReason = Literal["capped", "unchanged"]


@dataclass(frozen=True)
class FilePatch:
    """One v1 diff entry and the patch built for it.

    ``operation`` is ``"add"`` when the old text was absent (a new file) and
    ``"modify"`` otherwise. ``patch`` is None exactly when ``omitted_reason``
    says why.
    """

    path: str
    operation: Literal["add", "modify"]
    patch: str | None
    omitted_reason: OmittedReason | None


def _field(item: object, wire_name: str, attribute: str) -> object:
    """A field of a content item: a wire dict's key, or a model's attribute."""
    if isinstance(item, Mapping):
        return item.get(wire_name)
    return getattr(item, attribute, None)


def _is_diff(item: object) -> bool:
    return _field(item, "type", "type") == "diff"


def _entries(content: object) -> list[object]:
    if not isinstance(content, (list, tuple)):
        return []
    return [item for item in content if _is_diff(item)]


def _patch_text(entry: object) -> str | None:
    patch = _field(entry, "patch", "patch")
    text = _field(patch, "text", "text") if patch is not None else None
    return text if isinstance(text, str) else None


def _check_max_edits(max_edits: int) -> None:
    if isinstance(max_edits, bool) or not isinstance(max_edits, int) or max_edits < 0:
        raise ValueError(f"max_edits must be a non-negative integer, not {max_edits!r}")


def build_file_patch(
    path: str, old_text: str | None, new_text: str, *, max_edits: int = DEFAULT_MAX_EDITS
) -> FilePatch:
    """The patch of one file from its old text (None: a new file) and new text."""
    _check_max_edits(max_edits)
    operation: Literal["add", "modify"] = "add" if old_text is None else "modify"
    old = old_text or ""
    if old == new_text:
        return FilePatch(path, operation, None, "unchanged")
    patch = unified_diff(
        DEV_NULL if old_text is None else path,
        path,
        old,
        new_text,
        max_edits=max_edits if old and new_text else None,
    )
    if patch is None:
        return FilePatch(path, operation, None, "capped")
    return FilePatch(path, operation, patch, None)


def file_patches(content: object, *, max_edits: int = DEFAULT_MAX_EDITS) -> list[FilePatch]:
    """One :class:`FilePatch` for every v1 diff entry of a tool call's content.

    ``content`` is the tool call's content list as it arrives on the wire (a
    list of dicts) or as the runtime model holds it (items with ``type``,
    ``path``, ``old_text`` and ``new_text`` attributes). Entries without a
    string ``path`` and ``newText`` are skipped.
    """
    _check_max_edits(max_edits)
    result: list[FilePatch] = []
    for entry in _entries(content):
        path = _field(entry, "path", "path")
        new_text = _field(entry, "newText", "new_text")
        if not isinstance(path, str) or not isinstance(new_text, str):
            continue
        old_text = _field(entry, "oldText", "old_text")
        result.append(
            build_file_patch(
                path,
                old_text if isinstance(old_text, str) else None,
                new_text,
                max_edits=max_edits,
            )
        )
    return result


def diff_patch(content: object, *, max_edits: int = DEFAULT_MAX_EDITS) -> str | None:
    """The unified patch of a tool call's diff content, or None when there is none.

    A v2 diff's ``patch.text`` wins and is returned as sent. Otherwise the v1
    entries' patches (see :func:`file_patches`) are joined with one blank line
    between files; files that are unchanged or capped add nothing. Never
    raises on content from the wire.
    """
    _check_max_edits(max_edits)
    entries = _entries(content)
    for entry in entries:
        text = _patch_text(entry)
        if text is not None:
            return text
    patches = [p.patch for p in file_patches(entries, max_edits=max_edits) if p.patch is not None]
    return "\n".join(patches) if patches else None


#: Why a file_change has no patch (``capped`` also beside the patch of other files: the
#: rewrite cap left out one file's), as ``FileChangeItem.diff_omitted_reason`` says it.
PatchOmitted = Literal["capped", "unchanged", "no_diff"]


@dataclass(frozen=True)
class DiffPatch:
    """A tool call's patch, and why there is none: what ``project_diff_patch`` answers.

    ``patch`` is the unified patch of the files that have one, or None.
    ``omitted_reason`` says why a file has no patch: ``capped`` (the rewrite cap
    stopped its edit search; beside a patch too, when other files have theirs),
    ``unchanged`` (no file changed) or ``no_diff`` (no diff content with a file's
    text). With no patch a reason is required; beside a patch only ``capped`` is one.
    """

    patch: str | None
    omitted_reason: PatchOmitted | None = None

    def __post_init__(self) -> None:
        if self.patch is None and self.omitted_reason is None:
            raise ValueError("a DiffPatch without a patch says why: give its omitted_reason")
        if self.patch is not None and self.omitted_reason not in (None, "capped"):
            raise ValueError(
                f"beside a patch the only omitted_reason is 'capped', not {self.omitted_reason!r}"
            )

    @classmethod
    def of_files(cls, patches: Sequence[FilePatch]) -> DiffPatch:
        """The patches of files joined (one blank line between files), and why any is missing."""
        texts = [p.patch for p in patches if p.patch is not None]
        if texts:
            capped = any(p.omitted_reason == "capped" for p in patches)
            return cls("\n".join(texts), "capped" if capped else None)
        return cls(None, omitted_reason(list(patches)))


def omitted_reason(patches: list[FilePatch]) -> PatchOmitted:
    """Why files got no patch: the cap stopped one, or none changed, or there was no diff."""
    reasons = {p.omitted_reason for p in patches}
    if "capped" in reasons:
        return "capped"
    if reasons == {"unchanged"}:
        return "unchanged"
    return "no_diff"
