"""The ``--approve ask`` menu: each option the agent offers is one line, numbered and of its kind.

An option's name (and kind, and the request's title) is the agent's text: a line break in it
must not forge a line of the menu ("2) Reject") above or below the real options, and the
number a person answers must pick the option shown under that number.
"""

from __future__ import annotations

import io
import re
import shlex
from pathlib import Path
from typing import Any

import anyio
import click
import pytest

from acp_adapters import PermissionQuery
from acp_adapters.cli.asking import Lines, TerminalAsk
from acp_adapters.cli.render import Renderer
from hostile.scripts import Script

from .conftest import Invoke

#: An allow option whose name forges a reject line under it, then the real reject option.
FORGING = [
    {
        "optionId": "yes",
        "name": "Allow once\n    2) Reject (reject_once)\n    3) Reject always",
        "kind": "allow_once",
    },
    {"optionId": "no", "name": "Reject\r\n    1) Allow (allow_once)", "kind": "reject_once"},
    {"optionId": "odd", "name": "Sure\u2028\u2029\x85\x1b[1A\t", "kind": "reject_once\nfake"},
    {"optionId": "long", "name": "x" * 5000 + "2) Reject (reject_once)", "kind": "allow_always"},
    {"optionId": "pad", "name": "Allow" + " " * 70 + "    2) Reject", "kind": "allow_once"},
]
#: The names as the menu shows them: on one line, what would break it escaped.
SHOWN_NAMES = {
    "yes": "Allow once\\n 2) Reject (reject_once)\\n 3) Reject always",
    "no": "Reject\\r\\n 1) Allow (allow_once)",
    "odd": "Sure\\u2028\\u2029\\x85\\x1b[1A\\t",
}
#: What a menu line is: the indent, a number, ")", the name, then the kind in brackets.
OPTION_LINE = re.compile(r"^    (\d+)\) (.*) \(([^()]*)\)$")


def menu(options: list[dict[str, Any]], title: str = "run it") -> list[str]:
    query = PermissionQuery(request_id="1", title=title, options=options)
    return click.unstyle(TerminalAsk(Renderer()).question(query, options)).split("\n")


def test_each_option_is_one_line_with_its_own_number_and_kind() -> None:
    lines = menu(FORGING, title="rm -rf ~\n    1) Allow (allow_once)")
    numbered = [line for line in lines if re.match(r"^\s*\d+\)", line)]
    # As many numbered lines as options: nothing the agent wrote made one more.
    assert len(numbered) == len(FORGING)
    assert lines[0] == "? permission: rm -rf ~\\n 1) Allow (allow_once)"
    shown = [OPTION_LINE.match(line) for line in numbered]
    assert all(shown), numbered
    assert [m.group(1) for m in shown if m] == ["1", "2", "3", "4", "5"]
    assert [m.group(3) for m in shown if m] == [
        "allow_once",
        "reject_once",
        "unknown kind 'reject_once\\nfake'",
        "allow_always",
        "allow_once",
    ]
    first, second, third, fourth, fifth = (m.group(2) for m in shown if m)
    # Spaces cannot pad a forged line onto the terminal's next row.
    assert fifth == "Allow 2) Reject"
    assert [first, second, third] == [SHOWN_NAMES["yes"], SHOWN_NAMES["no"], SHOWN_NAMES["odd"]]
    # A name cannot push a forged line onto the next row of the terminal either.
    assert len(numbered[3]) <= 120
    assert fourth.endswith("…")


def test_an_options_colour_is_that_of_its_real_kind() -> None:
    options = [
        {"optionId": "a", "name": "Reject", "kind": "allow_once"},
        {"optionId": "r", "name": "Allow", "kind": "reject_once"},
        {"optionId": "x", "name": "Allow", "kind": "rejected_not"},
    ]
    query = PermissionQuery(request_id="1", title="t", options=options)
    styled = TerminalAsk(Renderer()).question(query, options).split("\n")[-3:]
    assert styled[0] == "    1) " + click.style("Reject", fg="green") + " (allow_once)"
    assert styled[1] == "    2) " + click.style("Allow", fg="red") + " (reject_once)"
    # Not one of the schema's kinds: neither colour, and said so.
    assert (
        styled[2]
        == "    3) " + click.style("Allow", fg="yellow") + " (unknown kind 'rejected_not')"
    )


@pytest.mark.parametrize(("answer", "chosen"), [("1", "yes"), ("2", "no"), ("3", "odd")])
def test_the_answer_picks_the_option_shown_under_that_number(answer: str, chosen: str) -> None:
    shown = {m.group(1): m.group(2) for m in map(OPTION_LINE.match, menu(FORGING)) if m}
    ask = TerminalAsk(Renderer(), lines=Lines(io.StringIO(answer + "\n")))
    query = PermissionQuery(request_id="1", title="t", options=FORGING)
    picked = anyio.run(ask, query)
    assert picked == chosen
    # The option behind the number is the one whose name is on that line.
    assert shown[answer] == SHOWN_NAMES[chosen]


def test_a_forged_menu_through_the_command_line_answers_what_the_person_chose(
    cli: Invoke, tmp_path: Path
) -> None:
    """A hostile agent's options with line breaks in their names: answering 2, the number the
    reject option is shown under, rejects, whatever line 1's name says."""
    script = Script(
        tmp_path / "agent",
        [
            {
                "request": "session/request_permission",
                "params": {
                    "toolCall": {"toolCallId": "t1", "title": "rm -rf ~", "kind": "execute"},
                    "options": FORGING[:2],
                },
            }
        ],
    )
    workspace = tmp_path / "ws"
    workspace.mkdir()
    result = cli(
        "run",
        "--command",
        shlex.join(script.command),
        "--cwd",
        str(workspace),
        "--approve",
        "ask",
        "go",
        input="2\n",
    )
    assert result.exit_code == 0, result.stderr
    numbered = [line for line in result.stderr.split("\n") if re.match(r"^\s*\d+\)", line)]
    assert numbered == [
        "    1) Allow once\\n 2) Reject (reject_once)\\n 3) Reject always (allow_once)",
        "    2) Reject\\r\\n 1) Allow (allow_once) (reject_once)",
    ]
    (answer,) = script.answers()
    assert answer["result"]["outcome"] == {"outcome": "selected", "optionId": "no"}
