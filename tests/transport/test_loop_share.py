"""Each connection's share of the event loop (transport/share.py), on a simulated loop.

A simulated loop runs a flooding connection (always something to handle, a slice at a
time, waiting what its account says) and a steady one (``demand`` of the loop's time,
handled between the flood's slices and while it waits), on fake clocks: the shares they
end up with are what the pacing gives, with no machine's timing in them.
"""

from __future__ import annotations

import anyio
import pytest

from acp_adapters.transport import share as share_module
from acp_adapters.transport.jsonrpc import DISPATCH_SLICE, Connection
from acp_adapters.transport.share import HEADROOM, MIN_SHARE, WINDOW, Account, LoopShare


class Loop:
    """Fake clocks: wall time and the loop thread's CPU time, both moved by hand."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.cpu = 0.0
        self.share = LoopShare(clock=lambda: self.now, cpu_clock=lambda: self.cpu)

    def run(self, account: Account, seconds: float) -> None:
        self.now += seconds
        self.cpu += seconds
        account.spent(seconds)

    def idle(self, seconds: float) -> None:
        self.now += seconds


def simulate(
    demand: float, floods: int = 1, seconds: float = 30.0, slice_cpu: float = 0.001
) -> tuple[list[float], float]:
    """The shares of the loop that ``floods`` flooding connections (each always has a
    slice to handle, and waits what its account says after it) and a steady one get, when
    the steady one wants ``demand`` of the loop (0: there is none)."""
    loop = Loop()
    flooding = [loop.share.account() for _ in range(floods)]
    steady = loop.share.account() if demand else None
    start = last = loop.now
    ready = [loop.now] * floods  # when each flood may take its next slice
    used = [0.0] * floods
    steadying = 0.0
    while loop.now - start < seconds:
        # What came for the steady connection since it last ran, handled now: its turn
        # comes between any two slices.
        owed = demand * (loop.now - last)
        last = loop.now
        if steady is not None and owed > 0:
            loop.run(steady, owed)
            steadying += owed
        which = min(range(floods), key=ready.__getitem__)
        if ready[which] > loop.now:  # every flood waits: the loop is idle, or the steady one's
            loop.idle(min(0.001, ready[which] - loop.now))
            continue
        loop.now += slice_cpu
        loop.cpu += slice_cpu
        used[which] += slice_cpu
        wait = flooding[which].wait_after_slice(slice_cpu)
        assert 0.0 <= wait <= share_module.MAX_WAIT
        ready[which] = loop.now + wait
    elapsed = loop.now - start
    return [u / elapsed for u in used], steadying / elapsed


def test_a_connection_alone_in_its_loop_is_never_paced() -> None:
    assert simulate(0.0) == ([pytest.approx(1.0)], 0.0)


def test_floods_with_no_light_connection_share_the_whole_loop() -> None:
    shares, _ = simulate(0.0, floods=4)
    assert sum(shares) == pytest.approx(1.0)
    assert shares == [pytest.approx(0.25, abs=0.01)] * 4


@pytest.mark.parametrize("demand", [0.05, 0.1, 0.15, 0.2])
@pytest.mark.parametrize("floods", [1, 3])
def test_floods_leave_the_loop_idle_for_the_others(demand: float, floods: int) -> None:
    shares, steady = simulate(demand, floods)
    assert steady == pytest.approx(demand, abs=0.01)  # the steady one gets what it wants
    # The floods may use 1 - HEADROOM * (what the others use) together, in equal parts:
    # the loop stays idle (HEADROOM - 1) times what the others use.
    assert sum(shares) == pytest.approx(1 - HEADROOM * steady, abs=0.03)
    assert max(shares) - min(shares) < 0.02


@pytest.mark.parametrize("demand", [0.3, 0.6, 0.9])
@pytest.mark.parametrize("floods", [1, 3])
def test_floods_in_a_busy_loop_get_the_least_share_and_go_on(demand: float, floods: int) -> None:
    shares, steady = simulate(demand, floods)
    assert steady == pytest.approx(demand, abs=0.01)
    assert MIN_SHARE / 2 < sum(shares) < MIN_SHARE * 2
    assert all(share > 0 for share in shares)


def test_a_connection_within_its_share_never_waits() -> None:
    loop = Loop()
    light, other = loop.share.account(), loop.share.account()
    for _ in range(2000):
        loop.run(other, 0.002)  # the other uses a fifth of the loop
        loop.idle(0.006)
        loop.run(light, 0.001)  # and this one a tenth, in slices: within 1 - 4 / 5
        assert light.wait_after_slice(0.0) == 0.0
        loop.idle(0.001)


def test_pacing_ends_once_the_others_are_quiet() -> None:
    loop = Loop()
    flood, other = loop.share.account(), loop.share.account()
    loop.run(other, 0.2)
    loop.run(flood, 0.2)
    assert flood.wait_after_slice(0.001) > 0  # the other is active and took half the loop
    loop.idle(WINDOW)
    loop.run(flood, 0.001)
    assert flood.wait_after_slice(0.001) == 0.0  # nobody else used the loop in a window


def test_each_event_loop_has_its_own_share() -> None:
    async def which() -> LoopShare:
        first = share_module.loop_share()
        assert share_module.loop_share() is first
        return first

    assert anyio.run(which) is not anyio.run(which)


class _Bytes(anyio.abc.ByteReceiveStream):
    """An agent's output: ``count`` notifications, then the end."""

    def __init__(self, count: int) -> None:
        line = b'{"jsonrpc":"2.0","method":"note","params":{}}\n'
        self._chunks = [line * 100 for _ in range(count // 100)]

    async def receive(self, max_bytes: int = 65536) -> bytes:
        if not self._chunks:
            raise anyio.EndOfStream
        return self._chunks.pop(0)

    async def aclose(self) -> None:
        pass


class _Nowhere(anyio.abc.ByteSendStream):
    async def send(self, item: bytes) -> None:
        pass

    async def aclose(self) -> None:
        pass


def test_a_connection_waits_what_its_account_says_after_each_slice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[float] = []
    waited: list[float] = []

    def wait_after_slice(self: Account, cpu_seconds: float) -> float:
        asked.append(cpu_seconds)
        return 0.001

    real_sleep = anyio.sleep

    async def sleep(seconds: float) -> None:
        waited.append(seconds)
        await real_sleep(0)

    monkeypatch.setattr(Account, "wait_after_slice", wait_after_slice)
    monkeypatch.setattr("acp_adapters.transport.jsonrpc.anyio.sleep", sleep)
    handled = 0

    async def on_notification(method: str, params: object) -> None:
        nonlocal handled
        handled += 1

    async def main() -> None:
        connection = Connection(
            _Bytes(3200),
            _Nowhere(),
            on_request=lambda method, params: None,  # type: ignore[arg-type,return-value]
            on_notification=on_notification,
        )
        async with anyio.create_task_group() as group:
            await connection.serve(group)

    anyio.run(main)
    assert handled == 3200
    # Every slice of a backlog asked its account, and waited what it was told.
    assert len(asked) >= 3200 // DISPATCH_SLICE - 8
    assert all(seconds >= 0 for seconds in asked)
    assert waited.count(0.001) == len(asked)
