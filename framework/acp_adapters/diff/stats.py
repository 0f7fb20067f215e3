"""What a unified patch holds: how many files, and the lines it adds and deletes."""

from __future__ import annotations

import re
from dataclasses import dataclass

_HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")


@dataclass(frozen=True)
class PatchStats:
    """The files of a patch (its ``+++`` headers) and its lines added and deleted (hunk
    bodies only: a header, or a body line that looks like one, is never counted twice)."""

    files: int
    additions: int
    deletions: int


def patch_stats(patch: str | None) -> PatchStats:
    """Count a unified patch, walking each hunk by the line counts its header gives."""
    if not patch:
        return PatchStats(0, 0, 0)
    files = additions = deletions = 0
    old_left = new_left = 0
    for line in patch.split("\n"):
        if old_left <= 0 and new_left <= 0:
            match = _HUNK.match(line)
            if match:
                old_left = int(match.group(1) or 1)
                new_left = int(match.group(2) or 1)
            elif line.startswith("+++ "):
                files += 1
            continue
        if line.startswith("+"):
            additions += 1
            new_left -= 1
        elif line.startswith("-"):
            deletions += 1
            old_left -= 1
        elif line.startswith(" ") or line == "":
            old_left -= 1
            new_left -= 1
        # "\ No newline at end of file" is no line of either side.
    return PatchStats(files, additions, deletions)
