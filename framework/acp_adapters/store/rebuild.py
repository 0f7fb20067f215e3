"""Moved: a thread's timeline rebuilt from its event log, and the check that it is the stored
one, are :mod:`acp_adapters.history.rebuild`; its names are found here for one release, with a
warning (:mod:`.moved`)."""

from __future__ import annotations

from typing import Any

from .moved import moved


def __getattr__(name: str) -> Any:
    return moved(__name__, name)
