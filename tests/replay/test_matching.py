"""``compare``: a live message against a recorded one, and where they differ."""

from __future__ import annotations

from typing import Any

import pytest

from acp_adapters.replay import Mismatch, compare, fill_marks

WS = "/tmp/live ws"
HOME = "/home/someone"


def test_equal_values_match_whatever_the_key_order() -> None:
    recorded = {"a": 1, "b": [True, None, "x", 1.5], "c": {"d": "e"}}
    assert compare(recorded, {"c": {"d": "e"}, "b": [True, None, "x", 1.5], "a": 1}, WS) is None


@pytest.mark.parametrize(
    ("recorded", "live", "report"),
    [
        ({"a": 1}, {"a": 2}, "$.a: expected 1, got 2"),
        ({"a": True}, {"a": 1}, "$.a: expected true, got 1"),
        ({"a": 1}, {"a": "1"}, '$.a: expected 1, got "1"'),
        ({"a": None}, {"a": False}, "$.a: expected null, got false"),
        ({"a": 1}, {}, "$.a: missing (expected 1)"),
        ({}, {"b": [1]}, "$.b: not expected (got [1])"),
        ([1, 2], [1], "$[1]: missing (expected 2)"),
        ([1], [1, {"x": 1}], '$[1]: not expected (got {"x": 1})'),
        (
            {"x y": [0, {"k": "v"}]},
            {"x y": [0, {"k": "w"}]},
            '$["x y"][1].k: expected "v", got "w"',
        ),
        ({"a": {"b": 1}}, {"a": [1]}, '$.a: expected {"b": 1}, got [1]'),
    ],
)
def test_the_first_difference_and_its_path(recorded: Any, live: Any, report: str) -> None:
    found = compare(recorded, live, WS)
    assert isinstance(found, Mismatch)
    assert str(found) == report


def test_integers_and_floats_of_one_value_are_equal() -> None:
    assert compare({"n": 1}, {"n": 1.0}, WS) is None


def test_any_matches_any_value_in_an_object_or_an_array() -> None:
    recorded = {"id": "<any>", "params": {"list": ["<any>", 2], "deep": "<any>"}}
    live = {"id": 17, "params": {"list": [{"x": [1]}, 2], "deep": None}}
    assert compare(recorded, live, WS) is None
    assert str(compare(recorded, {"id": 1, "params": {"list": ["x", 2]}}, WS)) == (
        '$.params.deep: missing (expected "<any>")'
    )
    assert compare("<any>", "anything", None) is None


def test_the_marks_stand_for_the_live_folders() -> None:
    recorded = {"cwd": "<workspace>", "cmd": "cd <workspace> && ls <home>/.x", "<workspace>/k": 1}
    live = {"cwd": WS, "cmd": f"cd {WS} && ls {HOME}/.x", f"{WS}/k": 1}
    assert compare(recorded, live, WS, home=HOME) is None
    found = compare({"path": "<workspace>/a"}, {"path": "/elsewhere/a"}, WS)
    assert str(found) == f'$.path: expected "{WS}/a", got "/elsewhere/a"'
    assert fill_marks(["<home>", "<workspace>"], None, HOME) == [HOME, "<workspace>"]


def test_long_values_are_cut_short_in_the_report() -> None:
    found = compare({"text": "a" * 500}, {"text": "b"}, WS)
    assert found is not None
    assert len(str(found)) < 120
    assert found.expected == "a" * 500  # the mismatch itself keeps the whole value
