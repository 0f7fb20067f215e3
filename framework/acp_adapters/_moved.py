"""Names that moved, still found at their old homes for one release.

A module whose names went elsewhere keeps one line: ``__getattr__ = moved_names(__name__,
{...})`` (each name, its new module) or ``__getattr__ = moved_module(__name__, HOME)`` (every
name of ``HOME``'s ``__all__``). A name is looked up in its new home when it is first asked
for, imported by its module's name (so the old home imports nothing of it, not even a folder
above it), with a :class:`DeprecationWarning` that names the new home.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Any


def take_moved(module: str, name: str, home: str | None, *, stacklevel: int = 3) -> Any:
    """``name`` of the old home ``module``, from its new ``home`` (None: ``module`` never had
    it), with a warning that names the new home; ``stacklevel`` is the frame of the caller
    that asked, counted from here.

    :raises AttributeError: ``module`` never had ``name`` (as a module's attribute lookup does).
    """
    if home is None or name.startswith("__"):
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    warnings.warn(
        f"{module}.{name} moved to {home}: import {name} from there ({module} keeps it "
        "for one release only)",
        DeprecationWarning,
        stacklevel=stacklevel,
    )
    return getattr(importlib.import_module(home), name)


def moved_names(module: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """The ``__getattr__`` of module ``module``, whose names ``homes`` moved (each name, the
    module it is in now)."""

    def __getattr__(name: str) -> Any:
        return take_moved(module, name, homes.get(name))

    return __getattr__


def moved_module(module: str, home: str) -> Callable[[str], Any]:
    """The ``__getattr__`` of module ``module``, all of whose names are ``home``'s now (those
    of its ``__all__``)."""

    def __getattr__(name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        names = getattr(importlib.import_module(home), "__all__", ())
        return take_moved(module, name, home if name in names else None)

    return __getattr__


def homes(home: str, names: Iterable[str]) -> dict[str, str]:
    """``names``, each moved to module ``home``."""
    return dict.fromkeys(names, home)
