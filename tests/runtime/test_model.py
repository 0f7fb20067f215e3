"""``acp_adapters.runtime.model``, split in three, still gives each of its names, with a warning."""

from __future__ import annotations

import importlib
from types import ModuleType

import pytest

from acp_adapters.runtime import file_store, state, values


@pytest.mark.parametrize(
    ("name", "home"),
    [
        ("ToolCall", values),
        ("Message", values),
        ("RuntimeModel", values),
        ("PathChange", values),
        ("FileStore", file_store),
        ("content_digest", file_store),
        ("CONTENT_BUDGET", file_store),
        ("SessionState", state),
        ("SessionView", state),
    ],
)
def test_a_name_of_the_old_module_is_its_new_modules_with_a_warning(
    name: str, home: ModuleType
) -> None:
    model = importlib.import_module("acp_adapters.runtime.model")
    with pytest.warns(DeprecationWarning, match=f"{name} moved to {home.__name__}"):
        found = getattr(model, name)
    assert found is getattr(home, name)


def test_the_old_import_line_still_works() -> None:
    with pytest.warns(
        DeprecationWarning, match="runtime.model.ToolCall moved to acp_adapters.runtime.values"
    ):
        from acp_adapters.runtime.model import ToolCall
    assert ToolCall is values.ToolCall


def test_a_name_it_never_had_is_not_there() -> None:
    model = importlib.import_module("acp_adapters.runtime.model")
    with pytest.raises(AttributeError):
        model.Reducer  # noqa: B018
