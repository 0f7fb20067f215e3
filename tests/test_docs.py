"""The docs' examples run and print what the docs say they print."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

import acp_adapters

DOCS = Path(__file__).parent.parent / "docs"
EXAMPLE = re.compile(r"```python\n(?P<code>.*?)```\n\n```text\n(?P<output>.*?)```", re.DOTALL)


def _examples() -> list[tuple[str, str, str]]:
    found = []
    for page in [DOCS.parent / "README.md", *sorted(DOCS.rglob("*.md"))]:
        for number, match in enumerate(EXAMPLE.finditer(page.read_text(encoding="utf-8"))):
            found.append((f"{page.name}#{number}", match["code"], match["output"]))
    return found


@pytest.mark.parametrize(("name", "code", "output"), _examples(), ids=lambda v: str(v)[:40])
def test_example_prints_what_the_docs_show(name: str, code: str, output: str) -> None:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, name, "exec"), {})
    assert printed.getvalue() == output


def test_the_diff_page_has_examples() -> None:
    assert sum(name.startswith("diffs.md") for name, _, _ in _examples()) >= 4


def test_every_public_name_is_documented() -> None:
    text = "\n".join(page.read_text(encoding="utf-8") for page in DOCS.rglob("*.md"))
    for name in acp_adapters.__all__:
        assert f"`{name}" in text, name


def test_every_hook_is_documented_and_tested() -> None:
    from acp_adapters.plugin import hookspecs

    hooks_doc = (DOCS / "plugins" / "hooks.md").read_text(encoding="utf-8")
    tests = (Path(__file__).parent / "plugin" / "test_hooks.py").read_text(encoding="utf-8")
    names = [n for n, f in vars(hookspecs).items() if hasattr(f, "acp_adapters_spec")]
    assert len(names) >= 7
    for name in names:
        assert re.search(rf"^## {name}\(", hooks_doc, re.MULTILINE), name
        assert f"def test_hook_{name}" in tests, name


def test_tutorial_code_is_the_example_plugins_code() -> None:
    source = (
        DOCS / "examples" / "provider-plugin" / "acp_adapters_example" / "__init__.py"
    ).read_text()
    tutorial = (DOCS / "plugins" / "tutorial.md").read_text(encoding="utf-8")
    snippets = re.findall(r"# start: ([\w-]+)\n(.*?)# end: \1\n", source, re.DOTALL)
    assert len(snippets) == 2
    for _, code in snippets:
        assert f"```python\n{code}```" in tutorial
