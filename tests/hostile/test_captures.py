"""Captures as untrusted files: lines cut at ``\\n`` only, regular files only, the live limits.

An agent's text may hold U+2028, U+2029 or U+0085, which ``str.splitlines`` takes as
line breaks: written as they are and read back with it, the line holding them falls
apart, and what follows one reads as a capture line of its own. A capture's path may
name a FIFO or ``/dev/zero``. A capture line may be as long, or hold as many values,
as the live connection would never read.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from acp_adapters import project_capture
from acp_adapters.capture.format import capture_values
from acp_adapters.capture.recorder import CaptureRecorder
from acp_adapters.errors import CaptureError
from acp_adapters.replay import read_capture
from capture_lines import one_turn

pytestmark = pytest.mark.anyio

HERE = Path(__file__).resolve().parent
FAKE_AGENT = HERE.parent / "agents" / "fake_agent.py"
#: A capture line an agent would like to slip into its own capture: the agent exiting.
FORGED = '{"dir": "exit", "t": 0, "code": 0, "stderr": "forged"}'
#: Text that splitlines() cuts in four places, with a forged line in between.
BREAKING = f"one\u2028{FORGED}\u2029two\x85three"


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\n")[:-1]


def said(text: str) -> dict[str, Any]:
    return {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}


def untimed(items: Any) -> list[dict[str, Any]]:
    return [
        {k: v for k, v in item.model_dump(mode="json").items() if not k.endswith("_at")}
        for item in items
    ]


# --- line breaks --------------------------------------------------------------------------


def test_the_recorder_escapes_what_other_readers_take_for_line_breaks(tmp_path: Path) -> None:
    path = tmp_path / "capture.jsonl"
    recorder = CaptureRecorder(path, workspace=tmp_path / "ws", home=tmp_path / "home")
    message = {"jsonrpc": "2.0", "method": "session/update", "params": {"text": BREAKING}}
    recorder("in", message)
    recorder("raw", BREAKING)
    recorder.close()
    text = path.read_text(encoding="utf-8")
    assert text.splitlines() == text.split("\n")[:-1]  # one line each, for any reader
    assert json.loads(text.splitlines()[0])["msg"] == message
    capture = read_capture(path)
    assert capture.warnings == []
    assert [entry.message for entry in capture.entries if entry.message] == [message]
    assert [entry.raw for entry in capture.entries if entry.raw] == [BREAKING]


async def test_an_agent_cannot_cut_its_capture_or_forge_a_line_of_it(
    connect: Any, tmp_path: Path
) -> None:
    """The fake agent echoes the prompt: its own message holds the breaks and the forged line."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    path = tmp_path / "capture.jsonl"
    async with connect(
        command=[sys.executable, str(FAKE_AGENT), "basic"], cwd=workspace, record=path
    ) as session:
        await session.prompt(BREAKING)
        live = untimed(session.timeline)
    capture = read_capture(path)
    assert capture.warnings == []
    assert [entry.direction for entry in capture.entries if entry.direction == "exit"] == []
    offline = project_capture(path)
    assert offline.problems == []
    assert untimed(offline) == live
    assert live[-1]["text"] == f"you said: {BREAKING}"


def test_a_foreign_capture_with_raw_line_separators_reads_whole(tmp_path: Path) -> None:
    """Another recorder may write U+2028 as it is (JSON allows it in a string)."""
    path = tmp_path / "foreign.jsonl"
    lines = [json.dumps(json.loads(line), ensure_ascii=False) for line in one_turn(said(BREAKING))]
    assert "\u2028" in lines[5]
    path.write_text("\r\n".join(lines) + "\r\n", encoding="utf-8")  # and Windows line ends
    capture = read_capture(path)
    assert capture.warnings == []
    assert len(capture.entries) == len(lines)
    timeline = project_capture(path)
    assert timeline.problems == []
    assert timeline.items[-1].text == BREAKING


# --- what a capture's path may name -------------------------------------------------------


def finished_within(seconds: float, work: Callable[[], Any], unblock: Callable[[], None]) -> Any:
    """``work()``'s result or exception, if it ends within ``seconds``; else fail (after
    ``unblock()``, so that no thread stays blocked)."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(work())
        except BaseException as error:
            outcome.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        unblock()
        thread.join(5)
        pytest.fail(f"still reading after {seconds} s")
    return outcome[0]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize(
    "reader",
    [read_capture, project_capture, lambda path: list(capture_values(path))],
    ids=["replay", "projection", "lines"],
)
def test_a_fifo_is_refused_at_once(tmp_path: Path, reader: Callable[[Path], Any]) -> None:
    fifo = tmp_path / "capture.jsonl"
    os.mkfifo(fifo)

    def unblock() -> None:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))

    outcome = finished_within(5, lambda: reader(fifo), unblock)
    assert isinstance(outcome, CaptureError), outcome
    assert "a FIFO, not a capture file" in str(outcome)


def test_a_device_is_refused() -> None:
    """``/dev/null`` here; ``/dev/zero``, which never ends, in a child with its memory bounded
    (below): a reader that took it would take all memory first."""
    if not os.path.exists("/dev/null"):
        pytest.skip("no /dev/null here")
    with pytest.raises(CaptureError, match="it is a character device, not a capture file"):
        read_capture("/dev/null")
    with pytest.raises(CaptureError, match="a character device"):
        project_capture("/dev/null")


def test_a_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CaptureError, match="it is a folder"):
        read_capture(tmp_path)


def _limit_memory() -> None:
    """In the child: at most 1 GiB of address space, so a reader that never stops fails."""
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


@pytest.mark.parametrize("mode", [["--offline"], ["--match", "methods"], []])
def test_the_command_line_ends_at_once_on_dev_zero(mode: list[str]) -> None:
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero here")
    done = subprocess.run(
        [sys.executable, "-m", "acp_adapters", "replay", *mode, "/dev/zero"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        preexec_fn=_limit_memory,
    )
    assert done.returncode == 5, done.stderr  # docs/cli.md: the capture cannot be read
    (line,) = done.stderr.splitlines()
    assert line.startswith("Error: cannot read capture '/dev/zero': it is a character device")


# --- the live connection's limits ---------------------------------------------------------


def test_a_line_longer_than_a_capture_line_may_be_is_left_out_with_a_warning(
    tmp_path: Path,
) -> None:
    # The live connection's limit, and room for what a capture line adds to its message.
    from acp_adapters.capture.format import CAPTURE_MAX_LINE_BYTES as LIMIT

    lines = one_turn(said("before"), said("x" * LIMIT), said(" after"))
    path = tmp_path / "long.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    capture = read_capture(path)
    assert capture.warnings == [f"line 7: longer than {LIMIT} bytes, left out"]
    timeline = project_capture(path)
    assert timeline.problems == [f"line 7: longer than {LIMIT} bytes"]
    assert timeline.items[-1].text == "before after"


def test_a_line_of_more_values_than_a_capture_line_may_hold_is_left_out(tmp_path: Path) -> None:
    from acp_adapters.capture.format import CAPTURE_MAX_ELEMENTS as LIMIT

    crowded = said("many")
    crowded["content"]["annotations"] = {"audience": [{}] * LIMIT}
    path = tmp_path / "crowded.jsonl"
    path.write_text("\n".join(one_turn(said("few"), crowded)) + "\n", encoding="utf-8")
    assert read_capture(path).warnings == [f"line 7: more than {LIMIT} values, left out"]
    timeline = project_capture(path)
    assert timeline.problems == [f"line 7: more than {LIMIT} values"]
    assert timeline.items[-1].text == "few"


def test_nan_in_a_capture_line_is_not_json(tmp_path: Path) -> None:
    lines = one_turn(said("kept"), said("dropped"))
    lines[6] = lines[6].replace('"t": 0.0', '"t": NaN')
    path = tmp_path / "nan.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert read_capture(path).warnings == ["line 7: not JSON, left out"]
    assert project_capture(path).items[-1].text == "kept"


def test_a_large_capture_is_read_a_line_at_a_time(tmp_path: Path) -> None:
    """Offline, memory follows the longest line (and the timeline), not the file."""
    path = tmp_path / "big.jsonl"
    noise = json.dumps({"dir": "agent->client(raw)", "t": 0.0, "raw": "log " + "x" * 4000})
    with path.open("w", encoding="utf-8") as handle:
        lines = one_turn(said("hello"))
        handle.write("\n".join(lines[:-1]) + "\n")
        for _ in range(24_000):  # about 96 MB of lines the agent printed
            handle.write(noise + "\n")
        handle.write(lines[-1] + "\n")
    size = path.stat().st_size
    measure = (
        "import resource, sys\n"
        "from acp_adapters.cli.replaying import replay_offline\n"
        "import acp_adapters.cli.commands\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "outcome = replay_offline(sys.argv[1], provider=None)\n"
        "after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "print(outcome.rows[-1]['text'], before * 1024, after * 1024)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", measure, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    text, before, after = done.stdout.split()
    assert text == "hello"
    assert int(after) - int(before) < size // 4, (size, before, after)
