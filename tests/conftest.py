"""Shared test configuration and fixtures."""

from __future__ import annotations

import os
from pathlib import Path

import pluggy
import pytest
from hypothesis import HealthCheck, settings

from acp_adapters import Hooks, get_plugin_manager

# CI runs the same examples every time; set HYPOTHESIS_PROFILE=explore locally to search wider.
settings.register_profile("ci", derandomize=True, database=None, deadline=None, print_blob=True)
settings.register_profile(
    "explore",
    max_examples=2000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

DATA = Path(__file__).parent / "data"
CAPTURES = DATA / "captures"


@pytest.fixture
def pm() -> pluggy.PluginManager:
    """A fresh plugin manager with the built-in plugins only: no installed plugin leaks in."""
    return get_plugin_manager(load_entrypoints=False, environ={})


@pytest.fixture
def hooks(pm: pluggy.PluginManager) -> Hooks:
    return Hooks(pm)
