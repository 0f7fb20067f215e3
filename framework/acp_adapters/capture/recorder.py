"""Recording a live session as a capture (the format of ``docs/captures.md``).

Each message is written as it goes, one JSON object a line, and flushed: when
the agent or the application crashes, everything received before is on disk.
Paths are made portable: the session's folder becomes ``<workspace>`` and the
home folder ``<home>``, wherever they appear in a string.

Each line is written by :func:`acp_adapters._json.dumps`, which escapes U+2028,
U+2029 and U+0085: an agent's text holding them stays on its line for every reader
(``str.splitlines`` would cut there, and read what follows as a capture line of
its own), and no line holds ``NaN`` (none is read).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import IO, Any

from .. import _json
from .format import (
    AGENT_EXIT,
    AGENT_RAW,
    AGENT_TO_CLIENT,
    CAPTURE_MAX_ELEMENTS,
    CAPTURE_MAX_LINE_BYTES,
    CHECKPOINT,
    CLIENT_DECISION,
    CLIENT_TO_AGENT,
    DISK_READ,
    FILE_CHANGE,
    HOME_MARK,
    MESSAGE_DROPPED,
    SESSION_CLOSED,
    UNRECORDED,
    WORKSPACE_MARK,
    folder_pattern,
)

_DIRECTIONS = {
    "out": CLIENT_TO_AGENT,
    "in": AGENT_TO_CLIENT,
    "exit": AGENT_EXIT,
    "disk": DISK_READ,
    "checkpoint": CHECKPOINT,
    "change": FILE_CHANGE,
    "closed": SESSION_CLOSED,
    "dropped": MESSAGE_DROPPED,
    "decided": CLIENT_DECISION,
}
#: The events whose fields are the entry's own (beside ``dir`` and ``t``).
_FLAT = ("disk", "checkpoint", "change", "closed", "dropped", "decided")


def capture_entry(
    direction: str, message: Any, at: float, portable: Callable[[Any], Any] = lambda v: v
) -> dict[str, Any]:
    """The capture entry of one event of a session's traffic (``("out" | "in", message)``,
    ``("raw", text)``, ``("disk", read)``, ``("checkpoint", taken)``, ``("change", change)``,
    ``("closed", {"sessionId"})``, ``("exit", {"code", "stderr"})``) at ``at``: what the
    traffic reader takes in, with its strings made ``portable``."""
    entry: dict[str, Any] = {"dir": _DIRECTIONS.get(direction, AGENT_RAW), "t": at}
    if direction == "raw":
        entry["raw"] = portable(str(message))
    elif direction == "exit":
        entry["code"] = message.get("code")
        entry["stderr"] = portable(str(message.get("stderr", "")))
    elif direction in _FLAT:
        # The file's text is made portable as the messages are: an agent's oldText
        # naming the workspace must still be found in it when the capture is projected.
        entry.update(portable(message))
    else:
        entry["msg"] = portable(message)
    return entry


def entry_event(entry: dict[str, Any]) -> tuple[str, Any] | None:
    """The event a capture entry was made of (the inverse of :func:`capture_entry`), or None
    for what is not one."""
    direction = {value: key for key, value in _DIRECTIONS.items()}.get(entry.get("dir", ""))
    if direction in ("out", "in") and "msg" in entry:
        return direction, entry["msg"]
    if direction == "exit":
        return direction, {"code": entry.get("code"), "stderr": entry.get("stderr", "")}
    if direction in _FLAT:
        return direction, {k: v for k, v in entry.items() if k not in ("dir", "t")}
    if isinstance(entry.get("raw"), str):
        return "raw", entry["raw"]
    return None


class CaptureRecorder:
    """Writes what goes in and out of a session to a capture file."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        workspace: str | os.PathLike[str],
        home: str | os.PathLike[str] | None = None,
        agent_home: str | os.PathLike[str] | None = None,
    ) -> None:
        """``home``: this process's home folder (default ``~``); ``agent_home``: the agent's,
        when its environment names another (``HOME``): both are written ``<home>``."""
        home = os.path.expanduser("~") if home is None else os.fspath(home)
        folder = os.fspath(workspace)
        # Longest first: a workspace inside the home folder is <workspace>, not <home>/...
        spellings = {folder: WORKSPACE_MARK, os.path.realpath(folder): WORKSPACE_MARK}
        for a_home in (home, os.fspath(agent_home) if agent_home else ""):
            if a_home and a_home != os.sep:
                spellings.setdefault(a_home, HOME_MARK)
                spellings.setdefault(os.path.realpath(a_home), HOME_MARK)
        # Only a folder's whole name (folder_pattern): not inside a longer name.
        ordered = sorted(spellings.items(), key=lambda pair: -len(pair[0]))
        self._marks = [(folder_pattern(s), mark) for s, mark in ordered]
        self._start = time.monotonic()
        # No folder is made for it: a path into a folder that does not exist is an error
        # (FileNotFoundError), not a tree of folders made wherever it points.
        self._file: IO[str] | None = open(path, "w", encoding="utf-8")  # noqa: SIM115

    def __call__(self, direction: str, message: Any) -> None:
        """An observer for :func:`~acp_adapters.connect`.

        ``("out" | "in", message)``, ``("raw", text)``, ``("disk", {"toolCallId", "path",
        "phase", "content"})`` for a file read around an edit, or ``("exit", {"code",
        "stderr"})`` when the agent exited on its own.
        """
        if self._file is None:
            return
        at = round(time.monotonic() - self._start, 6)
        entry = capture_entry(direction, message, at, self.portable)
        line = _json.dumps(entry)
        if len(line) > CAPTURE_MAX_ELEMENTS:  # shorter, it is within both limits
            data = line.encode("utf-8")  # dumps writes valid UTF-8 only
            if (
                len(data) > CAPTURE_MAX_LINE_BYTES
                or _json.too_many_elements(data, CAPTURE_MAX_ELEMENTS) is not None
            ):
                # A line its readers would refuse is not written: its place says what it was.
                unrecorded = {"dir": UNRECORDED, "t": at, "of": entry["dir"], "bytes": len(data)}
                line = _json.dumps(unrecorded)
        self._file.write(line + "\n")
        self._file.flush()

    def portable(self, value: Any) -> Any:
        """``value`` with the workspace and home folders written as their marks."""
        if isinstance(value, str):
            for pattern, mark in self._marks:
                value = pattern.sub(mark, value)
            return value
        if isinstance(value, dict):
            return {self.portable(k): self.portable(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.portable(item) for item in value]
        return value

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
