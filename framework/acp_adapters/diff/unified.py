"""Unified patches, byte for byte as jsdiff 8.0.3 writes them.

:func:`unified_diff` is jsdiff's ``createTwoFilesPatch(old_name, new_name,
old, new, undefined, undefined, {context, headerOptions: FILE_HEADERS_ONLY,
maxEditLength})``:

* ``--- old_name`` and ``+++ new_name``, nothing else above the hunks;
* hunks keep ``context`` equal lines around changes and merge when at most
  ``2 * context`` equal lines separate them;
* hunk ranges are always ``start,count``, and a side with no lines starts one
  line earlier (``@@ -0,0 +1,2 @@``);
* ``\\ No newline at end of file`` follows a line that ends its text without
  a newline;
* changes come in the order of the edit script, deletions and insertions
  interleaved as found, never regrouped.
"""

from __future__ import annotations

from typing import Final

from .lines import Line, split_lines
from .search import EQUAL, INSERT, Script, edit_script

NO_NEWLINE: Final = "\\ No newline at end of file"
DEV_NULL: Final = "/dev/null"


class Hunk:
    """One hunk: its ranges (as printed) and its body lines."""

    __slots__ = ("lines", "new_count", "new_start", "old_count", "old_start")

    def __init__(
        self, old_start: int, old_count: int, new_start: int, new_count: int, lines: list[str]
    ) -> None:
        # The unified format's quirk: an empty side starts one line earlier.
        self.old_start = old_start - 1 if old_count == 0 else old_start
        self.old_count = old_count
        self.new_start = new_start - 1 if new_count == 0 else new_start
        self.new_count = new_count
        self.lines = lines

    def header(self) -> str:
        return f"@@ -{self.old_start},{self.old_count} +{self.new_start},{self.new_count} @@"


def _emit(out: list[str], prefix: str, lines: list[Line]) -> None:
    for line in lines:
        if isinstance(line, str):
            out.append(prefix + line)
        else:
            out.append(prefix + line[0])
            out.append(NO_NEWLINE)


def hunks(a: list[Line], b: list[Line], script: Script, context: int = 3) -> list[Hunk]:
    """Group an edit script into hunks the way jsdiff's ``structuredPatch`` does."""
    result: list[Hunk] = []
    body: list[str] = []
    old_start = new_start = 0  # 0: no hunk open
    old_line = new_line = 1  # 1-based line numbers of the next old and new line
    x = y = 0  # positions in a and b
    last = len(script) - 1
    for i, (op, count) in enumerate(script):
        if op != EQUAL:
            if not old_start:
                old_start, new_start = old_line, new_line
                if i > 0:
                    # The previous run is equal lines: its last `context` lines lead in.
                    lead = min(script[i - 1][1], context) if context > 0 else 0
                    _emit(body, " ", b[y - lead : y])
                    old_start -= lead
                    new_start -= lead
            if op == INSERT:
                _emit(body, "+", b[y : y + count])
                y += count
                new_line += count
            else:
                _emit(body, "-", a[x : x + count])
                x += count
                old_line += count
            continue
        if old_start:
            if count <= 2 * context and i < last:
                _emit(body, " ", b[y : y + count])
            else:
                tail = min(count, context)
                _emit(body, " ", b[y : y + tail])
                result.append(
                    Hunk(
                        old_start,
                        old_line - old_start + tail,
                        new_start,
                        new_line - new_start + tail,
                        body,
                    )
                )
                old_start = new_start = 0
                body = []
        x += count
        y += count
        old_line += count
        new_line += count
    if old_start:
        # The script ended with a change: close its hunk with no trailing context.
        result.append(Hunk(old_start, old_line - old_start, new_start, new_line - new_start, body))
    return result


def _side(prefix: str, text: str) -> tuple[str, int]:
    """The body of a hunk that adds (or removes) every line of ``text``, and its line count."""
    body = prefix + text.replace("\n", "\n" + prefix)
    if text.endswith("\n"):
        return body[: -len(prefix)], text.count("\n")
    return body + "\n" + NO_NEWLINE + "\n", text.count("\n") + 1


def unified_diff(
    old_name: str,
    new_name: str,
    old_text: str,
    new_text: str,
    *,
    context: int = 3,
    max_edits: int | None = None,
) -> str | None:
    """A unified patch from ``old_text`` to ``new_text``, as jsdiff 8.0.3 writes it.

    Returns None when the edit search gives up: when both texts have lines
    and more than ``max_edits`` line edits are needed. Equal texts give the
    two header lines alone.
    """
    header = f"--- {old_name}\n+++ {new_name}\n"
    if old_text == new_text:
        return header
    # One empty side: a single hunk of every line of the other, no search needed.
    if not old_text or not new_text:
        body, count = _side("+" if new_text else "-", new_text or old_text)
        if max_edits is not None and count > max_edits:
            return None
        ranges = f"-0,0 +1,{count}" if new_text else f"-1,{count} +0,0"
        return f"{header}@@ {ranges} @@\n{body}"
    a, b = split_lines(old_text), split_lines(new_text)
    script = edit_script(a, b, max_edits)
    if script is None:
        return None
    return format_patch(header, hunks(a, b, script, context))


def format_patch(header: str, patch_hunks: list[Hunk]) -> str:
    """Headers, then each hunk's range line and body, one line each."""
    out = [header.rstrip("\n")]
    for hunk in patch_hunks:
        out.append(hunk.header())
        out.extend(hunk.lines)
    return "\n".join(out) + "\n"
