"""Opening a store: its files private to their user, nothing made by a read, a URL of no
backend named as such, and the names a thread may have."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from acp_adapters.store import (
    STORE_ENV,
    Commit,
    InvalidThreadName,
    Store,
    StoreError,
    StoreNotFound,
    open_store,
)
from acp_adapters.store import open as open_module

pytestmark = pytest.mark.anyio


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


async def test_a_new_sqlite_store_and_its_wal_and_shm_files_are_its_users_alone(
    tmp_path: Path,
) -> None:
    old = os.umask(0o022)  # the usual umask: SQLite alone makes its files 0644
    try:
        target = tmp_path / "store.db"
        async with await open_store(target) as store:
            thread = await store.create_thread(provider="generic", cwd="/w", name="work")
            await store.commit(thread.id, Commit(events=[{"n": 1}]))
            # While the store is open, SQLite keeps its write-ahead log and shared memory.
            assert mode(target) == 0o600
            assert mode(Path(f"{target}-wal")) == 0o600
            assert mode(Path(f"{target}-shm")) == 0o600
    finally:
        os.umask(old)


async def test_an_existing_file_keeps_its_mode(tmp_path: Path) -> None:
    target = tmp_path / "shared.db"
    async with await open_store(target):
        pass
    target.chmod(0o640)  # its owner's choice: a group that reads the sessions
    async with await open_store(target):
        pass
    assert mode(target) == 0o640


async def test_the_default_folder_is_made_private_and_kept_private(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(STORE_ENV, raising=False)
    target = tmp_path / "data" / "acp-adapters" / "store.db"
    monkeypatch.setattr(open_module, "default_store_path", lambda: target)
    async with await open_store():
        pass
    assert mode(target.parent) == 0o700
    assert mode(target) == 0o600
    # One an older version made as the umask said is the library's own: made private.
    target.parent.chmod(0o755)
    async with await open_store():
        pass
    assert mode(target.parent) == 0o700


async def test_a_folder_the_user_names_is_left_as_it_is(tmp_path: Path) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o755)
    async with await open_store(folder / "store.db"):
        pass
    assert mode(folder) == 0o755
    assert mode(folder / "store.db") == 0o600


async def test_a_read_makes_no_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    typo = tmp_path / "typo.db"
    with pytest.raises(StoreNotFound, match=f"no store at {typo}"):
        await open_store(typo, create=False)
    assert not typo.exists()
    assert list(tmp_path.iterdir()) == []
    # An empty file is no store either, and is left empty.
    typo.touch()
    with pytest.raises(StoreNotFound, match="empty database"):
        await open_store(typo, create=False)
    assert typo.stat().st_size == 0
    # Nor is the default store made, nor its folder.
    monkeypatch.delenv(STORE_ENV, raising=False)
    default = tmp_path / "data" / "acp-adapters" / "store.db"
    monkeypatch.setattr(open_module, "default_store_path", lambda: default)
    with pytest.raises(StoreNotFound):
        await open_store(create=False)
    assert not (tmp_path / "data").exists()


async def test_a_store_that_exists_opens_for_reading(tmp_path: Path) -> None:
    target = tmp_path / "store.db"
    async with await open_store(target) as store:
        await store.create_thread(provider="generic", cwd="/w", name="work")
    async with await open_store(target, create=False) as store:
        assert [t.name for t in await store.threads()] == ["work"]


@pytest.mark.parametrize(
    "url", ["mysql://user:secret@db/app", "redis://localhost:6379/0", "sqlite+x://a/b"]
)
async def test_a_url_of_no_backend_is_named_as_such(url: str, tmp_path: Path) -> None:
    with pytest.raises(StoreError) as raised:
        await open_store(url)
    said = str(raised.value)
    scheme = url.partition("://")[0]
    assert f"{scheme}:// is not a store this library opens" in said
    assert "does not exist" not in said  # not taken for a path in a missing folder
    assert "secret" not in said


async def test_a_sqlite_file_uri_is_still_a_sqlite_store(tmp_path: Path) -> None:
    async with await open_store(f"file:{tmp_path / 'uri.db'}") as store:
        await store.create_thread(provider="generic", cwd="/w")
    assert (tmp_path / "uri.db").is_file()


@pytest.mark.parametrize(
    "name", ["", " ", "\t\n", "a\x1bb", "a\x9bb", "a\u202eb", "a\x00b", "a\udcffb"]
)
async def test_a_name_no_one_could_type_or_see_is_refused(store: Store, name: str) -> None:
    with pytest.raises(InvalidThreadName):
        await store.create_thread(provider="generic", cwd="/w", name=name)
    thread = await store.create_thread(provider="generic", cwd="/w")
    with pytest.raises(InvalidThreadName):
        await store.update_thread(thread.id, name=name)
    with pytest.raises(InvalidThreadName):
        await store.commit(thread.id, Commit(thread={"name": name}))
    assert (await store.thread(thread.id)).name is None
    await store.delete_thread(thread.id)


async def test_a_sqlite_file_uri_has_the_safeguards_of_a_path(tmp_path: Path) -> None:
    # Read-only opening makes nothing; a store made is its owner's only.
    missing = tmp_path / "missing.db"
    for uri in (f"file:{missing}", f"file://{missing}?mode=rwc"):
        with pytest.raises(StoreNotFound):
            await open_store(uri, create=False)
        assert not missing.exists()
    made = tmp_path / "made.db"
    async with await open_store(f"file://{made}"):
        pass
    assert stat.S_IMODE(made.stat().st_mode) == 0o600
