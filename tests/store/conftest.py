"""The store's fixtures: ``store_target`` (where a store is: a SQLite file, or a PostgreSQL
database when a server can be had) and ``store`` (that store, opened), each parametrized over
the backends, ``sqlite`` and ``postgres``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from acp_adapters.store import Store, open_store

try:  # the PostgreSQL server of the tests (``postgres_url``), when its module is there
    from .postgres_server import postgres_server, postgres_url  # noqa: F401
except ImportError as exc:  # pragma: no cover - the module is part of the tests
    POSTGRES_MISSING: str | None = f"tests/store/postgres_server.py cannot be imported: {exc}"
else:
    POSTGRES_MISSING = None


@pytest.fixture(params=["sqlite", "postgres"])
def store_target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where a store is: a new SQLite file, or the test session's PostgreSQL database (shared
    by the tests: each test keeps to the threads it creates)."""
    if request.param == "sqlite":
        return str(tmp_path / "store.db")
    if POSTGRES_MISSING is not None:
        pytest.skip(POSTGRES_MISSING)
    try:
        return str(request.getfixturevalue("postgres_url"))
    except pytest.skip.Exception:
        raise
    except Exception as exc:
        pytest.skip(f"no PostgreSQL server could be started: {type(exc).__name__}: {exc}")


@pytest.fixture
async def store(store_target: str) -> AsyncIterator[Store]:
    """The store at ``store_target``, opened (and closed after the test)."""
    async with await open_store(store_target) as opened:
        yield opened
