"""Tests of the example plugin, with the fixtures acp-adapters ships for plugin authors."""

from __future__ import annotations

import acp_adapters_example

from acp_adapters import Hooks, ProviderRegistry
from acp_adapters.runtime import Reducer
from acp_adapters.testing import plugin_manager, provider, session, tool_call

OLD = "".join(f"line {i}\n" for i in range(1, 21))
NEW = OLD.replace("line 10\n", "line ten\n")


def _edited() -> tuple[Hooks, object, object]:
    hooks = Hooks(plugin_manager(acp_adapters_example))
    state = session()
    call = tool_call(kind="edit", rawInput={"path": "/ws/f.txt"}, state=state)
    Reducer(state).apply_file_read("/ws/f.txt", OLD)
    Reducer(state).apply_file_write("/ws/f.txt", NEW)
    return hooks, state.view(), state.tool_calls[call.id]


def test_it_registers_its_provider_for_the_scripted_agent() -> None:
    registry = ProviderRegistry.collect(plugin_manager(acp_adapters_example))
    assert registry.for_agent("sdk-scripted-edit-agent").id == "example"


def test_its_patches_carry_ten_lines_of_context() -> None:
    hooks, view, call = _edited()
    item = hooks.project_file_change(provider("example"), call, view)  # type: ignore[arg-type]
    assert item.diff_str is not None
    assert "@@ -1,20 +1,20 @@" in item.diff_str
    assert (item.additions, item.deletions) == (1, 1)


def test_other_providers_keep_the_builtin_projection() -> None:
    hooks, view, call = _edited()
    item = hooks.project_file_change(provider("someone-else"), call, view)  # type: ignore[arg-type]
    assert item.diff_str is not None
    assert "@@ -7,7 +7,7 @@" in item.diff_str


def test_a_file_past_the_rewrite_cap_says_so_beside_the_others_patch() -> None:
    hooks = Hooks(plugin_manager(acp_adapters_example))
    state = session(max_edits=5)
    locations = [{"path": "/ws/f.txt"}, {"path": "/ws/g.txt"}]
    call = tool_call(kind="edit", locations=locations, state=state)
    reducer = Reducer(state)
    for path, new in (("/ws/f.txt", NEW), ("/ws/g.txt", OLD.upper())):
        reducer.apply_file_read(path, OLD)
        reducer.apply_file_write(path, new)
    item = hooks.project_file_change(provider("example"), state.tool_calls[call.id], state.view())
    assert item.paths == ("/ws/f.txt", "/ws/g.txt")
    assert item.diff_str is not None
    assert "+++ /ws/g.txt" not in item.diff_str
    assert item.diff_omitted_reason == "capped"
