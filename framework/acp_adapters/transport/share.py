"""Each connection's share of the event loop: a flooding agent does not take it from the others.

Every session of a process runs in one event loop, and each connection's reading and
handling take that loop's time. Taking turns (a connection's dispatcher lets the loop run
after every slice of messages) is not enough when one agent floods: the loop is then never
idle, so every other session's update waits for it, and so does the store's worker thread,
which needs the interpreter's lock to deliver a commit.

So each connection of an event loop reports the loop (CPU) time its reading and handling
take, to one :class:`LoopShare` per event loop. A connection with a backlog (it handled a
whole slice of messages without catching up: it is *heavy*) is paced while a connection
that is not (a *light* one) is active: the heavy connections together may use
``1 - HEADROOM * light`` of the loop, ``light`` being what the rest of the loop uses (the
light sessions, the store, the application), so that the loop stays idle ``HEADROOM - 1``
times that; and at least ``MIN_SHARE``, so that a flood goes on however busy the loop is.
They share that equally: after each slice, a heavy connection past its part waits until it
is back within it. While it waits, its messages wait in its inbox and then in its pipe, and
the agent's writes block: backpressure, as a slow reader gives; nothing is dropped.

Heavy connections with no light one active are not paced: they take turns, slice by slice,
and the loop is all theirs (a session alone, or a process of floods, loses nothing).

The times are the loop thread's CPU time (``time.thread_time``), averaged over the last
``WINDOW`` seconds: time the loop spends waiting, or spends in other threads, is no one's.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from anyio.lowlevel import RunVar

__all__ = ["HEADROOM", "MAX_WAIT", "MIN_SHARE", "WINDOW", "Account", "LoopShare", "loop_share"]

#: The time constant of the averages (seconds): what a connection did a second ago counts
#: for ``exp(-1 / WINDOW)`` of what it does now; a connection is heavy, or light, for that long.
WINDOW = 0.5
#: The heavy connections may use ``1 - HEADROOM * light`` of the loop together, ``light`` being
#: the share of the loop the rest of it uses: the loop stays idle ``HEADROOM - 1`` times that.
HEADROOM = 4.0
#: What the heavy connections may always use together: a flood goes on, however busy the loop.
MIN_SHARE = 0.02
#: The longest wait after one slice (seconds).
MAX_WAIT = 1.0


class _Rate:
    """An exponentially weighted average of a rate (seconds of CPU per second)."""

    __slots__ = ("at", "rate")

    def __init__(self, now: float) -> None:
        self.rate = 0.0
        self.at = now

    def add(self, now: float, seconds: float) -> None:
        elapsed = now - self.at
        if elapsed > 0:
            self.rate *= math.exp(-elapsed / WINDOW)
            self.at = now
        self.rate += seconds / WINDOW

    def value(self, now: float) -> float:
        elapsed = now - self.at
        return self.rate * math.exp(-elapsed / WINDOW) if elapsed > 0 else self.rate


class Account:
    """One connection's use of its loop."""

    __slots__ = ("_share", "_use")

    def __init__(self, share: LoopShare) -> None:
        self._share = share
        self._use = _Rate(share.clock())

    def spent(self, cpu_seconds: float) -> None:
        """Report loop time this connection took."""
        now = self._share.clock()
        self._use.add(now, cpu_seconds)
        self._share.saw(self, now)

    def wait_after_slice(self, cpu_seconds: float) -> float:
        """Report the loop time of a slice of messages handled without catching up (this
        connection is heavy), and say how long to wait before the next one (0: go on)."""
        share = self._share
        now = share.clock()
        self._use.add(now, cpu_seconds)
        share.saw(self, now, heavy=True)
        allowed = share.allowed(self, now)
        if allowed is None or self._use.value(now) <= allowed:
            return 0.0
        # Waiting w after a slice of c gives a share of c / (c + w).
        return min(MAX_WAIT, cpu_seconds * (1.0 / allowed - 1.0))

    def use(self, now: float | None = None) -> float:
        """This connection's recent share of the loop (0 to 1)."""
        return self._use.value(self._share.clock() if now is None else now)


class LoopShare:
    """The connections of one event loop, and how busy the loop is."""

    __slots__ = ("_cpu", "_heavy", "_light", "_loop", "clock", "cpu_clock")

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        cpu_clock: Callable[[], float] = time.thread_time,
    ) -> None:
        """``clock``: now (seconds); ``cpu_clock``: the loop thread's CPU time (seconds)."""
        self.clock = clock
        self.cpu_clock = cpu_clock
        now = clock()
        self._loop = _Rate(now)
        self._cpu = cpu_clock()
        #: The heavy connections, and when each last was (a slice of a backlog).
        self._heavy: dict[Account, float] = {}
        #: The two light connections that reported last, and when: enough to know whether
        #: one other than the asking one is active.
        self._light: list[tuple[Account | None, float]] = [(None, -math.inf)] * 2

    def account(self) -> Account:
        return Account(self)

    def saw(self, account: Account, now: float, *, heavy: bool = False) -> None:
        """``account`` reported loop time (``heavy``: a slice of its backlog)."""
        cpu = self.cpu_clock()
        self._loop.add(now, max(0.0, cpu - self._cpu))
        self._cpu = cpu
        if heavy:
            self._heavy[account] = now
        else:
            last = self._heavy.get(account)
            if last is None or now - last >= WINDOW:
                if self._light[0][0] is not account:
                    self._light[1] = self._light[0]
                self._light[0] = (account, now)

    def allowed(self, asking: Account, now: float) -> float | None:
        """Each heavy connection's part of the loop now; None when no light connection
        other than ``asking`` (it was light before its backlog) is active: the heavy ones
        are not paced."""
        heavy = {a: last for a, last in self._heavy.items() if now - last < WINDOW}
        self._heavy = heavy  # the others are light again
        if not any(
            account is not asking and now - at < WINDOW and account not in heavy
            for account, at in self._light
        ):
            return None
        heavy_use = sum(account.use(now) for account in heavy)
        light = max(0.0, self._loop.value(now) - heavy_use)
        return max(MIN_SHARE, 1.0 - HEADROOM * light) / max(1, len(heavy))

    def loop_use(self, now: float | None = None) -> float:
        """The loop thread's recent share of the CPU (0 to 1)."""
        return self._loop.value(self.clock() if now is None else now)


_SHARES: RunVar[LoopShare] = RunVar("acp_adapters_loop_share")


def loop_share() -> LoopShare:
    """The running event loop's :class:`LoopShare` (made on first use)."""
    try:
        return _SHARES.get()
    except LookupError:
        share = LoopShare()
        _SHARES.set(share)
        return share
