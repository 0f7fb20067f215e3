"""The files a capture found, seeding a folder with them, and the recorded permission answers."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from acp_adapters import PermissionQuery, ToolCall
from acp_adapters.replay import recorded_answers, recorded_disk, seed_workspace, workspace_files

from .conftest import write_entries

DATA = Path(__file__).parent.parent / "data"
CAPTURES = DATA / "captures"

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("capture", "files"),
    [
        # read, then written, then read again: only the first read counts
        ("captures/kimi-cli-scripted-tools-v1", {"<workspace>/existing.txt": "alpha\nbeta\n"}),
        # new.txt was not found: it is not a file to seed
        ("captures/fast-agent-passthrough-tools-v1", {"<workspace>/existing.txt": "alpha\nbeta\n"}),
        ("captures/sdk-scripted-edit-agent-v1", {"<workspace>/existing.txt": "alpha\nbeta\n"}),
        ("captures/claude-agent-acp-fakellm-tools-v1", {}),  # the agent reads the disk itself
        ("synthetic/grok-search-replace-v1", {"<workspace>/notes.txt": "alpha\nbeta\ngamma\n"}),
    ],
)
def test_workspace_files_of_real_captures(capture: str, files: dict[str, str]) -> None:
    assert workspace_files(DATA / f"{capture}.jsonl") == files


def _read(request_id: int, path: str, **extra: object) -> list[dict[str, object]]:
    asked = {"jsonrpc": "2.0", "id": request_id, "method": "fs/read_text_file"}
    params = {"sessionId": "s", "path": path, **extra}
    return [
        {"dir": "agent->client", "msg": {**asked, "params": params}},
        {
            "dir": "client->agent",
            "msg": {"jsonrpc": "2.0", "id": request_id, "result": {"content": path}},
        },
    ]


def test_partial_reads_paths_outside_and_reads_after_a_write_do_not_count(tmp_path: Path) -> None:
    write = {"jsonrpc": "2.0", "id": 9, "method": "fs/write_text_file"}
    capture = write_entries(
        tmp_path / "c.jsonl",
        [
            *_read(1, "<workspace>/part.txt", line=2),
            *_read(2, "<workspace>/part.txt", limit=1),
            *_read(3, "<home>/.config/x"),
            *_read(4, "/etc/hosts"),
            *_read(5, "relative/file.txt"),
            {"dir": "agent->client", "msg": {**write, "params": {"path": "<workspace>/w.txt"}}},
            *_read(6, "<workspace>/w.txt"),
            *_read(7, "<workspace>/sub/dir/deep.txt"),
            *_read(8, "<workspace>/../escape.txt"),
        ],
    )
    assert workspace_files(capture) == {
        "relative/file.txt": "relative/file.txt",
        "<workspace>/sub/dir/deep.txt": "<workspace>/sub/dir/deep.txt",
        "<workspace>/../escape.txt": "<workspace>/../escape.txt",
    }
    folder = tmp_path / "ws"
    folder.mkdir()
    written = seed_workspace(capture, folder)
    real = Path(os.path.realpath(folder))
    assert sorted(written) == [real / "relative" / "file.txt", real / "sub" / "dir" / "deep.txt"]
    assert (folder / "sub" / "dir" / "deep.txt").read_text() == "<workspace>/sub/dir/deep.txt"
    assert not (tmp_path / "escape.txt").exists()  # it would lead out of the folder


def test_seeding_keeps_the_content_byte_for_byte(tmp_path: Path) -> None:
    capture = write_entries(tmp_path / "c.jsonl", _read(1, "<workspace>/crlf.txt"))
    lines = capture.read_text().replace(
        '"content": "<workspace>/crlf.txt"', '"content": "a\\r\\nb"'
    )
    capture.write_text(lines)
    seed_workspace(capture, tmp_path)
    assert (tmp_path / "crlf.txt").read_bytes() == b"a\r\nb"


def _query(request_id: str, tool_call_id: str | None) -> PermissionQuery:
    call = ToolCall(id=tool_call_id) if tool_call_id else None
    return PermissionQuery(request_id=request_id, tool_call=call)


async def test_recorded_answers_by_tool_call_then_by_order() -> None:
    ask = recorded_answers(CAPTURES / "codex-acp-fakellm-tools-v1.jsonl")
    assert await ask(_query("x", "call_3b2ee31e93")) == "approved"
    assert await ask(_query("y", None)) == "approved"  # the first one not used yet
    assert await ask(_query("z", "call_9d8a8d54cf")) is None  # both are used up


async def test_recorded_answers_of_a_refusal_and_of_a_cancel(tmp_path: Path) -> None:
    def asked(request_id: int, call: str) -> dict[str, object]:
        params = {"sessionId": "s", "toolCall": {"toolCallId": call}, "options": []}
        message = {"jsonrpc": "2.0", "id": request_id, "method": "session/request_permission"}
        return {"dir": "agent->client", "msg": {**message, "params": params}}

    def answered(request_id: int, outcome: dict[str, object]) -> dict[str, object]:
        message = {"jsonrpc": "2.0", "id": request_id, "result": {"outcome": outcome}}
        return {"dir": "client->agent", "msg": message}

    capture = write_entries(
        tmp_path / "c.jsonl",
        [
            asked(1, "a"),
            answered(1, {"outcome": "selected", "optionId": "reject"}),
            asked(2, "b"),
            answered(2, {"outcome": "cancelled"}),
            asked(3, "c"),  # never answered
        ],
    )
    ask = recorded_answers(capture)
    assert await ask(_query("1", "b")) is None
    assert await ask(_query("2", "a")) == "reject"
    assert await ask(_query("3", "c")) is None
    assert await ask(_query("4", "c")) is None


def test_recorded_disk_reads_each_path_in_the_order_recorded(tmp_path: Path) -> None:
    def disk(path: str, phase: str, content: str | None) -> dict[str, object]:
        return {
            "dir": "disk",
            "t": 0,
            "toolCallId": "e",
            "path": path,
            "phase": phase,
            "content": content,
        }

    capture = write_entries(
        tmp_path / "disk.jsonl",
        [
            disk("<workspace>/a.txt", "before", "one\n"),
            disk("<workspace>/b.txt", "before", None),
            disk("<workspace>/a.txt", "after", "see <workspace>/b.txt\n"),
            disk("<workspace>/b.txt", "after", "new\n"),
            disk("/etc/passwd", "before", "not a workspace file\n"),
        ],
    )
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "a.txt").write_text("on the disk\n")
    read = recorded_disk(capture, folder)
    assert read(f"{folder}/b.txt") is None  # no file as the edit started
    assert read(f"{folder}/a.txt") == "one\n"
    assert read(f"{folder}/a.txt") == f"see {folder}/b.txt\n"  # the marks are this folder
    assert read(f"{folder}/b.txt") == "new\n"
    # More reads than recorded, or a file outside the folder: nothing (the disk is not read).
    assert read(f"{folder}/a.txt") is None
    assert read("/etc/passwd") is None


def test_seeding_skips_paths_that_cannot_be_files_of_the_folder(tmp_path: Path) -> None:
    lines: list[dict[str, object]] = []
    paths = [
        "<workspace>/.",  # the folder itself
        "<workspace>/sub/..",
        "<workspace>/f",
        "<workspace>/f/g",  # under a file
        "<workspace>/n\0ul",
        "<workspace>/../outside",
        "<workspace>/ok.txt",
    ]
    for number, path in enumerate(paths):
        lines += _read(number, path)
    capture = write_entries(tmp_path / "odd.jsonl", lines)
    folder = tmp_path / "ws"
    folder.mkdir()
    written = seed_workspace(capture, folder)
    assert sorted(p.name for p in written) == ["f", "ok.txt"]
    assert not (tmp_path / "outside").exists()
