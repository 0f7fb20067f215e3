"""``acp-adapters demo``: the bundled session, replayed by a real replay agent subprocess."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import acp_adapters.cli
from acp_adapters import project_capture
from acp_adapters.cli.replaying import DEMO_CAPTURE, demo_capture

from .conftest import ROOT, Invoke

EXPECTED_BLOCKS = [
    "[1] user_message  completed",
    "[2] reasoning  completed",
    "[3] plan  completed",
    "[4] assistant_message  completed",
    "[5] file_change  completed  write README.md",
    "[6] approval_request  completed  write README.md",
    "[7] file_change  completed  search_replace config.py",
    "[8] file_read  completed  read_file app.py",
    "[9] file_change  completed  apply_patch",
    "[10] assistant_message  completed",
]
SUMMARY = (
    "grok, protocol 1: 10 items in 1 turn; 3 file changes (4 files, +10 -2), 1 approval; "
    "stop reason end_turn"
)


def _check_demo_text(out: str) -> None:
    assert [line for line in out.splitlines() if line.startswith("[")] == EXPECTED_BLOCKS
    assert "    add README.md  +5 -0\n    --- /dev/null\n    +++ README.md\n" in out
    assert "    -PORT = 8080\n    +PORT = 8081\n" in out
    assert "    modify app.py, add greeting.py  +4 -1\n" in out
    assert "    +++ greeting.py\n    @@ -0,0 +1,2 @@\n    +def greet(port: int) -> str:\n" in out
    assert "    allow-always (allow_always)\n" in out
    assert SUMMARY in out.splitlines()


def test_demo(cli: Invoke) -> None:
    result = cli("demo")
    assert result.exit_code == 0, result.stderr
    _check_demo_text(result.stdout)
    assert result.stderr == ""


def test_demo_json_is_the_capture_projected(cli: Invoke) -> None:
    result = cli("demo", "--format", "json")
    assert result.exit_code == 0, result.stderr
    rows = json.loads(result.stdout)
    with demo_capture() as capture:
        timeline = project_capture(capture)
    assert [(r["kind"], r["status"], r["diff_str"]) for r in rows] == [
        (i.kind, i.status, getattr(i, "diff_str", None)) for i in timeline
    ]
    # The temporary folder is written as captures write it.
    assert rows[4]["paths"] == ["<workspace>/README.md"]
    assert rows[4]["patch_source"] == "client_fs"


def test_demo_colours_patches_on_a_terminal(cli: Invoke) -> None:
    result = cli("demo", color=True)
    assert "\x1b[32m+PORT = 8081\x1b[0m" in result.stdout
    assert "\x1b[31m-PORT = 8080\x1b[0m" in result.stdout
    assert "\x1b[36m@@ -1,3 +1,3 @@\x1b[0m" in result.stdout


@pytest.mark.parametrize(
    "command",
    [["acp-adapters", "demo"], [sys.executable, "-m", "acp_adapters", "demo"]],
    ids=["entry-point", "python-m"],
)
def test_the_installed_command(command: list[str], tmp_path: Path) -> None:
    """The installed entry point and ``python -m``, as a user runs them: plain text in a pipe."""
    if command[0] == "acp-adapters":
        found = shutil.which("acp-adapters", path=str(Path(sys.executable).parent))
        if found is None:
            pytest.skip("acp-adapters is not installed beside this interpreter")
        command = [found, *command[1:]]
    environment = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    started = time.monotonic()
    done = subprocess.run(
        command, capture_output=True, text=True, cwd=tmp_path, env=environment, timeout=60
    )
    elapsed = time.monotonic() - started
    # Wall time is reported, not asserted (machines are noisy): pytest -s shows it.
    print(f"{' '.join(command[-2:])}: {elapsed:.2f} s")
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout  # a pipe gets no colours
    _check_demo_text(done.stdout)


def test_the_bundled_capture_is_current() -> None:
    """tools/generate_demo.py --check: the bundled capture is what the generator writes."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "generate_demo.py"), "--check"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_bundled_capture_is_in_the_wheel() -> None:
    """Hatchling puts every file under a wheel package in the wheel, unless VCS-ignored.

    Under tox (a wheel install) the first check is the wheel's own.
    """
    installed = Path(acp_adapters.cli.__file__).parent / DEMO_CAPTURE
    assert installed.is_file()
    source = ROOT / "framework" / "acp_adapters" / "cli" / DEMO_CAPTURE
    assert source.is_file()
    # (tomllib is 3.11+: the few lines that matter are read as text)
    config = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    wheel = config.split("[tool.hatch.build.targets.wheel]")[1].split("\n[")[0]
    assert '"framework/acp_adapters",' in wheel
    if shutil.which("git") and (ROOT / ".git").exists():
        ignored = subprocess.run(
            ["git", "check-ignore", "-q", str(source.relative_to(ROOT))],
            cwd=ROOT,
            capture_output=True,
        )
        assert ignored.returncode == 1  # not ignored
    assert '[project.scripts]\nacp-adapters = "acp_adapters.cli.entry:main"\n' in config
    assert '    "click>=8.1",\n' in config.split("dependencies = [")[1].split("]")[0]


def test_python_m_help() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "acp_adapters", "--help"], capture_output=True, text=True
    )
    assert done.returncode == 0
    assert done.stdout.startswith("Usage: acp-adapters [OPTIONS] COMMAND [ARGS]...")
    for command in ("demo", "providers", "replay", "run"):
        assert f"  {command} " in done.stdout
