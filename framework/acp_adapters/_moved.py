"""Names that moved, still found at their old homes for one release.

A module whose names went elsewhere keeps one line, ``__getattr__ = moved_names(__name__,
{...})``: each name is looked up in its new home when it is first asked for (imported by its
module's name, so the old home imports nothing of it, not even a folder above it), with a
:class:`DeprecationWarning` that names the new home.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Any


def moved_names(module: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """The ``__getattr__`` of module ``module``, whose names ``homes`` moved (each name, the
    module it is in now)."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        warnings.warn(
            f"{module}.{name} moved to {home}: import {name} from there ({module} keeps it "
            "for one release only)",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(home), name)

    return __getattr__


def homes(home: str, names: Iterable[str]) -> dict[str, str]:
    """``names``, each moved to module ``home``."""
    return dict.fromkeys(names, home)
