"""Loading the registry: a file, a loopback URL through the cache, offline, hostile documents."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from acp_adapters.registry import (
    BUNDLED_REGISTRY,
    DEFAULT_REGISTRY_URL,
    MAX_REGISTRY_BYTES,
    RegistryError,
    load_registry,
)
from acp_adapters.registry.source import default_cache_dir, schema

from .http_server import LoopbackServer

SPEC = Path(__file__).parent.parent.parent / "spec" / "registry"
SCHEMAS = (
    Path(__file__).parent.parent.parent / "framework" / "acp_adapters" / "registry" / "schemas"
)


def _agent(agent_id: str, **fields: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "id": agent_id,
        "name": agent_id.title(),
        "version": "1.0.0",
        "description": f"the {agent_id} agent",
        "distribution": {"npx": {"package": f"@x/{agent_id}@1.0.0", "args": ["--acp"]}},
    }
    entry.update(fields)
    return entry


def _document(*agents: Any) -> bytes:
    return json.dumps({"version": "1.0.0", "agents": list(agents), "extensions": []}).encode()


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache"


def test_the_shipped_schemas_are_the_official_ones() -> None:
    for name in ("agent", "registry"):
        official = json.loads((SPEC / f"{name}.schema.json").read_text())
        assert schema(name) == official
        assert json.loads((SCHEMAS / f"{name}.schema.json").read_text()) == official


def test_a_registry_file(tmp_path: Path) -> None:
    path = tmp_path / "registry.json"
    path.write_bytes(_document(_agent("alpha"), _agent("beta")))
    registry = load_registry(path)
    assert [a.id for a in registry.agents] == ["alpha", "beta"]
    assert (registry.origin, registry.source, registry.skipped, registry.warnings) == (
        "file",
        str(path),
        [],
        [],
    )
    assert registry.get("beta").distribution.npx is not None
    with pytest.raises(RegistryError, match=r"no agent 'gamma'.*known: alpha, beta"):
        registry.get("gamma")
    assert load_registry(str(path)).agents == registry.agents  # a str path too


def test_every_official_agent_entry_loads(tmp_path: Path) -> None:
    entries = [json.loads(p.read_text()) for p in sorted((SPEC / "agents").glob("*.json"))]
    path = tmp_path / "registry.json"
    path.write_bytes(_document(*entries))
    registry = load_registry(path)
    assert registry.skipped == []
    assert len(registry.agents) == len(entries) == 13
    bundled = load_registry(BUNDLED_REGISTRY)
    assert {a.id for a in bundled.agents} == {a.id for a in registry.agents}


def test_a_missing_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(RegistryError, match="cannot read it"):
        load_registry(tmp_path / "nope.json")


def test_an_invalid_entry_is_reported_and_skipped(tmp_path: Path) -> None:
    path = tmp_path / "registry.json"
    path.write_bytes(
        _document(
            _agent("alpha"),
            _agent("beta", version="one"),  # not a version
            "not an object",
            _agent("foo", distribution={"binary": {"linux-x86_64": {"archive": "https://x/a"}}}),
            _agent(
                "evil",
                distribution={
                    "binary": {"linux-x86_64": {"archive": "https://x/a", "cmd": "../../bin/sh"}}
                },
            ),
            _agent("gamma"),
            _agent("alpha", name="again"),
        )
    )
    registry = load_registry(path)
    assert [a.id for a in registry.agents] == ["alpha", "gamma"]
    assert registry.get("alpha").name == "Alpha"  # the first of two with one id
    assert len(registry.skipped) == 5
    beta, not_object, foo, evil, again = registry.skipped
    assert beta.startswith("agent #1 'beta': version: 'one' does not match")
    assert not_object.startswith("agent #2: 'not an object' is not of type 'object'")
    assert foo.startswith("agent #3 'foo': distribution/binary/linux-x86_64: 'cmd' is a required")
    assert evil.startswith("agent #4 'evil': distribution.binary.linux-x86_64.cmd: ")
    assert "must be a relative path inside the archive" in evil
    assert again == "agent #6 'alpha': the id 'alpha' appears twice (the first is kept)"


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"{not json", "not JSON"),
        (b"[]", "is not an ACP registry: \\[\\] is not of type 'object'"),
        (b'{"agents": []}', "'version' is a required property"),
        (b'{"version": "1.0.0", "agents": {}, "extensions": []}', "agents: {} is not of type"),
        (b'{"version": "1.0.0", "agents": [], "extensions": [], "x": 1}', "Additional prop"),
        (b'{"openapi": "3.0.0", "paths": {}}', "is not an ACP registry"),
    ],
)
def test_a_document_that_is_not_a_registry_is_refused(
    tmp_path: Path, content: bytes, reason: str
) -> None:
    path = tmp_path / "registry.json"
    path.write_bytes(content)
    with pytest.raises(RegistryError, match=reason):
        load_registry(path)


def test_a_registry_over_1_mib_is_refused(tmp_path: Path, cache: Path) -> None:
    padding = "x" * MAX_REGISTRY_BYTES
    big = _document(_agent("alpha", description=padding))
    path = tmp_path / "registry.json"
    path.write_bytes(big)
    with pytest.raises(RegistryError, match=f"over {MAX_REGISTRY_BYTES} bytes: refused"):
        load_registry(path)
    with LoopbackServer() as server:
        url = server.add("/big.json", big)
        with pytest.raises(RegistryError, match="too large"):
            load_registry(url, cache_dir=cache, allow_loopback_http=True)
        url = server.add("/big-unannounced.json", big, omit_length=True)
        with pytest.raises(RegistryError, match="too large"):
            load_registry(url, cache_dir=cache, allow_loopback_http=True)
    assert not cache.exists() or not list(cache.iterdir())  # nothing cached


def test_600_agents_keep_the_first_512_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "registry.json"
    path.write_bytes(_document(*(_agent(f"agent-{n}") for n in range(600))))
    registry = load_registry(path)
    assert len(registry.agents) == 512
    assert registry.agents[-1].id == "agent-511"
    assert registry.warnings == [f"registry {path} lists 600 agents: only the first 512 are kept"]
    assert len(load_registry(path, max_agents=10).agents) == 10


def test_a_url_is_cached_and_asked_again_conditionally(cache: Path) -> None:
    with LoopbackServer() as server:
        url = server.add(
            "/registry.json",
            _document(_agent("alpha")),
            etag='"v1"',
            last_modified=LoopbackServer.http_date(1_700_000_000),
        )
        first = load_registry(url, cache_dir=cache, allow_loopback_http=True)
        assert ([a.id for a in first.agents], first.origin) == (["alpha"], "url")
        second = load_registry(url, cache_dir=cache, allow_loopback_http=True)
        assert ([a.id for a in second.agents], second.origin) == (["alpha"], "url")
        requests = server.requests_for("/registry.json")
        assert len(requests) == 2
        assert "If-None-Match" not in requests[0].headers
        assert requests[1].headers["If-None-Match"] == '"v1"'
        assert requests[1].headers["If-Modified-Since"] == LoopbackServer.http_date(1_700_000_000)

        # a new version: a 200 replaces the cached copy
        server.add("/registry.json", _document(_agent("alpha"), _agent("beta")), etag='"v2"')
        third = load_registry(url, cache_dir=cache, allow_loopback_http=True)
        assert [a.id for a in third.agents] == ["alpha", "beta"]
        fourth = load_registry(url, cache_dir=cache, allow_loopback_http=True)
        assert [a.id for a in fourth.agents] == ["alpha", "beta"]
        assert server.requests_for("/registry.json")[3].headers["If-None-Match"] == '"v2"'


def test_a_304_serves_the_cached_copy(cache: Path) -> None:
    """The server's 304 has no body: the agents can only come from the cache."""
    with LoopbackServer() as server:
        url = server.add("/registry.json", _document(_agent("alpha")), etag='"v1"')
        load_registry(url, cache_dir=cache, allow_loopback_http=True)
        server.add("/registry.json", _document(_agent("changed")), etag='"v1"')  # same tag
        again = load_registry(url, cache_dir=cache, allow_loopback_http=True)
    assert [a.id for a in again.agents] == ["alpha"]


def test_offline_uses_the_cached_copy(cache: Path) -> None:
    with LoopbackServer() as server:
        url = server.add("/registry.json", _document(_agent("alpha")), etag='"v1"')
        load_registry(url, cache_dir=cache, allow_loopback_http=True)
        offline = load_registry(url, cache_dir=cache, offline=True, allow_loopback_http=True)
        assert len(server.requests) == 1  # offline: not asked
    assert ([a.id for a in offline.agents], offline.origin) == (["alpha"], "cache")
    assert offline.warnings == [f"registry {url} not fetched (offline): using the cached copy"]


def test_a_network_failure_falls_back_to_the_cached_copy(cache: Path) -> None:
    with LoopbackServer() as server:
        url = server.add("/registry.json", _document(_agent("alpha")), etag='"v1"')
        load_registry(url, cache_dir=cache, allow_loopback_http=True)
        server.add("/registry.json", b"oops", status=503)
        failed = load_registry(url, cache_dir=cache, allow_loopback_http=True)
    assert ([a.id for a in failed.agents], failed.origin) == (["alpha"], "cache")
    assert "HTTP 503" in failed.warnings[0]
    # the server is gone: unreachable
    gone = load_registry(url, cache_dir=cache, allow_loopback_http=True)
    assert (gone.origin, [a.id for a in gone.agents]) == ("cache", ["alpha"])


def test_a_document_that_is_not_a_registry_does_not_replace_the_cache(cache: Path) -> None:
    with LoopbackServer() as server:
        url = server.add("/registry.json", _document(_agent("alpha")), etag='"v1"')
        load_registry(url, cache_dir=cache, allow_loopback_http=True)
        server.add("/registry.json", b"<html>captive portal</html>", etag='"v2"')
        with pytest.raises(RegistryError, match="not JSON"):
            load_registry(url, cache_dir=cache, allow_loopback_http=True)
    kept = load_registry(url, cache_dir=cache, offline=True, allow_loopback_http=True)
    assert [a.id for a in kept.agents] == ["alpha"]


def test_offline_with_no_cache(cache: Path) -> None:
    """The official URL falls back to the bundled snapshot; another URL has nothing."""
    bundled = load_registry(DEFAULT_REGISTRY_URL, cache_dir=cache, offline=True)
    assert bundled.origin == "bundled"
    assert len(bundled.agents) == 13
    assert "using the snapshot bundled with acp-adapters" in bundled.warnings[0]
    default = load_registry(None, cache_dir=cache, offline=True)
    assert default.agents == bundled.agents
    with pytest.raises(RegistryError, match="not fetched \\(offline\\) and no cached copy"):
        load_registry("https://example.invalid/r.json", cache_dir=cache, offline=True)


@pytest.mark.parametrize(
    "url",
    [
        "http://example.com/registry.json",
        "http://127.0.0.1:9/registry.json",  # loopback http, but not allowed
        "ftp://example.com/registry.json",
    ],
)
def test_only_https_is_fetched(url: str, cache: Path) -> None:
    with pytest.raises(RegistryError, match="refused"):
        load_registry(url, cache_dir=cache)


def test_a_redirect_to_plain_http_is_refused(cache: Path) -> None:
    with LoopbackServer() as server:
        server.add("/registry.json", _document(_agent("alpha")))
        url = server.add(
            "/moved.json",
            b"",
            status=302,
            headers={"Location": "http://example.com/registry.json"},
        )
        with pytest.raises(RegistryError, match="refused"):
            load_registry(url, cache_dir=cache, allow_loopback_http=True)


def test_the_cache_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ACP_ADAPTERS_CACHE", str(tmp_path))
    assert default_cache_dir() == tmp_path / "registry"
    monkeypatch.delenv("ACP_ADAPTERS_CACHE")
    assert default_cache_dir().parts[-2:] == ("acp-adapters", "registry")


def test_the_cache_is_keyed_by_url(cache: Path) -> None:
    with LoopbackServer() as server:
        one = server.add("/one.json", _document(_agent("alpha")))
        two = server.add("/two.json", _document(_agent("beta")))
        load_registry(one, cache_dir=cache, allow_loopback_http=True)
        load_registry(two, cache_dir=cache, allow_loopback_http=True)
    for url, agent_id in ((one, "alpha"), (two, "beta")):
        offline = load_registry(url, cache_dir=cache, offline=True, allow_loopback_http=True)
        assert [a.id for a in offline.agents] == [agent_id]


def test_a_tampered_cache_is_no_cache(cache: Path) -> None:
    with LoopbackServer() as server:
        url = server.add("/registry.json", _document(_agent("alpha")))
        load_registry(url, cache_dir=cache, allow_loopback_http=True)
    (body,) = [p for p in cache.iterdir() if not p.name.endswith(".meta.json")]
    body.write_bytes(_document(_agent("mallory")))
    with pytest.raises(RegistryError, match="no cached copy"):
        load_registry(url, cache_dir=cache, offline=True, allow_loopback_http=True)
