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
from itertools import accumulate, chain, compress, count, repeat


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


def _chains(pairs: list[tuple[int, int]], size: int, start: int) -> list[int]:
    """``out[x]`` = longest chain of unique pairs, increasing on both sides, from position ``x``.

    ``pairs`` are ``(position here, position on the other side)``, sorted by
    position here. Walking them backwards, a chain read backwards decreases on
    the other side, so the classic longest-increasing-subsequence tails run on
    negated positions. Positions between pairs take the value of the next pair.
    """
    out = [0] * (size + 1)
    tails: list[int] = []
    length = 0
    end = size  # out[x] is final for every x >= end
    for here, there in reversed(pairs):
        if here + 1 < end:
            out[here + 1 : end] = [length] * (end - here - 1)
        key = -there
        i = bisect_left(tails, key)
        if i == length:
            tails.append(key)
            length += 1
        else:
            tails[i] = key
        out[here] = length
        end = here
    out[:end] = [length] * end
    return out


def _where(counts: Counter[int], value: int) -> set[int]:
    """The ids that occur exactly ``value`` times."""
    return set(compress(counts.keys(), map(value.__eq__, counts.values())))


def order_bound(a_ids: Sequence[int], b_ids: Sequence[int], start: int) -> Bound:
    """The stronger bound, on texts whose lines are interned to integers."""
    count_a = Counter(a_ids[start:])
    count_b = Counter(b_ids[start:])
    # Sum over texts of |count in a - count in b|: each surplus line is one edit.
    common = sum(map(min, count_a.values(), map(count_b.get, count_a.keys(), repeat(0))))
    multiset = len(a_ids) + len(b_ids) - 2 * start - 2 * common
    unique = _where(count_a, 1) & _where(count_b, 1)
    shared = (count_a.keys() & count_b.keys()) - unique
    # Where each id last occurs: for a unique pair, its only place past the prefix.
    where_a = dict(zip(a_ids, range(len(a_ids)), strict=True))
    where_b = dict(zip(b_ids, range(len(b_ids)), strict=True))
    pairs_a = sorted((where_a[i], where_b[i]) for i in unique)
    pairs_b = sorted((y, x) for x, y in pairs_a)
    bound = Bound(_chains(pairs_a, len(a_ids), start), _chains(pairs_b, len(b_ids), start))
    if shared:
        is_shared = shared.__contains__
        bound.extra_a = _suffix_sums(list(map(is_shared, a_ids[start:])), start)
        bound.extra_b = _suffix_sums(list(map(is_shared, b_ids[start:])), start)
    bound.floor = max(multiset, bound.remaining(start, start))
    return bound


def interned(a: Sequence[Hashable], b: Sequence[Hashable]) -> tuple[list[int], list[int]]:
    """Both texts with each distinct line replaced by a small integer (equal lines, equal ids)."""
    table = dict(zip(dict.fromkeys(chain(a, b)), count()))
    get = table.__getitem__
    return list(map(get, a)), list(map(get, b))
