"""Comparing what a live client sent with what a capture recorded.

A capture is portable: the session's folder is written ``<workspace>`` and the
home folder ``<home>``. A recorded value may also be ``"<any>"``, which matches
any value there (a value in an object or an item of an array; the key or item
must still be there). Everything else must be equal as JSON: the same keys,
the same number of items, equal strings and numbers, ``true`` is not ``1``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ..capture.format import HOME_MARK, WORKSPACE_MARK

#: A recorded value that matches any value.
ANY = "<any>"

_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*\Z")
#: How much of a value a report shows.
SHOWN_CHARACTERS = 80


@dataclass(frozen=True)
class Mismatch:
    """Where a live message differs from the recorded one, and how.

    ``path`` is a JSON path (``$.params.prompt[0].text``); ``expected`` is the
    recorded value with its marks filled in.
    """

    path: str
    expected: Any
    got: Any
    reason: str = "differs"

    def __str__(self) -> str:
        if self.reason == "missing":
            return f"{self.path}: missing (expected {shown(self.expected)})"
        if self.reason == "unexpected":
            return f"{self.path}: not expected (got {shown(self.got)})"
        return f"{self.path}: expected {shown(self.expected)}, got {shown(self.got)}"


def shown(value: Any) -> str:
    """A value as JSON, cut short for a one-line report."""
    text = json.dumps(value, ensure_ascii=False, default=repr)
    return text if len(text) <= SHOWN_CHARACTERS else text[: SHOWN_CHARACTERS - 3] + "..."


def fill_marks(value: Any, workspace: str | None, home: str | None = None) -> Any:
    """``value`` with ``<workspace>`` and ``<home>`` written as the live folders (keys too).

    A mark whose folder is not known (``None``) stays as it is.
    """
    if isinstance(value, str):
        if workspace is not None:
            value = value.replace(WORKSPACE_MARK, workspace)
        if home is not None:
            value = value.replace(HOME_MARK, home)
        return value
    if isinstance(value, dict):
        return {
            fill_marks(k, workspace, home): fill_marks(v, workspace, home) for k, v in value.items()
        }
    if isinstance(value, list):
        return [fill_marks(item, workspace, home) for item in value]
    return value


def compare(
    expected: Any,
    got: Any,
    workspace: str | None,
    *,
    home: str | None = None,
    path: str = "$",
) -> Mismatch | None:
    """The first difference between a recorded value and a live one, or None when they match.

    :param expected: the recorded value (``"<any>"`` anywhere matches anything there).
    :param got: the live value.
    :param workspace: the live session's folder, which ``<workspace>`` stands for.
    :param home: the live home folder, which ``<home>`` stands for.
    :param path: the JSON path of these values, for the report.
    """
    if expected == ANY:
        return None
    if isinstance(expected, dict):
        if not isinstance(got, dict):
            return Mismatch(path, fill_marks(expected, workspace, home), got)
        live = dict(got)
        for key, value in expected.items():
            live_key = fill_marks(key, workspace, home)
            where = _member(path, live_key)
            if live_key not in live:
                return Mismatch(where, fill_marks(value, workspace, home), None, "missing")
            found = compare(value, live.pop(live_key), workspace, home=home, path=where)
            if found is not None:
                return found
        for key, value in live.items():
            return Mismatch(_member(path, key), None, value, "unexpected")
        return None
    if isinstance(expected, list):
        if not isinstance(got, list):
            return Mismatch(path, fill_marks(expected, workspace, home), got)
        for index, (one, other) in enumerate(zip(expected, got, strict=False)):
            found = compare(one, other, workspace, home=home, path=f"{path}[{index}]")
            if found is not None:
                return found
        if len(expected) > len(got):
            index = len(got)
            return Mismatch(
                f"{path}[{index}]", fill_marks(expected[index], workspace, home), None, "missing"
            )
        if len(got) > len(expected):
            return Mismatch(f"{path}[{len(expected)}]", None, got[len(expected)], "unexpected")
        return None
    if isinstance(expected, str):
        filled = fill_marks(expected, workspace, home)
        return None if got == filled else Mismatch(path, filled, got)
    return None if _same_scalar(expected, got) else Mismatch(path, expected, got)


def _same_scalar(expected: Any, got: Any) -> bool:
    """Equal as JSON: ``true`` is not ``1``, and ``1`` is ``1.0``."""
    if isinstance(expected, bool) or isinstance(got, bool):
        return type(expected) is type(got) and expected == got
    if isinstance(expected, int | float) and isinstance(got, int | float):
        return expected == got
    return type(expected) is type(got) and bool(expected == got)


def _member(path: str, key: str) -> str:
    return f"{path}.{key}" if _IDENTIFIER.match(key) else f"{path}[{json.dumps(key)}]"
