"""A session's prompts in order: one turn at a time, the others waiting for theirs.

A prompt takes a :class:`Ticket` (:meth:`PromptQueue.take`): its turn at once when none runs
and none waits, else a place in the line. The turn's end passes it on
(:meth:`PromptQueue.next_turn`); a prompt given up while it waits leaves the line
(:meth:`PromptQueue.give_up`); a cancel drops every waiting one
(:meth:`PromptQueue.drop_waiting`).
"""

from __future__ import annotations

from collections import deque

import anyio


class Ticket:
    """A prompt's place in its session's queue: set when its turn comes, or when it is
    dropped (``cancel()``)."""

    def __init__(self) -> None:
        self.event = anyio.Event()
        self.dropped = False
        self.granted = False


class PromptQueue:
    """Whether a turn runs, and the prompts waiting for it to end, in order."""

    def __init__(self) -> None:
        self.turn_running = False
        self._waiting: deque[Ticket] = deque()

    def __len__(self) -> int:
        """How many prompts wait."""
        return len(self._waiting)

    @property
    def busy(self) -> bool:
        """Whether a turn runs or a prompt waits."""
        return self.turn_running or bool(self._waiting)

    def take(self) -> Ticket:
        """The prompt's place: its turn at once when none runs and none waits."""
        ticket = Ticket()
        if not self.busy:
            self.turn_running = ticket.granted = True
            ticket.event.set()
        else:
            self._waiting.append(ticket)
        return ticket

    def give_up(self, ticket: Ticket) -> None:
        """A prompt given up while it waited (a timeout around it, a close): out of the
        queue, or, if its turn had just come, the turn passed on."""
        if ticket.granted:
            self.next_turn()
        elif ticket in self._waiting:
            self._waiting.remove(ticket)

    def next_turn(self) -> None:
        """The turn ended: the next prompt waiting takes it."""
        if self._waiting:
            ticket = self._waiting.popleft()
            ticket.granted = True
            ticket.event.set()
        else:
            self.turn_running = False

    def drop_waiting(self) -> None:
        """Every waiting prompt is dropped (its :class:`Ticket` says so)."""
        while self._waiting:
            ticket = self._waiting.popleft()
            ticket.dropped = True
            ticket.event.set()
