"""The ``acp-adapters`` command line (``python -m acp_adapters`` runs it too).

* ``demo``: a bundled Grok Build session, replayed by the replay agent, its timeline printed;
* ``replay CAPTURE``: the timeline of a capture, replayed live or projected offline;
* ``run``: a live session with a provider's agent or any ACP agent's command;
* ``providers``: the providers of the installed plugins.

``--format json`` prints the timeline as rows of :mod:`.rows`; docs/cli.md
documents the commands, the rows field by field, and the exit codes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .commands import main


def __getattr__(name: str) -> Any:
    # The commands load when first used: the program's entry (:mod:`.entry`) takes the
    # signals before they do.
    if name == "main":
        from .commands import main

        return main
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["main"]
