"""JSON as every line of ACP traffic and every capture line is read and written.

Standard library only: the replay agent imports it in every replayed session.

What an untrusted peer can send that plain ``json`` does not survive:

* a string with a lone surrogate (``"\\ud800"`` is legal JSON): it cannot be
  written as UTF-8, so a message holding one is written with ``\\uXXXX`` escapes;
* arrays or objects nested deeply: reading them exhausts Python's recursion, and
  what reads the value after (the projection, a replay, the timeline's JSON)
  would fail later and farther from the cause. A text nested deeper than
  :data:`MAX_DEPTH` is refused as not JSON, with the other unreadable lines;
* ``NaN``, ``Infinity``, ``-Infinity`` and numbers too large for a float
  (``1e400``): not JSON (RFC 8259), though Python reads them. Read, they would be
  written back as the same non-JSON words (an answer echoing a ``NaN`` id, a
  capture line no other reader takes). They are refused as not JSON
  (:class:`NotFiniteError`), and :func:`dumps` refuses to write them;
* very many small values in one line (``[{},{},...]``): 48 MiB of them cost
  gigabytes and seconds to read. :func:`count_elements` counts them cheaply, so a
  reader can refuse the line before parsing it.

And what the lines are cut at: ``\\n`` only (:class:`LineSplitter`). Python's
``str.splitlines`` also cuts at U+2028, U+2029, U+0085 and other characters a
JSON string holds as they are; :func:`dumps` escapes those three, so a line it
writes is one line for any reader.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

#: The longest line read, live or from a capture (bytes, without its line break): a
#: longer one is dropped as it comes, never held whole.
DEFAULT_MAX_LINE_BYTES = 50 * 1024 * 1024
#: How many elements (see :func:`count_elements`) one line may hold. A 30 MiB file in
#: one ``fs/write_text_file`` is a handful (a string is one element); ACP's own
#: messages hold a few hundred.
DEFAULT_MAX_ELEMENTS = 200_000
#: How deep arrays and objects may nest in one message (ACP's own go about ten deep).
MAX_DEPTH = 128

#: Characters ``json`` writes as they are (``ensure_ascii=False``) that some line
#: readers take as line breaks (``str.splitlines``, JavaScript's old line terminators).
_LINE_BREAKS = re.compile("[\u0085\u2028\u2029]")


def dumps(value: Any, **options: Any) -> str:
    """JSON text of ``value``: other than ASCII characters as they are, always valid UTF-8,
    with U+0085, U+2028 and U+2029 escaped (the text is one line for every reader).

    :raises ValueError: ``value`` holds NaN or an infinity, which JSON does not have.
    """
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, **options)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: only its escape is UTF-8
        return json.dumps(value, ensure_ascii=True, allow_nan=False, **options)
    if "\u0085" in text or "\u2028" in text or "\u2029" in text:
        # Outside strings JSON has no such character: every one is inside a string.
        text = _LINE_BREAKS.sub(lambda found: f"\\u{ord(found.group()):04x}", text)
    return text


class NotFiniteError(ValueError):
    """The text holds ``NaN``, ``Infinity`` or a number too large for a float: not JSON."""


class TooDeepError(ValueError):
    """The text's arrays and objects nest deeper than :data:`MAX_DEPTH`."""


def _refuse_constant(word: str) -> Any:
    raise NotFiniteError(f"{word} is not JSON")


def _finite_float(text: str) -> float:
    number = float(text)
    if math.isinf(number):
        raise NotFiniteError(f"{text[:40]} is too large a number")
    return number


#: One decoder for every finite read: ``json.loads`` with hooks builds a new one per call,
#: which costs as much as reading a short ACP message.
_FINITE = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_finite_float)


def loads(text: str | bytes, *, finite: bool = True) -> Any:
    """The value of a JSON text.

    ``finite=False`` reads ``NaN`` and the infinities as Python does: only to learn
    what a refused text was (the connection answers a request that held one).

    :raises NotFiniteError: ``NaN``, ``Infinity`` or an infinite number (``finite``).
    :raises ValueError: not JSON, or nested deeper than :data:`MAX_DEPTH`.
    """
    try:
        if finite:
            value = _FINITE.decode(_decoded(text) if isinstance(text, bytes) else text)
        else:
            value = json.loads(text)
    except RecursionError:
        raise TooDeepError(f"JSON nested deeper than {MAX_DEPTH} levels") from None
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
        raise TooDeepError(f"JSON nested deeper than {MAX_DEPTH} levels")
    return value


def _decoded(data: bytes) -> str:
    """The text of JSON bytes, read as ``json.loads`` reads them (its encoding detection,
    surrogates let through for the checks after to see)."""
    try:
        return data.decode(json.detect_encoding(data), "surrogatepass")
    except UnicodeDecodeError as error:
        raise ValueError(f"not {error.encoding}: {error.reason}") from None


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


# --- counting elements ----------------------------------------------------------------------

#: Once escapes are gone (see :func:`count_elements`): a whole string, an unterminated
#: one (its opening quote alone), or what starts an array, an object or the next item.
_TOKENS = re.compile(rb'"[^"]*"|"|[\[{,]')
#: How many tokens :func:`count_elements` counts between two of its reports.
COUNT_STEP = 8192


def count_elements(line: bytes, limit: int) -> Iterator[int]:
    """Count the elements of a JSON line, stopping as soon as there are more than ``limit``.

    An element is a string, an array, an object, or an item after a comma: the
    number of Python objects reading the line would make, give or take its
    numbers. Strings are skipped whole by the regular expression (in C), so
    the count costs ``O(limit)`` Python steps however long the line is, and a
    30 MiB string is one element.

    A generator: it yields the count so far every :data:`COUNT_STEP` elements (a
    caller in an event loop lets others run then), and last the count, which is
    more than ``limit`` when it stopped early. The text need not be JSON: what
    is not JSON is counted as well as it can be, and the parser refuses it later.
    """
    if b"\\" in line:
        # Escapes first, so that every quote left opens or closes a string: escaped
        # backslashes (pairs, from the left, as a JSON reader takes them), then
        # escaped quotes. What the escapes held does not count, only where strings are.
        line = line.replace(b"\\\\", b"").replace(b'\\"', b"")
    count = 0
    for token in _TOKENS.finditer(line):
        if token.end() - token.start() == 1 and line[token.start()] == 0x22:
            break  # a quote that no quote closes: the rest is inside a string
        count += 1
        if count > limit:
            break
        if count % COUNT_STEP == 0:
            yield count
    yield count


def too_many_elements(line: bytes, limit: int) -> int | None:
    """The element count of ``line`` when it is more than ``limit`` (see
    :func:`count_elements`), else None. A line of at most ``limit`` bytes cannot
    hold more (each element takes a byte at least): it is not counted."""
    if len(line) <= limit:
        return None
    *_, count = count_elements(line, limit)  # the last count is the answer
    return count if count > limit else None


# --- lines ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class LineTooLong:
    """A line longer than the limit: dropped as it came; ``limit`` is the limit it passed."""

    limit: int


class LineSplitter:
    """Cuts a byte stream into lines at ``\\n`` only, none longer than ``max_bytes``.

    Fed chunk by chunk (:meth:`feed`, then :meth:`end`): each complete line comes
    out as bytes, without its ``\\n``; a line longer than ``max_bytes`` comes out as
    one :class:`LineTooLong`, as soon as it is known, and its bytes are dropped as
    they come, never held whole. The live connection and every capture reader cut
    their lines with it, so both take the same lines.
    """

    def __init__(self, max_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        self.max_bytes = max_bytes
        self._buffer = bytearray()
        self._dropping = False

    def feed(self, chunk: bytes) -> list[bytes | LineTooLong]:
        """The lines ``chunk`` completes (or finds too long)."""
        lines: list[bytes | LineTooLong] = []
        start = 0
        while True:
            newline = chunk.find(b"\n", start)
            if newline < 0:
                if not self._dropping:
                    self._buffer += chunk[start:]
                    if len(self._buffer) > self.max_bytes:
                        lines.append(LineTooLong(self.max_bytes))
                        self._buffer.clear()
                        self._dropping = True
                return lines
            if self._dropping:
                self._dropping = False  # the end of the line being dropped
            elif len(self._buffer) + newline - start > self.max_bytes:
                lines.append(LineTooLong(self.max_bytes))
            elif self._buffer:
                self._buffer += chunk[start:newline]
                lines.append(bytes(self._buffer))
            else:
                lines.append(chunk[start:newline])
            self._buffer.clear()
            start = newline + 1

    def end(self) -> list[bytes | LineTooLong]:
        """The last line, when the stream does not end with a line break."""
        if self._buffer and not self._dropping:
            last = bytes(self._buffer)
            self._buffer.clear()
            return [last]
        return []
