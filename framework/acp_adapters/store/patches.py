"""Moved: a turn's file changes as one patch, and undoing a turn, are
:mod:`acp_adapters.history.turn_patches`; its names are found here for one release, with a
warning (:mod:`.moved`)."""

from __future__ import annotations

from typing import Any

from .moved import moved


def __getattr__(name: str) -> Any:
    return moved(__name__, name)
