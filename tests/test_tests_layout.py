"""``tests/`` has the package's layout (docs/architecture.md, "Layout"): the tests of a folder of
``framework/acp_adapters`` are in ``tests/<folder>/``; at the top are only the tests of the package
as a whole; the other folders are the few that cut across the layers."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent
PACKAGE = TESTS.parent / "framework" / "acp_adapters"

#: The tests of the package as a whole, and of its top-level modules (``_json.py``, ``errors.py``).
WHOLE_PACKAGE = {
    "test_architecture.py",
    "test_code_rules.py",
    "test_docs.py",
    "test_errors.py",
    "test_errors_home.py",
    "test_json.py",
    "test_tests_layout.py",
}
#: The folders that cut across the layers.
CROSS_CUTTING = {"agents", "benchmarks", "contract", "data", "hostile", "peers", "providers"}


def _source_folders() -> set[str]:
    return {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}


def _test_folders() -> list[Path]:
    """The folders of ``tests/`` holding Python files (one left with only a cache is none)."""
    return sorted(
        p
        for p in TESTS.iterdir()
        if p.is_dir() and any(f.parent.name != "__pycache__" for f in p.rglob("*.py"))
    )


def test_only_tests_of_the_whole_package_are_at_the_top() -> None:
    at_top = {p.name for p in TESTS.glob("test_*.py")}
    assert at_top - WHOLE_PACKAGE == set(), "move them to tests/<the folder they test>/"


def test_each_folder_is_named_like_a_source_folder_or_cuts_across() -> None:
    strays = [p.name for p in _test_folders() if p.name not in _source_folders() | CROSS_CUTTING]
    assert strays == [], "a folder of tests/ is named like the source folder it tests"


def test_a_folder_of_tests_is_a_package() -> None:
    # Without one, two test files of one name in two folders would clash.
    missing = [
        p.name
        for p in _test_folders()
        if any(p.glob("test_*.py")) and not (p / "__init__.py").is_file()
    ]
    assert missing == []


def test_the_page_names_each_file_at_the_top_and_each_folder_across() -> None:
    page = (TESTS.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    layout = page[page.index("## Layout") : page.index("\n## ", page.index("## Layout"))]
    unnamed = [f for f in sorted(WHOLE_PACKAGE) if f"`{f}`" not in layout]
    unnamed += [f"{d}/" for d in sorted(CROSS_CUTTING) if f"`{d}/`" not in layout]
    assert unnamed == []
