"""One subscription API for whoever listens to a projection: subscribe, hear, cancel."""

from __future__ import annotations

import pluggy

from acp_adapters import Hooks, ProviderRegistry
from acp_adapters.projection.projector import Projector
from acp_adapters.projection.subscriptions import Subscribers


def test_subscribers_hear_in_order_until_they_cancel() -> None:
    heard: list[tuple[str, int]] = []
    values: Subscribers[int] = Subscribers()
    first = values.subscribe(lambda value: heard.append(("first", value)))
    with values.subscribe(lambda value: heard.append(("second", value))):
        values.publish(1)
    values.publish(2)
    first.cancel()
    first.cancel()  # again is nothing
    values.publish(3)
    assert heard == [("first", 1), ("second", 1), ("first", 2)]
    assert len(values) == 0


def test_within_only_the_subscribers_hear_what_it_keeps() -> None:
    heard: list[int] = []
    values: Subscribers[int] = Subscribers()
    values.subscribe(heard.append)
    with values.only(lambda value: value % 2 == 0):
        for value in range(5):
            values.publish(value)
    values.publish(5)
    assert heard == [0, 2, 4, 5]


def test_a_subscriber_that_cancels_while_hearing_does_not_skip_the_next(
    pm: pluggy.PluginManager,
) -> None:
    values: Subscribers[int] = Subscribers()
    heard: list[str] = []
    subscription = values.subscribe(lambda value: (heard.append("once"), subscription.cancel()))
    values.subscribe(lambda value: heard.append("always"))
    values.publish(1)
    values.publish(2)
    assert heard == ["once", "always", "always"]


def test_a_projector_publishes_each_item_it_stores_and_each_change_of_the_session(
    pm: pluggy.PluginManager,
) -> None:
    registry = ProviderRegistry.collect(pm)
    projector = Projector(Hooks(pm), registry.get("acp"))
    items: list[str] = []
    kinds: list[str] = []
    projector.on_item.subscribe(lambda item: items.append(item.kind))
    projector.on_session.subscribe(kinds.append)
    projector.session_created({"sessionId": "s"})
    projector.prompt_sent([{"type": "text", "text": "hi"}], 1.0)
    projector.prompt_answered({"stopReason": "end_turn"}, None, 2.0)
    assert "user_message" in items
    assert "turn" in kinds
