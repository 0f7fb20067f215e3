"""The ``Timeline`` lives with the timeline's data: importable from its old homes too, and
from ``acp_adapters.projection.timeline`` with a warning naming the new one."""

from __future__ import annotations

import importlib

import pytest

import acp_adapters
import acp_adapters.projection
from acp_adapters.timeline import Timeline
from acp_adapters.timeline import timeline as timeline_module


def test_the_timeline_is_one_class_wherever_it_is_imported_from() -> None:
    assert Timeline.__module__ == "acp_adapters.timeline.timeline"
    assert acp_adapters.Timeline is Timeline
    assert acp_adapters.projection.Timeline is Timeline


@pytest.mark.parametrize("name", ["Timeline", "session_json"])
def test_the_old_module_gives_its_names_with_a_warning(name: str) -> None:
    old = importlib.import_module("acp_adapters.projection.timeline")
    with pytest.warns(DeprecationWarning, match=f"{name} moved to acp_adapters.timeline.timeline"):
        found = getattr(old, name)
    assert found is getattr(timeline_module, name)


def test_the_old_import_line_still_works() -> None:
    with pytest.warns(
        DeprecationWarning,
        match="projection.timeline.Timeline moved to acp_adapters.timeline.timeline",
    ):
        from acp_adapters.projection.timeline import Timeline as Old
    assert Old is Timeline
