"""Lower bounds on the edits still needed from a point of the edit graph.

From a point ``(x, y)`` (``x`` old lines and ``y`` new lines consumed) the rest
of the diff turns ``a[x:]`` into ``b[y:]`` with ``(N - x) + (M - y) - 2L``
edits, where ``L`` is the length of a longest common subsequence of the two
suffixes. Any upper bound on ``L`` gives a lower bound on the edits. Both
bounds here have the shape ``L <= min(A[x], B[y]) + min(A2[x], B2[y])`` for
suffix-count arrays, so the search checks them inline with a few lookups:

* :func:`presence_bound` (cheap: a set and C-level passes): ``A[x]`` counts
  the lines of ``a[x:]`` whose text occurs in ``b`` at all. Exact for lines
  replaced by new ones; it alone ends a rewrite's search.
* :func:`order_bound` (a Python pass over both texts): lines whose text occurs
  exactly once on each side ("unique pairs") can only match each other, and
  the ones that match form a chain increasing on both sides, so at most
  ``min(chain(a[x:]), chain(b[y:]))`` of them match, where ``chain`` is the
  longest such chain within a suffix (patience sorting, once each way);
  lines whose text occurs on both sides but not once on each match at most
  ``min(count in a[x:], count in b[y:])`` times. This sees lines moved out of
  order: a reversed file or swapped lines.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Hashable, Sequence
from itertools import accumulate


class Bound:
    """Suffix counts ``match_a``/``match_b`` (and optional ``extra_a``/``extra_b``).

    At most ``min(match_a[x], match_b[y]) + min(extra_a[x], extra_b[y])`` lines
    of ``a[x:]`` and ``b[y:]`` match. Every array has one entry per position,
    plus one for the end (0).
    """

    __slots__ = ("extra_a", "extra_b", "floor", "match_a", "match_b")

    def __init__(
        self,
        match_a: list[int],
        match_b: list[int],
        extra_a: list[int] | None = None,
        extra_b: list[int] | None = None,
        floor: int = 0,
    ) -> None:
        self.match_a, self.match_b = match_a, match_b
        self.extra_a, self.extra_b = extra_a, extra_b
        #: A lower bound on the whole edit count, known when the bound was built.
        self.floor = floor

    def remaining(self, x: int, y: int) -> int:
        """A lower bound on the edits that turn ``a[x:]`` into ``b[y:]``."""
        matched = min(self.match_a[x], self.match_b[y])
        if self.extra_a is not None and self.extra_b is not None:
            matched += min(self.extra_a[x], self.extra_b[y])
        return len(self.match_a) - 1 - x + len(self.match_b) - 1 - y - 2 * matched


def _suffix_sums(flags: Sequence[int], start: int) -> list[int]:
    """``out[x]`` = sum of ``flags[x - start:]`` for x >= start; one entry per position and the end.

    Positions before ``start`` (the common prefix, never asked for) repeat the value at ``start``.
    """
    sums = list(accumulate(reversed(flags)))
    sums.reverse()
    sums.append(0)
    head = sums[0] if flags else 0
    return [head] * start + sums


def presence_bound(a: Sequence[Hashable], b: Sequence[Hashable], start: int) -> Bound:
    """The cheap bound: lines whose text the other side lacks never match."""
    in_b = set(b[start:]).__contains__
    in_a = set(a[start:]).__contains__
    match_a = _suffix_sums(list(map(in_b, a[start:])), start)
    match_b = _suffix_sums(list(map(in_a, b[start:])), start)
    bound = Bound(match_a, match_b)
    bound.floor = bound.remaining(start, start)
    return bound


def _chains(ids: Sequence[int], partner: dict[int, int], start: int) -> list[int]:
    """``out[x]`` = longest chain of unique pairs, increasing on both sides, within ``ids[x:]``.

    Walks the suffix backwards; read backwards a chain decreases on the other
    side, so the classic longest-increasing-subsequence tails run on negated
    partner positions.
    """
    n = len(ids)
    out = [0] * (n + 1)
    tails: list[int] = []
    length = 0
    get = partner.get
    for x in range(n - 1, start - 1, -1):
        other = get(ids[x])
        if other is not None:
            key = -other
            i = bisect_left(tails, key)
            if i == length:
                tails.append(key)
                length += 1
            else:
                tails[i] = key
        out[x] = length
    for x in range(start):
        out[x] = length
    return out


def order_bound(a_ids: Sequence[int], b_ids: Sequence[int], start: int) -> Bound:
    """The stronger bound, on texts whose lines are interned to integers."""
    count_a = Counter(a_ids[start:])
    count_b = Counter(b_ids[start:])
    # Sum over texts of |count in a - count in b|: each surplus line is one edit.
    multiset = sum((count_a - count_b).values()) + sum((count_b - count_a).values())
    unique = {i for i, c in count_a.items() if c == 1 and count_b.get(i) == 1}
    shared = {i for i, c in count_a.items() if i in count_b and i not in unique}
    pos_a = {a_ids[x]: x for x in range(start, len(a_ids)) if a_ids[x] in unique}
    pos_b = {b_ids[y]: y for y in range(start, len(b_ids)) if b_ids[y] in unique}
    bound = Bound(_chains(a_ids, pos_b, start), _chains(b_ids, pos_a, start))
    if shared:
        is_shared = shared.__contains__
        bound.extra_a = _suffix_sums(list(map(is_shared, a_ids[start:])), start)
        bound.extra_b = _suffix_sums(list(map(is_shared, b_ids[start:])), start)
    bound.floor = max(multiset, bound.remaining(start, start))
    return bound


def interned(a: Sequence[Hashable], b: Sequence[Hashable]) -> tuple[list[int], list[int]]:
    """Both texts with each distinct line replaced by a small integer (equal lines, equal ids)."""
    table = {line: i for i, line in enumerate(dict.fromkeys([*a, *b]))}
    get = table.__getitem__
    return list(map(get, a)), list(map(get, b))
