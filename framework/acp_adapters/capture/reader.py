"""Reading a capture for the replay: its lines as entries, the unreadable ones as warnings.

The replay agent starts as a subprocess of every replayed session, so this
module (like the rest of the package) uses the standard library only; the
format's words are those of :mod:`acp_adapters.capture_format`.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from .._json import DEFAULT_MAX_ELEMENTS, DEFAULT_MAX_LINE_BYTES, MAX_DEPTH
from .format import (
    AGENT_EXIT,
    AGENT_RAW,
    AGENT_TO_CLIENT,
    CHECKPOINT,
    CLIENT_DECISION,
    CLIENT_TO_AGENT,
    DISK_READ,
    FILE_CHANGE,
    MESSAGE_DROPPED,
    SESSION_CLOSED,
    UNRECORDED,
    CaptureSource,
    DroppedLine,
    RequestKey,
    Unreadable,
    capture_values,
    change_line,
    checkpoint_line,
    closed_session,
    decided_line,
    disk_read,
    dropped_line,
    request_key,
)

__all__ = [
    "Capture",
    "CaptureSource",
    "DiskRead",
    "Entry",
    "Part",
    "agent_requests",
    "connections",
    "message_parts",
    "read_capture",
]

PartKind = Literal["request", "notification", "answer"]


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
    #: When it happened (the line's ``t``, seconds), where the line says so as a number.
    at: float | None = None
    #: A message the recording client's connection dropped (a ``dropped`` line, played as a
    #: raw line just over its limit: see :func:`dropped_again`).
    dropped: DroppedLine | None = None


@dataclass(frozen=True)
class DiskRead:
    """A file the recording client read for a true patch, and what it held (None: no file;
    with ``known`` False, a file it could not read as text). See ``DISK_PHASES``."""

    line: int
    tool_call_id: str | None
    path: str
    phase: str
    content: str | None
    known: bool = True


@dataclass
class Capture:
    """The entries of a capture, and what was wrong with the lines that were left out.

    The recording client's disk reads are not messages: they are kept apart, in
    ``disk``, in the order they were made; so are its checkpoints (``checkpoints``: each
    ``checkpoint`` line and the ``change`` lines after it, as recorded).
    """

    entries: list[Entry] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    disk: list[DiskRead] = field(default_factory=list)
    checkpoints: list[dict[str, Any]] = field(default_factory=list)
    #: How many entries hold a JSON-RPC message (counted also when they are not kept).
    messages: int = 0
    #: The number of the capture's last line when it is not JSON: the file was cut there
    #: (its writer killed mid-line), and what that line held is lost.
    cut: int | None = None


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


def read_capture(source: CaptureSource, *, keep: bool = True) -> Capture:
    """The entries of a capture file (or of its lines).

    A line that is not JSON (a truncated last line among them), longer or holding
    more values than the live connection reads, or not a capture entry, is left
    out and named in ``warnings`` with its line number. ``keep=False`` keeps only
    the warnings and the count of ``messages``: reading then holds one line at a
    time, however large the capture.

    :raises CaptureError: when the file cannot be read at all (see
        :func:`~acp_adapters.capture_format.capture_values`).
    """
    capture = Capture()
    for read in _read(source):
        if isinstance(read, _Cut):
            capture.cut = read.line
        elif isinstance(read, str):
            capture.warnings.append(read)
        elif isinstance(read, DiskRead):
            if keep:
                capture.disk.append(read)
        elif isinstance(read, dict):
            if keep:
                capture.checkpoints.append(read)
        else:
            capture.messages += bool(read.parts)
            if keep:
                capture.entries.append(read)
    return capture


def agent_requests(
    source: CaptureSource, methods: Collection[str]
) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    """The capture's requests from its agent of ``methods``, in order, each with the
    recorded client's answer to it (None where it never answered)."""
    found: list[tuple[dict[str, Any], dict[str, Any] | None]] = []
    asked: dict[RequestKey, int] = {}
    for entry in read_capture(source).entries:
        for part in entry.parts:
            message = part.message
            if entry.direction == AGENT_TO_CLIENT and part.kind == "request":
                if part.method in methods:
                    asked[request_key(message["id"])] = len(found)
                    found.append((message, None))
            elif entry.direction == CLIENT_TO_AGENT and part.kind == "answer":
                index = asked.pop(request_key(message["id"]), None)
                if index is not None:
                    found[index] = (found[index][0], message)
    return found


def connections(entries: Sequence[Entry]) -> list[list[Entry]]:
    """The entries of each connection of a capture, in order: one per agent process the
    recording client started. Each but the first starts with the client's ``initialize``
    (a thread gone on with by another run, a session whose agent was started again); what
    comes before the first ``initialize`` is the first's."""
    found: list[list[Entry]] = [[]]
    negotiated = False
    for entry in entries:
        starts = entry.direction == CLIENT_TO_AGENT and any(
            part.kind == "request" and part.method == "initialize" for part in entry.parts
        )
        if starts and negotiated:
            found.append([])
        negotiated = negotiated or starts
        found[-1].append(entry)
    return found


@dataclass(frozen=True)
class _Cut:
    """The capture's last line is not JSON: the file ends cut (see ``Capture.cut``)."""

    line: int


def _read(source: CaptureSource) -> Iterator[Entry | DiskRead | dict[str, Any] | str | _Cut]:
    """Each line of a capture as an entry, a disk read, a checkpoint's line, or the warning
    that leaves it out; last, whether the file ends cut."""
    last: tuple[int, Any] | None = None
    played_dropped = 0
    for number, value in capture_values(source):
        last = (number, value)
        if isinstance(value, Unreadable):
            yield f"line {number}: {value.why}, left out"
        elif isinstance(value, dict) and value.get("dir") == DISK_READ:
            read = _disk_read(number, value)
            yield f"line {number}: not a disk entry, left out" if read is None else read
        elif isinstance(value, dict) and value.get("dir") == CHECKPOINT:
            taken = checkpoint_line(value)
            yield f"line {number}: not a checkpoint entry, left out" if taken is None else value
        elif isinstance(value, dict) and value.get("dir") == FILE_CHANGE:
            found = change_line(value)
            yield f"line {number}: not a change entry, left out" if found is None else value
        elif isinstance(value, dict) and value.get("dir") == SESSION_CLOSED:
            # For the projection (what comes after it is not the session's); nothing to replay.
            if closed_session(value) is None:
                yield f"line {number}: not a closed entry, left out"
        elif isinstance(value, dict) and value.get("dir") == CLIENT_DECISION:
            # The recording client's own question: the projection's; nothing to replay.
            if decided_line(value) is None:
                yield f"line {number}: not a decided entry, left out"
        elif isinstance(value, dict) and value.get("dir") == UNRECORDED:
            yield f"line {number}: an event too large to record, left out"
        elif isinstance(value, dict) and value.get("dir") == MESSAGE_DROPPED:
            dropped = dropped_line(value)
            if dropped is None:
                yield f"line {number}: not a dropped entry, left out"
            elif not _replayable(dropped) or played_dropped >= MAX_DROPPED_PLAYED:
                yield f"line {number}: a message dropped over a limit of {dropped.limit}, left out"
            else:
                played_dropped += 1
                yield Entry(number, AGENT_RAW, at=_time(value), dropped=dropped)
        else:
            entry = _entry(number, value)
            yield f"line {number}: {entry}, left out" if isinstance(entry, str) else entry
    if last is not None and isinstance(last[1], Unreadable) and last[1].why == "not JSON":
        yield _Cut(last[0])


#: The most ``dropped`` lines one capture has played: each is a line of up to 50 MiB built and
#: sent, and a few lines of a capture must not make a replay send gigabytes.
MAX_DROPPED_PLAYED = 8
_DROPPED_LIMITS = {
    "line_too_long": DEFAULT_MAX_LINE_BYTES,
    "too_many_elements": DEFAULT_MAX_ELEMENTS,
    "too_deep": MAX_DEPTH,
}


def _replayable(dropped: DroppedLine) -> bool:
    """Whether a replay sends the dropped message again: within the default limits only."""
    return dropped.limit <= _DROPPED_LIMITS[dropped.reason] and (
        dropped.reason != "line_too_long" or dropped.limit > 16
    )


def dropped_again(dropped: DroppedLine) -> str:
    """A line the replaying client drops as the recording client dropped the recorded one:
    just over the same limit. Built when it is played, one at a time (the replay agent
    waits for it to be written before the next)."""
    if dropped.reason == "line_too_long":
        return '{"dropped":"' + "x" * (dropped.limit - 13) + '"}'  # limit + 1 bytes
    if dropped.reason == "too_many_elements":
        return "[" + "0," * dropped.limit + "0]"  # limit + 1 values, and one for the array
    return "[" * (dropped.limit + 1) + "]" * (dropped.limit + 1)


def _time(value: dict[str, Any]) -> float | None:
    at = value.get("t")
    return float(at) if isinstance(at, int | float) and not isinstance(at, bool) else None


def _disk_read(number: int, value: dict[str, Any]) -> DiskRead | None:
    read = disk_read(value)
    if read is None:
        return None
    return DiskRead(number, read.tool_call_id, read.path, read.phase, read.content, read.known)


def _entry(number: int, value: Any) -> Entry | str:
    """The entry of one parsed line, or why it is not one."""
    if not isinstance(value, dict):
        return "not a capture entry (a JSON object)"
    entry = _untimed_entry(number, value)
    at = value.get("t")
    if isinstance(entry, Entry) and isinstance(at, int | float) and not isinstance(at, bool):
        return replace(entry, at=float(at))
    return entry


def _untimed_entry(number: int, value: dict[str, Any]) -> Entry | str:
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
