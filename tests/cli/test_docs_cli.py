"""docs/cli.md stays true: its sessions print what they show, its tables match the code.

Each ```` ```console ```` block of docs/cli.md is a shell session: lines that
start with ``$ `` are commands, the lines after one are what it prints (stdout
and stderr, as a terminal shows them). The block runs as one bash script from
the repository's root, with this interpreter's folder first on PATH (so
``acp-adapters`` and ``python`` are the ones under test), and each command's
output is compared with the block's.

After a change of the output, rewrite the blocks from the real commands with::

    python tests/cli/test_docs_cli.py --update
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from acp_adapters.cli import errors
from acp_adapters.cli.rows import FIELDS

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "cli.md"
README = ROOT / "README.md"
BLOCK = re.compile(r"```console\n(?P<body>.*?)```\n", re.DOTALL)
MARK = "@@ acp-adapters docs: next command @@"


def _sessions(text: str) -> list[list[tuple[str, str]]]:
    """Each console block as (command, expected output) pairs."""
    sessions = []
    for block in BLOCK.finditer(text):
        pairs: list[tuple[str, str]] = []
        for line in block["body"].splitlines(keepends=True):
            if line.startswith("$ "):
                pairs.append((line[2:].rstrip("\n"), ""))
            elif pairs:
                pairs[-1] = (pairs[-1][0], pairs[-1][1] + line)
        sessions.append(pairs)
    return sessions


def _run(commands: list[str], temporary: Path | None = None) -> list[str]:
    """Run the commands as one bash script; what each printed.

    ``temporary`` is the script's TMPDIR (the folders ``mktemp -d`` makes go there).
    """
    script = "".join(f"echo '{MARK}'\n{command}\n" for command in commands)
    environment = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS")}
    environment["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{environment['PATH']}"
    environment["PYTHONUNBUFFERED"] = "1"  # stdout and stderr interleave as on a terminal
    if temporary is not None:
        environment["TMPDIR"] = str(temporary)
    done = subprocess.run(
        ["bash", "-c", script],
        cwd=ROOT,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=120,
    )
    return done.stdout.split(f"{MARK}\n")[1:]


SESSIONS = _sessions(PAGE.read_text(encoding="utf-8"))


def test_the_page_has_sessions_for_every_command() -> None:
    commands = " ".join(command for session in SESSIONS for command, _ in session)
    for name in ("demo", "replay", "run", "providers"):
        assert f"acp-adapters {name}" in commands, name
    assert len(SESSIONS) >= 6


@pytest.mark.skipif(shutil.which("bash") is None, reason="the sessions are bash")
@pytest.mark.parametrize("session", SESSIONS, ids=lambda s: s[0][0][:60])
def test_each_command_prints_what_the_page_shows(
    session: list[tuple[str, str]], tmp_path: Path
) -> None:
    if shutil.which("acp-adapters", path=str(Path(sys.executable).parent)) is None:
        pytest.skip("acp-adapters is not installed beside this interpreter")
    printed = _run([command for command, _ in session], tmp_path)
    for (command, expected), got in zip(session, printed, strict=True):
        assert got == expected, command


def test_the_json_fields_are_documented_in_order() -> None:
    text = PAGE.read_text(encoding="utf-8")
    section = text.split("## The JSON format")[1].split("\n## ")[0]
    documented = re.findall(r"^\| `(\w+)` \|", section, re.MULTILINE)
    assert tuple(documented) == FIELDS


def test_the_exit_codes_are_documented() -> None:
    text = PAGE.read_text(encoding="utf-8")
    section = text.split("## Exit codes")[1].split("\n## ")[0]
    documented = {int(code) for code in re.findall(r"^\| (\d+) \|", section, re.MULTILINE)}
    codes = {value for name, value in vars(errors).items() if name.startswith("EXIT_")}
    assert documented == {0} | codes


def test_the_readme_starts_with_the_one_line_quick_start() -> None:
    text = README.read_text(encoding="utf-8")
    quick_start = text.split("## Quick start")[1].split("\n## ")[0]
    first = re.search(r"```sh\n(.*?)\n```", quick_start, re.DOTALL)
    assert first is not None
    assert first[1] == (
        "python3 -m venv .venv && .venv/bin/pip install --quiet . && .venv/bin/acp-adapters demo"
    )
    assert text.index("## Quick start") < text.index("## Test")
    assert "acp-adapters run" in quick_start
    assert "docs/cli.md" in quick_start


def test_the_readme_shows_lines_of_the_real_demo() -> None:
    """The README's excerpt of the demo: its lines, in order, in the page's tested demo output."""
    quick_start = README.read_text(encoding="utf-8").split("## Quick start")[1].split("\n## ")[0]
    excerpt = re.search(r"```text\n(.*?)```", quick_start, re.DOTALL)
    assert excerpt is not None
    demo = next(s for s in SESSIONS if s[0][0] == "acp-adapters demo")[0][1].splitlines()
    position = 0
    for line in excerpt[1].splitlines():
        if line == "...":
            continue
        position = demo.index(line, position) + 1


def _update() -> None:
    """Rewrite each console block's outputs with what its commands print now."""
    text = PAGE.read_text(encoding="utf-8")

    def fill(block: re.Match[str]) -> str:
        pairs = _sessions(block.group(0))[0]
        printed = _run([command for command, _ in pairs])
        body = "".join(
            f"$ {command}\n{output}" for (command, _), output in zip(pairs, printed, strict=True)
        )
        return f"```console\n{body}```\n"

    PAGE.write_text(BLOCK.sub(fill, text), encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        sys.exit("usage: python tests/cli/test_docs_cli.py --update")
    _update()
