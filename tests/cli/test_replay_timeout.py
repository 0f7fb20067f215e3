"""``replay --timeout SECONDS``: a number of seconds a replay can wait, or a usage error."""

from __future__ import annotations

import pytest

from .conftest import SYNTHETIC, Invoke

CAPTURE = SYNTHETIC / "grok-write-new-file-v1.jsonl"


@pytest.mark.parametrize("seconds", ["1e10", "86401", "inf", "nan", "0", "-1"])
def test_a_timeout_out_of_range_is_a_usage_error(cli: Invoke, seconds: str) -> None:
    result = cli("replay", "--timeout", seconds, str(CAPTURE))
    assert result.exit_code == 2, result.output
    assert "Invalid value for '--timeout'" in result.stderr
    assert "Traceback" not in result.stderr


def test_the_longest_timeout_replays(cli: Invoke) -> None:
    result = cli("replay", "--match", "methods", "--timeout", "86400", str(CAPTURE))
    assert result.exit_code == 0, result.stderr
    assert "stop reason end_turn" in result.stdout
