"""``acp-adapters replay --offline``: a capture's timeline without any process."""

from __future__ import annotations

import json
import re
from pathlib import Path

import click
import pytest

from acp_adapters import project_capture
from acp_adapters.cli.rows import FIELDS

from .conftest import CAPTURES, SYNTHETIC, Invoke, one_error_line

ALL_CAPTURES = sorted(CAPTURES.glob("*.jsonl")) + sorted(SYNTHETIC.glob("*.jsonl"))
HEADER = re.compile(r"^\[(\d+)\] (\w+)  (\w+)")


@pytest.mark.parametrize("capture", ALL_CAPTURES, ids=lambda p: p.stem)
def test_json_is_the_projection_row_by_row(cli: Invoke, capture: Path) -> None:
    result = cli("replay", "--offline", "--format", "json", str(capture))
    assert result.exit_code == 0, result.stderr
    rows = json.loads(result.stdout)
    timeline = project_capture(capture)
    assert len(rows) == len(timeline)
    for row, item in zip(rows, timeline, strict=True):
        assert tuple(row) == FIELDS
        assert (row["ordinal"], row["id"], row["kind"], row["status"]) == (
            item.ordinal,
            item.id,
            item.kind,
            item.status,
        )
        if item.kind == "file_change":
            assert row["diff_str"] == item.diff_str
            assert row["paths"] == list(item.paths)
            assert (row["additions"], row["deletions"]) == (item.additions, item.deletions)


@pytest.mark.parametrize("capture", ALL_CAPTURES, ids=lambda p: p.stem)
def test_text_has_one_block_per_item_then_the_summary(cli: Invoke, capture: Path) -> None:
    result = cli("replay", "--offline", str(capture))
    assert result.exit_code == 0, result.stderr
    timeline = project_capture(capture)
    headers = [HEADER.match(line) for line in result.stdout.splitlines()]
    found = [(int(m[1]), m[2], m[3]) for m in headers if m]
    assert found == [(item.ordinal, item.kind, item.status) for item in timeline]
    last = result.stdout.splitlines()[-1]
    assert last.startswith(f"{timeline.provider.id}, protocol {timeline.version}: ")
    assert f" {len(timeline)} item" in last
    for item in timeline.of_kind("file_change"):
        for line in (item.diff_str or "").splitlines():
            if line.startswith(("+", "-")) and not line.startswith(("+++", "---")):
                assert f"    {line}" in result.stdout


def test_patches_are_coloured_on_a_terminal(cli: Invoke) -> None:
    capture = SYNTHETIC / "grok-search-replace-v1.jsonl"
    result = cli("replay", "--offline", str(capture), color=True)
    assert "\x1b[31m-beta\x1b[0m" in result.stdout
    assert "\x1b[32m+BETA\x1b[0m" in result.stdout
    assert "\x1b[36m@@ -1,3 +1,3 @@\x1b[0m" in result.stdout
    plain = cli("replay", "--offline", str(capture))
    assert "\x1b" not in plain.stdout
    assert click.unstyle(result.stdout) == plain.stdout


def test_no_color_turns_colours_off(cli: Invoke) -> None:
    capture = SYNTHETIC / "grok-search-replace-v1.jsonl"
    result = cli("replay", "--offline", str(capture), color=True, env={"NO_COLOR": "1"})
    assert result.exit_code == 0
    assert "\x1b" not in result.stdout


def test_workspace_paths_are_shown_relative(cli: Invoke) -> None:
    result = cli("replay", "--offline", str(SYNTHETIC / "grok-apply-patch-v1.jsonl"))
    assert "    modify app.py, add util.py  +3 -1" in result.stdout
    assert "    --- app.py" in result.stdout
    assert "<workspace>" not in result.stdout


def test_provider_option(cli: Invoke) -> None:
    capture = SYNTHETIC / "grok-stale-report-v1.jsonl"
    as_grok = json.loads(cli("replay", "--offline", "--format", "json", str(capture)).stdout)
    generic = cli("replay", "--offline", "--format", "json", "--provider", "acp", str(capture))
    as_acp = json.loads(generic.stdout)
    assert [r["kind"] for r in as_grok] == [r["kind"] for r in as_acp]
    assert cli("replay", "--offline", str(capture)).stdout.splitlines()[-1].startswith("grok, ")
    text = cli("replay", "--offline", str(capture), "--provider", "acp").stdout
    assert text.splitlines()[-1].startswith("acp, protocol 1:")


def test_a_missing_capture(cli: Invoke, tmp_path: Path) -> None:
    result = cli("replay", "--offline", str(tmp_path / "nothing.jsonl"))
    assert result.exit_code == 5
    assert "no capture at" in one_error_line(result)
    assert result.stdout == ""


def test_a_file_that_is_not_a_capture(cli: Invoke, tmp_path: Path) -> None:
    path = tmp_path / "notes.jsonl"
    path.write_text("hello\n[1, 2]\n", encoding="utf-8")
    result = cli("replay", "--offline", str(path))
    assert result.exit_code == 5
    assert "is not a capture" in one_error_line(result)
    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(b"\xff\xfe\x00")
    assert cli("replay", "--offline", str(binary)).exit_code == 5
    assert cli("replay", "--offline", str(tmp_path)).exit_code == 5


def test_a_capture_error_has_a_traceback_with_debug(cli: Invoke, tmp_path: Path) -> None:
    result = cli("replay", "--offline", "--debug", str(tmp_path / "nothing.jsonl"))
    assert result.exit_code == 5
    assert "Traceback" in result.stderr
    assert "CaptureError" in result.stderr
    assert result.stderr.splitlines()[-1].startswith("Error: no capture at")
    result = cli("--debug", "replay", "--offline", str(tmp_path / "nothing.jsonl"))
    assert "Traceback" in result.stderr


def test_an_unknown_provider(cli: Invoke) -> None:
    capture = SYNTHETIC / "grok-apply-patch-v1.jsonl"
    result = cli("replay", "--offline", "--provider", "nobody", str(capture))
    assert result.exit_code == 2
    assert "'nobody'" in one_error_line(result)
    assert "acp-adapters providers" in result.stderr


def test_bad_lines_are_skipped(cli: Invoke, tmp_path: Path) -> None:
    source = (SYNTHETIC / "grok-apply-patch-v1.jsonl").read_text(encoding="utf-8")
    path = tmp_path / "damaged.jsonl"
    path.write_text(
        "not json\n" + source + '{"dir": "agent->client", "t": 9, "ms', encoding="utf-8"
    )
    result = cli("replay", "--offline", "--format", "json", str(path))
    assert result.exit_code == 0
    assert any(row["kind"] == "file_change" for row in json.loads(result.stdout))
    last = len(source.splitlines()) + 2
    assert result.stderr.splitlines() == [
        "Note: capture line 1: not JSON, left out",
        f"Note: capture line {last}: not JSON, left out",
    ]
    whole = cli(
        "replay", "--offline", "--format", "json", str(SYNTHETIC / "grok-apply-patch-v1.jsonl")
    )
    assert json.loads(whole.stdout) == json.loads(result.stdout)
    assert whole.stderr == ""
