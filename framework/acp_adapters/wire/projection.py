"""The wire projection: a timeline's items as they are sent to web and mobile clients.

The store keeps every item whole (a file_change's ``diff_str``, a command's output, an MCP
tool's full result); clients get a smaller form of each item, built from the item's JSON
(``item.model_dump(mode="json")``) so that items read back from a store project the same:

* ``file_change``: ``diff_str`` (and any old/new text field) is dropped; ``paths``,
  ``operations``, ``moved_from``, ``additions`` and ``deletions`` stay. A failed edit keeps its
  error text, cut to :data:`ERROR_LIMIT` bytes of UTF-8 (never inside a character), with
  ``error_truncated: true`` when it was cut.
* ``command_execution``: ``output`` is dropped, with ``output_omitted: true``.
* ``tool`` (MCP tools included) and any raw field (``input``, ``output``, ``raw``,
  ``raw_input``, ``raw_output``, ``data``, a tool's ``text``): a value whose JSON is over
  :data:`RAW_LIMIT` bytes becomes a summary string, with ``truncated: true``: one line of at
  most :data:`SUMMARY_CHARS` characters, whatever the value's shape (its keys and strings
  are the agent's: line breaks and controls in them are shown as spaces).
* Everything else is sent as it is, but for fields whose value is null: they are left out
  (a field a client does not find is null).

A thread is sent as a snapshot (:func:`wire_snapshot`), then a live turn as deltas
(:func:`wire_deltas`, :class:`WireFollower`), which :func:`apply_deltas` applies.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from itertools import islice
from typing import Any

from pydantic import BaseModel

#: A failed edit's error text is cut to this many bytes of UTF-8 (32 KiB).
ERROR_LIMIT = 32 * 1024
#: A raw value (a tool's input or output) whose JSON is over this many bytes is summarised.
RAW_LIMIT = 16 * 1024
#: How many characters of a summarised value's JSON its summary shows.
PREVIEW_CHARS = 80
#: The longest a summary is, in characters (one line: no line break nor control in it).
SUMMARY_CHARS = 256
#: How many of an object's keys a summary names, and how much of each.
_SUMMARY_KEYS = 8
_KEY_CHARS = 24
#: What would break the summary's line, or act on a terminal that shows it: C0 and C1
#: controls (line breaks, tabs, escapes; U+0085 is a line break to some readers) and the
#: Unicode line and paragraph separators.
_LINE_BREAKING = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")

#: Fields of a file_change that hold file text: never sent.
_FILE_TEXT_FIELDS = frozenset(
    {
        "diff_str",
        "old_text",
        "new_text",
        "oldText",
        "newText",
        "old_content",
        "new_content",
        "old",
        "new",
        "before",
        "after",
    }
)
#: Fields of a failed file_change that hold its error text.
_ERROR_FIELDS = ("error", "error_text", "message", "patch_note")
#: Fields holding raw values (tool input and output as sent, an agent's raw payload).
_RAW_FIELDS = ("input", "output", "raw", "raw_input", "raw_output", "rawInput", "rawOutput", "data")

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


def truncate_utf8(text: str, limit: int) -> tuple[str, bool]:
    """``text`` cut to at most ``limit`` bytes of UTF-8, never inside a character, and
    whether it was cut."""
    encoded = text.encode("utf-8", "surrogatepass")
    if len(encoded) <= limit:
        return text, False
    # The text was whole, so "ignore" drops only the partial character the cut made.
    return encoded[:limit].decode("utf-8", "ignore"), True


def _json_size(value: Any) -> tuple[str, int | None]:
    """A value's compact JSON and its size in bytes; a size of None: nested too deeply to
    be written (it is not sent either way)."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except RecursionError:
        return "", None
    return text, len(text.encode("utf-8", "surrogatepass"))


def _one_line(text: str, limit: int) -> str:
    """``text`` on one line (what would break it or act on a terminal a space), cut to
    ``limit`` characters, an ellipsis marking the cut."""
    text = _LINE_BREAKING.sub(" ", text[: limit + 1])
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _summary(value: Any, text: str, size: int | None) -> str:
    """A summary of a value too large to send: its type, size and first characters, on one
    line of at most :data:`SUMMARY_CHARS` characters, whatever the value holds."""
    if isinstance(value, dict):
        keys = [_one_line(str(key), _KEY_CHARS) for key in islice(value, _SUMMARY_KEYS)]
        shape = "object with keys " + ", ".join(keys)
        if len(value) > _SUMMARY_KEYS:
            shape += ", ..."
    elif isinstance(value, list):
        shape = f"array of {len(value)} items"
    elif isinstance(value, str):
        shape = "string"
    else:
        shape = type(value).__name__
    measured = f"{size} bytes" if size is not None else "nested too deeply to measure"
    preview = _one_line(text, PREVIEW_CHARS)
    # The keys' parts are bounded already; the cut here holds the whole to its bound.
    return _one_line(f"[{shape}; {measured}; truncated] {preview}".rstrip(), SUMMARY_CHARS)


def _as_json(item: BaseModel | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(item, BaseModel):
        dumped: dict[str, Any] = item.model_dump(mode="json")
        return dumped
    return dict(item)


def wire_item(item: BaseModel | Mapping[str, Any]) -> dict[str, Any]:
    """The item as it is sent to clients: a new dict, the item (or its stored JSON) untouched.

    ``item`` is a :data:`~acp_adapters.timeline.items.TimelineItem` or its JSON (as a store
    keeps it). The rules, by ``kind``:

    * ``file_change``: ``diff_str`` and any old/new text field (``old_text``, ``new_text``,
      ``old``, ``new``, ...) are dropped; ``paths``, ``operations``, ``moved_from``,
      ``additions`` and ``deletions`` (the ``+A -D``) are kept. A failed one (``status``
      ``failed``) keeps its error text (``error``, ``error_text``, ``message`` or
      ``patch_note``), each cut to 32 KiB of UTF-8 (:data:`ERROR_LIMIT`), never inside a
      character, with ``error_truncated: true`` when one was cut.
    * ``command_execution``: ``output`` is dropped, with ``output_omitted: true`` where there
      was output.
    * Any item: a raw field (``input``, ``output``, ``raw``, ``raw_input``, ``raw_output``,
      ``data``, and a ``tool``'s ``text``) whose compact JSON is over 16 KiB
      (:data:`RAW_LIMIT`), or that is nested too deeply to be written, becomes a summary
      string (its type, the first of its keys, its size in bytes and its first 80
      characters), with ``truncated: true``: one line of at most 256 characters
      (:data:`SUMMARY_CHARS`), line breaks and controls shown as spaces.
    * Every other field, and every other kind, is sent unchanged, but for null fields, which
      are left out: a client takes a field it does not find as null. (A field that turns
      null in a live turn is in its delta's ``unset``.)
    """
    data = _as_json(item)
    kind = data.get("kind")
    if kind == "file_change":
        for field in _FILE_TEXT_FIELDS:
            data.pop(field, None)
        if data.get("status") == "failed":
            cut_any = False
            for field in _ERROR_FIELDS:
                value = data.get(field)
                if isinstance(value, str):
                    data[field], cut = truncate_utf8(value, ERROR_LIMIT)
                    cut_any = cut_any or cut
            if cut_any:
                data["error_truncated"] = True
    elif kind == "command_execution" and data.pop("output", None) is not None:
        data["output_omitted"] = True
    raw_fields: tuple[str, ...] = _RAW_FIELDS + (("text",) if kind == "tool" else ())
    truncated = False
    for field in raw_fields:
        if field not in data or data[field] is None:
            continue
        value = data[field]
        text, size = _json_size(value)
        if size is None or size > RAW_LIMIT:
            data[field] = _summary(value, text, size)
            truncated = True
    if truncated:
        data["truncated"] = True
    # Absent means null: the most common value of an item's fields costs nothing to send.
    return {key: value for key, value in data.items() if value is not None}


def wire_snapshot(
    items: Iterable[BaseModel | Mapping[str, Any]],
    *,
    session: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A thread as it is sent to a client that opens it: ``{"items": [...]}``, each item
    through :func:`wire_item`, in the order given.

    ``session``, where given (e.g. :meth:`Timeline.session_json`: its title, mode, usage and
    turn state), is sent as it is under ``"session"``.
    """
    snapshot: dict[str, Any] = {}
    if session is not None:
        snapshot["session"] = dict(session)
    snapshot["items"] = [wire_item(item) for item in items]
    return snapshot


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON (``1`` is not ``true``, nor ``1.0``)."""
    if a is b:
        return True
    return bool(a == b) and _json_size(a)[0] == _json_size(b)[0]


def _item_delta(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any] | None:
    """How ``old`` became ``new`` (both wire items, same id): ``set`` (fields with a new
    value), ``append`` (string fields that only grew: the added text), ``unset`` (fields
    gone); None when nothing changed."""
    set_: dict[str, Any] = {}
    append: dict[str, str] = {}
    for key, value in new.items():
        if key not in old:
            set_[key] = value
            continue
        before = old[key]
        if _same(before, value):
            continue
        if (
            isinstance(before, str)
            and isinstance(value, str)
            and before
            and value.startswith(before)
        ):
            append[key] = value[len(before) :]
        else:
            set_[key] = value
    unset = [key for key in old if key not in new]
    if not (set_ or append or unset):
        return None
    delta: dict[str, Any] = {"id": new.get("id")}
    if set_:
        delta["set"] = set_
    if append:
        delta["append"] = append
    if unset:
        delta["unset"] = unset
    return delta


def wire_deltas(
    before: Iterable[BaseModel | Mapping[str, Any]],
    after: Iterable[BaseModel | Mapping[str, Any]],
) -> list[dict[str, Any]]:
    """What changed between two states of a thread's items, item by item, as wire deltas.

    ``before`` and ``after`` are items or their JSON (stored or already wired: each goes
    through :func:`wire_item`, which gives a wire item back unchanged). Each delta is one of:

    * ``{"add": item}`` (a new item, whole, appended) or ``{"add": item, "at": i}`` (inserted
      at index ``i``);
    * ``{"id": id, "set": {...}, "append": {...}, "unset": [...]}``: a changed item, only its
      changed fields (``append`` for a string that only grew, e.g. a streamed message);
    * ``{"remove": id}``: an item gone (or moved: removed, then added at its new place).

    Applied in order to ``wire_snapshot(before)`` (:func:`apply_deltas`), they give
    ``wire_snapshot(after)``. Items are told apart by ``id``, which must be unique.
    """
    old = [wire_item(i) for i in before]
    new = [wire_item(i) for i in after]
    by_id = {i.get("id"): i for i in old}
    new_ids = {i.get("id") for i in new}
    deltas: list[dict[str, Any]] = []
    current: list[Any] = []
    for item in old:
        if item.get("id") in new_ids:
            current.append(item.get("id"))
        else:
            deltas.append({"remove": item.get("id")})
    for index, item in enumerate(new):
        item_id = item.get("id")
        if index < len(current) and current[index] == item_id:
            delta = _item_delta(by_id[item_id], item)
            if delta is not None:
                deltas.append(delta)
            continue
        if item_id in current:  # moved: sent again where it now is
            deltas.append({"remove": item_id})
            current.remove(item_id)
        add: dict[str, Any] = {"add": item}
        if index != len(current):
            add["at"] = index
        deltas.append(add)
        current.insert(index, item_id)
    return deltas


def apply_deltas(
    snapshot: Mapping[str, Any], deltas: Iterable[Mapping[str, Any]]
) -> dict[str, Any]:
    """``snapshot`` (a :func:`wire_snapshot`) with ``deltas`` (:func:`wire_deltas`,
    :class:`WireFollower`) applied in order: a new snapshot, the given one untouched.

    What a client does; here for tests and for servers that keep a client's view."""
    result = dict(snapshot)
    items = [dict(i) for i in snapshot.get("items", [])]
    for delta in deltas:
        if "add" in delta:
            at = delta.get("at")
            items.insert(len(items) if at is None else int(at), dict(delta["add"]))
        elif "remove" in delta:
            items = [i for i in items if i.get("id") != delta["remove"]]
        else:
            for item in items:
                if item.get("id") == delta["id"]:
                    item.update(delta.get("set", {}))
                    for key, text in delta.get("append", {}).items():
                        item[key] = item[key] + text
                    for key in delta.get("unset", []):
                        item.pop(key, None)
                    break
    result["items"] = items
    return result


class WireFollower:
    """Turns a live stream of item changes into wire deltas, one at a time.

    Give it each item as it appears or changes (:meth:`update`); it answers the delta to
    send (``{"add": item}`` for a new one, the changed fields for a known one) or None when
    the wire form did not change (e.g. only a command's output grew). :meth:`snapshot` is
    what a client that connects now is sent; the deltas after it bring it up to date.
    """

    def __init__(self, items: Iterable[BaseModel | Mapping[str, Any]] = ()) -> None:
        self._items: dict[Any, dict[str, Any]] = {}
        for item in items:
            wired = wire_item(item)
            self._items[wired.get("id")] = wired

    def update(self, item: BaseModel | Mapping[str, Any]) -> dict[str, Any] | None:
        """The delta for ``item``'s new state (added at the end when its id is new)."""
        wired = wire_item(item)
        item_id = wired.get("id")
        old = self._items.get(item_id)
        self._items[item_id] = wired
        if old is None:
            return {"add": wired}
        return _item_delta(old, wired)

    def remove(self, item_id: str) -> dict[str, Any] | None:
        """The delta for an item gone, or None when it was not known."""
        if self._items.pop(item_id, None) is None:
            return None
        return {"remove": item_id}

    def snapshot(self, *, session: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The :func:`wire_snapshot` of the items as they stand."""
        return wire_snapshot(list(self._items.values()), session=session)


_FLAG: dict[str, Any] = {"const": True, "type": "boolean"}


def wire_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a wire item (:func:`wire_item`), told by ``kind``.

    The timeline's item schema (:func:`~acp_adapters.timeline_json_schema`) with the wire's
    changes: no ``diff_str`` in a ``file_change`` and no ``output`` in a
    ``command_execution``; the markers ``error_truncated`` (file_change), ``output_omitted``
    (command_execution) and ``truncated`` (any item); a summarised raw field is a string,
    which its schema (any value) allows. ``$defs`` also holds ``WireSnapshot`` and
    ``WireDelta``. ``docs/wire.schema.json`` is a copy.
    """
    from ..timeline.schema import timeline_json_schema

    timeline = timeline_json_schema()
    defs: dict[str, Any] = timeline["$defs"]
    for name, definition in defs.items():
        properties = definition.get("properties", {})
        if "kind" not in properties:
            continue
        properties["truncated"] = dict(_FLAG, description="A raw field was summarised.")
        if name == "FileChangeItem":
            del properties["diff_str"]
            properties["error_truncated"] = dict(_FLAG, description="The error text was cut.")
        if name == "CommandExecutionItem":
            del properties["output"]
            properties["output_omitted"] = dict(_FLAG, description="The output is not sent.")
    defs["WireItem"] = {
        "oneOf": timeline["items"]["oneOf"],
        "discriminator": timeline["items"]["discriminator"],
    }
    item_ref = {"$ref": "#/$defs/WireItem"}
    defs["WireSnapshot"] = {
        "type": "object",
        "properties": {
            "items": {"type": "array", "items": item_ref},
            "session": {"type": "object"},
        },
        "required": ["items"],
        "additionalProperties": False,
    }
    defs["WireDelta"] = {
        "oneOf": [
            {
                "type": "object",
                "properties": {"add": item_ref, "at": {"type": "integer", "minimum": 0}},
                "required": ["add"],
                "additionalProperties": False,
            },
            {
                "type": "object",
                "properties": {"remove": {"type": "string"}},
                "required": ["remove"],
                "additionalProperties": False,
            },
            {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "set": {"type": "object"},
                    "append": {"type": "object", "additionalProperties": {"type": "string"}},
                    "unset": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["id"],
                "additionalProperties": False,
            },
        ]
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "acp-adapters wire item",
        "description": (
            "A timeline item as the wire projection (wire_item) sends it to clients, its null "
            "fields left out (a field not sent is null); $defs/WireSnapshot is a thread's "
            "snapshot, $defs/WireDelta one delta of a live turn."
        ),
        "$defs": defs,
        "$ref": "#/$defs/WireItem",
    }
