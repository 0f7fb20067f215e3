"""Deprecated: the ``Timeline`` is the timeline's, :mod:`acp_adapters.timeline.timeline`.

``Timeline`` is still importable from :mod:`acp_adapters`, :mod:`acp_adapters.timeline`
and :mod:`acp_adapters.projection`; read from here, it and ``session_json`` still work,
with a :class:`DeprecationWarning` naming their new module.
"""

from __future__ import annotations

import warnings
from typing import Any

_MOVED = ("Timeline", "session_json")


def __getattr__(name: str) -> Any:
    if name not in _MOVED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from ..timeline import timeline

    warnings.warn(
        f"{__name__} is deprecated: import {name} from {timeline.__name__}",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(timeline, name)
