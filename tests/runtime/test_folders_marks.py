"""A folder mark (``<workspace>``) is one whole name: a ``..`` after it does not fold it away.

``resolved_path("<workspace>/../x", cwd)`` stays absolute (``<workspace>/../x``, outside
that folder), and resolving a resolved path again changes nothing: the projection
resolves paths it already resolved (``SessionView.file_before``), so a file outside the
workspace must never be looked up as one inside it.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acp_adapters.runtime.folders import resolved_path

from .test_folders import RELATIVE

MARKED = st.builds(lambda rest: "<workspace>/" + rest, RELATIVE)


def _absolute(path: str) -> bool:
    return path.startswith("/") or path.startswith("<")


@pytest.mark.parametrize(
    ("path", "cwd"),
    [
        ("<workspace>/../x", None),
        ("<workspace>/../x", "/ws"),
        ("<workspace>/..", "/ws"),
        ("../x", "<workspace>"),
        ("../../x", "<workspace>"),
    ],
)
def test_a_marked_path_stays_absolute_and_resolves_once(path: str, cwd: str | None) -> None:
    once = resolved_path(path, cwd)
    assert _absolute(once), once
    assert resolved_path(once, cwd) == once


@given(path=st.one_of(RELATIVE, MARKED), cwd=st.sampled_from(["<workspace>", "/ws", None]))
def test_resolving_a_resolved_path_again_changes_nothing_with_marks(
    path: str, cwd: str | None
) -> None:
    once = resolved_path(path, cwd)
    assert resolved_path(once, cwd) == once
