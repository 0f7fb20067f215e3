"""The edit search: jsdiff 8.0.3's line diff, result for result, with a cap.

jsdiff runs Myers' forward greedy search over the edit graph. At edit count
``d`` it extends, on every diagonal ``k = x - y`` it still considers (``x`` old
lines and ``y`` new lines consumed), the path that reaches furthest: the
insertion from diagonal ``k + 1`` when that path is at least as far along the
old text as the deletion from ``k - 1``, else the deletion. Each path then
follows its run of equal lines (the snake). Once a path touches the right
(bottom) edge, diagonals above (below) it are no longer considered. When more
than ``max_edits`` edits would be needed, it gives up.

Several minimal edit scripts usually exist, and which one jsdiff picks follows
from these rules, so this module keeps them exactly and is fast in other ways:

* the common prefix is what jsdiff's edit count 0 consumes; the common suffix
  is *not* trimmed: that would change which minimal script is chosen;
* runs of equal lines are compared in bulk (list slices compare in C);
* a step whose frontier is wide is computed with C-level ``map`` passes over
  the whole frontier instead of a Python loop per cell;
* cells are pruned with a lower bound on the edits still needed from them
  (see ``bounds.py``). Pruning a cell can only make the cells that read it
  reach less far, never further, and no cell of the final path is pruned (its
  remaining edits are exactly what the bound must not exceed), so the path
  found is still jsdiff's. ``|k - (N - M)|`` is a free bound. The stronger
  bounds cost a pass over both texts and are built only once the search has
  spent about as much: they prove a search hopeless before it runs, and let
  it run to a tight limit first (iterative deepening), keeping the frontier
  to a narrow band.

The public entry is :func:`edit_script`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, TypeVar

from .bounds import Bound, interned, order_bound, presence_bound

T = TypeVar("T")

EQUAL: Final = 0
DELETE: Final = 1
INSERT: Final = 2

#: An edit script: runs of ``(operation, line count)``, operations EQUAL, DELETE or INSERT.
Script = list[tuple[int, int]]

#: A cell no path reaches. Any negative x means none; dead cells computed as
#: ``max(x_insert, x_delete + 1)`` from two of these stay hugely negative.
_NONE: Final = -(1 << 40)
#: A cell budget that is never reached.
_UNLIMITED: Final = 1 << 62


class _Unequal:
    """Pads the texts' ends so that frontier lookups need no bounds checks."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return False

    def __hash__(self) -> int:
        return 0


_PAD: Final = _Unequal()


def _snake(a: Sequence[T], b: Sequence[T], x: int, y: int, n: int, m: int) -> int:
    """Follow equal lines from ``(x, y)``; return the old-text position reached.

    Gallops: slices of growing length are compared in C, and a slice that
    differs is halved until the first difference is found.
    """
    step = 8
    while x < n and y < m:
        size = min(step, n - x, m - y)
        if a[x : x + size] == b[y : y + size]:
            x += size
            y += size
            step <<= 1
        elif size == 1:
            break
        else:
            step = size >> 1
    return x


def common_prefix(a: Sequence[T], b: Sequence[T]) -> int:
    """Number of leading lines ``a`` and ``b`` share."""
    if a and b and a[0] == b[0]:
        return _snake(a, b, 1, 1, len(a), len(b))
    return 0


class _Search:
    """One forward search to a fixed limit; it can be advanced in stages.

    ``v[off + k]`` is the old-text position of the furthest path on diagonal
    ``k`` (negative: none); ``trace[d]`` keeps step ``d``'s frontier for the
    walk back: ``(lowest diagonal, positions of every second diagonal from it)``.
    """

    def __init__(
        self,
        a: Sequence[object],
        b: Sequence[object],
        prefix: int,
        limit: int,
        bound: Bound | None = None,
    ) -> None:
        self.a, self.b = a, b
        self.n, self.m = n, m = len(a), len(b)
        # The texts padded with a line equal to nothing, so that a cell on an edge
        # needs no bounds check before its lines are compared.
        self.a_pad = [*a, _PAD]
        self.b_pad = [*b, _PAD]
        self.limit = limit
        self.bound = bound
        self.off = limit + 2
        self.v = [_NONE] * (2 * limit + 5)
        self.v[self.off] = prefix
        self.trace: list[tuple[int, list[int]]] = [(0, [prefix])]
        self.d = 0
        self.cells = 0
        # A prefix that ends on an edge is a path on that edge (jsdiff's step 0).
        self.min_diag = 1 if prefix >= m else -(limit + 3)
        self.max_diag = -1 if prefix >= n else limit + 3
        self.prev_lo = self.prev_hi = 0
        self.live_lo = self.live_hi = 0
        self.exhausted = False
        self.end: int | None = 0 if prefix >= n and prefix >= m else None

    def advance(self, max_cells: int) -> bool:
        """Run until the end is found, the search is exhausted, or ``max_cells`` are spent.

        Returns True when the search is over (``end`` set, or ``exhausted``).
        """
        if self.end is not None or self.exhausted:
            return True
        n, m, limit = self.n, self.m, self.limit
        delta = n - m
        stop_cells = self.cells + max_cells
        v, off, trace = self.v, self.off, self.trace
        while self.cells < stop_cells:
            d = self.d + 1
            if d > limit:
                self.exhausted = True
                return True
            reach = limit - d
            lo = max(self.min_diag, -d, self.live_lo - 1, delta - reach)
            hi = min(self.max_diag, d, self.live_hi + 1, delta + reach)
            if (lo + d) & 1:
                lo += 1
            if (hi + d) & 1:
                hi -= 1
            if lo > hi:
                self.exhausted = True
                return True
            # Slots outside the previous step's range hold older values: read them as none.
            if lo - 1 < self.prev_lo:
                v[off + lo - 1] = _NONE
            if hi + 1 > self.prev_hi:
                v[off + hi + 1] = _NONE
            self.d = d
            self.cells += ((hi - lo) >> 1) + 1
            self._step(d, lo, hi)
            if self.end is not None:
                trace.append((lo, v[off + lo : off + self.end + 1 : 2]))
                return True
            xs = v[off + lo : off + hi + 1 : 2]
            trace.append((lo, xs))
            if not self._find_live(lo, xs):
                self.exhausted = True
                return True
            self.prev_lo, self.prev_hi = lo, hi
        return False

    def _find_live(self, lo: int, xs: list[int]) -> bool:
        """Record the lowest and highest diagonal that still has a path."""
        first, last = 0, len(xs) - 1
        while first <= last and xs[first] < 0:
            first += 1
        if first > last:
            return False
        while xs[last] < 0:
            last -= 1
        self.live_lo, self.live_hi = lo + 2 * first, lo + 2 * last
        return True

    def _step(self, d: int, lo: int, hi: int) -> None:
        """Extend every diagonal of ``lo..hi`` by one edit and its snake.

        Inside the range no parent sits on an edge (jsdiff stops considering
        the diagonals beyond a path that touched one), so jsdiff's choice comes
        down to: the insertion when its path is further along the old text
        than the deletion's (``x_insert > x_delete``), else the deletion.
        """
        a, b, a_pad, b_pad, n, m = self.a, self.b, self.a_pad, self.b_pad, self.n, self.m
        v, off = self.v, self.off
        bound = self.bound
        # The bound inlined: prune a cell when d + (n - x) + (m - y) - 2 * matched > limit.
        over = n + m - self.limit + d
        match_a = match_b = extra_a = extra_b = None
        if bound is not None:
            match_a, match_b = bound.match_a, bound.match_b
            extra_a, extra_b = bound.extra_a, bound.extra_b
        for j in range(off + lo, off + hi + 1, 2):
            xr = v[j - 1]
            x = v[j + 1]
            if x <= xr:
                x = xr + 1
            if x < 0:
                v[j] = _NONE
                continue
            y = x - j + off
            if a_pad[x] == b_pad[y]:
                x = _snake(a, b, x + 1, y + 1, n, m)
                y = x - j + off
            if match_a is not None and match_b is not None:
                ma, mb = match_a[x], match_b[y]
                matched = ma if ma < mb else mb
                if extra_a is not None and extra_b is not None:
                    ma, mb = extra_a[x], extra_b[y]
                    matched += ma if ma < mb else mb
                if over > x + y + 2 * matched:
                    v[j] = _NONE
                    continue
            v[j] = x
            if x >= n:
                if x >= n and y >= m:
                    self.end = j - off
                    return
                if j - off - 1 < self.max_diag:
                    self.max_diag = j - off - 1
            elif y >= m and j - off + 1 > self.min_diag:
                self.min_diag = j - off + 1

    def script(self) -> Script:
        """Walk back from the end cell and return the edit script in order."""
        assert self.end is not None
        n, m = self.n, self.m
        trace = self.trace
        d, k = self.d, self.end
        lo, xs = trace[d]
        x = xs[(k - lo) >> 1]
        backwards: list[tuple[int, int]] = []
        while d > 0:
            plo, pxs = trace[d - 1]
            i = k - 1 - plo
            xr = pxs[i >> 1] if 0 <= i < 2 * len(pxs) else _NONE
            i = k + 1 - plo
            xa = pxs[i >> 1] if 0 <= i < 2 * len(pxs) else _NONE
            if xa >= 0 and xa - k - 1 < m and (xr < 0 or xr >= n or xr < xa):
                start, op, k, parent_x = xa, INSERT, k + 1, xa
            else:
                start, op, k, parent_x = xr + 1, DELETE, k - 1, xr
            if x > start:
                backwards.append((EQUAL, x - start))
            backwards.append((op, 1))
            d -= 1
            x = parent_x
        if x:
            backwards.append((EQUAL, x))
        script: Script = []
        for op, run in reversed(backwards):
            if script and script[-1][0] == op:
                script[-1] = (op, script[-1][1] + run)
            else:
                script.append((op, run))
        return script

    def result(self) -> Script | None:
        """The edit script when the end was found, None when the search gave up."""
        return self.script() if self.end is not None else None


def edit_script(a: Sequence[T], b: Sequence[T], max_edits: int | None = None) -> Script | None:
    """The line edit script jsdiff 8.0.3 finds from ``a`` to ``b``.

    ``max_edits`` is jsdiff's ``maxEditLength``: when more edits (inserted plus
    deleted lines) are needed, the search gives up and the result is None.
    None means no cap. Identical inputs give one EQUAL run (nothing when both
    are empty).
    """
    n, m = len(a), len(b)
    limit = n + m if max_edits is None else min(max_edits, n + m)
    prefix = common_prefix(a, b)
    if prefix == n and prefix == m:
        return [(EQUAL, n)] if n else []
    if limit <= 0:
        return None
    # Most edits are small and end here, before anything costs a pass over the texts.
    search = _Search(a, b, prefix, limit)
    rest = n + m - 2 * prefix
    if search.advance(rest // 8 + 512):
        return search.result()
    return _bounded(a, b, prefix, limit, search.d + 1)


def _bounded(a: Sequence[T], b: Sequence[T], prefix: int, limit: int, known: int) -> Script | None:
    """The search, again, with lower bounds; ``known`` edits at least are needed.

    Each attempt runs to a limit no lower than the best bound known, so when
    the bound is exact the first attempt finds the end in a narrow band. A
    failed attempt proves that more edits are needed than its limit.
    """
    presence = presence_bound(a, b, prefix)
    if presence.floor > limit:
        return None
    if presence.floor == len(a) + len(b) - 2 * prefix:
        # No line after the prefix occurs on both sides. Every path is then as
        # short, each cell takes the insertion whenever it has one, and the path
        # jsdiff ends on deletes every old line before it inserts any new one.
        runs = ((EQUAL, prefix), (DELETE, len(a) - prefix), (INSERT, len(b) - prefix))
        return [run for run in runs if run[1]]
    attempt = max(presence.floor, known)
    search = _Search(a, b, prefix, attempt, presence)
    search.advance(_UNLIMITED)
    if search.end is not None or attempt >= limit:
        return search.result()
    known = attempt + 1
    a_ids, b_ids = interned(a, b)
    order = order_bound(a_ids, b_ids, prefix)
    if order.floor > limit:
        return None
    attempt = max(order.floor, known)
    while True:
        search = _Search(a_ids, b_ids, prefix, attempt, order)
        search.advance(_UNLIMITED)
        if search.end is not None or attempt >= limit:
            return search.result()
        attempt = limit
