"""docs/architecture.md stays the map of the code: its tables are read and checked against
the imports and the modules of ``framework/acp_adapters``.

* "Which folder imports which": each folder's row lists exactly the folders its modules
  import (type-only imports and those inside functions too), every one of them in an
  earlier row: the layers go downhill, and no folder imports one that imports it.
* "Layout": every folder has its row, and each row names every module of its folder.
* The one exception, where a folder names one above it: a ``_MOVED`` map (the names a
  folder kept for one release after they moved up, each imported by name from its new home
  when first used, with a deprecation warning). The page names each such map, and the
  folders it leads to that its row does not list; a map it does not name fails, as an
  import its row leaves out does.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "framework" / "acp_adapters"
PAGE = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
ROW = re.compile(r"^\| `(\w+)/` \| (.*) \|$", re.MULTILINE)


def _section(title: str) -> str:
    start = PAGE.index(f"## {title}")
    end = PAGE.find("\n## ", start + 1)
    return PAGE[start : end if end != -1 else None]


def _folders() -> list[str]:
    return sorted(
        path.name
        for path in PACKAGE.iterdir()
        if path.is_dir() and (path / "__init__.py").is_file()
    )


def _imported_folders(folder: str) -> set[str]:
    """The other folders of the package that the modules of ``folder`` import."""
    found: set[str] = set()
    for path in (PACKAGE / folder).rglob("*.py"):
        parts = list(path.relative_to(PACKAGE).parts[:-1])
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[list[str]] = []
            if isinstance(node, ast.ImportFrom) and node.level:
                base = parts[: len(parts) - (node.level - 1)]
                if node.module:
                    targets.append(base + node.module.split("."))
                else:  # ``from .. import name``: the names are the modules
                    targets += [[*base, alias.name] for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                "acp_adapters."
            ):
                targets.append((node.module or "").split(".")[1:])
            elif isinstance(node, ast.Import):
                targets += [
                    alias.name.split(".")[1:]
                    for alias in node.names
                    if alias.name.startswith("acp_adapters.")
                ]
            for target in targets:
                if target and target[0] != folder and (PACKAGE / target[0]).is_dir():
                    found.add(target[0])
    return found


def _moved(folder: str) -> dict[str, set[str]]:
    """The other folders that each module of ``folder`` names in its ``_MOVED`` map (module
    paths written out, ``acp_adapters.<folder>...``): where the names it kept moved to."""
    found: dict[str, set[str]] = {}
    for path in (PACKAGE / folder).rglob("*.py"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign):
                names, value = node.targets, node.value
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                names, value = [node.target], node.value
            else:
                continue
            if not any(isinstance(name, ast.Name) and name.id == "_MOVED" for name in names):
                continue
            homes = {
                constant.value.split(".")[1]
                for constant in ast.walk(value)
                if isinstance(constant, ast.Constant)
                and isinstance(constant.value, str)
                and constant.value.startswith("acp_adapters.")
            }
            homes = {home for home in homes - {folder} if (PACKAGE / home).is_dir()}
            if homes:
                found.setdefault(path.name, set()).update(homes)
    return found


#: How the page names a ``_MOVED`` map: "`store/moved.py`'s `_MOVED`".
MOVED_MAP = re.compile(r"`(\w+)/(\w+\.py)`'s `_MOVED`")


def _moved_on_the_page() -> dict[tuple[str, str], set[str]]:
    """Each ``_MOVED`` map the imports section names, and the folders its paragraph names."""
    said: dict[tuple[str, str], set[str]] = {}
    for paragraph in _section("Which folder imports which").split("\n\n"):
        for folder, module in MOVED_MAP.findall(paragraph):
            said[(folder, module)] = set(re.findall(r"`(\w+)/`", paragraph)) - {folder}
    return said


def _table(title: str) -> dict[str, str]:
    return {match[1]: match[2] for match in ROW.finditer(_section(title))}


IMPORTS = _table("Which folder imports which")


def test_the_imports_table_has_every_folder_once_in_a_downhill_order() -> None:
    order = [match[1] for match in ROW.finditer(_section("Which folder imports which"))]
    assert sorted(order) == _folders()
    assert len(order) == len(set(order))
    for position, folder in enumerate(order):
        listed = set(re.findall(r"`(\w+)/`", IMPORTS[folder]))
        later = listed - set(order[:position])
        assert not later, f"{folder}/ is said to import {sorted(later)}, not above it"


@pytest.mark.parametrize("folder", _folders())
def test_a_folder_imports_what_its_row_says(folder: str) -> None:
    listed = set(re.findall(r"`(\w+)/`", IMPORTS.get(folder, "")))
    assert _imported_folders(folder) == listed, (
        f"{folder}/ imports {sorted(_imported_folders(folder))}; "
        f"docs/architecture.md says {sorted(listed)}"
    )


@pytest.mark.parametrize("folder", _folders())
def test_a_folder_names_one_above_it_only_in_a_moved_map_the_page_names(folder: str) -> None:
    imported = set(re.findall(r"`(\w+)/`", IMPORTS.get(folder, "")))
    found = {
        (folder, module): homes - imported
        for module, homes in _moved(folder).items()
        if homes - imported  # a folder it imports anyway is no exception
    }
    said = {key: homes for key, homes in _moved_on_the_page().items() if key[0] == folder}
    assert found == said, f"{folder}/'s _MOVED maps name {found}; docs/architecture.md says {said}"


@pytest.mark.parametrize("folder", _folders())
def test_the_layout_names_every_module_of_a_folder(folder: str) -> None:
    row = _table("Layout").get(folder)
    assert row is not None, f"docs/architecture.md's Layout has no row for {folder}/"
    modules = sorted(p.name for p in (PACKAGE / folder).glob("*.py") if p.name != "__init__.py")
    missing = [name for name in modules if f"`{name}`" not in row]
    assert not missing, f"the Layout's row of {folder}/ does not name {missing}"


def test_the_checks_see_a_folder_that_imports_one_its_row_leaves_out() -> None:
    # The reading of imports itself: a module of cli/ imports the store, and the check
    # would see it missing from a row that left it out.
    assert "store" in _imported_folders("cli")
    assert "cli" not in _imported_folders("store")
    # And the reading of the maps: the store's names that moved up lead to history/, which
    # the store does not import.
    assert _moved("store") == {"moved.py": {"history"}}
    assert "history" not in _imported_folders("store")
