"""What a live replay needs besides the replay agent: the files the capture found, its answers.

A replayed session runs in a fresh folder, with a live client that really reads
files and asks permission. For it to follow the recording, the folder must hold
the files as the recorded agent found them (:func:`workspace_files`,
:func:`seed_workspace`), permission requests must be answered as the recorded
client answered them (:func:`recorded_answers`), terminals as the recorded
client's did, without running anything (:class:`~.terminals.RecordedTerminals`), and
the checkpoints be those it took (:func:`recorded_checkpoints`).
"""

from __future__ import annotations

import os
import re
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._json import DEFAULT_MAX_ELEMENTS, DEFAULT_MAX_LINE_BYTES
from ..capture.format import (
    AGENT_TO_CLIENT,
    CHECKPOINT,
    CLIENT_DECISION,
    CLIENT_TO_AGENT,
    FILE_CHANGE,
    HOME_MARK,
    MESSAGE_DROPPED,
    WORKSPACE_MARK,
    capture_values,
    decided_line,
    dropped_line,
    request_key,
)
from ..capture.reader import CaptureSource, agent_requests, read_capture

if TYPE_CHECKING:
    from ..plugin.permissions import PermissionDecision, PermissionQuery

#: An ``ask`` callback for :func:`acp_adapters.connect`: the option id to select (or the
#: decision), or None.
RecordedAsk = Callable[["PermissionQuery"], Awaitable["str | PermissionDecision | None"]]
#: A ``disk_patches`` reader for :func:`acp_adapters.connect`: a file's text, or None.
#: One recorded checkpoint: its ``checkpoint`` line and its ``change`` lines.
_Lines = tuple[dict[str, Any], list[Any]]


def workspace_files(capture: CaptureSource) -> dict[str, str]:
    """The files as the capture found them: path (as recorded) -> content.

    A file is known from an ``fs/read_text_file`` the agent sent for the whole
    file (no ``line``, no ``limit``) whose recorded answer has its ``content``,
    if the agent had not asked to write that path before; the first such read
    counts. Only paths in the workspace are kept: ``<workspace>/...`` and
    relative ones.
    """
    reads: dict[Any, str] = {}
    written: set[str] = set()
    files: dict[str, str] = {}
    for entry in read_capture(capture).entries:
        for part in entry.parts:
            message = part.message
            params = message.get("params")
            if entry.direction == AGENT_TO_CLIENT and part.kind == "request":
                if not isinstance(params, dict) or not isinstance(params.get("path"), str):
                    continue
                path = params["path"]
                if part.method == "fs/write_text_file":
                    written.add(path)
                elif (
                    part.method == "fs/read_text_file"
                    and params.get("line") is None
                    and params.get("limit") is None
                ):
                    reads[request_key(message["id"])] = path
            elif entry.direction == CLIENT_TO_AGENT and part.kind == "answer":
                path = reads.pop(request_key(message["id"]), None)
                result = message.get("result")
                content = result.get("content") if isinstance(result, dict) else None
                if (
                    path is not None
                    and isinstance(content, str)
                    and path not in written
                    and _in_workspace(path)
                ):
                    files.setdefault(path, content)
    return files


def seed_workspace(capture: CaptureSource, folder: str | os.PathLike[str]) -> list[Path]:
    """Write the files of :func:`workspace_files` under ``folder``; the paths written.

    A path that would lead out of ``folder`` (``..``, a symlink), or that cannot be a
    file there (the folder itself, a file's child, a NUL in its name), is not written.
    """
    root = Path(os.path.realpath(folder))
    done: list[Path] = []
    for path, content in workspace_files(capture).items():
        relative = (
            path[len(WORKSPACE_MARK) :].lstrip("/") if path.startswith(WORKSPACE_MARK) else path
        )
        try:
            real = Path(os.path.realpath(root / relative))
            if not relative or root not in real.parents:
                continue
            real.parent.mkdir(parents=True, exist_ok=True)
            with open(real, "w", encoding="utf-8", newline="") as handle:
                handle.write(content)
        except (OSError, ValueError):  # ValueError: a NUL in the path
            continue
        done.append(real)
    return done


def recorded_answers(capture: CaptureSource) -> RecordedAsk:
    """An ``ask`` callback that answers permission requests as the capture's client did.

    Each live request gets the option id the recorded client selected (None where it
    cancelled or answered with an error): the recorded request for the same tool call
    id, else the next recorded one not used yet.

    A question about what the client itself would do (``query.action``: run a command,
    write a file) is answered as the capture's ``decided`` line for it says (the recorded
    client asked its application: an approval, in the replay too), matched by its title
    with the folders' marks standing for any folder. Where it has none (the recorded
    client's policy decided), it is decided without being a question
    (``PermissionDecision(asked=False)``): ``"allow"``, as the recorded client did it, for
    in a replay that harms nothing: commands go to the replay's terminals
    (:class:`~.terminals.RecordedTerminals` runs none) and writes land in the replay's
    scratch folder. A write outside the session's folders is answered ``"reject"`` (the
    folder confinement would refuse it anyway).
    """
    from ..plugin.permissions import PermissionDecision  # not for the replay agent's process

    answers = _permission_answers(capture)
    used = [False] * len(answers)
    decided = _decided_answers(capture)

    async def ask(query: PermissionQuery) -> str | PermissionDecision | None:
        if query.action is not None:
            for index, (title, option_id) in enumerate(decided):
                if title.fullmatch(query.title or ""):
                    del decided[index]
                    return option_id
            outside = query.action.kind == "write" and not query.action.inside
            return PermissionDecision(
                outcome="selected",
                option_id="reject" if outside else "allow",
                reason="as the recorded client decided it",
                asked=False,
            )
        call_id = query.tool_call.id if query.tool_call is not None else None
        unused = [index for index, is_used in enumerate(used) if not is_used]
        same_call = [
            index for index in unused if call_id is not None and answers[index][0] == call_id
        ]
        if not (same_call or unused):
            return None
        chosen = (same_call or unused)[0]
        used[chosen] = True
        return answers[chosen][1]

    return ask


class RecordedDisk:
    """A ``disk_patches`` reader that reads what a capture's client read for true patches.

    Called with a path, it gives the next content the recording client read of that
    file around an edit (``before`` and ``after`` lines), in order; None when the
    capture has no more (no file). :meth:`read_phase` also gives the reads of other
    phases (``write``: the file just before the client wrote it), and says when the
    capture recorded none (then the live client records none either).
    """

    def __init__(self, capture: CaptureSource, folder: str | os.PathLike[str]) -> None:
        self._spellings = sorted(
            {os.fspath(folder), os.path.realpath(folder)}, key=len, reverse=True
        )
        self._recorded: dict[tuple[str, str], deque[tuple[bool, str | None]]] = {}
        for done in read_capture(capture).disk:
            if done.phase == "missing":  # an answer's fact, not a read of the disk
                continue
            queue = "write" if done.phase == "write" else "around"
            self._recorded.setdefault((done.path, queue), deque()).append(
                (done.known, done.content)
            )

    def __call__(self, path: str) -> str | None:
        found = self.read_phase(path, "before")
        return found[1] if found is not None else None

    def read_phase(self, path: str, phase: str) -> tuple[bool, str | None] | None:
        """The next recorded read of ``path`` in ``phase``: ``(known, content)``, or None
        when the capture recorded none (the file is outside ``folder``, or the recording
        client did not read it then)."""
        queue = "write" if phase == "write" else "around"
        for spelling in self._spellings:
            if path == spelling or path.startswith(spelling + os.sep):
                portable = WORKSPACE_MARK + path[len(spelling) :]
                contents = self._recorded.get((portable, queue))
                if not contents:
                    return None if queue == "write" else (True, None)
                known, content = contents.popleft()
                return known, None if content is None else content.replace(WORKSPACE_MARK, spelling)
        return None if queue == "write" else (True, None)


def recorded_disk(capture: CaptureSource, folder: str | os.PathLike[str]) -> RecordedDisk:
    """A ``disk_patches`` reader that reads what the capture's client read around each edit.

    A client that recorded with ``disk_patches`` on wrote each file it read for a true
    patch as a ``disk`` line; a replay played in ``folder`` reads those contents back,
    in the order they were read, and so shows the true patches the live session
    showed, though nothing edits the disk. A read the capture lacks is None (no file).
    """
    return RecordedDisk(capture, folder)


class RecordedCheckpoints:
    """The checkpoints a capture recorded, played back in the order they were taken: a
    replay's session sends them where the live one took them (its workspace's path written
    for ``<workspace>``)."""

    def __init__(self, capture: CaptureSource, folder: str | os.PathLike[str]) -> None:
        self._folder = os.fspath(folder)
        self._groups: dict[tuple[str, str | None], deque[_Lines]] = {}
        current: _Lines | None = None
        for entry in read_capture(capture).checkpoints:
            if entry.get("dir") == CHECKPOINT:
                head = {k: v for k, v in entry.items() if k not in ("dir", "t", "sessionId")}
                current = (head, [])
                key = (str(head.get("reason")), head.get("toolCallId"))
                self._groups.setdefault(key, deque()).append(current)
            elif entry.get("dir") == FILE_CHANGE and current is not None:
                current[1].append(
                    {k: v for k, v in entry.items() if k not in ("dir", "t", "sessionId")}
                )

    def _next(self, reason: str, tool_call_id: str | None = None) -> _Lines | None:
        queue = self._groups.get((reason, tool_call_id))
        if not queue:
            return None
        head, changes = queue.popleft()
        return self._here(head), [self._here(change) for change in changes]

    def _here(self, value: Any) -> Any:
        if isinstance(value, str):
            return value.replace(WORKSPACE_MARK, self._folder)
        if isinstance(value, dict):
            return {k: self._here(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._here(v) for v in value]
        return value

    def opened(self) -> _Lines | None:
        return self._next("session")

    def turn_started(self, turn: int) -> _Lines | None:
        return self._next("turn_start")

    def tool_call(self, turn: int, tool_call_id: str, paths: Sequence[str]) -> _Lines | None:
        return self._next("tool_call", tool_call_id)

    def turn_ended(self, turn: int) -> _Lines | None:
        return self._next("turn_end")

    def request(self, turn: int) -> _Lines | None:
        return self._next("request")

    def render(self, change: Any) -> dict[str, Any]:
        assert isinstance(change, dict)
        return change

    def close(self) -> None:
        pass


def recorded_checkpoints(
    capture: CaptureSource, folder: str | os.PathLike[str]
) -> RecordedCheckpoints:
    """The checkpoints a capture's client took, for ``connect(checkpoints=...)`` in a replay
    played in ``folder``: nothing edits the replay's folder, so nothing of it is checkpointed."""
    return RecordedCheckpoints(capture, folder)


def recorded_limits(capture: CaptureSource) -> tuple[int, int]:
    """``connect``'s ``max_line_bytes`` and ``max_elements`` as the capture's ``dropped`` lines
    say the recording client's were (at most the defaults); the defaults where it says not."""
    limits = {"line_too_long": DEFAULT_MAX_LINE_BYTES, "too_many_elements": DEFAULT_MAX_ELEMENTS}
    said: set[str] = set()
    for _, value in capture_values(capture):
        if isinstance(value, dict) and value.get("dir") == MESSAGE_DROPPED:
            line = dropped_line(value)
            if line is None or line.reason not in limits:
                continue  # too_deep: the library's one depth, not a connection's limit
            if line.reason not in said and line.limit <= limits[line.reason]:
                limits[line.reason] = line.limit
                said.add(line.reason)
    return limits["line_too_long"], limits["too_many_elements"]


def _decided_answers(capture: CaptureSource) -> list[tuple[re.Pattern[str], str | None]]:
    """Each ``decided`` line of the capture, in order: its title as a pattern (a folder's
    mark matches any text) and the option the recording client's application chose."""
    found: list[tuple[re.Pattern[str], str | None]] = []
    for _, value in capture_values(capture):
        line = decided_line(value) if isinstance(value, dict) else None
        if line is None or value.get("dir") != CLIENT_DECISION or line.title is None:
            continue
        pieces = re.split(f"({re.escape(WORKSPACE_MARK)}|{re.escape(HOME_MARK)})", line.title)
        pattern = "".join(
            ".+" if p in (WORKSPACE_MARK, HOME_MARK) else re.escape(p) for p in pieces
        )
        chosen = line.option_id if line.outcome == "selected" else None
        found.append((re.compile(pattern, re.DOTALL), chosen))
    return found


def _permission_answers(capture: CaptureSource) -> list[tuple[str | None, str | None]]:
    """Each recorded permission request, in order: its tool call id and the option selected."""
    return [
        (_tool_call_id(request.get("params")), _selected(answer.get("result") if answer else None))
        for request, answer in agent_requests(capture, ("session/request_permission",))
    ]


def _tool_call_id(params: Any) -> str | None:
    """The tool call a permission request is about: v1 ``toolCall``, v2 ``subject``."""
    if not isinstance(params, dict):
        return None
    subject = params.get("subject")
    holder = subject if isinstance(subject, dict) else params
    call = holder.get("toolCall")
    found = call.get("toolCallId") if isinstance(call, dict) else holder.get("toolCallId")
    return found if isinstance(found, str) else None


def _selected(result: Any) -> str | None:
    outcome = result.get("outcome") if isinstance(result, dict) else None
    if isinstance(outcome, dict) and outcome.get("outcome") == "selected":
        option = outcome.get("optionId")
        return option if isinstance(option, str) else None
    return None


def _in_workspace(path: str) -> bool:
    if path.startswith(WORKSPACE_MARK):
        return path.startswith(WORKSPACE_MARK + "/")
    return not os.path.isabs(path) and not path.startswith("<")
