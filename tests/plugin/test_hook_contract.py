"""The hook contract: what each hook may answer, and what the facade and projector do with it."""

from __future__ import annotations

from typing import Any, get_args, get_type_hints

import pytest

import acp_adapters.diff.content as diff_content
from acp_adapters import (
    ApprovalRequestItem,
    DiffPatch,
    FileChangeItem,
    Hooks,
    NoticeItem,
    PlanItem,
    PluginError,
    Provider,
    UserMessageItem,
    diff_patch_of,
    hookimpl,
)
from acp_adapters.diff.limits import DiffLimits
from acp_adapters.projection.projector import Projector
from acp_adapters.runtime import Change, Reducer
from acp_adapters.testing import plugin_manager, provider, session, tool_call

#: A rewrite of every line: past a cap of 10 line edits.
OLD = "".join(f"line {i}\n" for i in range(20))
NEW = "".join(f"LINE {i}\n" for i in range(20))
REWRITE = {"type": "diff", "path": "/ws/big", "oldText": OLD, "newText": NEW}
SMALL = {"type": "diff", "path": "/ws/small", "oldText": "a\n", "newText": "b\n"}
SMALL_PATCH = "--- /ws/small\n+++ /ws/small\n@@ -1,1 +1,1 @@\n-a\n+b\n"


# --- project_diff_patch: the patch, or why there is none -----------------------------------


def test_the_builtin_diff_patch_says_why_there_is_no_patch() -> None:
    hooks = Hooks(plugin_manager())
    capped = tool_call(kind="edit", content=[REWRITE])
    assert hooks.project_diff_patch(provider(), capped.content, DiffLimits(max_edits=10)) == (
        DiffPatch(None, "capped")
    )
    same = tool_call(kind="edit", content=[{**SMALL, "newText": "a\n"}])
    assert hooks.project_diff_patch(provider(), same.content, DiffLimits()) == (
        DiffPatch(None, "unchanged")
    )
    assert hooks.project_diff_patch(provider(), (), DiffLimits()) == DiffPatch(None, "no_diff")
    small = tool_call(kind="edit", content=[SMALL])
    assert hooks.project_diff_patch(provider(), small.content, DiffLimits()) == DiffPatch(
        SMALL_PATCH
    )


def test_the_builtin_file_change_diffs_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The omitted reason comes with the patch: the rewrite is not searched a second time."""
    built: list[str] = []
    real = diff_content.build_file_patch

    def counting(path: str, *args: Any, **kwargs: Any) -> Any:
        built.append(path)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(diff_content, "build_file_patch", counting)
    state = session(max_edits=10)
    call = tool_call(kind="edit", content=[REWRITE], state=state)
    item = Hooks(plugin_manager()).project_file_change(provider(), call, state.view())
    assert (item.diff_str, item.diff_omitted_reason) == (None, "capped")
    assert built == ["/ws/big"]


def test_a_plugins_reason_is_the_items_reason() -> None:
    class Says:
        @hookimpl
        def project_diff_patch(self, provider: Provider) -> DiffPatch | None:
            return DiffPatch(None, "unchanged") if provider.id == "says" else None

    state = session()
    call = tool_call(kind="edit", content=[SMALL], state=state)
    item = Hooks(plugin_manager(Says())).project_file_change(provider("says"), call, state.view())
    assert (item.diff_str, item.diff_omitted_reason, item.additions) == (None, "unchanged", 0)


def test_a_plugin_answering_a_plain_str_still_gives_the_patch() -> None:
    """The answer of acp-adapters 0.1: the patch text alone."""

    class Legacy:
        @hookimpl
        def project_diff_patch(self, provider: Provider) -> str | None:
            return "--- /x\n+++ /x\n@@ -1,1 +1,1 @@\n-a\n+b\n" if provider.id == "old" else None

    hooks = Hooks(plugin_manager(Legacy()))
    state = session()
    call = tool_call(kind="edit", content=[SMALL], state=state)
    found = hooks.project_diff_patch(provider("old"), call.content, DiffLimits())
    assert found == DiffPatch("--- /x\n+++ /x\n@@ -1,1 +1,1 @@\n-a\n+b\n")
    item = hooks.project_file_change(provider("old"), call, state.view())
    assert (item.diff_str, item.additions, item.deletions) == (found.patch, 1, 1)


def test_a_diff_patch_without_a_patch_says_why() -> None:
    with pytest.raises(ValueError, match="omitted_reason"):
        DiffPatch(None)
    with pytest.raises(ValueError, match="capped"):
        DiffPatch("--- a\n+++ a\n", "unchanged")
    assert DiffPatch("p", "capped").omitted_reason == "capped"


def test_diff_patch_of_is_diff_patch_with_its_reason() -> None:
    for content, limit in (([REWRITE], 10), ([REWRITE], 100), ([SMALL, REWRITE], 10), ([], 10)):
        call = tool_call(kind="edit", content=content)
        found = diff_patch_of(call.content, max_edits=limit)
        assert found.patch == diff_content.diff_patch(call.content, max_edits=limit)


# --- a capped file is never shown as unchanged ----------------------------------------------


def test_a_file_past_the_cap_beside_a_patched_one_is_capped() -> None:
    """A rewrite over the cap next to a small edit: the item says a patch was left out."""
    state = session(max_edits=10)
    call = tool_call(kind="edit", content=[SMALL, REWRITE], state=state)
    item = Hooks(plugin_manager()).project_file_change(provider(), call, state.view())
    assert item.paths == ("/ws/small", "/ws/big")
    assert (item.diff_str, item.diff_omitted_reason) == (SMALL_PATCH, "capped")


def test_a_file_written_past_the_cap_beside_a_patched_one_is_capped() -> None:
    state = session(max_edits=10)
    reducer = Reducer(state)
    start = {"toolCallId": "w", "title": "write", "kind": "edit", "status": "in_progress"}
    locations = [{"path": "/ws/small"}, {"path": "/ws/big"}]
    update = {"sessionUpdate": "tool_call", **start, "locations": locations}
    reducer.apply_notification({"sessionId": "s", "update": update})
    for path, old, new in (("/ws/small", "a\n", "b\n"), ("/ws/big", OLD, NEW)):
        reducer.apply_file_read(path, old)
        reducer.apply_file_write(path, new)
    item = Hooks(plugin_manager()).project_file_change(
        provider(), state.tool_calls["w"], state.view()
    )
    assert item.patch_source == "client_fs"
    assert (item.diff_str, item.diff_omitted_reason) == (SMALL_PATCH, "capped")


def test_the_item_text_says_a_patch_was_left_out() -> None:
    item = FileChangeItem(paths=("/a", "/b"), diff_str="--- /a\n", diff_omitted_reason="capped")
    text = Hooks(plugin_manager()).render_item_text(item)
    assert text.endswith("(the patch of a file is omitted: capped)")


# --- normalize_diff_content: a provider's quirks, not a whole item ---------------------------


def test_normalised_content_must_be_tool_content() -> None:
    class Dicts:
        @hookimpl
        def normalize_diff_content(self, provider: Provider) -> Any:
            return ({"type": "diff", "path": "/a", "newText": "x"},) if provider.id == "d" else None

    class NotATuple:
        @hookimpl
        def normalize_diff_content(self, provider: Provider) -> Any:
            return "content" if provider.id == "s" else None

    hooks = Hooks(plugin_manager(Dicts(), NotATuple()))
    state = session()
    call = tool_call(kind="edit", content=[SMALL], state=state)
    with pytest.raises(
        PluginError, match="plugin 'test-0' returned dict in normalize_diff_content"
    ):
        hooks.project_file_change(provider("d"), call, state.view())
    with pytest.raises(
        PluginError, match="plugin 'test-1' returned str from normalize_diff_content"
    ):
        hooks.project_file_change(provider("s"), call, state.view())


def test_normalize_sees_the_diffs_a_refusal_replaced() -> None:
    seen: list[tuple[Any, ...]] = []

    class Looks:
        @hookimpl
        def normalize_diff_content(self, content: tuple[Any, ...]) -> None:
            seen.append(content)

    state = session()
    tool_call(kind="edit", status="pending", content=[SMALL], state=state)
    refused = [{"type": "content", "content": {"type": "text", "text": "refused"}}]
    call = tool_call(status="failed", content=refused, state=state)
    item = Hooks(plugin_manager(Looks())).project_file_change(provider(), call, state.view())
    assert [type(c).__name__ for c in seen[-1]] == ["DiffV1", "ContentItem"]
    assert item.diff_str == SMALL_PATCH


# --- project_tool_call answers a tool item --------------------------------------------------


@pytest.mark.parametrize(
    "item",
    [PlanItem(plan_id="p"), UserMessageItem(text="hi"), ApprovalRequestItem(), NoticeItem()],
    ids=lambda item: item.kind,
)
def test_a_tool_call_projected_as_another_kind_of_item_names_the_plugin(item: Any) -> None:
    class Wrong:
        @hookimpl
        def project_tool_call(self, provider: Provider) -> Any:
            return item if provider.id == "wrong" else None

    hooks = Hooks(plugin_manager(Wrong()))
    state = session()
    call = tool_call(kind="think", state=state)
    with pytest.raises(PluginError, match=rf"'test-0' returned {type(item).__name__}") as info:
        hooks.project_tool_call(provider("wrong"), call, state.view())
    assert (info.value.plugin, info.value.hook) == ("test-0", "project_tool_call")
    assert "FileChangeItem or CommandExecutionItem" in str(info.value)
    assert hooks.project_tool_call(provider("right"), call, state.view()).kind == "tool"


# --- the projector dispatches every kind of change ------------------------------------------


def test_every_kind_of_change_has_its_projection(monkeypatch: pytest.MonkeyPatch) -> None:
    kinds = get_args(get_type_hints(Change)["kind"])
    assert set(kinds) == {
        "tool_call",
        "message",
        "plan",
        "permission",
        "session",
        "terminal",
        "unknown",
        "write",
        "checkpoint",
    }
    projector = Projector(Hooks(plugin_manager()), provider())
    projected: list[tuple[str, str]] = []
    for kind in kinds:
        handler = f"_project_{kind}"
        if hasattr(projector, handler):
            monkeypatch.setattr(
                projector, handler, lambda key, kind=kind: projected.append((kind, key))
            )
    for kind in kinds:
        projector._apply([Change(kind, "key")])
    # a session change (modes, commands, usage, the turn's state) has no item, explicitly
    assert projected == [(kind, "key") for kind in kinds if kind != "session"]
    assert ("terminal", "key") in projected


def test_a_change_of_a_kind_not_known_is_not_dropped() -> None:
    projector = Projector(Hooks(plugin_manager()), provider())
    with pytest.raises(ValueError, match="'bogus'"):
        projector._apply([Change("bogus", "key")])  # type: ignore[arg-type]


# --- what provider plugins need is public ---------------------------------------------------


@pytest.mark.parametrize("name", ["ProviderRegistrar", "command_item", "DiffPatch", "ToolContent"])
def test_what_provider_plugins_need_is_public(name: str) -> None:
    import acp_adapters

    assert name in acp_adapters.__all__
    assert getattr(acp_adapters, name) is not None


def test_the_provider_plugins_import_only_public_names() -> None:
    from pathlib import Path

    plugins = Path(__file__).parent.parent.parent / "plugins"
    for source in plugins.glob("acp_adapters_*/*.py"):
        text = source.read_text(encoding="utf-8")
        assert "from acp_adapters." not in text, source


# --- docs/plugins/hooks.md documents every hook as it is ------------------------------------


def test_each_hook_section_shows_the_hooks_own_arguments() -> None:
    import inspect
    import re
    from pathlib import Path

    from acp_adapters.plugin import hookspecs

    doc = (Path(__file__).parent.parent.parent / "docs" / "plugins" / "hooks.md").read_text()
    sections = dict(re.findall(r"^## (\w+)\(([^)]*)\)$", doc, re.MULTILINE))
    specs = {n: f for n, f in vars(hookspecs).items() if hasattr(f, "acp_adapters_spec")}
    assert set(sections) == set(specs)
    for name, function in specs.items():
        arguments = ", ".join(inspect.signature(function).parameters)
        assert sections[name] == arguments, name
