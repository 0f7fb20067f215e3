"""JSON as every line of ACP traffic is read and written (standard library only).

Two things an untrusted peer can send that plain ``json`` does not survive:

* a string with a lone surrogate (``"\\ud800"`` is legal JSON): it cannot be
  written as UTF-8, so a message holding one is written with ``\\uXXXX`` escapes;
* arrays or objects nested deeply: reading them exhausts Python's recursion, and
  what reads the value after (the projection, a replay, the timeline's JSON)
  would fail later and farther from the cause. A text nested deeper than
  :data:`MAX_DEPTH` is refused as not JSON, with the other unreadable lines.
"""

from __future__ import annotations

import json
from typing import Any


def dumps(value: Any, **options: Any) -> str:
    """JSON text of ``value``, other than ASCII characters as they are, always valid UTF-8."""
    text = json.dumps(value, ensure_ascii=False, **options)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: only its escape is UTF-8
        return json.dumps(value, ensure_ascii=True, **options)
    return text


#: How deep arrays and objects may nest in one message (ACP's own go about ten deep).
MAX_DEPTH = 128


def loads(text: str | bytes) -> Any:
    """The value of a JSON text.

    :raises ValueError: not JSON, or nested deeper than :data:`MAX_DEPTH`.
    """
    try:
        value = json.loads(text)
    except RecursionError:
        raise ValueError(f"JSON nested deeper than {MAX_DEPTH} levels") from None
    # Nesting takes two brackets a level: most texts are too short, or have too few
    # brackets, to check at all.
    if len(text) <= 2 * MAX_DEPTH:
        return value
    opening = (
        text.count(b"{") + text.count(b"[")
        if isinstance(text, bytes)
        else text.count("{") + text.count("[")
    )
    if opening > MAX_DEPTH and _deeper_than(value, MAX_DEPTH):
        raise ValueError(f"JSON nested deeper than {MAX_DEPTH} levels")
    return value


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether arrays and objects nest more than ``limit`` levels in ``value`` (no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        children = (
            item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        )
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False
