"""A plain, slow, line-by-line transcription of jsdiff 8.0.3's line diff and patch writer.

The test oracle for the fast engine in ``acp_adapters.diff``: it keeps jsdiff's
own data structures (a ``bestPath`` array shared across edit counts, linked
components, per-component line splitting) and none of the engine's shortcuts,
so random inputs can be checked against it where no jsdiff output is stored.
It is itself checked against every public jsdiff vector.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass
class Component:
    count: int
    added: bool
    removed: bool
    previous: Component | None = None
    value: str = ""
    lines: list[str] = field(default_factory=list)


@dataclass
class Path:
    old_pos: int
    last: Component | None


def tokenize(value: str) -> list[str]:
    """jsdiff's line tokenizer: split at ``\\n`` or ``\\r\\n``, keeping the separator."""
    parts = re.split(r"(\n|\r\n)", value)
    if not parts[-1]:
        parts.pop()
    tokens: list[str] = []
    for i, part in enumerate(parts):
        if i % 2:
            tokens[-1] += part
        else:
            tokens.append(part)
    return [t for t in tokens if t]


def _add_to_path(path: Path, added: bool, removed: bool, old_pos_inc: int) -> Path:
    last = path.last
    if last is not None and last.added == added and last.removed == removed:
        return Path(
            path.old_pos + old_pos_inc,
            Component(last.count + 1, added, removed, last.previous),
        )
    return Path(path.old_pos + old_pos_inc, Component(1, added, removed, last))


def _extract_common(path: Path, new: list[str], old: list[str], diagonal: int) -> int:
    new_len, old_len = len(new), len(old)
    old_pos = path.old_pos
    new_pos = old_pos - diagonal
    common = 0
    while new_pos + 1 < new_len and old_pos + 1 < old_len and old[old_pos + 1] == new[new_pos + 1]:
        new_pos += 1
        old_pos += 1
        common += 1
    if common:
        path.last = Component(common, False, False, path.last)
    path.old_pos = old_pos
    return new_pos


def _build_values(last: Component | None, new: list[str], old: list[str]) -> list[Component]:
    components: list[Component] = []
    while last is not None:
        components.append(last)
        last = last.previous
    components.reverse()
    new_pos = old_pos = 0
    for c in components:
        if not c.removed:
            c.value = "".join(new[new_pos : new_pos + c.count])
            new_pos += c.count
            if not c.added:
                old_pos += c.count
        else:
            c.value = "".join(old[old_pos : old_pos + c.count])
            old_pos += c.count
    return components


def diff_lines(old_str: str, new_str: str, max_edit_length: int | None) -> list[Component] | None:
    """``diffLines(old, new, {maxEditLength})``: components, or None when it gives up."""
    old, new = tokenize(old_str), tokenize(new_str)
    new_len, old_len = len(new), len(old)
    edit_length = 1
    max_len = new_len + old_len
    if max_edit_length is not None:
        max_len = min(max_len, max_edit_length)
    best: dict[int, Path | None] = {0: Path(-1, None)}
    first = best[0]
    assert first is not None
    new_pos = _extract_common(first, new, old, 0)
    if first.old_pos + 1 >= old_len and new_pos + 1 >= new_len:
        return _build_values(first.last, new, old)
    min_diag, max_diag = -(10**18), 10**18
    while edit_length <= max_len:
        diagonal = max(min_diag, -edit_length)
        while diagonal <= min(max_diag, edit_length):
            remove_path = best.get(diagonal - 1)
            add_path = best.get(diagonal + 1)
            if remove_path is not None:
                best[diagonal - 1] = None
            can_add = False
            if add_path is not None:
                add_new_pos = add_path.old_pos - diagonal
                can_add = 0 <= add_new_pos < new_len
            can_remove = remove_path is not None and remove_path.old_pos + 1 < old_len
            if not can_add and not can_remove:
                best[diagonal] = None
                diagonal += 2
                continue
            if not can_remove or (
                can_add
                and remove_path is not None
                and add_path is not None
                and remove_path.old_pos < add_path.old_pos
            ):
                assert add_path is not None
                base = _add_to_path(add_path, True, False, 0)
            else:
                assert remove_path is not None
                base = _add_to_path(remove_path, False, True, 1)
            new_pos = _extract_common(base, new, old, diagonal)
            if base.old_pos + 1 >= old_len and new_pos + 1 >= new_len:
                return _build_values(base.last, new, old)
            best[diagonal] = base
            if base.old_pos + 1 >= old_len:
                max_diag = min(max_diag, diagonal - 1)
            if new_pos + 1 >= new_len:
                min_diag = max(min_diag, diagonal + 1)
            diagonal += 2
        edit_length += 1
    return None


def _split_lines(text: str) -> list[str]:
    has_trailing = text.endswith("\n")
    result = [line + "\n" for line in text.split("\n")]
    if has_trailing:
        result.pop()
    else:
        result[-1] = result[-1][:-1]
    return result


def create_two_files_patch(
    old_name: str,
    new_name: str,
    old_str: str,
    new_str: str,
    *,
    context: int = 3,
    max_edit_length: int | None = None,
) -> str | None:
    """``createTwoFilesPatch(..., {context, headerOptions: FILE_HEADERS_ONLY, maxEditLength})``."""
    diff = diff_lines(old_str, new_str, max_edit_length)
    if diff is None:
        return None
    diff.append(Component(0, False, False, value=""))
    hunks: list[dict[str, object]] = []
    old_range_start = new_range_start = 0
    cur: list[str] = []
    old_line = new_line = 1
    for i, current in enumerate(diff):
        lines = current.lines or (_split_lines(current.value) if current.value else [])
        current.lines = lines
        if current.added or current.removed:
            if not old_range_start:
                prev = diff[i - 1] if i > 0 else None
                old_range_start, new_range_start = old_line, new_line
                if prev is not None:
                    cur = [" " + e for e in prev.lines[-context:]] if context > 0 else []
                    old_range_start -= len(cur)
                    new_range_start -= len(cur)
            cur.extend(("+" if current.added else "-") + line for line in lines)
            if current.added:
                new_line += len(lines)
            else:
                old_line += len(lines)
        else:
            if old_range_start:
                if len(lines) <= context * 2 and i < len(diff) - 2:
                    cur.extend(" " + e for e in lines)
                else:
                    size = min(len(lines), context)
                    cur.extend(" " + e for e in lines[:size])
                    hunks.append(
                        {
                            "old_start": old_range_start,
                            "old_lines": old_line - old_range_start + size,
                            "new_start": new_range_start,
                            "new_lines": new_line - new_range_start + size,
                            "lines": cur,
                        }
                    )
                    old_range_start = new_range_start = 0
                    cur = []
            old_line += len(lines)
            new_line += len(lines)
    out = [f"--- {old_name}", f"+++ {new_name}"]
    for hunk in hunks:
        body: list[str] = []
        for line in hunk["lines"]:  # type: ignore[attr-defined]
            if line.endswith("\n"):
                body.append(line[:-1])
            else:
                body.append(line)
                body.append("\\ No newline at end of file")
        old_start, old_lines = hunk["old_start"], hunk["old_lines"]
        new_start, new_lines = hunk["new_start"], hunk["new_lines"]
        if old_lines == 0:
            old_start -= 1  # type: ignore[operator]
        if new_lines == 0:
            new_start -= 1  # type: ignore[operator]
        out.append(f"@@ -{old_start},{old_lines} +{new_start},{new_lines} @@")
        out.extend(body)
    return "\n".join(out) + "\n"
