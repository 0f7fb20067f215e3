"""A session's prompts run one turn at a time, in the order they came."""

from __future__ import annotations

from acp_adapters.client.prompt_queue import PromptQueue


def test_the_first_prompt_runs_at_once_the_others_wait_in_order() -> None:
    queue = PromptQueue()
    first, second, third = queue.take(), queue.take(), queue.take()
    assert first.event.is_set()
    assert first.granted
    assert not second.event.is_set()
    assert len(queue) == 2
    queue.next_turn()
    assert second.granted
    assert second.event.is_set()
    assert not third.event.is_set()
    queue.next_turn()
    queue.next_turn()
    assert not queue.busy


def test_a_prompt_given_up_while_it_waits_leaves_the_line() -> None:
    queue = PromptQueue()
    queue.take()
    waiting, after = queue.take(), queue.take()
    queue.give_up(waiting)
    queue.next_turn()
    assert after.granted
    assert not waiting.granted


def test_a_prompt_given_up_as_its_turn_came_passes_the_turn_on() -> None:
    queue = PromptQueue()
    granted, waiting = queue.take(), queue.take()
    queue.give_up(granted)
    assert waiting.granted


def test_dropping_the_waiting_prompts_says_so_on_each() -> None:
    queue = PromptQueue()
    running, dropped = queue.take(), queue.take()
    queue.drop_waiting()
    assert dropped.dropped
    assert dropped.event.is_set()
    assert not running.dropped
    assert len(queue) == 0
    assert queue.busy
