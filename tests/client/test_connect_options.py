"""``connect``'s options, grouped: ``Limits``, ``Timeouts``, ``Persistence``; the flat keywords
of before still taken for one release, each with a warning naming its new home."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

import acp_adapters
from acp_adapters.client.connecting import MOVED_KEYWORDS, grouped_options
from acp_adapters.client.terminals import DEFAULT_MAX_TERMINALS
from acp_adapters.runtime import CONTENT_BUDGET
from acp_adapters.transport.jsonrpc import (
    DEFAULT_MAX_ELEMENTS,
    DEFAULT_MAX_LINE_BYTES,
    DEFAULT_MAX_PENDING_REQUESTS,
)

from .conftest import fake_agent

pytestmark = pytest.mark.anyio

#: A value of each flat keyword, other than its default.
_GIVEN: dict[str, Any] = {
    "max_line_bytes": 4096,
    "max_elements": 500,
    "max_pending_requests": 3,
    "content_budget": 1000,
    "max_terminals": 2,
    "start_timeout": 5.0,
    "close_grace": 0.25,
    "move": True,
    "busy": "fail",
    "run_queued": False,
    "commit_interval": 0.5,
    "lease_seconds": 2.0,
    "owner": acp_adapters.store.Owner.here(),
    "on_store_error": print,
}


def test_the_defaults_are_the_bounds_of_before() -> None:
    limits = acp_adapters.Limits()
    assert (limits.max_line_bytes, limits.max_elements) == (
        DEFAULT_MAX_LINE_BYTES,
        DEFAULT_MAX_ELEMENTS,
    )
    assert limits.max_pending_requests == DEFAULT_MAX_PENDING_REQUESTS
    assert (limits.content_budget, limits.max_terminals) == (CONTENT_BUDGET, DEFAULT_MAX_TERMINALS)
    assert (acp_adapters.Timeouts().start, acp_adapters.Timeouts().close_grace) == (60.0, 2.0)
    persistence = acp_adapters.Persistence()
    assert (persistence.busy, persistence.run_queued, persistence.move) == ("queue", True, False)


@pytest.mark.parametrize(
    "make",
    [
        lambda: acp_adapters.Timeouts(start=0),
        lambda: acp_adapters.Timeouts(start=float("nan")),
        lambda: acp_adapters.Persistence(busy="later"),  # type: ignore[arg-type]
        lambda: acp_adapters.Persistence(commit_interval=-1),
        lambda: acp_adapters.Persistence(lease_seconds=0.01),
    ],
)
def test_an_option_out_of_range_is_refused_as_it_is_made(make: Any) -> None:
    with pytest.raises(ValueError, match="not"):
        make()


def test_every_flat_keyword_of_connect_is_a_group_field() -> None:
    groups = {
        "limits": acp_adapters.Limits,
        "timeouts": acp_adapters.Timeouts,
        "persistence": acp_adapters.Persistence,
    }
    assert set(MOVED_KEYWORDS) == set(_GIVEN)
    for name, (group, field_name) in MOVED_KEYWORDS.items():
        assert field_name in {f.name for f in dataclasses.fields(groups[group])}, name


@pytest.mark.parametrize("name", sorted(_GIVEN))
def test_a_flat_keyword_still_sets_its_field_with_a_warning_naming_its_home(name: str) -> None:
    group, field_name = MOVED_KEYWORDS[name]
    with pytest.warns(DeprecationWarning, match=rf"connect\({name}=\.\.\.\) is connect\({group}="):
        made = grouped_options(None, None, None, {name: _GIVEN[name]})
    chosen = dict(zip(("limits", "timeouts", "persistence"), made, strict=True))[group]
    assert getattr(chosen, field_name) == _GIVEN[name]


def test_a_flat_keyword_changes_only_its_field_of_an_object_given_too() -> None:
    with pytest.warns(DeprecationWarning, match="max_elements"):
        limits, _, _ = grouped_options(
            acp_adapters.Limits(max_terminals=5), None, None, {"max_elements": 77}
        )
    assert (limits.max_terminals, limits.max_elements) == (5, 77)


def test_a_keyword_connect_never_took_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="'max_lines'"):
        grouped_options(None, None, None, {"max_lines": 3})


async def test_connect_takes_the_grouped_options(workspace: Path) -> None:
    limits = acp_adapters.Limits(max_line_bytes=64 * 1024, max_pending_requests=5)
    async with acp_adapters.connect(
        command=fake_agent("echo"), cwd=workspace, limits=limits
    ) as session:
        assert session.connection.max_line_bytes == 64 * 1024
        assert session.connection.max_pending_requests == 5
        turn = await session.prompt("hello")
    assert turn.stop_reason == "end_turn"


async def test_connect_still_takes_a_flat_keyword_of_before(workspace: Path) -> None:
    with pytest.warns(DeprecationWarning, match="limits=Limits"):
        async with acp_adapters.connect(
            command=fake_agent("echo"), cwd=workspace, max_line_bytes=32 * 1024
        ) as session:
            assert session.connection.max_line_bytes == 32 * 1024


async def test_a_keyword_an_opening_method_does_not_take_is_a_type_error(workspace: Path) -> None:
    async with acp_adapters.connect(command=fake_agent("echo"), cwd=workspace) as session:
        with pytest.raises(TypeError, match="'cwdd'"):
            await session.agent.new_session(cwdd=str(workspace))  # type: ignore[call-arg]
        with pytest.raises(TypeError, match="'mcp_server'"):
            await session.load_session("s", mcp_server=[])  # type: ignore[call-arg]
        assert len(session.agent.sessions) == 1  # nothing was opened
