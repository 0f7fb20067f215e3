"""``acp-adapters replay`` (live): the replay agent plays the capture as a real subprocess."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest

import acp_adapters
from acp_adapters.cli.replaying import client_steps, read_capture

from .conftest import CAPTURES, SYNTHETIC, Invoke, agent_command, one_error_line

#: Captures of other clients that a replay in methods mode follows to their end.
FOLLOWED = [
    CAPTURES / "claude-agent-acp-fakellm-tools-v1.jsonl",
    CAPTURES / "codex-acp-fakellm-tools-v1.jsonl",
    CAPTURES / "kimi-cli-scripted-tools-v1.jsonl",
    CAPTURES / "sdk-scripted-edit-agent-v1.jsonl",
    CAPTURES / "sdk-scripted-edit-agent-v1-cancel.jsonl",
    *sorted(SYNTHETIC.glob("*.jsonl")),
]


def _without_times(rows: list[dict[str, object]]) -> list[dict[str, object]]:
    return [{k: v for k, v in row.items() if k not in ("created_at", "updated_at")} for row in rows]


@pytest.mark.parametrize("capture", FOLLOWED, ids=lambda p: p.stem)
def test_methods_mode_gives_the_offline_timeline(cli: Invoke, capture: Path) -> None:
    live = cli("replay", "--match", "methods", "--format", "json", str(capture))
    assert live.exit_code == 0, live.stderr
    offline = cli("replay", "--offline", "--format", "json", str(capture))
    live_rows, offline_rows = json.loads(live.stdout), json.loads(offline.stdout)
    assert [(r["kind"], r["status"]) for r in live_rows] == [
        (r["kind"], r["status"]) for r in offline_rows
    ]
    live_patches = [r["diff_str"] for r in live_rows if r["kind"] == "file_change"]
    assert live_patches == [r["diff_str"] for r in offline_rows if r["kind"] == "file_change"]


def test_a_recorded_run_replays_exactly(cli: Invoke, workspace: Path, tmp_path: Path) -> None:
    record = tmp_path / "edit.jsonl"
    command = agent_command("edit", str(workspace))
    ran = cli(
        "run",
        "--command",
        command,
        "--cwd",
        str(workspace),
        "--approve",
        "full-access",
        "--record",
        str(record),
        "--format",
        "json",
        "edit",
    )
    assert ran.exit_code == 0, ran.stderr
    replayed = cli("replay", "--format", "json", str(record))  # exact is the default
    assert replayed.exit_code == 0, replayed.stderr
    real = str(workspace.resolve())
    original = json.loads(ran.stdout.replace(real, "<workspace>"))
    assert _without_times(json.loads(replayed.stdout)) == _without_times(original)


@pytest.mark.parametrize("scenario", ["fragment", "v2-edit"])
def test_the_disks_true_patches_are_recorded_and_replayed(
    cli: Invoke, workspace: Path, tmp_path: Path, scenario: str
) -> None:
    """An agent that edits the disk itself: the run's patches come from the workspace's
    checkpoints (and, without them, from the disk around the edit); the capture keeps what
    was read, so both replays show the same patches."""
    (workspace / "existing.txt").write_text("one\ntwo\nbeta\nfour\nfive\n")
    record = tmp_path / "edit.jsonl"
    ran = cli(
        "run",
        "--command",
        agent_command(scenario, str(workspace)),
        "--cwd",
        str(workspace),
        "--approve",
        "full-access",
        "--record",
        str(record),
        "--format",
        "json",
        "edit",
    )
    assert ran.exit_code == 0, ran.stderr
    original = _without_times(
        json.loads(ran.stdout.replace(str(workspace.resolve()), "<workspace>"))
    )
    (change,) = [row for row in original if row["kind"] == "file_change"]
    assert change["patch_source"] == "checkpoint"
    true_patch = "@@ -1,5 +1,5 @@\n one\n two\n-beta\n+BETA changed\n four\n five\n"
    assert true_patch in change["diff_str"]
    disk = [json.loads(line) for line in record.read_text().splitlines() if '"dir": "disk"' in line]
    assert {(d["phase"], d["path"]) for d in disk} == {
        ("before", "<workspace>/existing.txt"),
        ("after", "<workspace>/existing.txt"),
    }
    for replay in (["--offline"], []):
        replayed = cli("replay", *replay, "--format", "json", str(record))
        assert replayed.exit_code == 0, replayed.stderr
        assert _without_times(json.loads(replayed.stdout)) == original, replay

    def without(*kinds: str) -> list[dict[str, object]]:
        lines = [
            line for line in record.read_text().splitlines() if json.loads(line)["dir"] not in kinds
        ]
        bare = tmp_path / "bare.jsonl"
        bare.write_text("".join(line + "\n" for line in lines))
        rows = json.loads(cli("replay", "--offline", "--format", "json", str(bare)).stdout)
        (found,) = [row for row in rows if row["kind"] == "file_change"]
        return found  # type: ignore[no-any-return]

    # Without the checkpoints, the disk around the edit shows the same true patch.
    from_disk = without("checkpoint", "change")
    assert from_disk["patch_source"] == "disk"
    assert true_patch in from_disk["diff_str"]
    # Without either, the capture has only what the agent reported.
    assert without("checkpoint", "change", "disk")["patch_source"] not in ("disk", "checkpoint")


def test_a_replay_that_goes_otherwise_fails_with_the_report(cli: Invoke) -> None:
    capture = CAPTURES / "claude-agent-acp-v2.jsonl"  # not recorded by this client
    result = cli("replay", str(capture))
    assert result.exit_code == 1
    line = one_error_line(result)
    assert "went otherwise than the capture: mismatch (capture line 3)" in line
    # The other client gave up on the refused initialize; this one asks again with v1.
    assert "the client sent initialize, but the capture waits for session/new" in line
    assert "try --match methods, or --offline" in line
    assert result.stdout == ""


def test_a_capture_whose_session_failed_replays_as_recorded(cli: Invoke) -> None:
    result = cli("replay", "--match", "methods", str(CAPTURES / "codex-acp-v1.jsonl"))
    assert result.exit_code == 0
    assert result.stderr.startswith("Note: the recorded session ended with an error: ")
    assert "Authentication required" in result.stderr


def test_a_crash_replays_as_recorded(cli: Invoke) -> None:
    result = cli("replay", "--match", "methods", str(SYNTHETIC / "grok-crash-mid-turn-v1.jsonl"))
    assert result.exit_code == 0, result.stderr
    assert "] error  failed" in result.stdout
    assert "stop reason agent_exited" in result.stdout


def test_a_missing_capture(cli: Invoke, tmp_path: Path) -> None:
    result = cli("replay", str(tmp_path / "missing.jsonl"))
    assert result.exit_code == 5
    assert "no capture at" in one_error_line(result)


def test_client_steps_are_placed_among_the_agents_lines() -> None:
    steps = client_steps(read_capture(CAPTURES / "sdk-scripted-edit-agent-v1-cancel.jsonl"))
    methods = [step.method for step in steps]
    assert methods[:3] == ["initialize", "session/new", "session/prompt"]
    assert "session/cancel" in methods
    cancel = steps[methods.index("session/cancel")]
    prompt = steps[2]
    assert not cancel.is_request
    assert prompt.after <= cancel.after < (prompt.answered_at or 0)
    assert steps[0].answered_at == 1


SESSIONS_AGENT = Path(__file__).parent.parent / "agents" / "sessions_agent.py"


def test_a_capture_of_several_sessions_replays_exactly(cli: Invoke, tmp_path: Path) -> None:
    """Two sessions of one agent, one forked, listed and closed: the replay opens each as
    the capture's client did, and every message matches."""
    record = tmp_path / "sessions.jsonl"
    workspace = tmp_path / "ws"
    workspace.mkdir()
    command = [sys.executable, str(SESSIONS_AGENT), "--offer", "list,close,fork"]

    async def record_it() -> None:
        async with acp_adapters.connect(
            command=command, cwd=workspace, record=record, unstable=True
        ) as first:
            second = await first.agent.new_session()
            await first.prompt("apples")
            await second.prompt("pears")
            forked = await second.fork()
            await forked.prompt("plums")
            await first.list_sessions()
            await second.close()

    anyio.run(record_it)
    assert acp_adapters.capture_sessions(record) == ["s-1", "s-2", "fork-1"]
    live = cli("replay", "--format", "json", str(record))
    assert live.exit_code == 0, live.stderr
    offline = cli("replay", "--offline", "--format", "json", str(record))
    assert _without_times(json.loads(live.stdout)) == _without_times(json.loads(offline.stdout))
    texts = [r.get("text") for r in json.loads(live.stdout) if r["kind"] == "assistant_message"]
    assert texts == ["s-1: apples"]  # the first session's timeline
