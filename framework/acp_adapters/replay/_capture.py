"""Reading a capture for the replay: its lines as entries, the unreadable ones as warnings.

The replay agent starts as a subprocess of every replayed session, so this
module (like the rest of the package) uses the standard library only; the
direction names are those of :mod:`acp_adapters.timeline.capture`, spelled
here again so that reading a capture does not import the projection.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .. import _json
from ..errors import CaptureError

CLIENT_TO_AGENT = "client->agent"
AGENT_TO_CLIENT = "agent->client"
#: A line the agent printed that was not JSON: ``{"dir": ..., "raw": text}``.
AGENT_RAW = "agent->client(raw)"
#: The agent exited here: ``{"dir": "exit", "code": 3, "stderr": text}``.
AGENT_EXIT = "exit"
#: The recording client read a file around an edit: ``{"dir": "disk", "toolCallId": id,
#: "path": path, "phase": "before" | "after", "content": text | null}``.
DISK_READ = "disk"

#: A capture file's path, or its lines.
CaptureSource = str | os.PathLike[str] | Iterable[str]

PartKind = Literal["request", "notification", "answer"]
RequestKey = tuple[str, Any] | str


def request_key(request_id: Any) -> RequestKey:
    """A request id as a dict key that keeps its JSON type (``1`` is not ``"1"``)."""
    if isinstance(request_id, int | str) and not isinstance(request_id, bool):
        return (type(request_id).__name__, request_id)
    return repr(request_id)


@dataclass(frozen=True)
class Part:
    """One JSON-RPC message of an entry (a batch has several): what it is, and its method."""

    message: dict[str, Any]
    kind: PartKind
    method: str | None


@dataclass(frozen=True)
class Entry:
    """One usable line of a capture (``line`` counts from 1, as an editor shows it)."""

    line: int
    direction: str
    message: Any = None
    parts: tuple[Part, ...] = ()
    raw: str = ""
    exit_code: int | None = None
    stderr: str = ""


@dataclass(frozen=True)
class DiskRead:
    """A file the recording client read around an edit, and what it held (None: no file)."""

    line: int
    tool_call_id: str
    path: str
    phase: str
    content: str | None


@dataclass
class Capture:
    """The entries of a capture, and what was wrong with the lines that were left out.

    The recording client's disk reads are not messages: they are kept apart, in
    ``disk``, in the order they were made.
    """

    entries: list[Entry] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    disk: list[DiskRead] = field(default_factory=list)


def message_parts(message: Any) -> tuple[Part, ...]:
    """The messages of one line (a batch is taken apart); what is not a message is left out."""
    parts: list[Part] = []
    for one in message if isinstance(message, list) else [message]:
        if not isinstance(one, dict):
            continue
        method = one.get("method")
        if isinstance(method, str):
            parts.append(Part(one, "request" if "id" in one else "notification", method))
        elif "id" in one and ("result" in one or "error" in one):
            parts.append(Part(one, "answer", None))
    return tuple(parts)


def read_capture(source: CaptureSource) -> Capture:
    """The entries of a capture file (or of its lines).

    A line that is not JSON (a truncated last line among them), or not a capture
    entry, is left out and named in ``warnings`` with its line number.

    :raises CaptureError: when the file cannot be read at all.
    """
    if isinstance(source, str | os.PathLike):
        try:
            lines: Iterable[str] = Path(source).read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise CaptureError(f"cannot read capture {os.fspath(source)!r}: {exc}") from exc
    else:
        lines = source
    capture = Capture()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            value = _json.loads(line)
        except ValueError:
            capture.warnings.append(f"line {number}: not JSON, left out")
            continue
        if isinstance(value, dict) and value.get("dir") == DISK_READ:
            read = _disk_read(number, value)
            if read is None:
                capture.warnings.append(f"line {number}: not a disk entry, left out")
            else:
                capture.disk.append(read)
            continue
        entry = _entry(number, value)
        if isinstance(entry, str):
            capture.warnings.append(f"line {number}: {entry}, left out")
        else:
            capture.entries.append(entry)
    return capture


def _disk_read(number: int, value: dict[str, Any]) -> DiskRead | None:
    call, path, phase = value.get("toolCallId"), value.get("path"), value.get("phase")
    content = value.get("content")
    if (
        isinstance(call, str)
        and isinstance(path, str)
        and phase in ("before", "after")
        and (content is None or isinstance(content, str))
    ):
        return DiskRead(number, call, path, str(phase), content)
    return None


def _entry(number: int, value: Any) -> Entry | str:
    """The entry of one parsed line, or why it is not one."""
    if not isinstance(value, dict):
        return "not a capture entry (a JSON object)"
    direction = value.get("dir")
    if direction in (CLIENT_TO_AGENT, AGENT_TO_CLIENT):
        message = value.get("msg")
        parts = message_parts(message)
        if direction == CLIENT_TO_AGENT and not parts:
            # Nothing in it the live client could be checked against.
            return "no JSON-RPC message in it"
        if not isinstance(message, dict | list):
            return "no message in it"
        return Entry(number, direction, message=message, parts=parts)
    if direction == AGENT_RAW:
        raw = value.get("raw")
        return Entry(number, direction, raw=raw) if isinstance(raw, str) else "no raw text in it"
    if direction == AGENT_EXIT:
        code = value.get("code")
        stderr = value.get("stderr")
        return Entry(
            number,
            direction,
            exit_code=code if isinstance(code, int) and not isinstance(code, bool) else None,
            stderr=stderr if isinstance(stderr, str) else "",
        )
    return f"unknown direction {direction!r}"
