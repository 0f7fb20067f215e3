"""Moved: a thread's items followed as they are committed are
:mod:`acp_adapters.history.following`; its names are found here for one release, with a
warning (:mod:`.moved`)."""

from __future__ import annotations

from typing import Any

from .moved import moved


def __getattr__(name: str) -> Any:
    return moved(__name__, name)
