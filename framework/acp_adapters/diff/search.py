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
* cells are pruned with a lower bound on the edits still needed from them
  (see ``bounds.py``). Pruning a cell can only make the cells that read it
  reach less far, never further, and no cell of the final path is pruned (its
  remaining edits are exactly what the bound must not exceed), so the path
  found is still jsdiff's. ``|k - (N - M)|`` is a free bound. The stronger
  bounds cost a pass over both texts and are built only once a first search
  has spent about as much. They prove a search hopeless before it runs, and
  when one is exact at the start, a search limited to it keeps the frontier
  to the narrow band of cells that can still finish in time.

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
#: Budgets, in cells (one diagonal extended by one edit) per line past the common prefix,
#: plus a constant: the first search, before any bound is built (building one costs a pass
#: over the lines), and the attempt under the cheap bound, given up on when it is not exact.
FIRST_SEARCH_CELLS: tuple[float, int] = (0.5, 1024)
PRESENCE_SEARCH_CELLS: tuple[float, int] = (2.0, 4096)


def _budget(cells: tuple[float, int], lines: int) -> int:
    per_line, base = cells
    return int(per_line * lines) + base


class _Unequal:
    """Pads the texts' ends so that frontier lookups need no bounds checks."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return False

    __hash__ = object.__hash__


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


def _frontier(v: list[int], lo: int, hi: int) -> list[int]:
    """``[v[k] for k in range(lo, hi + 1, 2)]``; negative ``k`` index from the end of ``v``."""
    if lo >= 0 or hi < -1:
        return v[lo : hi + 1 : 2]
    if hi == -1:
        return v[lo::2]
    return v[lo::2] + v[lo & 1 : hi + 1 : 2]


class _Search:
    """One forward search to a fixed limit; it can be advanced in stages.

    ``v[k]`` is the old-text position of the furthest path on diagonal ``k``
    (negative: none); negative diagonals index from the end of the list, which
    is long enough for both signs. ``trace[d]`` keeps step ``d``'s frontier for
    the walk back: ``(lowest diagonal, positions of every second diagonal)``.
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
        self.v = [_NONE] * (2 * limit + 8)
        self.v[0] = prefix
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

    def compare(self, a: Sequence[object], b: Sequence[object]) -> None:
        """Go on comparing ``a`` and ``b`` instead: the same texts, each line replaced by
        what is equal to another exactly when the lines are (their ids, cheaper to compare)."""
        assert (len(a), len(b)) == (self.n, self.m)
        self.a, self.b = a, b
        self.a_pad = [*a, _PAD]
        self.b_pad = [*b, _PAD]

    def advance(self, max_cells: int) -> bool:
        """Run until the end is found, the search is exhausted, or ``max_cells`` are spent.

        Returns True when the search is over (``end`` set, or ``exhausted``).
        """
        if self.end is not None or self.exhausted:
            return True
        n, m, limit = self.n, self.m, self.limit
        delta = n - m
        stop_cells = self.cells + max_cells
        v, trace = self.v, self.trace
        step = self._step_plain if self.bound is None else self._step_bounded
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
                v[lo - 1] = _NONE
            if hi + 1 > self.prev_hi:
                v[hi + 1] = _NONE
            self.d = d
            self.cells += ((hi - lo) >> 1) + 1
            step(d, lo, hi)
            if self.end is not None:
                trace.append((lo, _frontier(v, lo, self.end)))
                return True
            xs = _frontier(v, lo, hi)
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

    # The two steps below extend every diagonal ``k`` of ``lo..hi`` by one edit
    # and its snake. Inside the range no parent sits on an edge (jsdiff stops
    # considering the diagonals beyond a path that touched one), so jsdiff's
    # choice comes down to: the insertion (from ``k + 1``) when its path is
    # further along the old text than the deletion's (from ``k - 1``), else the
    # deletion. They differ only in the bound check; the loop is the hot path.

    def _step_plain(self, d: int, lo: int, hi: int) -> None:
        a, b, a_pad, b_pad, n, m, v = self.a, self.b, self.a_pad, self.b_pad, self.n, self.m, self.v
        # A step writes only the diagonals of its parity: the deletion's parent of diagonal k
        # (v[k - 1]) is the insertion's parent read for k - 2, carried over in ``up``.
        up = v[lo - 1]
        for k in range(lo, hi + 1, 2):
            x = v[k + 1]
            if x <= up:
                x, up = up + 1, x
            else:
                up = x
            if x < 0:
                v[k] = _NONE
                continue
            y = x - k
            if a_pad[x] == b_pad[y]:
                x = _snake(a, b, x + 1, y + 1, n, m)
                y = x - k
            v[k] = x
            if (x >= n or y >= m) and self._on_edge(k, x, y):
                return

    def _step_bounded(self, d: int, lo: int, hi: int) -> None:
        a, b, a_pad, b_pad, n, m, v = self.a, self.b, self.a_pad, self.b_pad, self.n, self.m, self.v
        bound = self.bound
        assert bound is not None
        match_a, match_b = bound.match_a, bound.match_b
        extra_a, extra_b = bound.extra_a, bound.extra_b
        # Prune a cell when d + (n - x) + (m - y) - 2 * matched > limit.
        over = n + m - self.limit + d
        up = v[lo - 1]  # as in _step_plain
        for k in range(lo, hi + 1, 2):
            x = v[k + 1]
            if x <= up:
                x, up = up + 1, x
            else:
                up = x
            if x < 0:
                v[k] = _NONE
                continue
            y = x - k
            if a_pad[x] == b_pad[y]:
                x = _snake(a, b, x + 1, y + 1, n, m)
                y = x - k
            ma, mb = match_a[x], match_b[y]
            matched = ma if ma < mb else mb
            if extra_a is not None and extra_b is not None:
                ma, mb = extra_a[x], extra_b[y]
                matched += ma if ma < mb else mb
            if over > x + y + 2 * matched:
                v[k] = _NONE
                continue
            v[k] = x
            if (x >= n or y >= m) and self._on_edge(k, x, y):
                return

    def _on_edge(self, k: int, x: int, y: int) -> bool:
        """A path touched the right or bottom edge: narrow the diagonals; True at the end."""
        if x >= self.n:
            if y >= self.m:
                self.end = k
                return True
            self.max_diag = min(self.max_diag, k - 1)
        else:
            self.min_diag = max(self.min_diag, k + 1)
        return False

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
    if search.advance(_budget(FIRST_SEARCH_CELLS, rest)):
        return search.result()
    return _bounded(a, b, prefix, limit, search)


def _bounded(
    a: Sequence[T], b: Sequence[T], prefix: int, limit: int, first: _Search
) -> Script | None:
    """The search, again, with lower bounds; ``first`` is the search that stopped at its
    budget: at least one edit more than it reached is needed.

    Each attempt runs to a limit no lower than the best bound known, so when
    the bound is exact the first attempt finds the end in a narrow band. An
    attempt that reaches edit count ``d`` without finding the end proves that
    more than ``d`` edits are needed.
    """
    known = first.d + 1
    rest = len(a) + len(b) - 2 * prefix
    presence = presence_bound(a, b, prefix)
    if presence.floor > limit:
        return None
    if presence.floor == rest:
        # No line after the prefix occurs on both sides. Every path is then as
        # short, each cell takes the insertion whenever it has one, and the path
        # jsdiff ends on deletes every old line before it inserts any new one.
        runs = ((EQUAL, prefix), (DELETE, len(a) - prefix), (INSERT, len(b) - prefix))
        return [run for run in runs if run[1]]
    # Exact when lines were replaced by new ones (and then cheap); given up on past a budget.
    if presence.floor >= known:
        search = _Search(a, b, prefix, presence.floor, presence)
        if search.advance(_budget(PRESENCE_SEARCH_CELLS, rest)) and (
            search.end is not None or search.limit >= limit
        ):
            return search.result()
        # An exhausted attempt rules out its whole limit; a stopped one, what it searched.
        known = search.limit + 1 if search.exhausted else search.d + 1
    # Exact when lines were moved or swapped.
    a_ids, b_ids = interned(a, b)
    order = order_bound(a_ids, b_ids, prefix)
    if order.floor > limit:
        return None
    if order.floor >= known:
        search = _Search(a_ids, b_ids, prefix, order.floor, order)
        search.advance(_UNLIMITED)
        if search.end is not None or search.limit >= limit:
            return search.result()
    # The bounds are weak here: the checks would cost more than they save. The first search
    # (to the same limit, without a bound) goes on from where it stopped, on the lines' ids.
    first.compare(a_ids, b_ids)
    first.advance(_UNLIMITED)
    return first.result()
