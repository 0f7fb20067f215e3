"""The text timeline: one block per item, patches coloured, and a summary line.

Everything here returns strings styled with :func:`click.style`; ``click.echo``
drops the colours when the output is not a terminal (or ``NO_COLOR`` is set),
so the same text reads in a pipe. A block is a header line
(``[ordinal] kind  status  title``) and the item's body, indented::

    [5] file_change  completed  write README.md
        add README.md  +5 -0
        --- /dev/null
        +++ README.md
        @@ -0,0 +1,5 @@
        +# hello

Paths under the session's folder are shown relative to it, in headers and in
the patch's ``---``/``+++`` lines alike.

What the agent (or a capture) wrote goes through :func:`printable` before it is
styled: its control characters are shown as escapes, so that an agent's text
cannot move the cursor, clear the screen or set the terminal's title, nor, with
the bidirectional controls, show its text in another order than it is (a
command that reads harmless and runs otherwise), while this module's own colours
still work.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import click

INDENT = "    "

_STATUS_COLOURS = {
    "completed": "green",
    "failed": "red",
    "cancelled": "yellow",
    "waiting": "magenta",
    "running": "blue",
    "pending": "blue",
}
_PLAN_MARKS = {"completed": "[x]", "in_progress": "[>]", "pending": "[ ]"}
#: The kinds whose text the streaming output writes as it arrives.
STREAMED_KINDS = ("assistant_message", "reasoning")
#: The characters that change the order text is shown in, not its content: the
#: embeddings and overrides (U+202A-U+202E), the isolates (U+2066-U+2069), and the
#: marks (U+200E, U+200F, U+061C). A character class's body (see :data:`_CONTROLS`).
BIDI_CONTROLS = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
#: What a terminal acts on rather than shows: C0 controls but the line break and the
#: tab, DEL, C1 controls (an ``\x9b`` starts a command as ``ESC [`` does), and the
#: bidirectional controls.
_CONTROLS = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{BIDI_CONTROLS}]")
#: What every JSON output writes as ``\\uXXXX`` beside what ``json`` escapes itself: what a
#: terminal would act on (DEL, C1, the bidirectional controls), the line breaks some readers
#: take (U+2028, U+2029) and what UTF-8 cannot hold (lone surrogates).
_JSON_ESCAPED = re.compile(f"[\\ud800-\\udfff\\x7f-\\x9f{BIDI_CONTROLS}\\u2028\\u2029]")


def escaped_json(value: Any, *, indent: int | None = None) -> str:
    """``value`` as JSON for the terminal or a pipe: text as it is, but what a terminal would
    act on escaped (it reads back as the same string). Compact on one line without
    ``indent``. Outside strings JSON text is ASCII: every such character is inside one."""
    separators = None if indent is not None else (",", ":")
    text = json.dumps(value, indent=indent, ensure_ascii=False, separators=separators)
    return _JSON_ESCAPED.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


_SURROGATES = re.compile(r"[\ud800-\udfff]")


def printable(text: str) -> str:
    r"""``text`` as it is safe to print on a terminal: the same text, controls shown as escapes.

    A control character is written as Python writes it in a string (``\x1b`` for
    ESC, ``\r`` for a carriage return, ``\x9b``, ``\u202e`` for a right-to-left
    override); line breaks and tabs stay as they are. A lone surrogate (JSON can
    carry one, UTF-8 cannot) becomes U+FFFD, and a surrogate pair sent as two halves
    becomes its one character.
    """
    if _SURROGATES.search(text):
        text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return _CONTROLS.sub(_escape, text)


def _escape(control: re.Match[str]) -> str:
    char = control.group()
    if char == "\r":
        return "\\r"
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


#: The line breaks a terminal (or a reader of lines) starts a new line at, and a tab.
_BREAKS = {"\r\n": "\\r\\n", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\u0085": "\\x85",
           "\u2028": "\\u2028", "\u2029": "\\u2029"}  # fmt: skip
_BREAK = re.compile("\r\n|[\n\r\t\u0085\u2028\u2029]")


def single_line(text: str) -> str:
    """``text`` as :func:`printable` shows it, on one line: its line breaks and tabs written
    as escapes too (``\\n``). For what must not look like more than one line: a command
    line (an agent's ``echo x\\n1) Allow`` would forge a line of the ask menu), a path."""
    return _BREAK.sub(lambda match: _BREAKS[match.group()], printable(text))


def printable_value(value: Any) -> Any:
    """``value`` (a row, or any JSON value) with every string in it :func:`printable`, keys too."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {printable_value(key): printable_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [printable_value(item) for item in value]
    return value


@dataclass
class Renderer:
    """Renders rows as text, with paths under ``roots`` shown relative to them."""

    roots: tuple[str, ...] = ()
    _prefixes: tuple[str, ...] = field(init=False, default=())

    def __post_init__(self) -> None:
        # Longest first, so that a folder inside another is stripped whole.
        # Printable, as the paths they are compared with are.
        self._prefixes = tuple(
            sorted(
                {printable(root.rstrip("/")) + "/" for root in self.roots if root},
                key=len,
                reverse=True,
            )
        )

    def path(self, path: str) -> str:
        for prefix in self._prefixes:
            if path.startswith(prefix):
                return path[len(prefix) :]
        return path

    def paths_within(self, text: str) -> str:
        """``text`` (a title) with the paths under the roots in it shown relative to them.

        Agents name the file in a tool call's title (Grok Build: "Edit `/ws/app.py`").
        A root counts where a path starts, not inside a longer path.
        """
        for prefix in self._prefixes:
            text = re.sub(r"(?<![\w.~/-])" + re.escape(prefix), "", text)
        return text

    def header(self, row: dict[str, Any]) -> str:
        """``[ordinal] kind  status  title``."""
        row = printable_value(row)
        parts = [
            click.style(f"[{row['ordinal']}]", dim=True),
            click.style(str(row["kind"]), bold=True),
            click.style(str(row["status"]), fg=_STATUS_COLOURS.get(row["status"])),
        ]
        if row.get("replayed"):
            parts.append(click.style("replayed", dim=True))
        title = row["title"]
        if row["kind"] == "command_execution" and row["command"]:
            title = None  # the body shows the command itself
        if title:
            # One line: the agent's title cannot make the header look like more lines.
            parts.append(single_line(self.paths_within(self.path(str(title)))))
        return " ".join(parts[:2]) + "  " + "  ".join(parts[2:])

    def body(self, row: dict[str, Any]) -> list[str]:
        """The lines under the header, not yet indented."""
        row = printable_value(row)
        kind = row["kind"]
        if kind in ("user_message", "assistant_message", "reasoning"):
            return _text_lines(row["text"], dim=kind == "reasoning")
        if kind == "plan":
            return [
                f"{_PLAN_MARKS.get(entry['status'], '[?]')} {entry['content']}"
                for entry in row["entries"]
            ]
        if kind == "file_change":
            return self._file_change(row)
        if kind == "command_execution":
            shown = row["command"] or row["client_command"] or row["title"] or "(command)"
            lines = [click.style(f"$ {single_line(shown)}", bold=True)]
            if row["client_command"] and row["client_command"] != shown:
                # What the agent said it runs is not what the client ran: show both.
                ran = single_line(row["client_command"])
                lines.append(click.style(f"ran: {ran}", bold=True))
            if row["refused"]:
                lines.append(click.style(f"refused: {single_line(row['refused'])}", fg="red"))
            lines += _text_lines(row["output"])
            if row["exit_code"] is not None:
                colour = "green" if row["exit_code"] == 0 else "red"
                lines.append(click.style(f"exit {row['exit_code']}", fg=colour))
            return lines
        if kind in ("file_read", "search"):
            lines = _text_lines(row["text"])
            paths = ", ".join(self.path(p) for p in row["paths"])
            return lines + ([paths] if paths else [])
        if kind == "approval_request":
            return [self._answer(row)]
        if kind == "error":
            code = f" (code {row['code']})" if row["code"] is not None else ""
            return [click.style(f"{row['text']}{code}", fg="red")]
        return _text_lines(row["text"])  # fetch, tool, notice

    def block(self, row: dict[str, Any]) -> str:
        """The whole block of one item."""
        lines = [self.header(row)]
        lines += [INDENT + line if line else "" for line in self.body(row)]
        return "\n".join(lines)

    def timeline(self, rows: Iterable[dict[str, Any]]) -> str:
        """The blocks of every row, a blank line between two."""
        return "\n\n".join(self.block(row) for row in rows)

    def patch(self, patch: str) -> list[str]:
        """A unified patch's lines, coloured: ``+`` green, ``-`` red, ``@@`` cyan."""
        lines = []
        for line in printable(patch).rstrip("\n").split("\n"):
            if line.startswith(("--- ", "+++ ")):
                lines.append(click.style(line[:4] + self.path(line[4:]), bold=True))
            elif line.startswith("@@"):
                lines.append(click.style(line, fg="cyan"))
            elif line.startswith("+"):
                lines.append(click.style(line, fg="green"))
            elif line.startswith("-"):
                lines.append(click.style(line, fg="red"))
            else:
                lines.append(line)
        return lines

    def _file_change(self, row: dict[str, Any]) -> list[str]:
        operations: dict[str, str] = row["operations"]
        changed = ", ".join(
            f"{operations.get(path, 'modify')} {self.path(path)}" for path in row["paths"]
        )
        counts = (
            click.style(f"+{row['additions']}", fg="green")
            + " "
            + click.style(f"-{row['deletions']}", fg="red")
        )
        lines = [f"{changed or '(no path)'}  {counts}"]
        if row["patch_note"]:
            lines.append(click.style(str(row["patch_note"]), dim=True))
        if row["diff_str"] is not None:
            lines += self.patch(row["diff_str"])
        elif row["diff_omitted_reason"]:
            lines.append(click.style(f"(patch omitted: {row['diff_omitted_reason']})", dim=True))
        return lines

    def _answer(self, row: dict[str, Any]) -> str:
        if row["outcome"] == "selected":
            kind = str(row["option_kind"] or "")
            colour = "red" if kind.startswith("reject") else "green"
            return click.style(f"{row['option_id']} ({kind or 'selected'})", fg=colour)
        if row["outcome"] is not None:
            return click.style(str(row["outcome"]), fg="yellow")
        return click.style("waiting for an answer", fg="magenta")


def _text_lines(text: str | None, *, dim: bool = False) -> list[str]:
    if not text:
        return []
    lines = text.rstrip("\n").split("\n")
    return [click.style(line, dim=True) for line in lines] if dim else lines


def summary(
    rows: list[dict[str, Any]],
    *,
    provider: str,
    version: int,
    stop_reason: str | None,
) -> str:
    """One line: items and turns, file changes, commands, approvals, errors, why it stopped.

    ``grok, protocol 1: 9 items in 1 turn; 3 file changes (4 files, +14 -2), 1 approval;
    stop reason end_turn``
    """
    changes = [row for row in rows if row["kind"] == "file_change"]
    files = {path for row in changes for path in row["paths"]}
    additions = sum(row["additions"] for row in changes)
    deletions = sum(row["deletions"] for row in changes)
    turns = len({row["turn"] for row in rows if row["turn"]})
    counted = [_count(len(rows), "item") + f" in {_count(turns, 'turn')}"]
    details = []
    if changes:
        details.append(
            f"{_count(len(changes), 'file change')} ({_count(len(files), 'file')}, "
            + click.style(f"+{additions}", fg="green")
            + " "
            + click.style(f"-{deletions}", fg="red")
            + ")"
        )
    for kind, noun in (
        ("command_execution", "command"),
        ("approval_request", "approval"),
        ("error", "error"),
    ):
        number = sum(row["kind"] == kind for row in rows)
        if number:
            details.append(_count(number, noun))
    line = click.style(f"{printable(provider)}, protocol {version}:", bold=True)
    line += " " + "; ".join(counted)
    if details:
        line += "; " + ", ".join(details)
    if stop_reason:
        line += f"; stop reason {printable(stop_reason)}"
    return line


def session_line(session: dict[str, Any]) -> str | None:
    """What the agent reported of the session (:meth:`Timeline.session_json`), on one line:
    its title, the current mode, the context used and the cost; None if it reported none.

    ``title "Fixing the parser"; mode code; context 1,200 of 200,000 tokens (0.6%);
    cost 0.02 USD``
    """
    parts = []
    if session.get("title"):
        parts.append(f'title "{printable(str(session["title"]))}"')
    mode = session.get("current_mode")
    if mode is None:  # v2: the mode is the option of category mode
        mode = next(
            (
                option.get("current_value")
                for option in session.get("config_options") or ()
                if option.get("category") == "mode"
            ),
            None,
        )
    if mode is not None:
        parts.append(f"mode {printable(str(mode))}")
    usage = session.get("usage")
    if usage:
        used, size = usage["used"], usage["size"]
        context = f"context {used:,} of {size:,} tokens"
        if size:
            context += f" ({used / size:.1%})"
        parts.append(context)
        if usage.get("cost_amount") is not None:
            currency = printable(str(usage.get("cost_currency") or ""))
            parts.append(f"cost {usage['cost_amount']:g} {currency}".rstrip())
    return "; ".join(parts) if parts else None


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" + ("" if number == 1 else "s")
