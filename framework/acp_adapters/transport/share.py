"""Each connection's share of the event loop: a flooding agent does not take it from the others.

Every session of a process runs in one event loop, and each connection's reading and
handling take that loop's time. Taking turns (a connection's dispatcher lets the loop run
after every slice of messages) is not enough when one agent floods: the loop is then never
idle, so every other session's update waits for it, and so does the store's worker thread,
which needs the interpreter's lock to deliver a commit.

So each connection of an event loop reports the loop (CPU) time its reading and handling
take, to one :class:`LoopShare` per event loop. A connection with a backlog, one that has
handled a whole slice of messages without catching up, is paced while another connection
of the loop is active: after each slice it waits until its share of the loop leaves the loop
idle for ``HEADROOM - 1`` times what the rest of the loop uses (the other sessions, the
store, the application), and at least ``MIN_SHARE`` of the loop is its own. While it waits,
its messages wait in its inbox and then in its pipe, and the agent's writes block:
backpressure, as a slow reader gives. A connection alone in its loop, or one whose agent
sends at a pace the loop keeps up with, is never paced.

The times are the loop thread's CPU time (``time.thread_time``), averaged over the last
``WINDOW`` seconds: time the loop spends waiting, or spends in other threads, is no one's.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from anyio.lowlevel import RunVar

__all__ = ["HEADROOM", "MIN_SHARE", "WINDOW", "Account", "LoopShare", "loop_share"]

#: The time constant of the averages (seconds): what a connection did a second ago counts
#: for ``exp(-1 / WINDOW)`` of what it does now.
WINDOW = 0.5
#: A paced connection may use ``1 - HEADROOM * others`` of the loop, ``others`` being the
#: share of the loop the rest of it uses: the loop stays idle ``HEADROOM - 1`` times that.
HEADROOM = 4.0
#: What a paced connection may always use: a flood goes on, however busy the loop.
MIN_SHARE = 0.02
#: The longest wait after one slice (seconds).
MAX_WAIT = 0.25


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
        """Report the loop time of a slice of messages handled without catching up, and
        say how long to wait before the next one (0: go on)."""
        now = self._share.clock()
        self._use.add(now, cpu_seconds)
        share = self._share
        share.saw(self, now)
        if not share.others_active(self, now):
            return 0.0
        own = self._use.value(now)
        others = max(0.0, share.loop_use(now) - own)
        allowed = max(MIN_SHARE, 1.0 - HEADROOM * others)
        if own <= allowed:
            return 0.0
        # Waiting w after a slice of c gives a share of c / (c + w).
        return min(MAX_WAIT, cpu_seconds * (1.0 / allowed - 1.0))

    def use(self) -> float:
        """This connection's recent share of the loop (0 to 1)."""
        return self._use.value(self._share.clock())


class LoopShare:
    """The connections of one event loop, and how busy the loop is."""

    __slots__ = ("_cpu", "_loop", "_recent", "clock", "cpu_clock")

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
        #: The two connections that reported last, and when: enough to know whether one
        #: other than the asking one is active.
        self._recent: list[tuple[Account | None, float]] = [(None, -math.inf)] * 2

    def account(self) -> Account:
        return Account(self)

    def saw(self, account: Account, now: float) -> None:
        cpu = self.cpu_clock()
        self._loop.add(now, max(0.0, cpu - self._cpu))
        self._cpu = cpu
        if self._recent[0][0] is account:
            self._recent[0] = (account, now)
        else:
            self._recent[1] = self._recent[0]
            self._recent[0] = (account, now)

    def others_active(self, account: Account, now: float) -> bool:
        """Whether a connection other than ``account`` took loop time in the last window."""
        return any(seen is not account and now - at < WINDOW for seen, at in self._recent)

    def loop_use(self, now: float) -> float:
        """The loop thread's recent share of the CPU (0 to 1)."""
        return self._loop.value(now)


_SHARES: RunVar[LoopShare] = RunVar("acp_adapters_loop_share")


def loop_share() -> LoopShare:
    """The running event loop's :class:`LoopShare` (made on first use)."""
    try:
        return _SHARES.get()
    except LookupError:
        share = LoopShare()
        _SHARES.set(share)
        return share
