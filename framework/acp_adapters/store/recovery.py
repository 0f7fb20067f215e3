"""Moved: the turn a lost owner left running, ended, is :mod:`acp_adapters.history.lost_turns`;
its names are found here for one release, with a warning (:mod:`.moved`)."""

from __future__ import annotations

from typing import Any

from .moved import moved


def __getattr__(name: str) -> Any:
    return moved(__name__, name)
