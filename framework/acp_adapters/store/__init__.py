"""The store: threads, turns, the event log and the timeline items of sessions, kept on disk
(SQLite, the embedded default) or in PostgreSQL (see :mod:`.base`).

What reads a thread back as a timeline (``rebuild_items``, ``check_thread``, following, turn
patches) is :mod:`acp_adapters.history`; its old names here still work for one release, with a
warning (:mod:`.moved`).
"""

from __future__ import annotations

from typing import Any

from .base import (
    LEASE_SECONDS,
    OWNER_LOST,
    SCHEMA_VERSION,
    Commit,
    EncodedEvent,
    InvalidThreadName,
    Lease,
    Owner,
    PromptState,
    QueuedPrompt,
    Store,
    StoredEvent,
    StoreError,
    StoreNotFound,
    Thread,
    ThreadBusy,
    ThreadMoved,
    ThreadNotFound,
    Turn,
    TurnStatus,
    check_thread_name,
    encoded_event,
)
from .moved import moved
from .open import STORE_ENV, default_store, default_store_path, open_store
from .sqlite import SqliteStore


def __getattr__(name: str) -> Any:
    return moved(__name__, name)


__all__ = [
    "LEASE_SECONDS",
    "OWNER_LOST",
    "SCHEMA_VERSION",
    "STORE_ENV",
    "Commit",
    "EncodedEvent",
    "InvalidThreadName",
    "Lease",
    "Owner",
    "PromptState",
    "QueuedPrompt",
    "SqliteStore",
    "Store",
    "StoreError",
    "StoreNotFound",
    "StoredEvent",
    "Thread",
    "ThreadBusy",
    "ThreadMoved",
    "ThreadNotFound",
    "Turn",
    "TurnStatus",
    "check_thread_name",
    "default_store",
    "default_store_path",
    "encoded_event",
    "open_store",
]
