"""What is sent to clients: the wire projection of timeline items, snapshots and deltas."""

from __future__ import annotations

from .projection import (
    ERROR_LIMIT,
    RAW_LIMIT,
    SUMMARY_CHARS,
    WireFollower,
    apply_deltas,
    truncate_utf8,
    wire_deltas,
    wire_item,
    wire_json_schema,
    wire_snapshot,
)

__all__ = [
    "ERROR_LIMIT",
    "RAW_LIMIT",
    "SUMMARY_CHARS",
    "WireFollower",
    "apply_deltas",
    "truncate_utf8",
    "wire_deltas",
    "wire_item",
    "wire_json_schema",
    "wire_snapshot",
]
