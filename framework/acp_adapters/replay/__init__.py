"""Replaying captures: an ACP agent that plays a recorded agent and checks the live client.

``python -m acp_adapters.replay [--match exact|methods] [--timeout SECONDS]
[--connection N] [--status FILE] CAPTURE`` starts the replay agent (see :mod:`.agent`);
``docs/captures.md`` describes the capture format and both match modes. From Python:

* :func:`main`: the replay agent on this process's stdio;
* :func:`compare`: how a live message is checked against a recorded one (``exact``);
* :func:`connections`: a capture's entries, one list per agent process it recorded;
* :func:`workspace_files`, :func:`seed_workspace`: the files the capture found, for a
  fresh folder to replay in;
* :func:`recorded_answers`: an ``ask`` callback answering permissions as recorded;
* :func:`recorded_disk`: a ``disk_patches`` reader reading the files as recorded;
* :func:`recorded_limits`: ``connect``'s line limits as the recording client's were;
* :func:`recorded_checkpoints`: the ``checkpoints`` a capture's client took, played back;
* :class:`RecordedTerminals`: a ``terminals`` backend answering as recorded, running
  nothing.

The replay agent is a subprocess of every replayed session: this package uses the
standard library only.
"""

from __future__ import annotations

from ..capture.format import HOME_MARK, WORKSPACE_MARK, RequestKey, request_key
from ..capture.reader import Capture, DiskRead, Entry, connections, read_capture
from .agent import (
    DEFAULT_TIMEOUT,
    EXIT_MISMATCH,
    EXIT_OK,
    EXIT_TIMEOUT,
    EXIT_USAGE,
    NO_RECORDED_ANSWER,
    REPLAY_FAILED,
    MatchMode,
    main,
)
from .helpers import (
    RecordedCheckpoints,
    recorded_answers,
    recorded_checkpoints,
    recorded_disk,
    recorded_limits,
    seed_workspace,
    workspace_files,
)
from .matching import ANY, Mismatch, compare, fill_marks
from .terminals import RecordedTerminals

__all__ = [
    "ANY",
    "DEFAULT_TIMEOUT",
    "EXIT_MISMATCH",
    "EXIT_OK",
    "EXIT_TIMEOUT",
    "EXIT_USAGE",
    "HOME_MARK",
    "NO_RECORDED_ANSWER",
    "REPLAY_FAILED",
    "WORKSPACE_MARK",
    "Capture",
    "DiskRead",
    "Entry",
    "MatchMode",
    "Mismatch",
    "RecordedCheckpoints",
    "RecordedTerminals",
    "RequestKey",
    "compare",
    "connections",
    "fill_marks",
    "main",
    "read_capture",
    "recorded_answers",
    "recorded_checkpoints",
    "recorded_disk",
    "recorded_limits",
    "request_key",
    "seed_workspace",
    "workspace_files",
]
