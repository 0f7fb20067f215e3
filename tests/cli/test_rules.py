"""``acp-adapters run --rules FILE``: permission rules read before the ``--approve`` policy."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from .conftest import ROOT, Invoke, one_error_line

SDK_AGENT = shlex.join([sys.executable, str(ROOT / "tests" / "agents" / "sdk_agent.py")])
SMALL_EDITS = '[[rules]]\ndecision = "allow"\nkinds = ["edit"]\npaths = ["*.txt"]\nmax_lines = 20\n'


def _run(cli: Invoke, workspace: Path, prompt: str, *options: str, stdin: str = "") -> object:
    return cli(
        "run", "--command", SDK_AGENT, "--cwd", str(workspace), *options, prompt, input=stdin
    )


def test_a_rule_allows_a_small_edit_without_asking(
    cli: Invoke, workspace: Path, tmp_path: Path
) -> None:
    rules = tmp_path / "rules.toml"
    rules.write_text(SMALL_EDITS)
    result = _run(cli, workspace, "change", "--rules", str(rules))  # --approve ask
    assert result.exit_code == 0, result.stderr  # type: ignore[attr-defined]
    assert "? permission" not in result.stderr  # type: ignore[attr-defined]
    assert "    allow (allow_once)\n" in result.stdout  # type: ignore[attr-defined]
    assert (workspace / "existing.txt").read_text() == "alpha\nBETA changed\n"


def test_what_no_rule_matches_is_the_policys(cli: Invoke, workspace: Path, tmp_path: Path) -> None:
    rules = tmp_path / "rules.toml"
    rules.write_text(SMALL_EDITS)
    result = _run(cli, workspace, "rewrite", "--rules", str(rules), "--approve", "read-only")
    assert result.exit_code == 0, result.stderr  # type: ignore[attr-defined]
    assert "    deny (reject_once)\n" in result.stdout  # type: ignore[attr-defined]
    assert not (workspace / "big.txt").exists()
    result = _run(cli, workspace, "change", "--rules", str(rules), "--approve", "read-only")
    assert "    allow (allow_once)\n" in result.stdout  # type: ignore[attr-defined]
    assert (workspace / "existing.txt").read_text() == "alpha\nBETA changed\n"


def test_a_rule_that_asks_asks_on_the_terminal_under_any_policy(
    cli: Invoke, workspace: Path, tmp_path: Path
) -> None:
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps({"rules": [{"decision": "ask", "kinds": ["edit"]}]}))
    options = ("--rules", str(rules), "--approve", "full-access")
    result = _run(cli, workspace, "change", *options, stdin="2\n")
    assert result.exit_code == 0, result.stderr  # type: ignore[attr-defined]
    assert "? permission: Edit existing.txt\n" in result.stderr  # type: ignore[attr-defined]
    assert "    deny (reject_once)\n" in result.stdout  # type: ignore[attr-defined]
    assert (workspace / "existing.txt").read_text() == "alpha\nbeta\n"


@pytest.mark.parametrize(
    ("name", "text", "error"),
    [
        (
            "rules.json",
            '{"rules": [{"decision": "allow"}, {"decision": "allow", "max_lines": "x"}]}',
            "rules.json: rule 2: max_lines: ",
        ),
        ("rules.json", '{"rules": [{"decision": "always"}]}', "rules.json: rule 1: decision "),
        ("rules.toml", "[[rules]]\nkinds = ['edit']\n", "rules.toml: rule 1: no 'decision'"),
        ("rules.toml", "rules = 3\n", 'rules.toml: "rules" is a list of rules, not int'),
        ("rules.json", "{", "rules.json: is not valid JSON"),
    ],
)
def test_a_rules_file_that_is_wrong_is_a_usage_error(
    cli: Invoke, workspace: Path, tmp_path: Path, name: str, text: str, error: str
) -> None:
    rules = tmp_path / name
    rules.write_text(text)
    result = _run(cli, workspace, "change", "--rules", str(rules))
    assert result.exit_code == 2  # type: ignore[attr-defined]
    line = one_error_line(result)  # type: ignore[arg-type]
    assert line.startswith(f"Error: --rules {tmp_path}/")
    assert error in line
    assert (workspace / "existing.txt").read_text() == "alpha\nbeta\n"  # the agent never ran


def test_a_missing_rules_file_is_a_usage_error(cli: Invoke, workspace: Path) -> None:
    result = _run(cli, workspace, "change", "--rules", str(workspace / "none.json"))
    assert result.exit_code == 2  # type: ignore[attr-defined]
    assert "none.json: cannot be read" in one_error_line(result)  # type: ignore[arg-type]
