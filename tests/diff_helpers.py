"""Helpers the diff tests share: the public vectors, a patch applier, a plain LCS."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from unidiff import PatchSet

DATA = Path(__file__).parent / "data"


@dataclass(frozen=True)
class Vector:
    id: str
    old_text: str | None
    new_text: str
    old_name: str
    new_name: str
    expected: str | None


@cache
def public_vectors() -> tuple[Vector, ...]:
    """Every case of ``data/diff_public.jsonl`` (jsdiff 8.0.3's own output)."""
    vectors = []
    with (DATA / "diff_public.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            case = json.loads(line)
            vectors.append(
                Vector(
                    case["id"],
                    case["oldText"],
                    case["newText"],
                    case["oldName"],
                    case["newName"],
                    case["expected"],
                )
            )
    return tuple(vectors)


def apply_patch(patch: str, old_texts: dict[str, str]) -> dict[str, str]:
    """Apply a unified patch (parsed by ``unidiff``) to old texts; return each file's new text.

    ``old_texts`` maps the path of each ``+++`` file to its old text (absent for a new file).
    Every context and removed line must match the old text exactly.
    """
    result: dict[str, str] = {}
    for patched in PatchSet(patch):
        path = patched.target_file
        old_lines = _lines(old_texts.get(path, ""))
        out: list[str] = []
        position = 0  # the next old line to copy
        for hunk in patched:
            # "\ No newline at end of file" says the line before it has no newline.
            body: list[tuple[str, str]] = []
            for line in hunk:
                if line.line_type == "\\":
                    kind, value = body[-1]
                    body[-1] = (kind, value.removesuffix("\n"))
                elif line.line_type in (" ", "-", "+"):
                    body.append((line.line_type, line.value))
            start = hunk.source_start - 1 if hunk.source_length else hunk.source_start
            assert start >= position, "hunks overlap or run backwards"
            out.extend(old_lines[position:start])
            position = start
            for kind, value in body:
                if kind in (" ", "-"):
                    assert old_lines[position] == value, (old_lines[position], value)
                    position += 1
                if kind in (" ", "+"):
                    out.append(value)
        out.extend(old_lines[position:])
        result[path] = "".join(out)
    return result


def _lines(text: str) -> list[str]:
    """Lines with their ``\\n`` kept; the last one may lack it."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def edit_distance(old: str, new: str) -> int:
    """Inserted plus deleted lines of a minimal line edit, by the textbook LCS table."""
    a, b = _lines(old), _lines(new)
    previous = [0] * (len(b) + 1)
    for x in range(len(a)):
        current = [0] * (len(b) + 1)
        for y in range(len(b)):
            if a[x] == b[y]:
                current[y + 1] = previous[y] + 1
            else:
                current[y + 1] = max(previous[y + 1], current[y])
        previous = current
    return len(a) + len(b) - 2 * previous[len(b)]
