"""What a registry resolves to, remembered per document: the same outcome as the full read,
and a full read again for another document, another install, or a memo that is not one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from acp_adapters.registry import RegistryError, resolved_registry
from acp_adapters.registry import resolved as resolved_module

PLATFORM = "linux-x86_64"


@pytest.fixture(autouse=True)
def _here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cache folder of the test's own (the installs live there too), on linux-x86_64."""
    monkeypatch.setenv("ACP_ADAPTERS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr("platform.system", lambda: "Linux")
    monkeypatch.setattr("platform.machine", lambda: "x86_64")


@pytest.fixture
def full_reads(monkeypatch: pytest.MonkeyPatch) -> list[str | None]:
    """The sources read in full (validated): the memo was not enough for them."""
    reads: list[str | None] = []
    load = resolved_module._load

    def counted(source: str | None, *args: Any) -> Any:
        reads.append(source)
        return load(source, *args)

    monkeypatch.setattr(resolved_module, "_load", counted)
    return reads


def _npx(agent_id: str) -> dict[str, Any]:
    return {
        "id": agent_id,
        "name": agent_id.title(),
        "version": "1.0.0",
        "description": f"the {agent_id} agent",
        "distribution": {"npx": {"package": f"@x/{agent_id}@1.0.0", "args": ["--acp"]}},
    }


def _binary(agent_id: str) -> dict[str, Any]:
    target = {"archive": f"https://example.com/{agent_id}.zip", "cmd": "./bin/agent"}
    return {**_npx(agent_id), "distribution": {"binary": {PLATFORM: target}}}


def _registry(path: Path, *agents: Any) -> str:
    path.write_text(json.dumps({"version": "1.0.0", "agents": list(agents), "extensions": []}))
    return str(path)


def _cache(tmp_path: Path) -> Path:
    return tmp_path / "cache" / "registry"


def test_the_memo_gives_what_the_full_read_gives(
    tmp_path: Path, full_reads: list[str | None]
) -> None:
    source = _registry(tmp_path / "r.json", _npx("alpha"), _binary("beta"), {"id": "Bad"})
    first = resolved_registry(source, cache_dir=_cache(tmp_path))
    again = resolved_registry(source, cache_dir=_cache(tmp_path))
    assert full_reads == [source]
    assert again == first
    alpha, beta = first.agents
    assert alpha.argv == ("npx", "-y", "@x/alpha@1.0.0", "--acp")
    assert (beta.kind, beta.platform, beta.argv) == ("binary", PLATFORM, None)
    assert len(first.skipped) == 1
    assert first.skipped[0].startswith("agent #2 'Bad'")


def test_the_bundled_registry_is_remembered_too(
    tmp_path: Path, full_reads: list[str | None]
) -> None:
    first = resolved_registry(None, cache_dir=_cache(tmp_path))
    assert resolved_registry(None, cache_dir=_cache(tmp_path)) == first
    assert full_reads == [None]
    assert first.get("gemini") is not None


def test_another_document_is_read_in_full(tmp_path: Path, full_reads: list[str | None]) -> None:
    path = tmp_path / "r.json"
    source = _registry(path, _npx("alpha"))
    resolved_registry(source, cache_dir=_cache(tmp_path))
    _registry(path, _npx("alpha"), {**_npx("alpha"), "name": "again"})  # a hostile change
    changed = resolved_registry(source, cache_dir=_cache(tmp_path))
    assert full_reads == [source, source]
    assert [agent.id for agent in changed.agents] == ["alpha"]
    assert "the id 'alpha' appears twice" in changed.skipped[0]


def test_an_install_is_seen_at_once(tmp_path: Path, full_reads: list[str | None]) -> None:
    source = _registry(tmp_path / "r.json", _binary("beta"))
    before = resolved_registry(source, cache_dir=_cache(tmp_path)).get("beta")
    assert before is not None
    assert before.argv is None
    # A complete install, as install_binary leaves it: the folder, its cmd, its marker.
    folder = tmp_path / "cache" / "agents" / "beta" / "1.0.0" / PLATFORM
    (folder / "bin").mkdir(parents=True)
    (folder / "bin" / "agent").write_text("#!/bin/sh\n")
    (folder.parent / f"{PLATFORM}.installed").write_text("{}")
    after = resolved_registry(source, cache_dir=_cache(tmp_path)).get("beta")
    assert after is not None
    assert after.argv is not None
    assert Path(after.argv[0]).resolve() == (folder / "bin" / "agent").resolve()
    (folder.parent / f"{PLATFORM}.installed").unlink()  # removed: not installed any more
    gone = resolved_registry(source, cache_dir=_cache(tmp_path)).get("beta")
    assert gone is not None
    assert gone.argv is None
    assert full_reads == [source, source, source]


def _memo(tmp_path: Path) -> Path:
    (memo,) = _cache(tmp_path).glob("resolved-*.json")
    return memo


@pytest.mark.parametrize(
    "tamper",
    [
        lambda memo: "not json",
        lambda memo: json.dumps({**memo, "key": "0" * 64}),
        lambda memo: json.dumps({**memo, "format": 0}),
        lambda memo: json.dumps({**memo, "agents": [{**memo["agents"][0], "argv": "rm -rf /"}]}),
        lambda memo: json.dumps({**memo, "agents": [{**memo["agents"][0], "env": {"A": 1}}]}),
        lambda memo: json.dumps({**memo, "checks": [["beta", "1.0.0", PLATFORM]]}),
    ],
    ids=["not-json", "another-key", "another-format", "argv-text", "env-number", "checks-cut"],
)
def test_a_memo_that_does_not_read_as_one_is_replaced(
    tmp_path: Path, full_reads: list[str | None], tamper: Any
) -> None:
    source = _registry(tmp_path / "r.json", _npx("alpha"))
    first = resolved_registry(source, cache_dir=_cache(tmp_path))
    memo = _memo(tmp_path)
    memo.write_text(tamper(json.loads(memo.read_text())))
    assert resolved_registry(source, cache_dir=_cache(tmp_path)) == first
    assert full_reads == [source, source]
    assert json.loads(memo.read_text())["agents"][0]["argv"] == list(first.agents[0].argv or ())


def test_a_registry_that_does_not_load_is_never_remembered(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text('{"agents": 5}')
    for _ in range(2):
        with pytest.raises(RegistryError, match="is not an ACP registry"):
            resolved_registry(str(path), cache_dir=_cache(tmp_path))
    assert not list(_cache(tmp_path).glob("resolved-*.json"))


def test_a_url_without_a_cached_copy_fails_as_the_plugin_says(tmp_path: Path) -> None:
    with pytest.raises(RegistryError, match="no cached copy"):
        resolved_registry("https://registry.invalid/r.json", cache_dir=_cache(tmp_path))
