"""docs/cli.md stays true: its sessions print what they show, its tables match the code.

Each ```` ```console ```` block of docs/cli.md is a shell session: lines that
start with ``$ `` are commands, the lines after one are what it prints (stdout
and stderr, as a terminal shows them). The block runs as one bash script from
the repository's root, and each command's output is compared with the block's.

The sessions run after the README's install, with nothing more: a fresh virtual
environment in a temporary folder, the project installed into it with ``pip install
--quiet <repository>`` (its runtime dependencies from the package index, no test
extra), its bin folder first on PATH (so ``acp-adapters`` and ``python`` are that
install's). A reader who installed the project so runs every example; the scripted
agents of tests/agents/ that the examples use need the standard library only.

After a change of the output, rewrite the blocks from the real commands (in such an
install too) with::

    python tests/cli/test_docs_cli.py --update
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from acp_adapters.cli import errors
from acp_adapters.cli.rows import FIELDS

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "cli.md"
README = ROOT / "README.md"
AGENTS = ROOT / "tests" / "agents"
BLOCK = re.compile(r"```console\n(?P<body>.*?)```\n", re.DOTALL)
MARK = "@@ acp-adapters docs: next command @@"
#: What may leak another Python's packages into the plain install's interpreter.
LEAKS = ("PYTHONPATH", "PYTHONHOME", "PYTHONUSERBASE", "VIRTUAL_ENV")


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


class InstallFailed(Exception):
    """The README's install did not work."""


def _environment() -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if key not in LEAKS}


def _plain_install(folder: Path) -> Path:
    """The bin folder of a new virtual environment in ``folder`` with the project installed
    as the README says (``pip install --quiet .``, nothing else)."""
    venv = folder / "venv"
    bin_folder = venv / ("Scripts" if os.name == "nt" else "bin")
    for step in (
        [sys.executable, "-m", "venv", str(venv)],
        [str(bin_folder / "pip"), "install", "--quiet", str(ROOT)],
    ):
        done = subprocess.run(
            step, env=_environment(), capture_output=True, text=True, timeout=900, check=False
        )
        if done.returncode != 0:
            raise InstallFailed(f"{' '.join(step)} failed:\n{done.stdout}{done.stderr}")
    return bin_folder


@pytest.fixture(scope="session")
def plain_install(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bin folder of the README's install, made once for the session's tests."""
    try:
        return _plain_install(tmp_path_factory.mktemp("plain-install"))
    except InstallFailed as failed:
        pytest.fail(str(failed), pytrace=False)


def _run(commands: list[str], bin_folder: Path, temporary: Path | None = None) -> list[str]:
    """Run the commands as one bash script, ``bin_folder`` first on PATH; what each printed.

    ``temporary`` is the script's TMPDIR (the folders ``mktemp -d`` makes go there).
    """
    script = "".join(f"echo '{MARK}'\n{command}\n" for command in commands)
    environment = {k: v for k, v in _environment().items() if k not in ("NO_COLOR", "COLUMNS")}
    environment["PATH"] = f"{bin_folder}{os.pathsep}{environment['PATH']}"
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
# The first of these tests waits for the install too (a virtual environment, a build, the
# dependencies from the package index).
@pytest.mark.timeout(900)
@pytest.mark.parametrize("session", SESSIONS, ids=lambda s: s[0][0][:60])
def test_each_command_prints_what_the_page_shows(
    session: list[tuple[str, str]], plain_install: Path, tmp_path: Path
) -> None:
    printed = _run([command for command, _ in session], plain_install, tmp_path)
    for (command, expected), got in zip(session, printed, strict=True):
        assert got == expected, command


def _agents_of_the_page() -> list[Path]:
    named = re.findall(r"tests/agents/(\w+\.py)", PAGE.read_text(encoding="utf-8"))
    return sorted({AGENTS / name for name in named})


def _imported(path: Path) -> set[str]:
    """The top-level modules a Python file imports, anywhere in it."""
    modules = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            modules.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules.add(node.module.split(".")[0])
    return modules


def test_the_agents_of_the_page_need_the_standard_library_only() -> None:
    """The scripted agents the sessions run import the standard library and each other alone,
    so that they work in the README's install whatever its dependencies (which the sessions
    check) happen to bring along."""
    agents = _agents_of_the_page()
    assert len(agents) >= 6
    for agent in agents:
        assert agent.is_file(), agent
        seen, waiting = set(), [agent]
        while waiting:  # the agent and the modules of tests/agents/ it imports
            module = waiting.pop()
            seen.add(module)
            for name in _imported(module):
                if (AGENTS / f"{name}.py").is_file():
                    waiting.extend({AGENTS / f"{name}.py"} - seen)
                else:
                    assert name in sys.stdlib_module_names, f"{module.name} imports {name}"


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
    """Rewrite each console block's outputs with what its commands print now, in the README's
    install."""
    text = PAGE.read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory(prefix="acp-adapters-docs-") as folder:
        try:
            bin_folder = _plain_install(Path(folder))
        except InstallFailed as failed:
            sys.exit(str(failed))

        def fill(block: re.Match[str]) -> str:
            pairs = _sessions(block.group(0))[0]
            printed = _run([command for command, _ in pairs], bin_folder)
            body = "".join(
                f"$ {command}\n{output}"
                for (command, _), output in zip(pairs, printed, strict=True)
            )
            return f"```console\n{body}```\n"

        PAGE.write_text(BLOCK.sub(fill, text), encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        sys.exit("usage: python tests/cli/test_docs_cli.py --update")
    _update()
