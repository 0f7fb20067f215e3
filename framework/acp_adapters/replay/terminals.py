"""Terminals for a replayed session: the capture's answers, and never a process.

A capture is untrusted: its agent side may ask for any command (``terminal/create``
with ``{"command": "id > ~/.ssh/authorized_keys"}``), and a live replay's client
would run it as any client runs what its agent asks. :class:`RecordedTerminals`
is the replay's terminal backend (``connect(..., terminals=RecordedTerminals(capture))``):
each ``terminal/*`` request is answered with what the recording client answered,
so the replay shows the recorded session's commands, ids, outputs and exit
statuses, and nothing runs.

Standard library only, as the rest of this package (the replay agent imports it).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..capture.reader import CaptureSource, agent_requests
from .matching import fill_marks

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from ..client.workspace import Workspace

#: What a terminal request gets when the capture has no answer to give (a capture of a
#: client that recorded none, or one cut short): said so, and nothing pretends it ran.
STAND_INS: dict[str, dict[str, Any]] = {
    "terminal/output": {"output": "", "truncated": False},
    "terminal/wait_for_exit": {"exitCode": None, "signal": None},
    "terminal/kill": {},
    "terminal/release": {},
}
TERMINAL_METHODS = ("terminal/create", *STAND_INS)


@dataclass
class _Recorded:
    """One ``terminal/*`` request of the capture's agent, and the recording client's answer
    (None: the capture has none)."""

    method: str
    terminal_id: str | None
    answer: dict[str, Any] | None = None


class RecordedTerminals:
    """Answers a replayed session's ``terminal/*`` requests from the capture; runs nothing.

    An instance is a terminal factory for :func:`acp_adapters.connect` (``terminals=``):
    the session calls it once it runs, with its workspace. Requests are matched with
    the capture's in order: ``terminal/create`` by position (the n-th live create gets
    the n-th recorded answer, with its terminal id, so the ids the agent names next
    are the recorded ones), the others by method and terminal id, else by position.
    A recorded error answer is raised as the same error. What the capture lacks gets
    a stand-in (a new id, an empty output, an unknown exit status: :data:`STAND_INS`),
    and a line in :attr:`warnings`.
    """

    def __init__(self, capture: CaptureSource) -> None:
        self._recorded = _recorded_terminals(capture)
        self._created = 0
        #: What the capture lacked, and what was answered instead, in order.
        self.warnings: list[str] = []
        self._workspace: str | None = None
        self._home = os.path.expanduser("~")

    def __call__(self, workspace: Workspace, task_group: TaskGroup) -> RecordedTerminals:
        """The session's backend: this one, with recorded ``<workspace>`` marks written as
        the session's folder."""
        self._workspace = str(workspace.cwd)
        return self

    async def create(self, params: Any) -> dict[str, Any]:
        recorded = next((r for r in self._recorded if r.method == "terminal/create"), None)
        return self._answer("terminal/create", params, recorded)

    async def output(self, params: Any) -> dict[str, Any]:
        return self._answer("terminal/output", params, self._find("terminal/output", params))

    async def wait_for_exit(self, params: Any) -> dict[str, Any]:
        method = "terminal/wait_for_exit"
        return self._answer(method, params, self._find(method, params))

    async def kill(self, params: Any) -> dict[str, Any]:
        return self._answer("terminal/kill", params, self._find("terminal/kill", params))

    async def release(self, params: Any) -> dict[str, Any]:
        return self._answer("terminal/release", params, self._find("terminal/release", params))

    async def close(self) -> None:
        """Nothing runs: nothing to end."""

    def _find(self, method: str, params: Any) -> _Recorded | None:
        """The recorded request this one stands for: the same terminal's first unanswered
        one of the method, else the method's first unanswered one."""
        terminal_id = params.get("terminalId") if isinstance(params, dict) else None
        same = [r for r in self._recorded if r.method == method]
        return next((r for r in same if r.terminal_id == terminal_id), same[0] if same else None)

    def _answer(self, method: str, params: Any, recorded: _Recorded | None) -> dict[str, Any]:
        if recorded is not None:
            self._recorded.remove(recorded)
        answer = recorded.answer if recorded is not None else None
        if answer is not None and isinstance(answer.get("error"), dict):
            from ..transport.jsonrpc import INTERNAL_ERROR, RpcError  # not in the replay agent

            error = answer["error"]
            code = error.get("code")
            raise RpcError(
                code if isinstance(code, int) and not isinstance(code, bool) else INTERNAL_ERROR,
                str(self._live(error.get("message", "error"))),
                self._live(error.get("data")),
            )
        result = answer.get("result") if answer is not None else None
        if isinstance(result, dict):
            return dict(self._live(result))
        if method == "terminal/create":
            self._created += 1
            stand_in: dict[str, Any] = {"terminalId": f"replay-terminal-{self._created}"}
        else:
            stand_in = dict(STAND_INS[method])
        terminal_id = params.get("terminalId") if isinstance(params, dict) else None
        which = f" for terminal {terminal_id}" if isinstance(terminal_id, str) else ""
        self.warnings.append(
            f"has no recorded answer to {method}{which}: answered "
            f"{json.dumps(stand_in)} (a replay runs no command)"
        )
        return stand_in

    def _live(self, value: Any) -> Any:
        return fill_marks(value, self._workspace, self._home)


def _recorded_terminals(capture: CaptureSource) -> list[_Recorded]:
    """The capture's ``terminal/*`` requests from its agent, in order, with the answers."""
    recorded: list[_Recorded] = []
    for request, answer in agent_requests(capture, TERMINAL_METHODS):
        params = request.get("params")
        terminal_id = params.get("terminalId") if isinstance(params, dict) else None
        one = _Recorded(
            str(request["method"]), terminal_id if isinstance(terminal_id, str) else None
        )
        one.answer = answer
        recorded.append(one)
    return recorded
