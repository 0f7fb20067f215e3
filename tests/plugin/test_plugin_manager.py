"""Loading plugins, the switches users have, and errors that name the misbehaving plugin."""

from __future__ import annotations

from importlib.metadata import EntryPoint
from typing import Any

import pytest

from acp_adapters import (
    DuplicateProviderError,
    Hooks,
    PluginError,
    PluginLoadError,
    Provider,
    ProviderRegistry,
    hookimpl,
)
from acp_adapters.plugin import manager as plugins_module
from acp_adapters.plugin.manager import DEFAULT_PLUGINS, get_plugin_manager, loaded_plugins
from acp_adapters.testing import plugin_manager, provider, session, tool_call

#: The built-in plugin that registers the generic provider.
BUILTIN = DEFAULT_PLUGINS[0]
#: Every built-in plugin, as ``loaded_plugins`` lists them (last, by name).
BUILTINS = sorted(DEFAULT_PLUGINS)


class Fake:
    """A module-like plugin object an entry point could load."""

    @hookimpl
    def register_providers(self, register: Any) -> None:
        register(Provider(id="fake", name="Fake"))


def _entry_points(monkeypatch: pytest.MonkeyPatch, points: dict[str, Any]) -> None:
    made = []
    for name, target in points.items():
        monkeypatch.setattr(plugins_module, f"_test_target_{name}", target, raising=False)
        value = f"acp_adapters.plugin.manager:_test_target_{name}"
        made.append(EntryPoint(name=name, value=value, group="acp_adapters"))
    monkeypatch.setattr(plugins_module, "entry_points", lambda group: made)


def test_entry_points_load_under_their_names(monkeypatch: pytest.MonkeyPatch) -> None:
    _entry_points(monkeypatch, {"fake": Fake(), "second": Fake()})
    pm = get_plugin_manager(environ={})
    assert loaded_plugins(pm) == ["fake", "second", *BUILTINS]


def test_acp_adapters_plugins_loads_only_those(monkeypatch: pytest.MonkeyPatch) -> None:
    _entry_points(monkeypatch, {"fake": Fake(), "second": Fake()})
    assert loaded_plugins(get_plugin_manager(environ={"ACP_ADAPTERS_PLUGINS": "second"})) == [
        "second",
        *BUILTINS,
    ]
    assert loaded_plugins(get_plugin_manager(environ={"ACP_ADAPTERS_PLUGINS": ""})) == BUILTINS


def test_disable_blocks_plugins_but_never_the_builtin(monkeypatch: pytest.MonkeyPatch) -> None:
    _entry_points(monkeypatch, {"fake": Fake(), "second": Fake()})
    pm = get_plugin_manager(environ={"ACP_ADAPTERS_DISABLE_PLUGINS": f"fake, {BUILTIN}"})
    assert loaded_plugins(pm) == ["second", *BUILTINS]


def test_a_plugin_that_fails_to_import_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    broken = EntryPoint(name="broken", value="no_such_module_anywhere:plugin", group="acp_adapters")
    monkeypatch.setattr(plugins_module, "entry_points", lambda group: [broken])
    with pytest.raises(PluginLoadError, match=r"plugin 'broken'.*no_such_module_anywhere"):
        get_plugin_manager(environ={})


def test_trace_prints_hook_calls(capsys: pytest.CaptureFixture[str]) -> None:
    pm = get_plugin_manager(load_entrypoints=False, environ={"ACP_ADAPTERS_TRACE_PLUGINS": "1"})
    ProviderRegistry.collect(pm)
    state = session()
    Hooks(pm).project_tool_call(provider("x"), tool_call(kind="read", state=state), state.view())
    err = capsys.readouterr().err
    assert "[acp_adapters] project_tool_call(provider, tool_call, session)" in err
    assert "FileReadItem" in err


def test_register_providers_goes_through_the_hook_caller(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Tracing (and any hook-call monitor) sees each plugin register its providers."""
    seen: list[tuple[str, list[str]]] = []

    def before(name: str, impls: Any, kwargs: Any) -> None:
        seen.append((name, [impl.plugin_name for impl in impls]))

    pm = plugin_manager(Fake())
    pm.add_hookcall_monitoring(before, lambda *args: None)
    registry = ProviderRegistry.collect(pm)
    assert seen == [("register_providers", [BUILTIN]), ("register_providers", ["test-0"])]
    assert (registry.get("fake").plugin, registry.get("acp").plugin) == ("test-0", BUILTIN)
    traced = get_plugin_manager(load_entrypoints=False, environ={"ACP_ADAPTERS_TRACE_PLUGINS": "1"})
    ProviderRegistry.collect(traced)
    assert f"[acp_adapters] register_providers(register) -> [{BUILTIN}]" in capsys.readouterr().err


def test_two_plugins_of_one_class_register_as_themselves() -> None:
    class Named:
        def __init__(self, provider_id: str) -> None:
            self.provider_id = provider_id

        @hookimpl
        def register_providers(self, register: Any) -> None:
            register(Provider(id=self.provider_id, name=self.provider_id))

    registry = ProviderRegistry.collect(plugin_manager(Named("one"), Named("two")))
    assert [(p.id, p.plugin) for p in registry] == [
        ("acp", BUILTIN),
        ("one", "test-0"),
        ("two", "test-1"),
    ]


def test_a_plugin_that_raises_in_register_providers_is_named() -> None:
    class Raises:
        @hookimpl
        def register_providers(self, register: Any) -> None:
            raise RuntimeError("no registry here")

    with pytest.raises(PluginError, match="'test-1' failed in register_providers: no registry"):
        ProviderRegistry.collect(plugin_manager(Fake(), Raises()))


def test_duplicate_provider_ids_name_both_plugins() -> None:
    class Twin:
        @hookimpl
        def register_providers(self, register: Any) -> None:
            register(Provider(id="acp", name="also acp"))

    with pytest.raises(
        DuplicateProviderError,
        match=r"'acp_adapters\.builtin\.tools'.*'test-0'",
    ):
        ProviderRegistry.collect(plugin_manager(Twin()))


def test_a_plugin_registering_garbage_is_named() -> None:
    class Garbage:
        @hookimpl
        def register_providers(self, register: Any) -> None:
            register({"id": "dict"})

    with pytest.raises(PluginError, match="'test-0' registered dict") as info:
        ProviderRegistry.collect(plugin_manager(Garbage()))
    assert info.value.plugin == "test-0"


def test_a_plugin_that_raises_is_named() -> None:
    class Raises:
        @hookimpl
        def project_tool_call(self, provider: Provider) -> Any:
            if provider.id == "p":
                raise RuntimeError("boom")
            return None

    hooks = Hooks(plugin_manager(Raises()))
    state = session()
    call = tool_call(kind="read", state=state)
    with pytest.raises(
        PluginError, match="plugin 'test-0' failed in project_tool_call: boom"
    ) as info:
        hooks.project_tool_call(provider("p"), call, state.view())
    assert (info.value.plugin, info.value.hook, info.value.provider_id) == (
        "test-0",
        "project_tool_call",
        "p",
    )
    assert hooks.project_tool_call(provider("q"), call, state.view()).kind == "file_read"


def test_a_plugin_returning_the_wrong_type_is_named() -> None:
    class Wrong:
        @hookimpl
        def project_file_change(self) -> Any:
            return {"diff_str": "a dict is not an item"}

    hooks = Hooks(plugin_manager(Wrong()))
    state = session()
    call = tool_call(kind="edit", state=state)
    with pytest.raises(PluginError, match="plugin 'test-0' returned dict from project_file_change"):
        hooks.project_file_change(provider("p"), call, state.view())


def test_tryfirst_overrides_beat_provider_plugins_and_builtins_run_last() -> None:
    order: list[str] = []

    class Provider1:
        @hookimpl
        def project_diff_patch(self) -> None:
            order.append("provider")

    class Local:
        @hookimpl(tryfirst=True)
        def project_diff_patch(self) -> None:
            order.append("local")

    hooks = Hooks(plugin_manager(Provider1(), Local()))
    call = tool_call(kind="edit", content=[{"type": "diff", "path": "/a", "newText": "x\n"}])
    assert hooks.project_diff_patch(provider("p"), call.content, session().diff_limits)
    assert order == ["local", "provider"]
