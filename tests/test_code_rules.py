"""The code reads as a newcomer expects: no import circle among the live client's modules, and
no module reaching into the private members of another module's objects."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "framework" / "acp_adapters"
CLIENT = PACKAGE / "client"
#: Names a module may read off an object other than itself: the standard library's own
#: (``os._exit``, a named tuple's ``_replace``).
_STANDARD = {"_exit", "_getframe", "_replace"}


def _modules() -> dict[str, ast.Module]:
    return {path.stem: ast.parse(path.read_text()) for path in sorted(CLIENT.glob("*.py"))}


def _own_names(tree: ast.Module) -> set[str]:
    """The private names a module defines itself: its functions, classes and methods, and
    the attributes it sets (``self._x = ...``): an object of its own class may be read so."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


def _type_only(tree: ast.Module) -> set[int]:
    """The lines of the ``if TYPE_CHECKING:`` blocks: imports for annotations only."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                lines.update(range(inner.lineno, (inner.end_lineno or inner.lineno) + 1))
    return lines


def _deprecation_shims(tree: ast.Module) -> set[int]:
    """The lines of a module's ``__getattr__``: the old homes of moved names, for one release."""
    lines: set[int] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "__getattr__":
            lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return lines


def imports_at_run_time(modules: dict[str, ast.Module]) -> dict[str, set[str]]:
    """Which client modules each client module imports when it runs (at its top, or inside a
    function), leaving out imports for annotations only."""
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, tree in modules.items():
        skipped = _type_only(tree) | _deprecation_shims(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.lineno not in skipped:
                if node.module is None:
                    graph[name].update(a.name for a in node.names if a.name in modules)
                elif node.module.split(".")[0] in modules:
                    graph[name].add(node.module.split(".")[0])
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every import circle of the graph, each once, as the modules it goes through."""
    found: list[list[str]] = []
    seen: set[frozenset[str]] = set()

    def walk(path: list[str]) -> None:
        for following in sorted(graph[path[-1]]):
            if following == path[0]:
                if frozenset(path) not in seen:
                    seen.add(frozenset(path))
                    found.append([*path, following])
            elif following not in path and following > path[0]:
                walk([*path, following])

    for start in sorted(graph):
        walk([start])
    return found


def test_no_module_of_the_client_imports_one_that_imports_it_back() -> None:
    assert circles(imports_at_run_time(_modules())) == []


def test_the_circle_finder_finds_a_circle() -> None:
    graph = {"agent": {"session"}, "session": {"answers"}, "answers": {"agent"}, "turns": set()}
    assert circles(graph) == [["agent", "session", "answers", "agent"]]


def private_reads(tree: ast.Module) -> list[str]:
    """Each ``x._name`` read off something other than ``self``, ``cls`` or ``super()``, whose
    name the module does not define itself: another module's private member."""
    own = _own_names(tree)
    return [
        f"line {node.lineno}: {ast.unparse(node)}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and node.attr.startswith("_")
        and not node.attr.startswith("__")
        and node.attr not in _STANDARD
        and node.attr not in own
        and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
        and not (isinstance(node.value, ast.Call) and ast.unparse(node.value.func) == "super")
    ]


@pytest.mark.parametrize(
    "module", sorted(str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py"))
)
def test_no_module_reads_the_private_members_of_another_modules_objects(module: str) -> None:
    assert private_reads(ast.parse((PACKAGE / module).read_text())) == []


def test_a_private_read_is_found() -> None:
    tree = ast.parse("def f(session):\n    session._writer.flush()\n    self._ok = 1\n")
    assert private_reads(tree) == ["line 2: session._writer"]


def test_a_module_may_read_what_it_defines_itself() -> None:
    tree = ast.parse(
        "class A:\n    def __init__(self):\n        self._x = 1\n\ndef f(a):\n    a._x\n"
    )
    assert private_reads(tree) == []
