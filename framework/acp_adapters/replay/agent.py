"""The replay agent: an ACP agent that plays the agent's side of a capture, and checks the client.

::

    python -m acp_adapters.replay [--match exact|methods] [--timeout SECONDS]
                                  [--connection N] [--status FILE] CAPTURE

It walks the capture in order. What the recorded agent sent goes out (with
``<workspace>`` and ``<home>`` written as the live folders); what the recorded
client sent is waited for, at most ``--timeout`` seconds for each message, and
checked:

* ``exact`` (for captures recorded with ``connect(record=...)``): every client
  message must equal the recorded one (see :func:`~.matching.compare`);
* ``methods`` (for captures of other clients): only the order of the client's
  methods is checked, and a client that goes ahead skips the capture forward.

Ids are matched by position: the n-th request of the live client stands for the
n-th request of the recorded one, and the recorded answer goes out with the live
id. The agent's own requests go out as recorded; the client's answers to them
may come in any order (they are kept until the walk reaches them), and so may
the messages of one run of consecutive client lines. Terminal ids the live
client hands out replace the recorded ones in what the agent sends after.

A capture may hold several connections (:func:`~acp_adapters.capture.reader.connections`:
a thread's runs, an agent started again): one process plays one, ``--connection N`` (the
first by default), its end the end of the replay.

The outcome is the exit code (see ``EXIT_*``), a report on stderr, and the
``--status`` file: JSON with ``status`` (``running`` while it runs, then ``ok``,
``mismatch``, ``timeout`` or ``error``), ``exit_code``, ``report``, ``line``
(the capture line it concerns), ``warnings``, ``connection`` and ``connections``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter, deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TextIO

from .. import _json
from ..capture.format import (
    AGENT_EXIT,
    AGENT_RAW,
    AGENT_TO_CLIENT,
    CLIENT_TO_AGENT,
    RequestKey,
    request_key,
)
from ..capture.reader import Capture, Entry, Part, connections, dropped_again, read_capture
from ..errors import CaptureError
from ._pipes import END_OF_INPUT, Incoming, Input, NotJson, Output
from .matching import ANY, Mismatch, compare, fill_marks, shown

MatchMode = Literal["exact", "methods"]
Status = Literal["running", "ok", "mismatch", "timeout", "error"]

#: The capture was played to its end (or to its exit line, whose code is the exit code then).
EXIT_OK = 0
#: The command line was wrong, or the capture could not be read.
EXIT_USAGE = 2
#: The client sent something the capture does not have (or closed its input too soon).
EXIT_MISMATCH = 3
#: The client did not send what the capture waits for in time.
EXIT_TIMEOUT = 4

DEFAULT_TIMEOUT = 10.0
#: The error code of the answers that report a failed replay to the client.
REPLAY_FAILED = -32099
#: The error code of the answers to requests that come after the capture's end.
NO_RECORDED_ANSWER = -32603
#: The requests whose ``cwd`` names the live session's folder.
SESSION_METHODS = ("session/new", "session/load", "session/resume")
PROGRAM = "acp-adapters replay"


class _Failed(Exception):
    """The replay failed: the client went its own way, or kept the replay waiting, or the
    capture (cut) has no more for it (``error``)."""

    def __init__(
        self, status: Literal["mismatch", "timeout", "error"], report: str, line: int | None
    ):
        super().__init__(report)
        self.status = status
        self.report = report
        self.line = line


class _Exited(Exception):
    """The walk reached an exit line: the agent exits here, as recorded."""

    def __init__(self, entry: Entry) -> None:
        super().__init__(entry.line)
        self.entry = entry


@dataclass
class _Run:
    """The client messages the walk waits for now: one run of consecutive client lines."""

    end: int
    pending: list[tuple[Entry, Part]] = field(default_factory=list)


class StatusFile:
    """The ``--status`` file: rewritten whole (and atomically) at each change."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        capture: str,
        match: MatchMode,
        connection: int = 1,
        connections: int = 1,
    ) -> None:
        self.path = Path(path)
        self.capture = capture
        self.match = match
        #: The connection of the capture played, from 1, and how many it has.
        self.connection = connection
        self.connections = connections

    def write(
        self,
        status: Status,
        *,
        exit_code: int | None,
        report: str = "",
        line: int | None = None,
        warnings: Sequence[str] = (),
    ) -> None:
        content = {
            "status": status,
            "exit_code": exit_code,
            "report": report,
            "line": line,
            "warnings": list(warnings),
            "capture": self.capture,
            "match": self.match,
            "connection": self.connection,
            "connections": self.connections,
        }
        temporary = self.path.with_name(f".{self.path.name}.tmp")
        try:
            temporary.write_text(json.dumps(content, indent=2) + "\n", encoding="utf-8")
            os.replace(temporary, self.path)
        except OSError as exc:
            sys.stderr.write(f"{PROGRAM}: cannot write the status file {self.path}: {exc}\n")


class ReplayAgent:
    """Plays one capture against one live client, over a pair of pipes."""

    def __init__(
        self,
        capture: Capture,
        *,
        live_in: Input,
        live_out: Output,
        match: MatchMode = "exact",
        timeout: float = DEFAULT_TIMEOUT,
        workspace: str | None = None,
        home: str | None = None,
        status: StatusFile | None = None,
        errors: TextIO | None = None,
        speed: float | None = None,
        connection: int = 1,
    ) -> None:
        played = connections(capture.entries)
        if not 1 <= connection <= len(played):
            raise ValueError(f"the capture has {len(played)} connections, not a {connection}")
        #: The entries of the connection played (``connection``, from 1).
        self.entries = played[connection - 1]
        #: The line the capture is cut at, when this connection is the one it ends with.
        self.cut = capture.cut if connection == len(played) else None
        #: None: the agent's lines go out as fast as they can. A number: at the recorded pace,
        #: that many times as fast (see :meth:`_pace`).
        self.speed = speed
        #: The recorded time of the last line handled, and when (``time.monotonic``) it was.
        self._clock: tuple[float, float] | None = None
        self.warnings = list(capture.warnings)
        self.match: MatchMode = match
        self.timeout = timeout
        #: The live session's folder: the agent's own until the client names it.
        self.workspace = workspace if workspace is not None else os.getcwd()
        self.home = home if home is not None else os.path.expanduser("~")
        self._input = live_in
        self._output = live_out
        self._status = status
        self._errors = errors or sys.stderr
        #: Live messages read but not handled yet (the rest of a batch).
        self._backlog: deque[Any] = deque()
        # The client's requests: recorded id -> live id; the live ones still owed an answer.
        self._pairs: dict[RequestKey, Any] = {}
        self._owed: dict[RequestKey, tuple[Any, str, int]] = {}
        #: Recorded client requests the walk has not reached yet, per id (answers wait for them).
        self._unwalked = Counter(
            request_key(part.message["id"])
            for entry in self.entries
            if entry.direction == CLIENT_TO_AGENT
            for part in entry.parts
            if part.kind == "request"
        )
        self._deferred: dict[RequestKey, list[dict[str, Any]]] = {}
        self._skipped: set[RequestKey] = set()
        # The agent's requests: those still waiting for the live client's answer, the
        # answers that came before the walk needed them, and the method of each id.
        self._asked: set[RequestKey] = set()
        self._arrived: dict[RequestKey, dict[str, Any]] = {}
        self._asked_methods: dict[RequestKey, str] = {}
        #: The recorded client's answer to each agent request, for the ids it hands out.
        self._recorded_answers: dict[RequestKey, dict[str, Any]] = {}
        self._client_answers: dict[RequestKey, list[tuple[int, dict[str, Any]]]] = {}
        for index, entry in enumerate(self.entries):
            if entry.direction == CLIENT_TO_AGENT:
                for part in entry.parts:
                    if part.kind == "answer":
                        key = request_key(part.message["id"])
                        self._client_answers.setdefault(key, []).append((index, part.message))
        #: Recorded terminal id -> the live client's.
        self._terminal_ids: dict[str, str] = {}

    # --- the walk ---------------------------------------------------------------------------

    def run(self) -> int:
        """Play the capture; the exit code."""
        for warning in self.warnings:
            self._say(f"warning: {warning}")
        self._write_status("running", None)
        try:
            index = 0
            while index < len(self.entries):
                entry = self.entries[index]
                if entry.direction == CLIENT_TO_AGENT:
                    index = self._await_run(index)
                    self._paced(self.entries[index - 1], time.monotonic())
                else:
                    self._pace(entry)
                    self._play(entry, index)
                    index += 1
            self._after_the_end()
        except _Exited as exited:
            return self._exit_as_recorded(exited.entry)
        except _Failed as failure:
            return self._fail(failure)
        self._output.flush(self.timeout)
        self._write_status("ok", EXIT_OK)
        return EXIT_OK

    def _pace(self, entry: Entry) -> None:
        """At the recorded pace (``speed``): wait until as long after the line before as the
        recording had it (divided by ``speed``; at most :data:`MAX_GAP` seconds a line). A
        replay that falls behind goes on from where it is, without hurrying to catch up."""
        if self.speed is None or entry.at is None:
            return
        now = time.monotonic()
        if self._clock is None:
            self._paced(entry, now)
            return
        recorded, handled = self._clock
        due = handled + min(max(entry.at - recorded, 0.0) / self.speed, MAX_GAP)
        if due > now:
            time.sleep(due - now)
        self._paced(entry, max(due, now))

    def _paced(self, entry: Entry, handled: float) -> None:
        if entry.at is not None:
            self._clock = (entry.at, handled)

    def _play(self, entry: Entry, index: int) -> None:
        """Send what the recorded agent sent (or exit, as it did)."""
        if entry.direction == AGENT_TO_CLIENT:
            self._send_recorded(entry, index)
        elif entry.direction == AGENT_RAW and entry.dropped is not None:
            self._output.send(dropped_again(entry.dropped))
            self._output.flush(self.timeout)  # one such line in memory at a time
        elif entry.direction == AGENT_RAW:
            self._output.send(self._live(entry.raw))
        elif entry.direction == AGENT_EXIT:
            raise _Exited(entry)

    def _run_end(self, start: int) -> int:
        end = start
        while end < len(self.entries) and self.entries[end].direction == CLIENT_TO_AGENT:
            end += 1
        return end

    def _await_run(self, start: int) -> int:
        """Wait for the client messages of the run at ``start``; the index after the run."""
        run = _Run(self._run_end(start))
        run.pending = [(e, p) for e in self.entries[start : run.end] for p in e.parts]
        deadline = time.monotonic() + self.timeout
        while True:
            if self._take_arrived_answers(run):
                deadline = time.monotonic() + self.timeout
            if not run.pending:
                return run.end
            incoming = self._next(deadline)
            if incoming is None:
                entry, _ = run.pending[0]
                raise _Failed(
                    "timeout",
                    f"timed out after {self.timeout:g} s waiting for {self._waited_for(run)}",
                    entry.line,
                )
            if incoming is END_OF_INPUT:
                entry, _ = run.pending[0]
                raise _Failed(
                    "mismatch",
                    f"the client closed its input while the capture waits for "
                    f"{self._waited_for(run)}",
                    entry.line,
                )
            if isinstance(incoming, NotJson):
                self._stray(run, f"a line that is not JSON: {shown(incoming.text)}")
            elif isinstance(incoming, dict) and isinstance(incoming.get("method"), str):
                if self._take_call(incoming, incoming["method"], run):
                    deadline = time.monotonic() + self.timeout
            elif isinstance(incoming, dict) and "id" in incoming:
                self._take_answer(incoming, run)
            else:
                self._stray(run, f"something that is not a JSON-RPC message: {shown(incoming)}")

    def _next(self, deadline: float | None) -> Incoming | None:
        """The next live message; a batch is taken apart (its messages come one by one)."""
        while True:
            if self._backlog:
                return self._backlog.popleft()
            incoming = self._input.get(deadline)
            if isinstance(incoming, list):
                if not incoming:
                    return incoming
                self._backlog.extend(incoming)
                continue
            return incoming

    # --- what the client sends ----------------------------------------------------------

    def _take_call(self, message: dict[str, Any], method: str, run: _Run) -> bool:
        """A request or notification of the client: matched in the run; True when it was."""
        if method in SESSION_METHODS:
            params = message.get("params")
            cwd = params.get("cwd") if isinstance(params, dict) else None
            if isinstance(cwd, str) and cwd:
                self.workspace = cwd
        is_request = "id" in message
        candidates = [
            (entry, part)
            for entry, part in run.pending
            if part.kind != "answer"
            and part.method == method
            and (part.kind == "request") == is_request
        ]
        if self.match == "methods":
            if not candidates:
                later = self._find_later(method, is_request, run.end)
                if later is None:
                    self._lacking(message, method, run)
                    return False
                self._skip_to(later, run, method)
                return self._take_call(message, method, run)
            self._matched(candidates[0], message, run)
            return True
        first: tuple[Entry, Mismatch] | None = None
        for candidate in candidates:
            found = compare(
                self._expected_call(candidate[1]),
                _without_self(message) if method == "initialize" else message,
                self.workspace,
                home=self.home,
            )
            if found is None:
                self._matched(candidate, message, run)
                return True
            first = first or (candidate[0], found)
        if is_request:
            self._owed[request_key(message["id"])] = (message["id"], method, 0)
        if first is not None:
            entry, found = first
            raise _Failed("mismatch", f"{method} (capture line {entry.line}): {found}", entry.line)
        raise self._unexpected(run, method)

    def _expected_call(self, part: Part) -> dict[str, Any]:
        """The recorded message as the live one must be: request ids go by position."""
        expected = dict(part.message)
        if part.kind == "request":
            expected["id"] = ANY
        params = expected.get("params")
        if part.method == "initialize":
            # What the client says of itself (its version, what it can do) is the client's,
            # not the session's: a newer client replays an older capture all the same.
            expected = _without_self(expected)
        if part.method == "$/cancel_request" and isinstance(params, dict):
            recorded = params.get("requestId")
            if request_key(recorded) in self._pairs:
                expected["params"] = {**params, "requestId": self._pairs[request_key(recorded)]}
        return expected

    def _matched(self, candidate: tuple[Entry, Part], message: dict[str, Any], run: _Run) -> None:
        run.pending.remove(candidate)
        entry, part = candidate
        if part.kind != "request":
            return
        recorded = request_key(part.message["id"])
        self._unwalked[recorded] -= 1
        self._pairs[recorded] = message["id"]
        self._owed[request_key(message["id"])] = (message["id"], part.method or "", entry.line)
        for answer in self._deferred.pop(recorded, []):
            routed = self._route_answer(answer)
            if routed is not None:
                self._send(routed)

    def _lacking(self, message: dict[str, Any], method: str, run: _Run) -> None:
        """Methods mode: a client message the capture does not have (from here on)."""
        if "id" in message:
            self._send({"jsonrpc": "2.0", "id": message["id"], "result": {}})
            self._warn(
                f"the client sent {method}, which the capture does not have from here on "
                f"(it waits for {self._waited_for(run)}): answered {{}}"
            )
        else:
            self._warn(f"the client sent the notification {method}, which the capture lacks here")

    def _find_later(self, method: str, is_request: bool, start: int) -> int | None:
        """The index of the next client line with ``method``; an exit line ends the search."""
        for index in range(start, len(self.entries)):
            entry = self.entries[index]
            if entry.direction == AGENT_EXIT:
                return None
            if entry.direction == CLIENT_TO_AGENT and any(
                p.method == method and (p.kind == "request") == is_request for p in entry.parts
            ):
                return index
        return None

    def _skip_to(self, index: int, run: _Run, method: str) -> None:
        """Methods mode: go ahead to the run holding ``index``; the agent's lines between are
        still sent, the client's are given up (recorded answers to its requests are dropped)."""
        given_up = list(run.pending)
        start = index
        while start > run.end and self.entries[start - 1].direction == CLIENT_TO_AGENT:
            start -= 1
        for between in range(run.end, start):
            entry = self.entries[between]
            if entry.direction == CLIENT_TO_AGENT:
                given_up += [(entry, part) for part in entry.parts]
            else:
                self._play(entry, between)
        for _, part in given_up:
            self._give_up(part)
        run.end = self._run_end(start)
        run.pending = [(e, p) for e in self.entries[start : run.end] for p in e.parts]
        skipped = [f"{p.method} (line {e.line})" for e, p in given_up if p.kind != "answer"]
        if skipped:
            self._warn(
                f"the client sent {method} (capture line {self.entries[index].line}): "
                f"skipped {', '.join(skipped)}"
            )

    def _give_up(self, part: Part) -> None:
        if part.kind == "request":
            recorded = request_key(part.message["id"])
            self._unwalked[recorded] -= 1
            self._skipped.add(recorded)
            self._deferred.pop(recorded, None)

    def _take_answer(self, message: dict[str, Any], run: _Run | None) -> None:
        """The client answered one of the agent's requests: kept until the walk reaches it."""
        key = request_key(message.get("id"))
        if key not in self._asked:
            what = f"an answer to id {shown(message.get('id'))}, which the agent did not ask"
            if run is None:
                self._warn(f"after the capture's end the client sent {what}")
            else:
                self._stray(run, what)
            return
        self._asked.discard(key)
        self._learn_terminal_id(key, message)
        self._arrived[key] = message

    def _take_arrived_answers(self, run: _Run) -> bool:
        """Match the answers that arrived with those the run waits for; True if any was."""
        taken = False
        for candidate in list(run.pending):
            entry, part = candidate
            if part.kind != "answer":
                continue
            key = request_key(part.message["id"])
            live = self._arrived.pop(key, None)
            if live is None:
                continue
            run.pending.remove(candidate)
            taken = True
            if self.match == "exact":
                found = compare(part.message, live, self.workspace, home=self.home)
                if found is not None:
                    method = self._asked_methods.get(key, "a request")
                    raise _Failed(
                        "mismatch",
                        f"the client's answer to {method} (capture line {entry.line}): {found}",
                        entry.line,
                    )
        return taken

    def _learn_terminal_id(self, key: RequestKey, live: dict[str, Any]) -> None:
        if self._asked_methods.get(key) != "terminal/create":
            return
        recorded = _terminal_id(self._recorded_answers.get(key))
        given = _terminal_id(live)
        if recorded is not None and given is not None and recorded != given:
            self._terminal_ids[recorded] = given

    def _stray(self, run: _Run, what: str) -> None:
        """A client message the run does not wait for: a mismatch (exact) or a warning."""
        failure = self._unexpected(run, what)
        if self.match == "exact":
            raise failure
        self._warn(failure.report)

    def _unexpected(self, run: _Run, what: str) -> _Failed:
        entry, _ = run.pending[0]
        report = f"the client sent {what}, but the capture waits for {self._waited_for(run)}"
        return _Failed("mismatch", report, entry.line)

    def _waited_for(self, run: _Run) -> str:
        described = []
        for entry, part in run.pending[:3]:
            if part.kind == "answer":
                method = self._asked_methods.get(request_key(part.message["id"]), "a request")
                what = f"the answer to {method} (id {shown(part.message['id'])})"
            else:
                what = f"{part.method}"
            described.append(f"{what} (capture line {entry.line})")
        more = len(run.pending) - len(described)
        return ", ".join(described) + (f" and {more} more" if more > 0 else "")

    # --- what the agent sends -----------------------------------------------------------

    def _send_recorded(self, entry: Entry, index: int) -> None:
        """One agent line: answers go to the live ids, requests are remembered."""
        batch = entry.message if isinstance(entry.message, list) else [entry.message]
        out: list[Any] = []
        for one in batch:
            if not isinstance(one, dict):
                out.append(one)
                continue
            method = one.get("method")
            if not isinstance(method, str) and "id" in one and ("result" in one or "error" in one):
                routed = self._route_answer(one)
                if routed is not None:
                    out.append(routed)
                continue
            if isinstance(method, str) and "id" in one:
                key = request_key(one["id"])
                self._asked.add(key)
                self._asked_methods[key] = method
                later = [m for i, m in self._client_answers.get(key, []) if i > index]
                if later:
                    self._recorded_answers[key] = later[0]
            out.append(self._live(one))
        if out:
            self._send(out if isinstance(entry.message, list) else out[0])

    def _route_answer(self, answer: dict[str, Any]) -> dict[str, Any] | None:
        """A recorded answer to a client request, as it goes out now: with the live id; later,
        when its request is still to come; or not at all, when that request was skipped."""
        recorded = request_key(answer["id"])
        live: dict[str, Any] = self._live(answer)
        if recorded in self._pairs:
            live_id = self._pairs[recorded]
            if self._owed.pop(request_key(live_id), None) is not None:
                return {**live, "id": live_id}
        if self._unwalked[recorded] > 0:
            self._deferred.setdefault(recorded, []).append(answer)
            return None
        if recorded in self._pairs:
            return {**live, "id": self._pairs[recorded]}  # answered again, as the agent did
        if recorded in self._skipped:
            return None
        return live  # an answer to no request of the capture: sent as the agent sent it

    def _live(self, value: Any) -> Any:
        """A recorded value with the live folders and the live terminal ids."""
        value = fill_marks(value, self.workspace, self.home)
        return _replace_strings(value, self._terminal_ids) if self._terminal_ids else value

    def _send(self, message: Any) -> None:
        self._output.send(_json.dumps(message, separators=(",", ":")))

    # --- the end --------------------------------------------------------------------------

    def _after_the_end(self) -> None:
        """The capture is played: wait for the client to close its input.

        Requests that come now are answered with an error. When requests of the client
        are still owed an answer the capture does not have, this wait has a limit too.
        """
        if self._owed and self.cut is not None:
            # What the cut line held (an answer, most likely) is lost: no wait brings it.
            raise _Failed(
                "error",
                f"the capture is cut at line {self.cut} (its last line is not whole JSON): "
                f"it has no answer to {self._owed_methods()}",
                self.cut,
            )
        deadline = time.monotonic() + self.timeout if self._owed else None
        while True:
            incoming = self._next(deadline)
            if incoming is None:
                raise _Failed(
                    "timeout", f"the capture ends without an answer to {self._owed_methods()}", None
                )
            if incoming is END_OF_INPUT:
                return
            if not isinstance(incoming, dict):
                self._warn(f"after the capture's end the client sent {shown(incoming)}")
                continue
            method = incoming.get("method")
            if isinstance(method, str):
                if "id" in incoming:
                    self._send(
                        {
                            "jsonrpc": "2.0",
                            "id": incoming["id"],
                            "error": {
                                "code": NO_RECORDED_ANSWER,
                                "message": f"replay: the capture has ended: no answer to {method}",
                            },
                        }
                    )
                self._warn(f"after the capture's end the client sent {method}")
            else:
                self._take_answer(incoming, None)

    def _owed_methods(self) -> str:
        return ", ".join(
            f"{method} (capture line {line})" if line else method
            for _, method, line in self._owed.values()
        )

    def _fail(self, failure: _Failed) -> int:
        """Tell the client (its open requests are answered with the report), stderr, status."""
        code = {"mismatch": EXIT_MISMATCH, "timeout": EXIT_TIMEOUT}.get(failure.status, EXIT_USAGE)
        for live_id, _, _ in self._owed.values():
            self._send(
                {
                    "jsonrpc": "2.0",
                    "id": live_id,
                    "error": {
                        "code": REPLAY_FAILED,
                        "message": f"replay {failure.status}: {failure.report}",
                        "data": {"status": failure.status, "line": failure.line},
                    },
                }
            )
        self._owed.clear()
        self._output.flush(self.timeout)
        self._say(f"{failure.status}: {failure.report}")
        self._write_status(failure.status, code, report=failure.report, line=failure.line)
        return code

    def _exit_as_recorded(self, entry: Entry) -> int:
        """The capture's exit line: what was sent is written out, then stderr, then the exit."""
        self._output.flush(self.timeout)
        if entry.stderr:
            self._errors.write(self._live(entry.stderr))
            self._errors.flush()
        code = 1 if entry.exit_code is None else entry.exit_code
        self._write_status(
            "ok", code, report=f"exited with {code} as the capture does", line=entry.line
        )
        return code

    # --- reports ------------------------------------------------------------------------

    def _warn(self, warning: str) -> None:
        self.warnings.append(warning)
        self._say(f"warning: {warning}")

    def _say(self, text: str) -> None:
        self._errors.write(f"{PROGRAM}: {text}\n")
        self._errors.flush()

    def _write_status(
        self, status: Status, exit_code: int | None, *, report: str = "", line: int | None = None
    ) -> None:
        if self._status is not None:
            self._status.write(
                status, exit_code=exit_code, report=report, line=line, warnings=self.warnings
            )


#: The fields of ``initialize`` in which the client describes itself (v1 and v2 names).
_CLIENT_SELF = ("clientCapabilities", "clientInfo", "capabilities", "info")


def _without_self(message: dict[str, Any]) -> dict[str, Any]:
    """An ``initialize`` request without what the client says of itself."""
    params = message.get("params")
    if not isinstance(params, dict):
        return message
    return {**message, "params": {k: v for k, v in params.items() if k not in _CLIENT_SELF}}


def _terminal_id(answer: Any) -> str | None:
    result = answer.get("result") if isinstance(answer, dict) else None
    terminal_id = result.get("terminalId") if isinstance(result, dict) else None
    return terminal_id if isinstance(terminal_id, str) else None


def _replace_strings(value: Any, replacements: dict[str, str]) -> Any:
    """``value`` with every string that is a key of ``replacements`` replaced (values only)."""
    if isinstance(value, str):
        return replacements.get(value, value)
    if isinstance(value, dict):
        return {k: _replace_strings(v, replacements) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace_strings(item, replacements) for item in value]
    return value


#: The longest wait ``--timeout`` may ask for (a day): longer ones overflow the clocks.
MAX_TIMEOUT = 86400.0
#: At the recorded pace (``--speed``), the longest wait before one line (seconds): a
#: capture's times are not trusted to end.
MAX_GAP = 60.0


def _speed(text: str) -> float:
    try:
        speed = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.001 <= speed <= 1000:  # also refuses nan and inf
        raise argparse.ArgumentTypeError("the speed must be from 0.001 to 1000")
    return speed


def _connection(text: str) -> int:
    try:
        number = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError("the connections are numbered from 1")
    return number


def _seconds(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < seconds <= MAX_TIMEOUT:
        raise argparse.ArgumentTypeError(
            f"the timeout must be more than 0 seconds and at most {MAX_TIMEOUT:g}"
        )
    return seconds


def main(argv: Sequence[str] | None = None) -> int:
    """Run the replay agent on this process's stdin and stdout; the exit code.

    A negative code is an exit line's signal (the recorded agent was killed by it);
    ``python -m acp_adapters.replay`` then ends by that signal.
    """
    parser = argparse.ArgumentParser(
        prog="python -m acp_adapters.replay",
        description="An ACP agent that plays the agent's side of a capture over stdio "
        "and checks what the client sends against it.",
        epilog="exit codes: 0 played to the end, 2 bad command line or unreadable capture, "
        "3 mismatch, 4 timeout; at an exit line, the code it records",
    )
    parser.add_argument("capture", metavar="CAPTURE", help="the capture file (JSON lines)")
    parser.add_argument(
        "--match",
        choices=("exact", "methods"),
        default="exact",
        help="exact: every client message as recorded (captures of this client); "
        "methods: only the order of the client's methods (captures of other clients)",
    )
    parser.add_argument(
        "--timeout",
        type=_seconds,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help=f"how long to wait for each client message (default {DEFAULT_TIMEOUT:g})",
    )
    parser.add_argument(
        "--speed",
        type=_speed,
        metavar="FACTOR",
        help="send the agent's lines at the recorded pace, FACTOR times as fast "
        "(1: as recorded; by default, as fast as they can go)",
    )
    parser.add_argument(
        "--connection",
        type=_connection,
        default=1,
        metavar="N",
        help="the connection of the capture to play, from 1 (a capture holds one per agent "
        "process: each but the first starts with the client's initialize)",
    )
    parser.add_argument("--status", metavar="FILE", help="write the outcome to FILE (JSON)")
    arguments = parser.parse_args(argv)
    match: MatchMode = "methods" if arguments.match == "methods" else "exact"
    status = (
        StatusFile(
            arguments.status,
            capture=arguments.capture,
            match=match,
            connection=arguments.connection,
        )
        if arguments.status
        else None
    )
    try:
        capture = read_capture(arguments.capture)
        count = len(connections(capture.entries))
        if arguments.connection > count:
            raise CaptureError(
                f"the capture has {count} connection{'s' if count > 1 else ''}, "
                f"not a connection {arguments.connection}"
            )
    except CaptureError as exc:
        sys.stderr.write(f"{PROGRAM}: {exc}\n")
        if status is not None:
            status.write("error", exit_code=EXIT_USAGE, report=str(exc))
        return EXIT_USAGE
    if status is not None:
        status.connections = count
    agent = ReplayAgent(
        capture,
        live_in=Input(sys.stdin.fileno()),
        live_out=Output(sys.stdout.fileno()),
        match=match,
        timeout=arguments.timeout,
        status=status,
        speed=arguments.speed,
        connection=arguments.connection,
    )
    return agent.run()
