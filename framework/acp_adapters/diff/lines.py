"""Line tokens as jsdiff's line diff sees them.

jsdiff splits a text at ``\\n`` only (``\\r\\n`` keeps its ``\\r`` inside the
line) and keeps each line's newline as part of the token, so ``"x\\n"`` and a
final ``"x"`` without a newline are different lines. Here a line is the text
between newlines, without its ``\\n``; the last line of a text that does not
end with a newline is wrapped in a 1-tuple. A 1-tuple never equals a string,
so list and slice comparisons keep jsdiff's token equality without copying
every line to append its newline.

``str.splitlines`` must not be used: it also splits at ``\\r``, U+2028, form
feed, vertical tab, NEL and more.
"""

from __future__ import annotations

from typing import cast

#: One line: its text, or ``(text,)`` for a last line that has no newline.
Line = str | tuple[str]


def split_lines(text: str) -> list[Line]:
    """Split ``text`` into jsdiff line tokens (see the module docstring)."""
    lines = cast("list[Line]", text.split("\n"))
    last = lines.pop()
    if last:
        lines.append((cast("str", last),))
    return lines
