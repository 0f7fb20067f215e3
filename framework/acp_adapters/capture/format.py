"""The words of the capture format (``docs/captures.md``), in one place, and its one reader.

What a capture line's ``dir`` says, the marks that stand for the live folders,
how a ``disk`` line is read, how a request id is keyed, and where a folder's
name counts as the folder. The recorder, the projection of a capture, the
replay agent and the command line all speak it; and every one of them reads a
capture's lines through :func:`capture_values`. Standard library only: the
replay agent imports it in every replayed session.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TypeGuard

from .. import _json
from .._json import DEFAULT_MAX_ELEMENTS, DEFAULT_MAX_LINE_BYTES, LineSplitter, LineTooLong
from ..errors import CaptureError

CLIENT_TO_AGENT = "client->agent"
AGENT_TO_CLIENT = "agent->client"
#: A line the agent printed that was not JSON: ``{"dir": ..., "t": s, "raw": text}``.
AGENT_RAW = "agent->client(raw)"
#: The agent exited on its own here: ``{"dir": "exit", "t": s, "code": 3, "stderr": text}``.
AGENT_EXIT = "exit"
#: What a recording client saw of a file on the disk, for true patches: ``{"dir": "disk",
#: "t": s, "toolCallId": id | null, "path": path, "phase": ..., "content": text | null}``
#: (``content`` null: no such file; with ``"unreadable": true``, a file the client could
#: not read as text). With these, a capture projects (and replays) to the true patches
#: the live session showed. See :data:`DISK_PHASES`.
DISK_READ = "disk"
#: The phases of a ``disk`` line: ``before`` and ``after``, read as the tool call
#: ``toolCallId`` started (or asked permission) and as it completed; ``write``, the file
#: as the client found it just before it wrote it for the agent (``toolCallId``: the tool
#: call the write belongs to, if any); ``missing``, a file the agent read that did not
#: exist, answered as empty (``missing_file_read="empty"``).
DISK_PHASES = ("before", "after", "write", "missing")

#: A checkpoint the recording client took of the session's folders (docs/captures.md):
#: ``{"dir": "checkpoint", "t": s, "sessionId": id?, "id": checkpoint id, "reason": ...,
#: "turn": n, "toolCallId": id | null, "files": n, "notes": [text]}``. See
#: :data:`CHECKPOINT_REASONS`.
CHECKPOINT = "checkpoint"
#: Why a checkpoint was taken: as the session opened, as a turn started or ended, as a tool
#: call completed (of the files it names), or on request (``session.checkpoint()``).
CHECKPOINT_REASONS = ("session", "turn_start", "turn_end", "tool_call", "request")
#: What a checkpoint found changed at one path, after its ``checkpoint`` line:
#: ``{"dir": "change", "t": s, "sessionId": id?, "checkpoint": id, "toolCallId": id | null,
#: "path": path, "movedFrom": path | null, "before": side | null, "after": side | null}``,
#: each side ``{"kind": "file" | "link", "mode": n, "size": n, "oid": sha256 | null}`` and
#: a file's ``text`` (or ``"binary": true``), a link's ``target``, or ``omitted`` (why no
#: text: ``too_large``, ``total_cap``, ``unhashed``, ``missing``). ``toolCallId`` null: a
#: change at a turn's end that no tool call claimed.
FILE_CHANGE = "change"
#: The recording client closed a session here (``session.close()``, or the connection
#: shut down): ``{"dir": "closed", "t": s, "sessionId": id}``. What the agent sends on its
#: own for that session after this line (updates, requests) is not the session's: it is
#: not projected, live or from the capture, until the session is opened again.
SESSION_CLOSED = "closed"
#: The recording client's connection dropped a message of the agent here, unread: a line
#: longer than its limit (``line_too_long``, ``limit`` in bytes) or holding more values
#: (``too_many_elements``, ``limit`` values): ``{"dir": "dropped", "t": s, "reason":
#: "line_too_long", "limit": 52428800}``. The timeline shows it as an error item.
MESSAGE_DROPPED = "dropped"
#: The reasons of a ``dropped`` line (``too_deep``: arrays and objects nested deeper than
#: ``limit`` levels).
DROPPED_REASONS = ("line_too_long", "too_many_elements", "too_deep")
#: The recording client asked its application whether it may do what the agent asked of it
#: (a file write, a command: a client action, under ``ask``), and how it was answered:
#: ``{"dir": "decided", "t": s, "sessionId": id, "requestId": "client-action-1", "title":
#: "write a.txt", "toolCallId": null, "options": [...], "outcome": "selected", "optionId":
#: "allow"}``. The timeline shows it as an approval.
CLIENT_DECISION = "decided"
#: In place of an event the recorder could not write within a capture line's limits (see
#: :data:`CAPTURE_MAX_LINE_BYTES`): ``{"dir": "unrecorded", "t": s, "of": "agent->client",
#: "bytes": n}``. Its readers list it as a line left out.
UNRECORDED = "unrecorded"

#: The longest capture line its readers take: the live connection's longest line and a MiB,
#: room for what a line adds to the message it records (its ``dir`` and ``t``, the folders'
#: marks in place of shorter paths). The recorder writes no longer line (:data:`UNRECORDED`).
CAPTURE_MAX_LINE_BYTES = DEFAULT_MAX_LINE_BYTES + (1 << 20)
#: The most values a capture line may hold: the connection's, and the few a line adds.
CAPTURE_MAX_ELEMENTS = DEFAULT_MAX_ELEMENTS + 64

#: The session's folder, in a capture.
WORKSPACE_MARK = "<workspace>"
#: The home folder (this process's, or the agent's own), in a capture.
HOME_MARK = "<home>"

#: A request id as a dict key that keeps its JSON type (``1`` is not ``"1"``).
RequestKey = tuple[str, Any] | str


def request_key(request_id: Any) -> RequestKey:
    """The key of a request id: its JSON type and value (``1`` and ``"1"`` differ)."""
    if isinstance(request_id, int | str) and not isinstance(request_id, bool):
        return (type(request_id).__name__, request_id)
    return repr(request_id)


@dataclass(frozen=True)
class DiskLine:
    """What a ``disk`` line says: the tool call, the file, the phase, and what it held."""

    tool_call_id: str | None
    path: str
    phase: str
    #: None: no such file (or, with ``known`` False, a file that could not be read as text).
    content: str | None
    known: bool = True
    #: The session the read was made for (a connection may hold several); None: the one
    #: session of a capture that names none.
    session_id: str | None = None


def disk_read(entry: dict[str, Any]) -> DiskLine | None:
    """What a ``disk`` line says; None when it is not one."""
    call, path, phase = entry.get("toolCallId"), entry.get("path"), entry.get("phase")
    content, unreadable = entry.get("content"), entry.get("unreadable", False)
    session_id = entry.get("sessionId")
    if not (session_id is None or isinstance(session_id, str)):
        return None
    if not (isinstance(path, str) and phase in DISK_PHASES and isinstance(unreadable, bool)):
        return None
    if not (isinstance(call, str) or (call is None and phase in ("write", "missing"))):
        return None
    if not (content is None or isinstance(content, str)) or (unreadable and content is not None):
        return None
    return DiskLine(call, path, str(phase), content, known=not unreadable, session_id=session_id)


@dataclass(frozen=True)
class FileSide:
    """What a checkpoint says one path held (one side of a ``change`` line)."""

    kind: str
    mode: int
    size: int
    oid: str | None
    text: str | None = None
    binary: bool = False
    target: str | None = None
    omitted: str | None = None


@dataclass(frozen=True)
class CheckpointLine:
    """What a ``checkpoint`` line says."""

    id: str
    reason: str
    turn: int
    tool_call_id: str | None
    files: int
    notes: tuple[str, ...]
    session_id: str | None = None


@dataclass(frozen=True)
class ChangeLine:
    """What a ``change`` line says."""

    checkpoint: str
    tool_call_id: str | None
    path: str
    moved_from: str | None
    before: FileSide | None
    after: FileSide | None
    session_id: str | None = None


def _integer(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _optional_text(value: Any) -> bool:
    return value is None or isinstance(value, str)


def file_side(value: Any) -> FileSide | None:
    """One side of a ``change`` line; None when it is not one."""
    if not isinstance(value, dict):
        return None
    kind, mode, size, oid = (
        value.get("kind"),
        value.get("mode"),
        value.get("size"),
        value.get("oid"),
    )
    text, binary = value.get("text"), value.get("binary", False)
    target, omitted = value.get("target"), value.get("omitted")
    if kind not in ("file", "link") or not (_integer(mode) and _integer(size)):
        return None
    if not (_optional_text(oid) and _optional_text(text) and isinstance(binary, bool)):
        return None
    if not (_optional_text(target) and _optional_text(omitted)):
        return None
    if kind == "link" and text is not None:
        return None
    return FileSide(str(kind), mode, size, oid, text, binary, target, omitted)


def checkpoint_line(entry: dict[str, Any]) -> CheckpointLine | None:
    """What a ``checkpoint`` line says; None when it is not one."""
    ident, reason, turn = entry.get("id"), entry.get("reason"), entry.get("turn", 0)
    call, files, notes = entry.get("toolCallId"), entry.get("files", 0), entry.get("notes", [])
    session_id = entry.get("sessionId")
    if not (isinstance(ident, str) and reason in CHECKPOINT_REASONS and _integer(turn)):
        return None
    if not (_optional_text(call) and _integer(files) and _optional_text(session_id)):
        return None
    if not (isinstance(notes, list) and all(isinstance(note, str) for note in notes)):
        return None
    return CheckpointLine(ident, str(reason), turn, call, files, tuple(notes), session_id)


@dataclass(frozen=True)
class DroppedLine:
    """What a ``dropped`` line says: why the message was dropped, and the limit it broke."""

    reason: str
    limit: int


def dropped_line(entry: dict[str, Any]) -> DroppedLine | None:
    """What a ``dropped`` line says; None when it is not one."""
    reason, limit = entry.get("reason"), entry.get("limit")
    if reason not in DROPPED_REASONS or not isinstance(limit, int) or isinstance(limit, bool):
        return None
    if limit <= 0:
        return None
    return DroppedLine(str(reason), limit)


@dataclass(frozen=True)
class DecidedLine:
    """What a ``decided`` line says (:data:`CLIENT_DECISION`)."""

    session_id: str | None
    request_id: str
    title: str | None
    tool_call_id: str | None
    options: tuple[dict[str, Any], ...]
    outcome: str
    option_id: str | None


def decided_line(entry: dict[str, Any]) -> DecidedLine | None:
    """What a ``decided`` line says; None when it is not one."""
    request_id, outcome = entry.get("requestId"), entry.get("outcome")
    options = entry.get("options")
    if not isinstance(request_id, str) or not isinstance(outcome, str):
        return None
    if not isinstance(options, list) or not all(isinstance(o, dict) for o in options):
        return None
    text = {k: entry.get(k) for k in ("sessionId", "title", "toolCallId", "optionId")}
    if any(v is not None and not isinstance(v, str) for v in text.values()):
        return None
    return DecidedLine(
        text["sessionId"],
        request_id,
        text["title"],
        text["toolCallId"],
        tuple(options),
        outcome,
        text["optionId"],
    )


def closed_session(entry: dict[str, Any]) -> str | None:
    """The session a ``closed`` line closes; None when it is not one."""
    session_id = entry.get("sessionId")
    return session_id if isinstance(session_id, str) else None


def change_line(entry: dict[str, Any]) -> ChangeLine | None:
    """What a ``change`` line says; None when it is not one."""
    checkpoint, call, path = entry.get("checkpoint"), entry.get("toolCallId"), entry.get("path")
    moved_from, session_id = entry.get("movedFrom"), entry.get("sessionId")
    if not (isinstance(checkpoint, str) and isinstance(path, str) and path):
        return None
    if not (_optional_text(call) and _optional_text(moved_from) and _optional_text(session_id)):
        return None
    sides = []
    for name in ("before", "after"):
        value = entry.get(name)
        side = file_side(value) if value is not None else None
        if value is not None and side is None:
            return None
        sides.append(side)
    before, after = sides
    if before is None and after is None:
        return None
    return ChangeLine(checkpoint, call, path, moved_from, before, after, session_id)


def folder_pattern(folder: str) -> re.Pattern[str]:
    """Where ``folder`` stands in a text as the folder itself.

    Its whole name: where a path starts with it (also after ``file://``), and where
    the name ends or goes on with ``/``. ``/tmp/ws`` is not in ``/tmp/ws2``, nor in
    ``/mnt/tmp/ws``.
    """
    return re.compile(r"(?<![\w.~-])(?:(?<=//)|(?<!/))" + re.escape(folder) + r"(?![\w.-])")


# --- reading a capture ----------------------------------------------------------------------

#: A capture file's path, or its lines (text, or values already read: kept as they are).
CaptureSource = str | os.PathLike[str] | Iterable[Any]

#: How much of a capture file one read takes.
READ_BYTES = 1 << 20


@dataclass(frozen=True)
class Unreadable:
    """A capture line left out, and why (``"not JSON"``, ``"longer than N bytes"``, ...)."""

    why: str


def capture_values(
    source: CaptureSource,
    *,
    max_line_bytes: int = CAPTURE_MAX_LINE_BYTES,
    max_elements: int = CAPTURE_MAX_ELEMENTS,
) -> Iterator[tuple[int, Any]]:
    """The JSON value of each line of a capture, numbered from 1; blank lines are skipped.

    A line that cannot be read is an :class:`Unreadable` in its place: longer than
    ``max_line_bytes``, more than ``max_elements`` values (see
    :func:`acp_adapters._json.count_elements`), or not JSON (``NaN`` among them). The
    limits are the live connection's with room for what a line adds to its message
    (:data:`CAPTURE_MAX_LINE_BYTES`): every line the recorder writes is read.

    A file is read as it goes (memory follows its longest line, not its size), and
    cut at ``\\n`` only: a JSON string may hold U+2028 or U+0085 as they are, which
    ``str.splitlines`` would take as line breaks. Lines given as text are taken as
    they are; any other value (a parsed line) passes through.

    :raises CaptureError: the file cannot be opened, is not a regular file (a folder,
        a FIFO, a device), or a line of it is not UTF-8.
    """
    lines = _file_lines(source, max_line_bytes) if isinstance(source, str | os.PathLike) else source
    for number, line in enumerate(lines, 1):
        if isinstance(line, LineTooLong):
            yield number, Unreadable(f"longer than {line.limit} bytes")
            continue
        if not isinstance(line, str | bytes):
            yield number, line
            continue
        if isinstance(line, str):
            if not line.strip():
                continue
            data = line.encode("utf-8", "surrogatepass")
            if len(data) > max_line_bytes:
                yield number, Unreadable(f"longer than {max_line_bytes} bytes")
                continue
        else:
            if not line.strip():
                continue
            data = line
            try:
                line = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                where = f"{_shown(source)}: line {number}"
                raise CaptureError(
                    f"cannot read capture {where} is not UTF-8 ({exc.reason})"
                ) from None
        if _json.too_many_elements(data, max_elements) is not None:
            yield number, Unreadable(f"more than {max_elements} values")
            continue
        try:
            value = _json.loads(line)
        except ValueError:
            value = Unreadable("not JSON")
        yield number, value


def _shown(source: CaptureSource) -> str:
    return repr(os.fspath(source)) if isinstance(source, str | os.PathLike) else "lines"


def _file_lines(path: str | os.PathLike[str], max_line_bytes: int) -> Iterator[bytes | LineTooLong]:
    """The lines of a capture file, cut at ``\\n`` only, as it is read."""
    descriptor = open_capture(path)
    with os.fdopen(descriptor, "rb", buffering=0) as handle:
        splitter = LineSplitter(max_line_bytes)
        while True:
            try:
                chunk = handle.read(READ_BYTES)
            except OSError as exc:
                raise CaptureError(f"cannot read capture {_shown(path)}: {exc}") from exc
            if not chunk:
                break
            yield from splitter.feed(chunk)
        yield from splitter.end()


#: What a file that is not a regular one is, by its type.
_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def open_capture(path: str | os.PathLike[str]) -> int:
    """A descriptor open for reading on the regular file at ``path``.

    Opened without blocking (opening a FIFO would wait for a writer), then refused
    unless it is a regular file: ``/dev/zero`` never ends, a FIFO may never write.

    :raises CaptureError: it cannot be opened, or is not a regular file.
    """
    try:
        descriptor = os.open(
            path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
        )
    except OSError as exc:
        why = "no such file" if exc.errno == errno.ENOENT else exc.strerror or str(exc)
        raise CaptureError(f"cannot read capture {_shown(path)}: {why}") from exc
    except ValueError as exc:  # a NUL in the path
        raise CaptureError(f"cannot read capture {_shown(path)}: {exc}") from exc
    try:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            kind = next(
                (name for test, name in _KINDS if test(mode)), "something other than a file"
            )
            raise CaptureError(
                f"cannot read capture {_shown(path)}: it is {kind}, not a capture file"
            )
        if hasattr(os, "set_blocking"):
            os.set_blocking(descriptor, True)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor
