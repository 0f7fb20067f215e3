"""The words of the capture format (``docs/captures.md``), in one place.

What a capture line's ``dir`` says, the marks that stand for the live folders,
how a ``disk`` line is read, how a request id is keyed, and where a folder's
name counts as the folder. The recorder, the projection of a capture, the
replay agent and the command line all speak it. Standard library only: the
replay agent imports it in every replayed session.
"""

from __future__ import annotations

import re
from typing import Any

CLIENT_TO_AGENT = "client->agent"
AGENT_TO_CLIENT = "agent->client"
#: A line the agent printed that was not JSON: ``{"dir": ..., "t": s, "raw": text}``.
AGENT_RAW = "agent->client(raw)"
#: The agent exited on its own here: ``{"dir": "exit", "t": s, "code": 3, "stderr": text}``.
AGENT_EXIT = "exit"
#: A recording client read a file an edit names, as the edit started ("before") or
#: completed ("after"): ``{"dir": "disk", "t": s, "toolCallId": id, "path": path,
#: "phase": "before" | "after", "content": text | null}``. With these, a capture
#: projects (and replays) to the true patches the live session showed.
DISK_READ = "disk"

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


def disk_read(entry: dict[str, Any]) -> tuple[str, str, str, str | None] | None:
    """A ``disk`` line's tool call id, path, phase and content; None when it is not one."""
    call, path, phase = entry.get("toolCallId"), entry.get("path"), entry.get("phase")
    content = entry.get("content")
    if (
        isinstance(call, str)
        and isinstance(path, str)
        and phase in ("before", "after")
        and (content is None or isinstance(content, str))
    ):
        return call, path, str(phase), content
    return None


def folder_pattern(folder: str) -> re.Pattern[str]:
    """Where ``folder`` stands in a text as the folder itself.

    Its whole name: where a path starts with it (also after ``file://``), and where
    the name ends or goes on with ``/``. ``/tmp/ws`` is not in ``/tmp/ws2``, nor in
    ``/mnt/tmp/ws``.
    """
    return re.compile(r"(?<![\w.~-])(?:(?<=//)|(?<!/))" + re.escape(folder) + r"(?![\w.-])")
