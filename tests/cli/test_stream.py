"""The streaming text of ``run``: the same blocks as the whole timeline, written as they come."""

from __future__ import annotations

import click
import pytest

from acp_adapters import AssistantMessageItem, FileChangeItem, ReasoningItem, UserMessageItem
from acp_adapters.cli.live import StreamPrinter
from acp_adapters.cli.render import Renderer
from acp_adapters.cli.rows import item_row

from .conftest import Invoke, agent_command


def _message(text: str) -> AssistantMessageItem:
    return AssistantMessageItem(id="message:m", ordinal=2, turn=1, text=text)


@pytest.mark.parametrize(
    "chunks",
    [
        ["hello", " world"],
        ["line one\n", "line two\n\n", "after a blank line\n"],
        ["\n", "a", "\n", "\n", "b", "\n\n\n"],
        ["one chunk with\nnewlines inside\n"],
    ],
)
def test_a_streamed_message_reads_like_its_block(
    chunks: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    printer = StreamPrinter(Renderer())
    text = ""
    for chunk in chunks:
        text += chunk
        printer.change(_message(text))
    printer.finish([_message(text)])
    expected = click.unstyle(Renderer().block(item_row(_message(text))))
    assert capsys.readouterr().out == expected + "\n"


def test_blocks_interrupt_a_stream_and_it_goes_on(capsys: pytest.CaptureFixture[str]) -> None:
    printer = StreamPrinter(Renderer())
    printer.change(UserMessageItem(id="prompt:1", ordinal=1, turn=1, text="go"))
    printer.change(_message("first part"))
    thought = ReasoningItem(id="message:t", ordinal=3, turn=1, text="hmm")
    printer.change(thought)
    change = FileChangeItem(id="tool:c", ordinal=4, turn=1, status="running", paths=("/a",))
    printer.change(change)  # not done: held back
    printer.change(_message("first part, and more"))
    done = change.model_copy(update={"status": "completed"})
    printer.finish([_message("first part, and more"), thought, done])
    assert capsys.readouterr().out == (
        "[1] user_message  completed\n"
        "    go\n"
        "\n"
        "[2] assistant_message  completed\n"
        "    first part\n"
        "\n"
        "[3] reasoning  completed\n"
        "    hmm\n"
        "\n"
        "[2] assistant_message  completed  (continued)\n"
        "    , and more\n"
        "\n"
        "[4] file_change  completed\n"
        "    modify /a  +0 -0\n"
    )


def test_a_flood_of_chunks_streams_into_one_block(cli: Invoke) -> None:
    result = cli("run", "--command", agent_command("flood", "500"), "go")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[3] == "[2] assistant_message  completed"
    assert lines[4] == "    " + "".join(f"{n} " for n in range(500))
    assert lines[-1].startswith("acp, protocol 1: 2 items in 1 turn")
