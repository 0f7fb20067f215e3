"""The reducer never raises, whatever an agent sends; what is valid survives next to what is not."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pluggy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acp_adapters import Hooks, ProviderRegistry, get_plugin_manager, project_capture
from acp_adapters.projection.projector import Projector
from acp_adapters.protocol import parse_notification
from acp_adapters.runtime import Reducer, SessionState
from schema_strategies import JSON, instances, mutated

NOTIFICATION = {1: "SessionNotification", 2: "UpdateSessionNotification"}
SLOW = settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@SLOW
@given(st.sampled_from([1, 2]), st.data())
def test_schema_derived_updates_apply(version: int, data: st.DataObject) -> None:
    message = data.draw(instances(f"v{version}", NOTIFICATION[version]))
    reducer = Reducer(SessionState(version=version))
    reducer.apply_notification(message)
    try:
        parse_notification(message, version)  # type: ignore[arg-type]
    except ValueError:
        return  # the drawn message broke a constraint the strategy does not model
    assert all("is not known" in u.reason for u in reducer.state.unknown), reducer.state.unknown


@SLOW
@given(st.sampled_from([1, 2]), st.data())
def test_broken_updates_never_raise_and_earlier_state_survives(
    version: int, data: st.DataObject
) -> None:
    good = data.draw(instances(f"v{version}", NOTIFICATION[version]))
    bad = data.draw(mutated(good))
    reducer = Reducer(SessionState(version=version))
    first: dict[str, Any] = {
        "sessionId": "s",
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "messageId": "m0",
            "content": {"type": "text", "text": "kept"},
        },
    }
    reducer.apply_notification(first)
    reducer.apply_notification(bad)
    reducer.apply_permission_request("1", bad)
    reducer.apply_permission_answer("1", bad)
    assert reducer.state.messages["m0"].text.startswith("kept")


@given(JSON)
def test_any_json_value_is_kept_as_unknown_or_applied(value: Any) -> None:
    reducer = Reducer(SessionState(version=2))
    reducer.apply_notification(value)
    reducer.apply_notification({"sessionId": "s", "update": value})
    assert len(reducer.state.unknown) >= 1


@cache
def _pm() -> pluggy.PluginManager:
    return get_plugin_manager()  # every installed plugin: none may raise either


def _projector(version: int) -> Projector:
    return Projector(Hooks(_pm()), ProviderRegistry.collect(_pm()).get("acp"), version=version)


@SLOW
@given(st.sampled_from([1, 2]), st.data())
def test_the_projection_never_raises_on_broken_traffic(version: int, data: st.DataObject) -> None:
    projector = _projector(version)
    projector.prompt_sent([{"type": "text", "text": "go"}], 0.0)
    for _ in range(data.draw(st.integers(1, 4))):
        good = data.draw(instances(f"v{version}", NOTIFICATION[version]))
        message = data.draw(st.one_of(st.just(good), mutated(good), JSON))
        projector.notification(message, 1.0)
        projector.permission_requested("p", message, 1.0)
        projector.permission_answered("p", message, 1.0)
    projector.prompt_answered(data.draw(JSON), data.draw(JSON), 2.0)
    timeline = projector.timeline()
    assert [item.ordinal for item in timeline] == sorted({item.ordinal for item in timeline})


@given(st.lists(st.one_of(st.text(max_size=40), JSON.map(json.dumps)), max_size=8))
def test_project_capture_never_raises_on_bad_lines(lines: list[str]) -> None:
    timeline = project_capture(lines, pm=_pm())
    assert len(timeline.problems) <= len(lines)
