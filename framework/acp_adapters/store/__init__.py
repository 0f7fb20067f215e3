"""The store: threads, turns, the event log and the timeline items of sessions, kept on disk
(SQLite, the embedded default) or in PostgreSQL (see :mod:`.base`)."""

from __future__ import annotations

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
from .open import STORE_ENV, default_store, default_store_path, open_store
from .rebuild import check_thread, rebuild_items
from .sqlite import SqliteStore

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
    "check_thread",
    "check_thread_name",
    "default_store",
    "default_store_path",
    "encoded_event",
    "open_store",
    "rebuild_items",
]
