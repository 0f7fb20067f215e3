"""What a command's item shows of its output, wherever the agent put it."""

from __future__ import annotations

from typing import Any

import pytest

from acp_adapters import command_item
from acp_adapters.testing import session, tool_call


@pytest.mark.parametrize(
    ("wire", "expected"),
    [
        # An empty ``output`` beside the real ``stdout``: the non-empty one is kept.
        ({"rawOutput": {"output": "", "stdout": "hello\n", "exit_code": 0}}, "hello\n"),
        ({"rawOutput": {"stdout": "", "aggregated_output": "both\n"}}, "both\n"),
        # Only in the content's text.
        (
            {
                "rawOutput": {"output": ""},
                "content": [{"type": "content", "content": {"type": "text", "text": "only here"}}],
            },
            "only here",
        ),
        ({"content": [{"type": "content", "content": {"type": "text", "text": "text"}}]}, "text"),
        # Empty everywhere: empty, not missing.
        ({"rawOutput": {"output": ""}}, ""),
        ({"rawOutput": {"output": "first", "stdout": "second"}}, "first"),
    ],
)
def test_the_output_that_says_something_is_kept(wire: dict[str, Any], expected: str) -> None:
    state = session()
    call = tool_call(kind="execute", state=state, rawInput={"command": "ls"}, **wire)
    item = command_item(state.tool_calls[call.id], state.view())
    assert item.output == expected
