"""Deprecated: the ``Timeline`` is the timeline's, :mod:`acp_adapters.timeline.timeline`.

``Timeline`` is still importable from :mod:`acp_adapters`, :mod:`acp_adapters.timeline`
and :mod:`acp_adapters.projection`; read from here, it and ``session_json`` still work,
with a :class:`DeprecationWarning` naming their new module.
"""

from __future__ import annotations

from .._moved import homes, moved_names

__getattr__ = moved_names(
    __name__, homes("acp_adapters.timeline.timeline", ("Timeline", "session_json"))
)
