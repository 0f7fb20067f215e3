"""Fixtures for the real agents: where tox installed them, and a workspace and home each."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

#: Set by ``tox -e peers`` to the ``node_modules/.bin`` folder of the pinned agents.
AGENTS_BIN = "ACP_ADAPTERS_PEER_AGENTS"


@pytest.fixture(scope="session")
def agents_bin() -> Path:
    folder = os.environ.get(AGENTS_BIN)
    if not folder:
        pytest.fail(f"the real agents are installed by `tox -e peers`, which sets {AGENTS_BIN}")
    return Path(folder)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A fresh home for the agent: no configuration or credentials of this machine leak in."""
    folder = tmp_path / "home"
    folder.mkdir()
    return folder
