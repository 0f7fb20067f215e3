"""The session API against a scripted agent: turns, negotiation, the agent's requests, faults."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

import acp_adapters
from acp_adapters import FileChangeItem, PermissionQuery
from acp_adapters.client import (
    AgentNotFoundError,
    AuthenticationRequiredError,
    ProtocolVersionError,
)
from acp_adapters.transport import ConnectionClosed
from session_helpers import ask_forever, prompt_cancelled_when_asked

from .conftest import fake_agent

pytestmark = pytest.mark.anyio


async def test_a_v1_turn(connect: Any, workspace: Path) -> None:
    async with connect(command=fake_agent("basic"), cwd=workspace) as session:
        assert session.version == 1
        assert session.session_id == "fake-session"
        assert session.agent_info["name"] == "fake-agent-basic"  # it was told about fs (v1 fields)
        turn = await session.prompt("hello")
        assert turn.stop_reason == "end_turn"
        assert [(i.kind, getattr(i, "text", None)) for i in turn.items] == [
            ("user_message", "hello"),
            ("assistant_message", "you said: hello"),
        ]
        second = await session.prompt("say again")
        assert second.index == turn.index + 1


@pytest.mark.parametrize(
    ("scenario", "version"), [("v2", 2), ("echo", 1), ("claude-like", 2), ("basic", 1)]
)
async def test_negotiation_asks_for_2_and_judges_the_body(
    connect: Any, workspace: Path, scenario: str, version: int
) -> None:
    async with connect(command=fake_agent(scenario), cwd=workspace) as session:
        assert session.version == version
        turn = await session.prompt("hello")
        assert turn.stop_reason == "end_turn"
        assert turn.items[-1].kind == "assistant_message"


async def test_a_provider_preferring_1_asks_for_1(connect: Any, workspace: Path) -> None:
    async with connect(command=fake_agent("echo"), cwd=workspace, protocol=1) as session:
        assert session.version == 1
    with pytest.raises(ProtocolVersionError, match="asked for version 1, the agent answered 2"):
        async with connect(command=fake_agent("v2"), cwd=workspace, protocol=1):
            pass


@pytest.mark.parametrize("checkpoints", [True, False])
async def test_an_edit_through_the_clients_fs(
    connect: Any, workspace: Path, checkpoints: bool
) -> None:
    async with connect(
        command=fake_agent("edit", str(workspace)),
        cwd=workspace,
        policy="full-access",
        checkpoints=checkpoints,
    ) as session:
        turn = await session.prompt("edit")
    assert (workspace / "existing.txt").read_text() == "alpha\nBETA changed\n"
    assert (workspace / "new.txt").read_text() == "brand new\n"
    assert not (workspace.parent / "escaped.txt").exists()
    changes = [i for i in turn.items if isinstance(i, FileChangeItem)]
    # The workspace's checkpoints and, without them, the client's writes: the same patch.
    source = "checkpoint" if checkpoints else "client_fs"
    assert [c.patch_source for c in changes] == [source, source]
    assert changes[0].diff_str == (
        f"--- {workspace}/existing.txt\n+++ {workspace}/existing.txt\n"
        "@@ -1,2 +1,2 @@\n alpha\n-beta\n+BETA changed\n"
    )
    assert changes[1].operations == {f"{workspace}/new.txt": "add"}
    assert [i.option_kind for i in turn.items if i.kind == "approval_request"] == ["allow_once"]
    assert turn.items[-1].text == "escape refused"  # type: ignore[union-attr]


async def test_read_only_refuses(connect: Any, workspace: Path) -> None:
    async with connect(
        command=fake_agent("edit", str(workspace)), cwd=workspace, policy="read-only"
    ) as session:
        turn = await session.prompt("edit")
    assert (workspace / "existing.txt").read_text() == "alpha\nbeta\n"
    (approval,) = [i for i in turn.items if i.kind == "approval_request"]
    assert approval.option_kind == "reject_once"  # type: ignore[union-attr]
    (change,) = [i for i in turn.items if i.kind == "file_change"]
    assert change.status == "failed"


async def test_ask_hands_the_decision_to_the_application(connect: Any, workspace: Path) -> None:
    asked: list[PermissionQuery] = []

    async def ask(query: PermissionQuery) -> str:
        asked.append(query)
        return "always"

    async with connect(
        command=fake_agent("edit", str(workspace)), cwd=workspace, ask=ask
    ) as session:
        turn = await session.prompt("edit")
    assert asked[0].tool_call is not None
    assert asked[0].tool_call.kind == "edit"
    # The agent's permission request, then the client's own question about the write it
    # asked for (whose options are allow and reject: "always" is neither, so refused).
    approvals = [i for i in turn.items if i.kind == "approval_request"]
    assert [(i.option_id, i.option_kind) for i in approvals] == [  # type: ignore[union-attr]
        ("always", "allow_always"),
        ("always", None),
    ]
    assert [q.action is not None for q in asked] == [False, True]


async def test_an_answer_the_agent_did_not_offer_is_sent_as_cancelled(
    connect: Any, workspace: Path
) -> None:
    async def ask(query: PermissionQuery) -> str:
        return "bogus"

    async with connect(
        command=fake_agent("edit", str(workspace)),
        cwd=workspace,
        ask=ask,
        record=workspace.parent / "c.jsonl",
    ) as session:
        await session.prompt("edit")
        assert any(
            p.kind == "invalid_answer" and "'bogus' was not offered" in p.detail
            for p in session.problems
        )
    sent = (workspace.parent / "c.jsonl").read_text()
    assert "bogus" not in sent
    assert '"outcome": {"outcome": "cancelled"}' in sent
    assert (workspace / "existing.txt").read_text() == "alpha\nbeta\n"  # nothing was allowed


async def test_a_terminal_runs_a_shell_line_and_truncates_its_output(
    connect: Any, workspace: Path
) -> None:
    line = "printf 'é%.0s' $(seq 1 100); exit 7"
    async with connect(
        command=fake_agent("terminal", line), cwd=workspace, policy="full-access"
    ) as session:
        turn = await session.prompt("run")
    (command,) = [i for i in turn.items if i.kind == "command_execution"]
    assert command.exit_code == 7  # type: ignore[union-attr]
    output = command.output or ""  # type: ignore[union-attr]
    assert output == "é" * 32  # 64 bytes, cut from the start at a character boundary
    assert command.status == "completed"


async def test_v2_turn_ends_at_idle_and_permission_subjects(connect: Any, workspace: Path) -> None:
    async with connect(
        command=fake_agent("v2-edit", str(workspace)), cwd=workspace, policy="full-access"
    ) as session:
        assert session.version == 2
        turn = await session.prompt("edit")
    assert turn.stop_reason == "end_turn"
    assert (workspace / "existing.txt").read_text() == "alpha\nBETA changed\n"
    (change,) = [i for i in turn.items if i.kind == "file_change"]
    assert change.status == "completed"


async def test_faults_are_skipped_and_the_session_survives(connect: Any, workspace: Path) -> None:
    async with connect(
        command=fake_agent("faults", str(200_000)),
        cwd=workspace,
        limits=acp_adapters.Limits(max_line_bytes=64 * 1024),
    ) as session:
        turn = await session.prompt("go")
        # A lone surrogate is kept as sent; the text after it, and after every fault, came.
        said = turn.items[-1].text  # type: ignore[union-attr]
        assert said == "a lone surrogate: \ud800, still here"
        # Nested deeper than the limit (and deeper than Python's recursion): dropped, each
        # an error item of the turn, as a line too long is.
        deep = [p.detail for p in session.problems if p.kind == "too_deep"]
        assert deep == ["nested deeper than 128 levels"] * 2
        errors = [i.data for i in turn.items if i.kind == "error"]
        assert errors == [
            {"reason": "line_too_long", "limit": 64 * 1024},
            {"reason": "too_deep", "limit": 128},
            {"reason": "too_deep", "limit": 128},
        ]
        kinds = {p.kind for p in session.problems}
        assert {
            "not_json",
            "not_a_message",
            "line_too_long",
            "too_deep",
            "unknown_id",
            "ignored_notification",
        } <= kinds
        again = await session.prompt("say it")
        assert again.stop_reason == "end_turn"


async def test_a_crash_mid_turn_fails_the_prompt_with_exit_status_and_stderr(
    connect: Any, workspace: Path
) -> None:
    async with connect(command=fake_agent("crash"), cwd=workspace) as session:
        with pytest.raises(ConnectionClosed) as info:
            await session.prompt("go")
        assert info.value.exit_status == 3
        assert "the model went away" in info.value.stderr_tail
        kept = session.timeline
        assert [i.kind for i in kept] == ["user_message", "assistant_message", "error"]
        assert kept[-1].message == "the agent exited (exit status 3)"  # type: ignore[union-attr]
        assert session.projector.state.turn_state.state == "idle"


async def test_a_hang_ends_with_the_applications_timeout_and_a_clean_close(
    connect: Any, workspace: Path
) -> None:
    async with connect(
        command=fake_agent("hang"), cwd=workspace, timeouts=acp_adapters.Timeouts(close_grace=0.5)
    ) as session:
        with pytest.raises(TimeoutError):
            with anyio.fail_after(1):
                await session.prompt("go")
        process = session.process.process
    assert process.returncode is not None
    with pytest.raises(ProcessLookupError):
        os.kill(process.pid, 0)


async def test_kill_ends_the_agent_at_once_and_the_block_has_nothing_left_to_wait_for(
    connect: Any, workspace: Path
) -> None:
    failed: list[ConnectionClosed] = []

    async def turn() -> None:
        with pytest.raises(ConnectionClosed) as info:
            await session.prompt("go")
        failed.append(info.value)

    async with connect(
        command=fake_agent("hang"), cwd=workspace, timeouts=acp_adapters.Timeouts(close_grace=30)
    ) as session:
        async with anyio.create_task_group() as group:
            group.start_soon(turn)
            await anyio.sleep(0.3)
            with anyio.fail_after(3):
                await session.kill()  # not the 30 s of close_grace
        (closed,) = failed  # the turn's prompt fails: the agent is gone
        assert closed.exit_status == -signal.SIGKILL
        process = session.process.process
        assert process.returncode == -signal.SIGKILL
        started = time.monotonic()
    assert time.monotonic() - started < 2


async def test_a_line_of_100_mib_is_dropped_at_the_default_limit(
    connect: Any, workspace: Path
) -> None:
    async with connect(
        command=fake_agent("faults", str(100 * 1024 * 1024)), cwd=workspace
    ) as session:
        turn = await session.prompt("go")
        assert turn.items[-1].text.endswith("still here")  # type: ignore[union-attr]
        (too_long,) = [p for p in session.problems if p.kind == "line_too_long"]
        assert "52428800" in too_long.detail  # the limit it went over


async def test_a_flood_of_100_000_updates(connect: Any, workspace: Path) -> None:
    async with connect(command=fake_agent("flood", "100000"), cwd=workspace) as session:
        turn = await session.prompt("go")
    (message,) = [i for i in turn.items if i.kind == "assistant_message"]
    text = message.text  # type: ignore[union-attr]
    assert text.startswith("0 1 2 ")
    assert text.endswith(" 99998 99999 ")
    assert len(text.split()) == 100_000


async def test_cancel_answers_open_permission_requests_cancelled(
    connect: Any, workspace: Path
) -> None:
    asked, ask = ask_forever()
    async with connect(command=fake_agent("cancel"), cwd=workspace, ask=ask) as session:
        turn = await prompt_cancelled_when_asked(session, "long", asked)
    assert turn.stop_reason == "cancelled"
    assert turn.items[-1].text == "permission answer: cancelled"  # type: ignore[union-attr]
    (approval,) = [i for i in turn.items if i.kind == "approval_request"]
    assert approval.status == "cancelled"


async def test_ids_batches_and_cancelled_requests(connect: Any, workspace: Path) -> None:
    async def ask(query: PermissionQuery) -> None:
        await anyio.sleep_forever()

    async with connect(
        command=fake_agent("requests", str(workspace)), cwd=workspace, ask=ask
    ) as session:
        turn = await session.prompt("go")
    said = "".join(i.text for i in turn.items if i.kind == "assistant_message")  # type: ignore[union-attr]
    assert "string id answered: True" in said
    assert "batch answered: ['77', 'b1'] errors ['-32601']" in said
    assert "cancelled request answered with -32800" in said


async def test_authentication(connect: Any, workspace: Path) -> None:
    with pytest.raises(AuthenticationRequiredError, match="authenticate with one of: key"):
        async with connect(command=fake_agent("auth"), cwd=workspace):
            pass
    async with connect(command=fake_agent("auth"), cwd=workspace, new_session=False) as session:
        with pytest.raises(Exception, match="reads FAKE_KEY"):
            await session.authenticate("key")
    async with connect(
        command=fake_agent("auth"), cwd=workspace, env={"FAKE_KEY": "x"}, new_session=False
    ) as session:
        await session.authenticate("key")
        assert await session.new_session() == "fake-session"
        await session.set_mode("plan")


async def test_a_missing_agent_is_a_clear_error(workspace: Path) -> None:
    import acp_adapters

    with pytest.raises(AgentNotFoundError, match="no-such-agent-binary"):
        async with acp_adapters.connect(command=["no-such-agent-binary"], cwd=workspace):
            pass


async def test_stream_prompt_yields_items_as_they_change(connect: Any, workspace: Path) -> None:
    async with connect(
        command=fake_agent("edit", str(workspace)), cwd=workspace, policy="full-access"
    ) as session:
        changes = [change async for change in session.stream_prompt("edit")]
    kinds = [c.item.kind for c in changes]
    assert kinds[0] == "user_message"
    assert "file_change" in kinds
    assert "approval_request" in kinds
    statuses = [c.item.status for c in changes if c.item.id == "tool:edit-1"]
    assert statuses[0] == "pending"
    assert statuses[-1] == "completed"


async def test_leaving_the_stream_early_leaves_the_turn_running(
    connect: Any, workspace: Path
) -> None:
    async with connect(
        command=fake_agent("edit", str(workspace)), cwd=workspace, policy="full-access"
    ) as session:
        async for change in session.stream_prompt("edit"):
            if change.item.kind == "file_change":
                break  # seen enough
        with anyio.fail_after(10):
            while session.projector.state.turn_state.state != "idle":
                await anyio.sleep(0.01)
        again = await session.prompt("say it again")
    assert again.stop_reason == "end_turn"
    assert (workspace / "new.txt").read_text() == "brand new\n"  # the turn went on to its end


LONGER = "one\ntwo\nbeta\nfour\nfive\n"


@pytest.mark.parametrize("checkpoints", [True, False])
async def test_a_fragment_edit_gets_the_files_true_patch_from_the_disk(
    connect: Any, workspace: Path, checkpoints: bool
) -> None:
    (workspace / "existing.txt").write_text(LONGER)
    async with connect(
        command=fake_agent("fragment", str(workspace)), cwd=workspace, checkpoints=checkpoints
    ) as session:
        turn = await session.prompt("edit")
    (change,) = [i for i in turn.items if isinstance(i, FileChangeItem)]
    assert change.patch_source == ("checkpoint" if checkpoints else "disk")
    assert change.diff_str == (
        f"--- {workspace}/existing.txt\n+++ {workspace}/existing.txt\n"
        "@@ -1,5 +1,5 @@\n one\n two\n-beta\n+BETA changed\n four\n five\n"
    )


async def test_a_fragment_the_workspace_does_not_show_is_no_change_and_says_so(
    connect: Any, workspace: Path
) -> None:
    (workspace / "existing.txt").write_text("beta\nbeta\n")
    async with connect(
        command=fake_agent("fragment-twice", str(workspace)), cwd=workspace
    ) as session:
        turn = await session.prompt("edit")
    (change,) = [i for i in turn.items if isinstance(i, FileChangeItem)]
    # The agent reported an edit it never made: the checkpoints say the file is as it was.
    assert change.patch_source == "checkpoint"
    assert (change.diff_str, change.diff_omitted_reason) == (None, "unchanged")
    assert change.patch_note == "the agent reported a change that the workspace does not show"


async def test_a_fragment_that_cannot_be_placed_keeps_the_agents_patch_and_says_so(
    connect: Any, workspace: Path
) -> None:
    (workspace / "existing.txt").write_text("beta\nbeta\n")
    async with connect(
        command=fake_agent("fragment-twice", str(workspace)), cwd=workspace, checkpoints=False
    ) as session:
        turn = await session.prompt("edit")
    (change,) = [i for i in turn.items if isinstance(i, FileChangeItem)]
    assert change.patch_source == "agent"
    assert change.patch_note is not None
    assert "could not be placed" in change.patch_note
    assert change.diff_str == (
        f"--- {workspace}/existing.txt\n+++ {workspace}/existing.txt\n"
        "@@ -1,1 +1,1 @@\n-beta\n\\ No newline at end of file\n"
        "+BETA changed\n\\ No newline at end of file\n"
    )


@pytest.mark.parametrize("checkpoints", [True, False])
async def test_a_v2_edit_gets_its_patch_from_the_disk_around_it(
    connect: Any, workspace: Path, checkpoints: bool
) -> None:
    async with connect(
        command=fake_agent("v2-edit", str(workspace)),
        cwd=workspace,
        policy="full-access",
        checkpoints=checkpoints,
    ) as session:
        turn = await session.prompt("edit")
    (change,) = [i for i in turn.items if isinstance(i, FileChangeItem)]
    assert change.patch_source == ("checkpoint" if checkpoints else "disk")
    assert "-beta\n+BETA changed\n" in (change.diff_str or "")


@pytest.mark.parametrize("scenario", ["elicit", "v2-elicit"])
async def test_elicitation_is_declined_unless_the_application_answers(
    connect: Any, workspace: Path, scenario: str
) -> None:
    async with connect(command=fake_agent(scenario, str(workspace)), cwd=workspace) as session:
        turn = await session.prompt("go")
        assert not [p for p in session.problems if p.kind == "invalid_notification"]
    said = turn.items[-1].text  # type: ignore[union-attr]
    assert 'form: {"action": "decline"}' in said
    assert 'url: {"action": "decline"}' in said
    assert "no message: -32602" in said  # invalid params: a typed error, not a crash


async def test_the_application_answers_elicitations(connect: Any, workspace: Path) -> None:
    asked: list[dict[str, Any]] = []

    async def elicit(params: dict[str, Any]) -> dict[str, Any] | None:
        asked.append(params)
        if params["mode"] == "form":
            return {"action": "accept", "content": {"color": "teal"}}
        return {"content": {"color": "teal"}}  # no action: not an answer, so declined

    async with connect(
        command=fake_agent("elicit", str(workspace)), cwd=workspace, elicit=elicit
    ) as session:
        turn = await session.prompt("go")
        assert [p.kind for p in session.problems] == ["invalid_answer"]
    said = turn.items[-1].text  # type: ignore[union-attr]
    assert 'form: {"action": "accept", "content": {"color": "teal"}}' in said
    assert 'url: {"action": "decline"}' in said
    form, url = asked
    assert form["message"] == "Which color?"
    assert form["sessionId"] == "fake-session"
    assert form.get("toolCallId") is None  # the schema's rule dropped the invalid id
    assert url["requestId"] == 7  # the request scope


async def test_the_schemas_rules_repair_or_refuse_the_agents_requests(
    connect: Any, workspace: Path
) -> None:
    async with connect(command=fake_agent("elicit", str(workspace)), cwd=workspace) as session:
        turn = await session.prompt("go")
    said = turn.items[-1].text  # type: ignore[union-attr]
    assert 'bad line: {"content": "alpha\\nbeta\\n"}' in said  # line dropped: the whole file
    assert "no path: -32602" in said
    async with connect(command=fake_agent("v2-elicit", str(workspace)), cwd=workspace) as session:
        turn = await session.prompt("go")
    assert "fs in v2: -32601" in turn.items[-1].text  # type: ignore[union-attr]


async def test_an_agent_that_dies_while_permission_is_asked(connect: Any, workspace: Path) -> None:
    async def ask(query: PermissionQuery) -> None:
        os.killpg(session.process.process.pid, signal.SIGKILL)
        await anyio.sleep_forever()  # the answer never comes: the session closes under it

    async with connect(command=fake_agent("cancel"), cwd=workspace, ask=ask) as session:
        with pytest.raises(ConnectionClosed) as info:
            await session.prompt("long")
        assert info.value.exit_status == -signal.SIGKILL
    (approval,) = [i for i in session.timeline if i.kind == "approval_request"]
    assert approval.status == "cancelled"
    assert session.timeline.items[-1].kind == "error"


def test_a_disk_read_around_an_edit_reads_regular_files_only(tmp_path: Path) -> None:
    """An agent may name a FIFO in its edit: the read must not block the session's loop."""
    import os

    from acp_adapters.client import Workspace
    from acp_adapters.client.agent_requests import DISK_READ_LIMIT

    workspace = Workspace(tmp_path)

    def _read_disk(path: str) -> str | None:
        return workspace.read_confined(path, DISK_READ_LIMIT)

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert _read_disk(str(fifo)) is None  # returns at once: no writer will ever come
    assert _read_disk(str(tmp_path)) is None
    assert _read_disk(str(tmp_path / "missing")) is None
    assert _read_disk(str(tmp_path) + "/\0") is None
    (tmp_path / "f.txt").write_text("alpha\r\nbeta\n")
    assert _read_disk(str(tmp_path / "f.txt")) == "alpha\r\nbeta\n"  # line ends as they are


async def test_a_cancel_from_inside_the_ask_callback_reaches_the_agent(
    connect: Any, workspace: Path
) -> None:
    sessions: list[Any] = []

    async def ask(query: PermissionQuery) -> str | None:
        await sessions[0].cancel()  # the question's own scope is cancelled by it
        return None

    async with connect(command=fake_agent("cancel"), cwd=workspace, ask=ask) as session:
        sessions.append(session)
        with anyio.fail_after(10):
            turn = await session.prompt("go")
    assert turn.stop_reason == "cancelled"
