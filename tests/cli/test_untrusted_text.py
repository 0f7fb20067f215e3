"""What an agent (or a capture) says reaches the terminal as text, never as terminal controls.

An agent's titles, messages, paths, command output and errors could otherwise set
the terminal's title, clear the screen or rewrite what was printed before; and a
lone surrogate (legal JSON) must not stop the output.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
from pathlib import Path
from typing import Any

import click
import pytest

from acp_adapters import (
    ApprovalRequestItem,
    AssistantMessageItem,
    CommandExecutionItem,
    ErrorItem,
    FetchItem,
    FileChangeItem,
    FileReadItem,
    NoticeItem,
    PlanItem,
    ReasoningItem,
    SearchItem,
    ToolItem,
    UserMessageItem,
)
from acp_adapters.cli.asking import TerminalAsk
from acp_adapters.cli.errors import Failure, explain
from acp_adapters.cli.live import StreamPrinter
from acp_adapters.cli.render import Renderer, printable, summary
from acp_adapters.cli.rows import dumps, item_row
from acp_adapters.plugin.permissions import PermissionQuery
from acp_adapters.timeline.items import PlanStep
from acp_adapters.transport import ConnectionClosed, RpcError
from capture_lines import one_turn

from .conftest import Invoke

HERE = Path(__file__).resolve().parent
#: Sets the window title (OSC), clears the screen (CSI), returns the cursor, and a C1 CSI.
EVIL = "a\x1b]0;owned\x07\x1b[2Jb\rc\x9b31m\x7f"
SHOWN = "a\\x1b]0;owned\\x07\\x1b[2Jb\\rc\\x9b31m\\x7f"
#: Any control character but a line break and a tab.
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
#: The colours this client adds itself (SGR only).
OUR_STYLES = re.compile(r"\x1b\[[0-9;]*m")


def _only_our_styles(text: str) -> str:
    """``text`` without this client's own colours; asserts nothing else controls the terminal."""
    plain = OUR_STYLES.sub("", text)
    assert not CONTROL.search(plain), repr(plain)
    return plain


def test_printable_escapes_controls_and_keeps_line_breaks_and_tabs() -> None:
    assert printable(EVIL) == SHOWN
    assert printable("one\n\ttwo\x00") == "one\n\ttwo\\x00"
    assert printable("plain é 漢字 😀") == "plain é 漢字 😀"
    # Lone surrogates become U+FFFD; a pair split in two is one character again.
    assert printable("x\ud800y") == "x\ufffdy"
    assert printable("\ud83d\ude00") == "😀"
    assert printable(printable(EVIL)) == SHOWN  # escaping twice changes nothing more


STEP = PlanStep(content=EVIL, priority="high", status="pending")
ITEMS = [
    UserMessageItem(ordinal=1, text=EVIL),
    AssistantMessageItem(ordinal=2, text=EVIL),
    ReasoningItem(ordinal=3, text=EVIL),
    PlanItem(ordinal=4, entries=(STEP,)),
    FileChangeItem(
        ordinal=5,
        title=EVIL,
        paths=(f"/ws/{EVIL}",),
        operations={f"/ws/{EVIL}": "modify"},
        diff_str=f"--- /ws/{EVIL}\n+++ /ws/{EVIL}\n@@ -1 +1 @@\n-{EVIL}\n+{EVIL}\n {EVIL}\n",
        patch_note=EVIL,
    ),
    CommandExecutionItem(ordinal=7, command=EVIL, output=EVIL, exit_code=1),
    CommandExecutionItem(ordinal=8, title=EVIL, output=EVIL),
    FileReadItem(ordinal=9, title=EVIL, paths=(f"/ws/{EVIL}",)),
    SearchItem(ordinal=10, title=EVIL, query=EVIL, paths=(EVIL,)),
    FetchItem(ordinal=11, title=EVIL, url=EVIL),
    ToolItem(ordinal=12, title=EVIL, text=EVIL),
    ApprovalRequestItem(ordinal=13, title=EVIL, outcome="selected", option_id=EVIL),
    ApprovalRequestItem(ordinal=14, title=EVIL, outcome=EVIL),
    NoticeItem(ordinal=15, title=EVIL, text=EVIL),
    ErrorItem(ordinal=16, message=EVIL, code=-1),
]


@pytest.mark.parametrize("item", ITEMS, ids=lambda item: f"{item.ordinal}-{item.kind}")
def test_every_agent_string_of_a_block_is_shown_escaped(item: Any) -> None:
    block = Renderer(roots=("/ws",)).block(item_row(item))
    plain = _only_our_styles(block)
    assert SHOWN in plain


def test_our_colours_still_show() -> None:
    change = FileChangeItem(
        ordinal=1, paths=("/ws/a",), diff_str="--- a\n+++ a\n@@ -1 +1 @@\n-x\n+y\n"
    )
    block = Renderer().block(item_row(change))
    assert click.style("+y", fg="green") in block
    assert click.style("completed", fg="green") in block


def test_the_summary_line_escapes_the_stop_reason() -> None:
    line = summary([], provider="p", version=1, stop_reason=EVIL)
    assert SHOWN in _only_our_styles(line)


@pytest.mark.parametrize(
    "chunks",
    [
        [EVIL],
        ["a\x1b", "]0;x\x07b\n", "\x1b[2J"],
        # A character split between two chunks, as a JavaScript agent may cut its text.
        ["smile \ud83d", "\ude00 and \ud800 alone"],
    ],
)
def test_a_streamed_message_is_escaped_as_its_block(
    chunks: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    printer = StreamPrinter(Renderer())
    text = ""
    for chunk in chunks:
        text += chunk
        printer.change(AssistantMessageItem(id="message:m", ordinal=1, text=text))
    item = AssistantMessageItem(id="message:m", ordinal=1, text=text)
    printer.finish([item])
    out = capsys.readouterr().out
    assert _only_our_styles(out) == click.unstyle(Renderer().block(item_row(item))) + "\n"


def test_a_question_shows_the_agents_words_escaped() -> None:
    query = PermissionQuery(
        request_id="1",
        title=EVIL,
        options=({"optionId": EVIL, "kind": EVIL}, {"optionId": "no", "name": EVIL}),
    )
    question = TerminalAsk(Renderer()).question(query, list(query.options))
    plain = _only_our_styles(question)
    assert plain.count(SHOWN) == 4


@pytest.mark.parametrize(
    "error",
    [
        ConnectionClosed("closed", 3, "Traceback\nboom \x1b]0;owned\x07\x1b[2J\n"),
        RpcError(-32603, EVIL),
        Failure(f"the replay went otherwise: {EVIL}"),
        ValueError(EVIL),
    ],
    ids=lambda error: type(error).__name__,
)
def test_an_error_line_shows_the_agents_words_escaped(error: BaseException) -> None:
    _code, line = explain(error)
    assert not CONTROL.search(line), repr(line)
    assert "\\x1b]0;owned\\x07" in line


def _capture(tmp_path: Path, *updates: dict[str, Any]) -> Path:
    """A capture of one turn: the prompt, the agent's ``updates``, the end of the turn."""
    path = tmp_path / "capture.jsonl"
    path.write_text("\n".join(one_turn(*updates)) + "\n", encoding="utf-8")
    return path


def _message(text: str) -> dict[str, Any]:
    return {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}


def test_a_replay_on_a_terminal_shows_escapes_not_controls(cli: Invoke, tmp_path: Path) -> None:
    command = {
        "sessionUpdate": "tool_call",
        "toolCallId": "t1",
        "title": EVIL,
        "kind": "execute",
        "status": "completed",
        "rawInput": {"command": EVIL},
    }
    capture = _capture(tmp_path, _message(EVIL), command)
    result = cli("replay", "--offline", str(capture), color=True)  # colours: as on a terminal
    assert result.exit_code == 0, result.stderr
    plain = _only_our_styles(result.stdout)
    assert plain.count(SHOWN) >= 2


def test_a_lone_surrogate_is_printed_in_json_and_text(cli: Invoke, tmp_path: Path) -> None:
    capture = _capture(tmp_path, _message("bad \ud800 but é"))
    as_json = cli("replay", "--offline", "--format", "json", str(capture))
    assert as_json.exit_code == 0, as_json.stderr
    assert as_json.stderr == ""
    rows = json.loads(as_json.stdout)
    assert rows[-1]["text"] == "bad \ud800 but é"
    assert '"bad \\ud800 but é"' in as_json.stdout  # other text stays as it is
    as_text = cli("replay", "--offline", str(capture))
    assert as_text.exit_code == 0, as_text.stderr
    assert "    bad \ufffd but é\n" in as_text.stdout


def test_json_of_rows_is_always_utf8() -> None:
    rows = [item_row(AssistantMessageItem(text="é 😀 \udfff \\ \ud800"))]
    text = dumps(rows)
    text.encode("utf-8")
    assert json.loads(text)[0]["text"] == "é 😀 \udfff \\ \ud800"
    assert '"é 😀 \\udfff \\\\ \\ud800"' in text


def test_a_live_agent_streaming_escapes(cli: Invoke) -> None:
    command = shlex.join([sys.executable, str(HERE / "hostile_agent.py"), "escapes"])
    result = cli("run", "--command", command, "go", color=True)
    assert result.exit_code == 0, result.stderr
    plain = _only_our_styles(result.stdout)
    assert "    safe then \\x1b]0;owned\\x07\\x1b[2Jcleared\n" in plain


def test_the_note_of_a_replayed_error_shows_escapes(cli: Invoke, tmp_path: Path) -> None:
    capture = _capture(tmp_path)
    lines = capture.read_text(encoding="utf-8").splitlines()
    error = {"code": -32603, "message": f"model {EVIL} down"}
    lines[-1] = json.dumps(
        {"dir": "agent->client", "t": 0.0, "msg": {"jsonrpc": "2.0", "id": 2, "error": error}}
    )
    capture.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = cli("replay", "--match", "methods", str(capture), color=True)
    assert result.exit_code == 0, result.stderr
    note = result.stderr.splitlines()[0]
    assert note.startswith("Note: the recorded session ended with an error: model a\\x1b]0;owned")
    assert not CONTROL.search(note), repr(note)


#: Text shown in another order than it is: "rm -rf ~ #" reads "# ~ fr- mr" under an
#: override; embeddings, isolates and the marks move text too.
BIDI = (
    "ls \u202e# ~ fr- mr\u202c \u2066x\u2069 \u2067y\u2068z\u2069 "
    "\u202a\u202b\u202d \u200e\u200f\u061c"
)
BIDI_SHOWN = (
    "ls \\u202e# ~ fr- mr\\u202c \\u2066x\\u2069 \\u2067y\\u2068z\\u2069 "
    "\\u202a\\u202b\\u202d \\u200e\\u200f\\u061c"
)
#: Every character that reorders text.
REORDERING = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def test_printable_escapes_the_bidirectional_controls() -> None:
    assert printable(BIDI) == BIDI_SHOWN
    assert printable(printable(BIDI)) == BIDI_SHOWN
    # Right-to-left text itself is text: only the controls are escaped.
    assert printable("שלום مرحبا") == "שלום مرحبا"


def _with_bidi(item: Any) -> Any:
    """``item`` with BIDI wherever it has EVIL (the agent's strings)."""

    def swap(value: Any) -> Any:
        if isinstance(value, str):
            return value.replace(EVIL, BIDI)
        if isinstance(value, dict):
            return {swap(key): swap(inner) for key, inner in value.items()}
        if isinstance(value, list | tuple):
            return [swap(inner) for inner in value]
        return value

    return type(item).model_validate(swap(item.model_dump()))


@pytest.mark.parametrize("item", ITEMS, ids=lambda item: f"{item.ordinal}-{item.kind}")
def test_every_agent_string_of_a_block_shows_bidirectional_controls_escaped(item: Any) -> None:
    block = Renderer(roots=("/ws",)).block(item_row(_with_bidi(item)))
    assert not REORDERING.search(block), repr(block)
    assert BIDI_SHOWN in _only_our_styles(block)


def test_json_output_escapes_what_a_terminal_acts_on_and_reads_back_the_same() -> None:
    text = f"{BIDI} \x9b31m \x7f \x85 \u2028 \u2029 é"
    rows = [item_row(AssistantMessageItem(text=text))]
    written = dumps(rows)
    assert not REORDERING.search(written)
    assert not re.search("[\x7f-\x9f\u2028\u2029]", written), repr(written)
    assert json.loads(written)[0]["text"] == text
    assert "\\u202e# ~ fr- mr\\u202c" in written
    assert "\\u009b31m" in written
    assert " é" in written  # other text as it is


def test_a_replay_shows_a_reordered_command_escaped(cli: Invoke, tmp_path: Path) -> None:
    command = {
        "sessionUpdate": "tool_call",
        "toolCallId": "t1",
        "title": BIDI,
        "kind": "execute",
        "status": "completed",
        "rawInput": {"command": BIDI},
    }
    capture = _capture(tmp_path, _message(BIDI), command)
    for output in ("text", "json"):
        result = cli("replay", "--offline", "--format", output, str(capture), color=True)
        assert result.exit_code == 0, result.stderr
        assert not REORDERING.search(result.stdout), repr(result.stdout)
    assert BIDI_SHOWN in cli("replay", "--offline", str(capture)).stdout


FORGED = "ls\n    2) Allow always (allow_always)\r\n\u2028x\u0085y\tz"


def test_a_command_line_a_path_or_a_title_cannot_look_like_more_lines() -> None:
    # An agent's command line, the cwd it names, a title: each shown on its one line, so
    # that nothing it says reads as a line of the ask menu or of the timeline.
    from acp_adapters.plugin.permissions import ClientAction

    command = CommandExecutionItem(
        turn=1, command=FORGED, client_command=FORGED + " more", refused=FORGED
    )
    titled = ToolItem(turn=1, title=FORGED)
    for item in (command, titled):
        block = click.unstyle(Renderer().block(item_row(item)))
        assert not any(line.lstrip().startswith("2)") for line in block.splitlines()), block
    action = ClientAction(kind="command", argv=("ls",), command_line=FORGED, cwd=FORGED)
    query = PermissionQuery(request_id="client-action-1", title="run ls", action=action)
    asking = TerminalAsk(Renderer())
    preview = asking._action_preview(action)
    assert len(preview) == 2
    assert all("\n" not in line and "\u2028" not in line for line in preview)
    question = click.unstyle(asking.question(query, list(query.options)))
    assert not any(line.lstrip().startswith("2) Allow always") for line in question.splitlines())
