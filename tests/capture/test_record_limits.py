"""The recorder never writes a line its readers refuse: what the live connection took in is
read back from the capture, and what could not fit is said in its place."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from acp_adapters import _json
from acp_adapters.capture import recorder as recorder_module
from acp_adapters.capture.format import (
    CAPTURE_MAX_ELEMENTS,
    UNRECORDED,
    Unreadable,
    capture_values,
)
from acp_adapters.capture.recorder import CaptureRecorder
from acp_adapters.projection.traffic import project_capture

_LIMIT = _json.DEFAULT_MAX_ELEMENTS


def _update(values: list[int]) -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s", "update": {"sessionUpdate": "x", "_meta": {"v": values}}},
    }


def test_a_message_at_the_connections_value_limit_is_read_back(tmp_path: Path) -> None:
    # As many values as the live connection takes in one line: the line of the capture
    # holds a few more (its dir, t and msg), and is still read.
    values = [0] * (_json.DEFAULT_MAX_ELEMENTS - 20)
    while _json.too_many_elements(json.dumps(_update([*values, 0])).encode(), _LIMIT) is None:
        values.append(0)  # the most the live connection takes in one line
    assert _json.too_many_elements(json.dumps(_update(values)).encode(), _LIMIT) is None
    capture = tmp_path / "c.jsonl"
    recorder = CaptureRecorder(capture, workspace=str(tmp_path / "ws"))
    recorder("in", _update(values))
    recorder.close()
    ((_, read),) = list(capture_values(capture))
    assert not isinstance(read, Unreadable)
    assert len(read["msg"]["params"]["update"]["_meta"]["v"]) == len(values)


def test_a_message_whose_line_would_be_too_long_is_said_in_its_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recorder_module, "CAPTURE_MAX_LINE_BYTES", 1 << 18)
    capture = tmp_path / "c.jsonl"
    recorder = CaptureRecorder(capture, workspace=str(tmp_path / "ws"))
    big = {"jsonrpc": "2.0", "method": "session/update", "params": {"text": "é" * (1 << 18)}}
    recorder("in", big)
    recorder("in", _update([1, 2, 3]))
    recorder.close()
    lines = [json.loads(text) for text in capture.read_text(encoding="utf-8").splitlines()]
    assert lines[0]["dir"] == UNRECORDED
    assert (lines[0]["of"], lines[0]["bytes"]) == ("agent->client", len(json.dumps(
        {"dir": "agent->client", "t": lines[0]["t"], "msg": big}, ensure_ascii=False
    ).encode()))  # fmt: skip
    assert lines[1]["msg"] == _update([1, 2, 3])
    # Read with the limit it was written under, every line is taken; the projection says
    # what is missing.
    assert not any(
        isinstance(value, Unreadable)
        for _, value in capture_values(capture, max_line_bytes=1 << 18)
    )
    timeline = project_capture(capture)
    assert timeline.problems == [
        f"line 1: an event too large to record ({lines[0]['bytes']} bytes)"
    ]


def test_a_message_of_too_many_values_for_a_capture_is_said_in_its_place(tmp_path: Path) -> None:
    capture = tmp_path / "c.jsonl"
    recorder = CaptureRecorder(capture, workspace=str(tmp_path / "ws"))
    recorder("out", _update([0] * (CAPTURE_MAX_ELEMENTS + 10)))
    recorder.close()
    ((_, read),) = list(capture_values(capture))
    assert read["dir"] == UNRECORDED
    assert read["of"] == "client->agent"
