"""The store's names that moved to :mod:`acp_adapters.history`, still found at their old homes
for one release, each with a :class:`DeprecationWarning` naming its new one.

A thread's timeline rebuilt and checked, followed, a lost owner's turn ended, a turn's patch
and its revert all read the log back through the projection, which the store does not import:
they live above both now. Their old modules (``acp_adapters.store.rebuild``, ``.following``,
``.recovery``, ``.patches``) and the package (``rebuild_items``, ``check_thread``) keep only a
module ``__getattr__`` that asks :func:`moved`.

:data:`_MOVED` is the one place where the store names a folder above it: the new home is
imported by its name, when an old name is used, never by the store's own code. The
architecture test reads it, and docs/architecture.md says so.
"""

from __future__ import annotations

import importlib
from typing import Any

from .._moved import take_moved

#: Each old home (a module of the store), the module its names moved to, and those names.
_MOVED: dict[str, tuple[str, tuple[str, ...] | None]] = {
    "acp_adapters.store": ("acp_adapters.history.rebuild", ("check_thread", "rebuild_items")),
    "acp_adapters.store.rebuild": (
        "acp_adapters.history.rebuild",
        ("check_thread", "rebuild_items", "thread_reader"),
    ),
    "acp_adapters.store.following": (
        "acp_adapters.history.following",
        ("LOOK_SECONDS", "follow_items"),
    ),
    "acp_adapters.store.recovery": (
        "acp_adapters.history.lost_turns",
        ("end_lost_turn", "lost_exit_entry"),
    ),
    # Every public name of the new home.
    "acp_adapters.store.patches": ("acp_adapters.history.turn_patches", None),
}


def moved(module: str, name: str) -> Any:
    """``name`` of the old home ``module``, from its new home, with a warning that names it
    (the names of a home given as None: those of its ``__all__``).

    :raises AttributeError: ``module`` never had ``name`` (as a module's attribute lookup does).
    """
    home, names = _MOVED.get(module, ("", ()))
    if names is None and not name.startswith("__"):
        names = tuple(getattr(importlib.import_module(home), "__all__", ()))
    # The caller of the old module's ``__getattr__``, four frames up from the warning.
    return take_moved(module, name, home if name in (names or ()) else None, stacklevel=4)
