"""The fixtures of the registry's install tests: a loopback server, a cache folder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .http_server import LoopbackServer


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as running:
        yield running


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache"
