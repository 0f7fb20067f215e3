"""Shared test configuration and fixtures."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pluggy
import pytest
from hypothesis import HealthCheck, settings

import acp_adapters
import recorded_live
from acp_adapters import Hooks, get_plugin_manager
from acp_adapters.client import Session

#: The fixtures of the tests of threads driven from a queue (``target``, ``log``).
pytest_plugins = ("queue_helpers",)

# Every live session the tests open is recorded, and must project offline to its timeline.
recorded_live.install()

# The registry's cache and the installed agents of the test run are its own: never this
# user's (a `registry update` made here must not change what the tests read).
os.environ["ACP_ADAPTERS_CACHE"] = tempfile.mkdtemp(prefix="acp-adapters-test-cache-")
# The workspaces' checkpoint stores of the test run are its own too.
os.environ["ACP_ADAPTERS_CHECKPOINTS"] = tempfile.mkdtemp(prefix="acp-adapters-test-checkpoints-")
os.environ.pop("ACP_ADAPTERS_REGISTRY", None)

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
SPEC = Path(__file__).parent.parent / "spec" / "acp"


@pytest.fixture
def pm() -> pluggy.PluginManager:
    """A fresh plugin manager with the built-in plugins only: no installed plugin leaks in."""
    return get_plugin_manager(load_entrypoints=False, environ={})


@pytest.fixture
def hooks(pm: pluggy.PluginManager) -> Hooks:
    return Hooks(pm)


# The live client: every message it sends is checked against the official schema.


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@cache
def _validator(version: int, definition: str) -> jsonschema.protocols.Validator:
    schema = json.loads((SPEC / f"v{version}" / "schema.json").read_text())
    root = {"$defs": schema["$defs"], "$ref": f"#/$defs/{definition}"}
    return jsonschema.Draft202012Validator(root)


def check_sent(messages: list[Any], version: int) -> int:
    """Validate every message the client sent against the negotiated version's schema.

    ``initialize`` goes out before there is a version: it must be valid in both.
    """
    checked = 0
    for message in messages:
        for one in message if isinstance(message, list) else [message]:
            if "method" in one:
                kind = "ClientRequest" if "id" in one else "ClientNotification"
            else:
                kind = "ClientResponse"
            versions = (1, 2) if one.get("method") == "initialize" else (version,)
            for v in versions:
                _validator(v, kind).validate(one)
            checked += 1
    return checked


@pytest.fixture
def connect() -> Any:
    """``acp_adapters.connect`` that records what the client sends and checks it when done.

    Without ``pm``, only the built-in plugins are loaded.
    """

    @asynccontextmanager
    async def connect(*args: Any, **kwargs: Any) -> AsyncIterator[Session]:
        sent: list[Any] = []
        kwargs.setdefault("pm", get_plugin_manager(load_entrypoints=False, environ={}))

        def observe(direction: str, message: Any) -> None:
            if direction == "out":
                sent.append(message)

        session: Session | None = None
        try:
            async with acp_adapters.connect(*args, observe=observe, **kwargs) as session:
                yield session
        finally:
            assert check_sent(sent, session.version if session else 2) == len(
                [
                    m
                    for message in sent
                    for m in (message if isinstance(message, list) else [message])
                ]
            )

    return connect


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "existing.txt").write_text("alpha\nbeta\n")
    return folder


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Say how many live sessions were checked against their recordings."""
    if recorded_live.checked:
        terminalreporter.write_line(
            f"{len(recorded_live.checked)} live sessions projected from their recordings "
            "to the timelines they showed"
        )
