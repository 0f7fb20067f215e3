"""A command rule allows the program the user's PATH finds, and that program is what runs.

A rule ``echo *`` reads the command line ``echo hi``; the agent, which writes files in the
session's folders, may have put an ``echo`` of its own there and try to have it run instead:
through the ``PATH`` (or a variable that loads code into a program) in ``terminal/create``'s
``env``, through a relative path, or through a folder it picks as the command's cwd that a
relative entry of the user's PATH reads. None of these runs the agent's program.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_adapters import Policy, connect

from .scripts import Script

pytestmark = pytest.mark.anyio

FORBIDDEN = -32000


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Refusing:
    """An ``ask`` callback that refuses, and keeps what it was asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def __call__(self, query: Any) -> None:
        self.asked.append(query.action.command_line if query.action else str(query.title))
        return None


def plant(folder: Path, name: str, marker: Path) -> Path:
    """An executable of the agent's, in ``folder``, that leaves ``marker`` when it runs."""
    folder.mkdir(parents=True, exist_ok=True)
    program = folder / name
    program.write_text(f"#!/bin/sh\ntouch {marker}\necho planted\n", encoding="utf-8")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    return program


def run(command: str, *args: str, **params: Any) -> list[dict[str, Any]]:
    """A ``terminal/create`` step, then its exit and its output (when it was made)."""
    create: dict[str, Any] = {"command": command, **params}
    if args:
        create["args"] = list(args)
    return [
        {"request": "terminal/create", "params": create},
        {"request": "terminal/wait_for_exit", "params": {"terminalId": "$terminal"}},
        {"request": "terminal/output", "params": {"terminalId": "$terminal"}},
    ]


async def play(
    tmp_path: Path, steps: list[dict[str, Any]], rules: list[dict[str, Any]], ask: Any = None
) -> list[dict[str, Any]]:
    script = Script(tmp_path / "agent", steps)
    policy = Policy(name="ask", rules=rules)
    with anyio.fail_after(30):
        async with connect(
            command=script.command, cwd=tmp_path / "ws", policy=policy, ask=ask
        ) as session:
            await session.prompt("go")
    return script.answers()


def refused(answer: dict[str, Any]) -> str:
    error = answer.get("error")
    assert isinstance(error, dict), answer
    assert error["code"] == FORBIDDEN, error
    return str(error["message"])


ECHO = [{"decision": "allow", "command": ["echo *"]}]


@pytest.mark.parametrize(
    "variable",
    [
        "PATH",
        "LD_PRELOAD",
        "LD_LIBRARY_PATH",
        "DYLD_INSERT_LIBRARIES",
        "BASH_ENV",
        "ENV",
        "BASH_FUNC_echo%%",
        "SHELLOPTS",
        "PS4",
        "HOME",
        "GCONV_PATH",
    ],
)
async def test_an_allowed_command_never_runs_with_a_variable_that_changes_what_runs(
    tmp_path: Path, variable: str
) -> None:
    marker = tmp_path / "planted-ran"
    bin_folder = tmp_path / "ws" / ".bin"
    plant(bin_folder, "echo", marker)
    value = f"{bin_folder}{os.pathsep}{os.environ['PATH']}" if variable == "PATH" else "x"
    env = [{"name": variable, "value": value}]
    ask = Refusing()
    answers = await play(
        tmp_path,
        [*run("echo", "hi", env=env), *run("echo hi; echo there", env=env)],
        [{"decision": "allow", "command": ["echo *", "echo *; echo *"]}],
        ask,
    )
    creates = [a for a in answers if a["method"] == "terminal/create"]
    assert len(creates) == 2
    for answer in creates:
        assert variable in refused(answer)
    assert not marker.exists()
    assert ask.asked == []  # refused before anyone is asked: no answer would make it run


async def test_the_users_own_path_given_back_is_no_change(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    env = [{"name": "PATH", "value": os.environ["PATH"]}, {"name": "GREETING", "value": "hi"}]
    answers = await play(tmp_path, run("echo", "hi", env=env), ECHO)
    assert answers[2]["result"]["output"] == "hi\n"


async def test_a_relative_path_or_a_path_is_not_the_program_a_wildcard_names(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "planted-ran"
    workspace = tmp_path / "ws"
    plant(workspace, "echo", marker)
    plant(workspace / "bin", "echo", marker)
    ask = Refusing()
    rules = [{"decision": "allow", "command": ["echo *", "* hi", "*"]}]
    answers = await play(
        tmp_path,
        [
            {"request": "terminal/create", "params": {"command": "./echo", "args": ["hi"]}},
            {"request": "terminal/create", "params": {"command": "bin/echo", "args": ["hi"]}},
            {"request": "terminal/create", "params": {"command": f"{workspace}/echo hi"}},
            {"request": "terminal/create", "params": {"command": "PATH=bin echo hi"}},
        ],
        rules,
        ask,
    )
    assert [refused(a) for a in answers]
    # Not allowed by the rules: asked (and refused), never run.
    assert ask.asked == ["./echo hi", "bin/echo hi", f"{workspace}/echo hi", "PATH=bin echo hi"]
    assert not marker.exists()


async def test_a_relative_entry_of_the_users_path_is_not_read_from_the_agents_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The user's PATH starts with ``bin``, ``.`` and an empty entry (relative, all three):
    the agent runs ``echo`` and ``ls`` from a folder of its own choosing that has its own.
    What runs is the user's, found in the absolute folders of the PATH; a shell line's
    commands too (the shell is given the PATH without its relative entries)."""
    marker = tmp_path / "planted-ran"
    workspace = tmp_path / "ws"
    for folder in (workspace / "sub" / "bin", workspace / "sub"):
        plant(folder, "echo", marker)
        plant(folder, "ls", marker)
    monkeypatch.setenv("PATH", f"bin{os.pathsep}.{os.pathsep}{os.pathsep}{os.environ['PATH']}")
    answers = await play(
        tmp_path,
        [
            *run("echo", "hi", cwd=str(workspace / "sub")),
            *run("ls -d . && ls -d bin", cwd=str(workspace / "sub")),
        ],
        [{"decision": "allow", "command": ["echo *", "ls * && ls *"]}],
    )
    outputs = [a["result"]["output"] for a in answers if a["method"] == "terminal/output"]
    assert outputs == ["hi\n", ".\nbin\n"]
    assert not marker.exists()


async def test_a_relative_program_a_rule_names_is_the_session_folders(tmp_path: Path) -> None:
    """A rule ``./build.sh *`` names the session folder's build.sh: run from a subfolder the
    agent picked, ``./build.sh`` is another file, and the rule does not allow it."""
    workspace = tmp_path / "ws"
    marker = tmp_path / "deploy-ran"
    plant(workspace / "deploy", "build.sh", marker)
    safe = workspace / "build.sh"
    safe.write_text("#!/bin/sh\necho built\n", encoding="utf-8")
    safe.chmod(0o755)
    ask = Refusing()
    answers = await play(
        tmp_path,
        [
            *run("./build.sh", "--fast", cwd=str(workspace / "deploy")),
            *run("./build.sh", "--fast", cwd=str(workspace)),
        ],
        [{"decision": "allow", "command": ["./build.sh *"]}],
        ask,
    )
    assert refused(answers[0])
    assert ask.asked == ["./build.sh --fast"]
    assert not marker.exists()
    assert answers[-1]["result"]["output"] == "built\n"


async def test_a_program_the_users_path_does_not_find_is_refused_with_its_name(
    tmp_path: Path,
) -> None:
    (tmp_path / "ws").mkdir()
    answers = await play(
        tmp_path,
        [{"request": "terminal/create", "params": {"command": "no-such-program-here"}}],
        [{"decision": "allow", "kinds": ["execute"]}],
    )
    error = answers[0]["error"]
    assert "no-such-program-here" in error["message"]
    assert "PATH" in error["message"]


def _action(line: str, cwd: str) -> Any:
    from acp_adapters import ClientAction

    return ClientAction(kind="command", argv=("/bin/sh", "-c", line), command_line=line, cwd=cwd)


@pytest.mark.parametrize(
    ("glob", "line", "allows"),
    [
        ("* --version", "git --version", True),
        ("* --version", "./evil --version", False),
        ("* --version", "bin/evil --version", False),
        ("* --version", "/tmp/evil --version", False),
        ("* --version", "'./evil' --version", False),
        ("* --version", "PATH=bin git --version", False),
        ("*", "ls -la /tmp", True),  # a path among the arguments is no program
        ("/usr/bin/* *", "/usr/bin/git status", True),  # a path the rule spells out
        ("/usr/bin/* *", "/usr/bin/../../tmp/evil status", False),
        ("/usr/bin/* *", "/usr/bin/x/evil status", False),
        ("bin/* *", "bin/tool x", True),
        ("./build.sh *", "./build.sh --fast", True),
    ],
)
def test_a_wildcard_program_in_an_allow_rule_is_a_name_never_a_path(
    glob: str, line: str, allows: bool, tmp_path: Path
) -> None:
    from acp_adapters import PermissionRule

    roots = (str(tmp_path),)
    allow = PermissionRule(decision="allow", command=(glob,))
    assert allow.matches(_action(line, str(tmp_path)), roots) is allows
    # A rule that rejects (or asks) reads the line alone: it still matches.
    assert PermissionRule(decision="reject", command=(glob,)).matches(
        _action(line, str(tmp_path)), roots
    )


def test_a_relative_program_is_allowed_from_a_session_folder_only(tmp_path: Path) -> None:
    from acp_adapters import PermissionRule

    sub = tmp_path / "sub"
    sub.mkdir()
    allow = PermissionRule(decision="allow", command=("./build.sh *",))
    reject = PermissionRule(decision="reject", command=("./build.sh *",))
    roots = (str(tmp_path),)
    assert allow.matches(_action("./build.sh x", str(tmp_path)), roots)
    assert not allow.matches(_action("./build.sh x", str(sub)), roots)
    assert reject.matches(_action("./build.sh x", str(sub)), roots)
