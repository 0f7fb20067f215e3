"""The store's names that moved to ``acp_adapters.history`` (a thread read back through the
projection) are still found at their old homes for one release: the same objects, each with
a ``DeprecationWarning`` that names its new home."""

from __future__ import annotations

import importlib
import re

import pytest

from acp_adapters.store.moved import _MOVED

OLD_NAMES = [
    (old, name, new)
    for old, (new, names) in _MOVED.items()
    # None: every name of the new home's ``__all__``.
    for name in (names if names is not None else importlib.import_module(new).__all__)
]


@pytest.mark.parametrize(
    ("old", "name", "new"), OLD_NAMES, ids=[f"{old}.{name}" for old, name, _ in OLD_NAMES]
)
def test_an_old_name_is_the_new_one_with_a_warning_that_names_its_home(
    old: str, name: str, new: str
) -> None:
    module = importlib.import_module(old)
    with pytest.warns(DeprecationWarning, match=re.escape(f"moved to {new}")) as warned:
        value = getattr(module, name)
    assert value is getattr(importlib.import_module(new), name)
    # The warning points at the line that used the old name, not at the store.
    assert warned[0].filename == __file__


def test_the_documented_old_imports_still_work() -> None:
    from acp_adapters.history.rebuild import check_thread, rebuild_items
    from acp_adapters.history.turn_patches import turn_patch

    with pytest.warns(DeprecationWarning, match="acp_adapters.history.rebuild"):
        from acp_adapters.store import check_thread as old_check
    with pytest.warns(DeprecationWarning, match="acp_adapters.history.rebuild"):
        from acp_adapters.store.rebuild import rebuild_items as old_rebuild
    with pytest.warns(DeprecationWarning, match="acp_adapters.history.turn_patches"):
        from acp_adapters.store.patches import turn_patch as old_patch
    assert (old_check, old_rebuild, old_patch) == (check_thread, rebuild_items, turn_patch)


def test_a_name_an_old_home_never_had_is_not_there() -> None:
    import acp_adapters.store
    import acp_adapters.store.recovery

    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        acp_adapters.store.recovery.nothing  # noqa: B018
    with pytest.raises(AttributeError):
        acp_adapters.store.follow_items  # noqa: B018 (never the package's)
    # The package's own modules are still found as they were.
    from acp_adapters.store import open as open_module

    assert open_module.open_store is acp_adapters.store.open_store
