"""A capture is untrusted: replaying one runs none of its code and sets none of its settings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from acp_adapters.cli.errors import Failure
from acp_adapters.cli.replaying import _check_status, _recorded_credentials, read_capture

from .conftest import Invoke


def _capture(path: Path, auth_vars: Any, seeded: str, marker: Path) -> Path:
    """A capture whose agent reads a Python module from the folder the replay seeds."""
    payload = f"open({str(marker)!r}, 'w').write('code of the capture ran')\n"
    methods = [{"id": "key", "name": "key", "type": "env_var", "vars": auth_vars}]
    lines = [
        {
            "dir": "client->agent",
            "t": 0,
            "msg": {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}},
        },
        {
            "dir": "agent->client",
            "t": 0,
            "msg": {
                "jsonrpc": "2.0",
                "id": 0,
                "result": {"protocolVersion": 1, "authMethods": methods},
            },
        },
        {
            "dir": "agent->client",
            "t": 0,
            "msg": {
                "jsonrpc": "2.0",
                "id": "r1",
                "method": "fs/read_text_file",
                "params": {"sessionId": "s", "path": f"<workspace>/{seeded}"},
            },
        },
        {
            "dir": "client->agent",
            "t": 0,
            "msg": {"jsonrpc": "2.0", "id": "r1", "result": {"content": payload}},
        },
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("auth_vars", "seeded"),
    [
        # Python imports from the folder it starts in: the replay agent runs in the seeded one.
        ([], "acp_adapters/__init__.py"),
        # A stand-in for a variable the capture names must not point Python elsewhere.
        ([{"name": "PYTHONPATH"}], "replay/acp_adapters/__init__.py"),
    ],
)
def test_a_replay_runs_no_code_of_the_capture(
    cli: Invoke, tmp_path: Path, auth_vars: Any, seeded: str
) -> None:
    marker = tmp_path / "ran"
    capture = _capture(tmp_path / "evil.jsonl", auth_vars, seeded, marker)
    result = cli("replay", "--match", "methods", "--timeout", "5", str(capture))
    assert not marker.exists(), result.stderr
    assert result.exit_code in (0, 1)


def test_stand_ins_are_set_only_for_plain_names_that_change_nothing_else(tmp_path: Path) -> None:
    names = ["MY_API_KEY", "PYTHONPATH", "LD_PRELOAD", "PATH", "NODE_OPTIONS", "A=B", "X\0Y", "", 5]
    capture = _capture(tmp_path / "c.jsonl", [{"name": n} for n in names], "x.txt", tmp_path / "m")
    assert _recorded_credentials(read_capture(capture)) == {"MY_API_KEY": "replay"}
    broken = _capture(tmp_path / "d.jsonl", 5, "x.txt", tmp_path / "m")  # "vars" not a list
    assert _recorded_credentials(read_capture(broken)) == {}


@pytest.mark.parametrize("status", [{"status": "running"}, None])
def test_a_replay_agent_that_stopped_before_the_end_fails_the_replay(
    tmp_path: Path, status: dict[str, str] | None
) -> None:
    file = tmp_path / "status.json"
    if status is not None:
        file.write_text(json.dumps(status))
    with pytest.raises(Failure, match="ended before the capture did"):
        _check_status(file, tmp_path / "c.jsonl", None, "exact")
    file.write_text(json.dumps({"status": "ok"}))
    _check_status(file, tmp_path / "c.jsonl", None, "exact")
