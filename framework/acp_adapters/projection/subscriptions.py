"""Who hears what a projection changed: one subscription API for every listener.

A :class:`~.projector.Projector` publishes each item as it is stored (new, or projected
again) and each change of the session itself (``usage``, ``info``, ``commands``, ``mode``,
``config``, ``turn``: see :func:`~acp_adapters.timeline.timeline.session_json`). The
store's writer, a turn's stream, a session's changes
(:meth:`~acp_adapters.client.session.Session.changes`) and a thread's followers all hear
it the same way: :meth:`Subscribers.subscribe` gives a :class:`Subscription`, cancelled
when they are done (or as the ``with`` block it opens ends).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import Generic, TypeVar

T = TypeVar("T")


class Subscription:
    """One subscriber's place: :meth:`cancel` it (again is nothing) to hear no more."""

    def __init__(self, cancel: Callable[[], None]) -> None:
        self._cancel: Callable[[], None] | None = cancel

    def cancel(self) -> None:
        if self._cancel is not None:
            cancel, self._cancel = self._cancel, None
            cancel()

    def __enter__(self) -> Subscription:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.cancel()


class Subscribers(Generic[T]):
    """The callbacks that hear one kind of value, called in the order they subscribed."""

    def __init__(self) -> None:
        self._callbacks: list[Callable[[T], None]] = []
        #: While set (:meth:`only`), what the subscribers hear: the rest is published to none.
        self._heard: Callable[[T], bool] | None = None

    def subscribe(self, callback: Callable[[T], None]) -> Subscription:
        """``callback`` hears every value published from now on, until cancelled."""
        self._callbacks.append(callback)
        return Subscription(lambda: self._unsubscribe(callback))

    def _unsubscribe(self, callback: Callable[[T], None]) -> None:
        if callback in self._callbacks:
            self._callbacks.remove(callback)

    def publish(self, value: T) -> None:
        if self._heard is not None and not self._heard(value):
            return
        for callback in list(self._callbacks):
            callback(value)

    @contextmanager
    def only(self, heard: Callable[[T], bool]) -> Iterator[None]:
        """Within the block, the subscribers hear only the values ``heard`` keeps (a guest
        session taking in the thread's past: its turn's stream hears its turn alone)."""
        before, self._heard = self._heard, heard
        try:
            yield
        finally:
            self._heard = before

    def __len__(self) -> int:
        return len(self._callbacks)
