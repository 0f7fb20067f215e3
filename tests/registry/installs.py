"""What the install tests share: the agent they install, installed from a loopback server."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from acp_adapters.errors import AcpAdaptersError
from acp_adapters.registry.install import InstallError, install_binary, installed_binary

from .archives import AGENT_OUTPUT, sha256_hex, tar_gz, zip_archive
from .http_server import LoopbackServer

AGENT = "test-agent"
VERSION = "1.0.0"
PLATFORM = "linux-x86_64"
PREFIX = f"cannot install agent {AGENT!r} {VERSION} ({PLATFORM}): "
PACKERS = {"tar.gz": tar_gz, "zip": zip_archive}


def install(
    server: LoopbackServer,
    cache: Path,
    name: str,
    body: bytes,
    *,
    cmd: str = "./bin/agent",
    version: str = VERSION,
    checksum: bool = True,
    **options: Any,
) -> Path:
    url = server.add(f"/releases/{version}/{name}", body)
    options.setdefault("sha256", sha256_hex(body) if checksum else None)
    return install_binary(
        AGENT,
        version,
        PLATFORM,
        archive_url=url,
        cmd=cmd,
        cache_dir=cache,
        allow_loopback_http=True,
        **options,
    )


def left_in(cache: Path) -> list[str]:
    """What the cache holds, but for the lock files."""
    if not cache.exists():
        return []
    return sorted(
        p.relative_to(cache).as_posix()
        for p in cache.rglob("*")
        if p.relative_to(cache).parts[0] != ".locks"
    )


def refused(server: LoopbackServer, cache: Path, name: str, body: bytes, **options: Any) -> str:
    """Install, expecting an InstallError; the cache is as it was; the error's reason."""
    with pytest.raises(InstallError) as caught:
        install(server, cache, name, body, **options)
    error = caught.value
    assert str(error) == PREFIX + error.reason
    assert (error.agent_id, error.version, error.platform) == (AGENT, VERSION, PLATFORM)
    assert isinstance(error, AcpAdaptersError)
    assert left_in(cache) == []
    assert (
        installed_binary(AGENT, VERSION, PLATFORM, options.get("cmd", "./bin/agent"), cache) is None
    )
    return error.reason


def runs(path: Path) -> None:
    assert path.stat().st_mode & stat.S_IXUSR
    if os.name == "posix":
        done = subprocess.run([str(path)], capture_output=True, text=True, check=True)
        assert done.stdout == AGENT_OUTPUT + "\n"
