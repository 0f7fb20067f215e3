"""The plugin manager: built-in behaviour, provider plugins, and the switches users have.

:func:`get_plugin_manager` builds a fresh manager every call (nothing registers
at import time):

1. the hook specifications of ``hookspecs.py``;
2. plugins named in ``ACP_ADAPTERS_DISABLE_PLUGINS`` (a comma list) are blocked;
3. the entry points of group ``acp_adapters`` are loaded, each under its entry-point
   name, or only those listed in ``ACP_ADAPTERS_PLUGINS`` (set and empty: none);
   one that fails to import is a :class:`~acp_adapters.errors.PluginLoadError`
   naming it and its distribution;
4. the built-in plugins are registered; they cannot be blocked;
5. ``ACP_ADAPTERS_TRACE_PLUGINS=1`` prints every hook call, its implementations
   and its result to stderr.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Mapping, Sequence
from importlib.metadata import EntryPoint, entry_points
from typing import Any

import pluggy

from ..errors import PluginLoadError
from . import hookspecs

ENTRY_POINT_GROUP = hookspecs.PROJECT_NAME

#: Built-in plugins, registered under these names after the entry points. Essential:
#: ``ACP_ADAPTERS_DISABLE_PLUGINS`` cannot block them.
DEFAULT_PLUGINS = (
    "acp_adapters.builtin.tools",
    "acp_adapters.builtin.files",
    "acp_adapters.builtin.permissions",
    "acp_adapters.builtin.text",
    "acp_adapters.builtin.extensions",
)


def _names(value: str | None) -> list[str]:
    return [name.strip() for name in (value or "").split(",") if name.strip()]


def get_plugin_manager(
    *, load_entrypoints: bool = True, environ: Mapping[str, str] | None = None
) -> pluggy.PluginManager:
    """A new plugin manager: the built-in plugins and (unless told not to) the installed ones."""
    env = os.environ if environ is None else environ
    pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
    pm.add_hookspecs(hookspecs)
    for name in _names(env.get("ACP_ADAPTERS_DISABLE_PLUGINS")):
        if name not in DEFAULT_PLUGINS:
            pm.set_blocked(name)
    if load_entrypoints:
        only = env.get("ACP_ADAPTERS_PLUGINS")
        wanted = None if only is None else set(_names(only))
        for entry_point in entry_points(group=ENTRY_POINT_GROUP):
            if wanted is not None and entry_point.name not in wanted:
                continue
            if pm.is_blocked(entry_point.name) or pm.has_plugin(entry_point.name):
                continue
            pm.register(_load(entry_point), name=entry_point.name)
    for name in DEFAULT_PLUGINS:
        module = importlib.import_module(name)
        # A built-in that needs the manager (to call other hooks) exposes plugin(pm).
        factory = getattr(module, "plugin", None)
        pm.register(factory(pm) if callable(factory) else module, name=name)
    pm.check_pending()
    if env.get("ACP_ADAPTERS_TRACE_PLUGINS") == "1":
        _trace(pm)
    return pm


def _load(entry_point: EntryPoint) -> Any:
    """Import an entry point; a failure names the plugin and its distribution."""
    try:
        return entry_point.load()
    except Exception as exc:
        dist = entry_point.dist
        where = f"{dist.name} {dist.version}" if dist is not None else "an unknown distribution"
        raise PluginLoadError(
            f"plugin {entry_point.name!r} (entry point {entry_point.value!r} of {where}) "
            f"failed to import: {exc}"
        ) from exc


def _trace(pm: pluggy.PluginManager) -> None:
    def before(hook_name: str, impls: Sequence[pluggy.HookImpl], kwargs: Mapping[str, Any]) -> None:
        names = ", ".join(impl.plugin_name for impl in impls)
        print(f"[acp_adapters] {hook_name}({', '.join(kwargs)}) -> [{names}]", file=sys.stderr)

    def after(
        outcome: pluggy.Result[Any],
        hook_name: str,
        impls: Sequence[pluggy.HookImpl],
        kwargs: Mapping[str, Any],
    ) -> None:
        exception = outcome.exception
        shown = f"raised {exception!r}" if exception else repr(outcome.get_result())[:200]
        print(f"[acp_adapters] {hook_name} = {shown}", file=sys.stderr)

    pm.add_hookcall_monitoring(before, after)


def loaded_plugins(pm: pluggy.PluginManager) -> list[str]:
    """The names of the registered plugins, built-ins last."""
    names = [name for name, plugin in pm.list_name_plugin() if plugin is not None]
    return sorted(names, key=lambda n: (n in DEFAULT_PLUGINS, n))
