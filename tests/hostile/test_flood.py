"""An agent that floods requests and reads no answer until it has sent them all.

Past the cap on requests in progress the client refuses at once; those refusals
must not stop it reading, or the agent, blocked on its full output pipe, never
gets to read them: the session would hang for good.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

import acp_adapters
from acp_adapters import PermissionQuery, connect

from .scripts import pipelining_agent

FLOOD = """
def ON_PROMPT(send, read):
    call = {"toolCallId": "t", "title": "x", "kind": "execute"}
    options = [{"optionId": "yes", "name": "Yes", "kind": "allow_once"}]
    for n in range(20000):  # all of them before reading any answer
        send({"id": n, "method": "session/request_permission",
              "params": {"sessionId": "s", "toolCall": call, "options": options}})
    out.flush()
    waiting = set(range(20000))
    while waiting:
        waiting.discard(read().get("id"))
"""


def test_a_flood_of_requests_read_by_nobody_does_not_hang_the_session(tmp_path: Path) -> None:
    command = pipelining_agent(tmp_path, FLOOD)

    async def main() -> tuple[str | None, list[str]]:
        asked = anyio.Event()

        async def ask_until_cancelled(query: PermissionQuery) -> None:
            asked.set()
            await anyio.sleep_forever()

        async with connect(
            command=command, cwd=tmp_path, policy="ask", ask=ask_until_cancelled
        ) as s:
            # The questions are never answered: the requests stay in progress, the cap is
            # reached, and the rest are refused while the agent reads nothing.
            async with anyio.create_task_group() as group:
                group.start_soon(s.prompt, "go")
                with anyio.fail_after(60):
                    await asked.wait()
                    while sum(p.kind == "too_many_requests" for p in s.problems) < 19_000:
                        await anyio.sleep(0.05)
                await s.cancel()  # the questions end cancelled, their answers go out
                with anyio.fail_after(60):
                    while s.projector.state.turn_state.state != "idle":
                        await anyio.sleep(0.05)
            return s.projector.state.turn_state.stop_reason, [p.kind for p in s.problems]

    stop_reason, problems = anyio.run(main)
    assert stop_reason == "end_turn"
    assert "too_many_requests" in problems


def test_a_session_cancelled_by_a_timeout_closes_without_waiting_on_pipes_nobody_reads() -> None:
    """A timeout around the session cancels its reader: closing it then waited 5 s on each
    pipe for a reader that was gone (about 14 s in all)."""
    import time

    agent = [sys.executable, "-c", "import sys, time\nfor line in sys.stdin: time.sleep(100)"]

    async def main() -> float:
        started = time.monotonic()
        with anyio.move_on_after(0.5):
            async with connect(
                command=agent,
                cwd=".",
                policy="read-only",
                timeouts=acp_adapters.Timeouts(close_grace=0.1),
            ):
                pass
        return time.monotonic() - started

    # A generous bound, far above the close's own (0.5 s + 0.1 s + a moment per pipe),
    # far below the 10 s the pipes alone cost before.
    assert anyio.run(main) < 6


def test_a_flood_of_problems_is_logged_a_few_times_and_kept_whole(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from acp_adapters.transport import Connection
    from byte_streams import Chunks, Sink

    lines = [b"not json\n"] * 500
    problems: list[object] = []

    async def main() -> None:
        async def ignore(*_: object) -> None:
            return None

        connection = Connection(
            Chunks(lines),
            Sink(),
            on_request=ignore,
            on_notification=ignore,
            on_problem=problems.append,
        )
        async with anyio.create_task_group() as group:
            await connection.serve(group)

    with caplog.at_level("WARNING", logger="acp_adapters.transport"):
        anyio.run(main)
    assert len(problems) == 500
    assert len(caplog.records) == 11  # ten, and one that says the rest is not logged


LATE_QUESTION = """
def ON_PROMPT(send, read):
    call = {"toolCallId": "t", "title": "x", "kind": "execute"}
    options = [{"optionId": "yes", "name": "Yes", "kind": "allow_once"}]
    ask = {"method": "session/request_permission",
           "params": {"sessionId": "s", "toolCall": call, "options": options}}
    send({"id": 1, **ask})
    out.flush()
    answers = {}
    while len(answers) < 2:
        message = read()
        if message.get("method") == "session/cancel":
            send({"id": 2, **ask})  # asked after the client cancelled the turn
            out.flush()
        elif "id" in message and "method" not in message:
            answers[message["id"]] = message["result"]["outcome"]["outcome"]
    with open("answers.json", "w") as f:
        json.dump(answers, f)
"""


def test_a_question_asked_after_the_turn_was_cancelled_is_answered_cancelled(
    tmp_path: Path,
) -> None:
    """The agent asks again after the client's session/cancel: nobody is asked, the answer is
    ``cancelled`` at once (the turn would otherwise wait on a question no one will answer)."""
    import json

    command = pipelining_agent(tmp_path, LATE_QUESTION)
    asked: list[str] = []

    async def main() -> str | None:
        async def ask(query: PermissionQuery) -> None:
            asked.append(query.tool_call.id if query.tool_call else "")
            await anyio.sleep_forever()

        async with connect(command=command, cwd=tmp_path, policy="ask", ask=ask) as s:
            async with anyio.create_task_group() as group:
                group.start_soon(s.prompt, "go")
                with anyio.fail_after(30):
                    while not asked:
                        await anyio.sleep(0.01)
                    await s.cancel()
                    while s.projector.state.turn_state.state != "idle":
                        await anyio.sleep(0.05)
            return s.projector.state.turn_state.stop_reason

    assert anyio.run(main) == "end_turn"
    assert len(asked) == 1  # the second question never reached the application
    answers = json.loads((tmp_path / "answers.json").read_text())
    assert answers == {"1": "cancelled", "2": "cancelled"}
