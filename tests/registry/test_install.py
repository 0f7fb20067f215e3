"""install_binary against a loopback server: good archives, the download, the cmd, the cache
and its lock. What an archive may hold is tests/registry/test_archives.py's."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import filelock
import platformdirs
import pytest

from acp_adapters.registry.install import (
    CACHE_ENV,
    InstallError,
    default_cache_dir,
    install_binary,
    installed_binary,
)

from .archives import (
    AGENT_SCRIPT,
    File,
    agent_entries,
    sha256_hex,
    tar_bz2,
    tar_gz,
    zip_archive,
)
from .http_server import LoopbackServer
from .installs import AGENT, PLATFORM, VERSION, install, left_in, refused, runs

# -- good archives ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "pack"),
    [
        ("agent.tar.gz", tar_gz),
        ("agent.tgz", tar_gz),
        ("agent.zip", zip_archive),
        ("agent.tar.bz2", tar_bz2),
        ("agent.tbz2", tar_bz2),
    ],
)
def test_a_good_archive_installs_and_its_cmd_runs(
    server: LoopbackServer, cache: Path, name: str, pack: Any
) -> None:
    path = install(server, cache, name, pack(agent_entries()))
    folder = cache / AGENT / VERSION / PLATFORM
    assert path == folder.resolve() / "bin" / "agent"
    assert path.is_absolute()
    runs(path)
    assert (folder / "README.txt").read_text() == "an agent\n"
    assert installed_binary(AGENT, VERSION, PLATFORM, "./bin/agent", cache) == path
    marker = json.loads((folder.parent / f"{PLATFORM}.installed").read_text())
    assert marker["sha256"] == sha256_hex(pack(agent_entries())) or marker["verified"]
    assert sorted(p.name for p in folder.parent.iterdir()) == [PLATFORM, f"{PLATFORM}.installed"]


def test_a_cmd_without_its_executable_bit_is_made_executable(
    server: LoopbackServer, cache: Path
) -> None:
    body = zip_archive(agent_entries("agent", executable=False))
    path = install(server, cache, "agent.zip", body, cmd="agent")
    runs(path)


def test_a_raw_binary_is_installed_as_its_cmd(server: LoopbackServer, cache: Path) -> None:
    path = install(server, cache, "agent-linux-x64", AGENT_SCRIPT, cmd="./agent")
    assert path == (cache / AGENT / VERSION / PLATFORM).resolve() / "agent"
    runs(path)


def test_an_installed_agent_is_not_downloaded_again(server: LoopbackServer, cache: Path) -> None:
    body = tar_gz(agent_entries())
    first = install(server, cache, "agent.tar.gz", body)
    second = install(server, cache, "agent.tar.gz", body)
    assert first == second
    assert len(server.requests) == 1


def test_an_install_without_a_checksum_is_allowed(server: LoopbackServer, cache: Path) -> None:
    path = install(server, cache, "agent.tar.gz", tar_gz(agent_entries()), checksum=False)
    runs(path)


def test_progress_is_reported(server: LoopbackServer, cache: Path) -> None:
    body = tar_gz(agent_entries())
    seen: list[tuple[int, int | None]] = []
    install(server, cache, "agent.tar.gz", body, progress=lambda d, t: seen.append((d, t)))
    assert seen[0] == (0, len(body))
    assert seen[-1] == (len(body), len(body))


# -- what the download may do -------------------------------------------------------------------


def test_a_checksum_mismatch_is_refused_before_anything_is_unpacked(
    server: LoopbackServer, cache: Path
) -> None:
    # The archive is hostile too: the checksum is what refuses it, before any entry is read.
    body = tar_gz([*agent_entries(), File("../escaped", b"x")])
    wrong = sha256_hex(b"another archive")
    url = server.url(f"/releases/{VERSION}/agent.tar.gz")
    reason = refused(server, cache, "agent.tar.gz", body, sha256=wrong)
    assert reason == (
        f"sha256 mismatch: the registry says {wrong}, the archive {url!r} has "
        f"{sha256_hex(body)}; nothing was unpacked"
    )
    assert not (cache / AGENT / VERSION / "escaped").exists()


def test_a_truncated_download_is_refused(server: LoopbackServer, cache: Path) -> None:
    body = tar_gz(agent_entries())
    url = server.add("/agent.tar.gz", body, truncate_at=100)
    with pytest.raises(InstallError) as caught:
        install_binary(
            AGENT,
            VERSION,
            PLATFORM,
            archive_url=url,
            cmd="./bin/agent",
            cache_dir=cache,
            allow_loopback_http=True,
        )
    assert caught.value.reason == (
        f"download of {url} failed: truncated: received 100 of the {len(body)} bytes "
        "announced (Content-Length)"
    )
    assert left_in(cache) == []


def test_a_too_large_download_is_refused(server: LoopbackServer, cache: Path) -> None:
    body = tar_gz(agent_entries())
    url = server.url(f"/releases/{VERSION}/agent.tar.gz")
    reason = refused(server, cache, "agent.tar.gz", body, max_bytes=100)
    assert reason == (
        f"download of {url} failed: too large: the server announces {len(body)} bytes, "
        "the limit is 100"
    )


def test_a_too_large_download_without_a_length_is_refused(
    server: LoopbackServer, cache: Path
) -> None:
    url = server.add("/agent.tar.gz", b"\x1f\x8b" + b"0" * 5000, omit_length=True)
    with pytest.raises(InstallError) as caught:
        install_binary(
            AGENT,
            VERSION,
            PLATFORM,
            archive_url=url,
            cmd="./bin/agent",
            cache_dir=cache,
            allow_loopback_http=True,
            max_bytes=1000,
        )
    assert caught.value.reason == (
        f"download of {url} failed: too large: more than the limit of 1000 bytes"
    )
    assert left_in(cache) == []


def test_a_url_that_is_not_https_is_refused(cache: Path) -> None:
    url = "http://example.com/agent.tar.gz"
    with pytest.raises(InstallError) as caught:
        install_binary(AGENT, VERSION, PLATFORM, archive_url=url, cmd="./agent", cache_dir=cache)
    assert caught.value.reason == (
        f"download of {url} failed: not HTTPS (only https:// URLs are downloaded)"
    )
    assert left_in(cache) == []


def test_a_download_that_stalls_times_out(server: LoopbackServer, cache: Path) -> None:
    url = server.add("/agent.tar.gz", tar_gz(agent_entries()), gate=threading.Event())
    with pytest.raises(InstallError) as caught:
        install_binary(
            AGENT,
            VERSION,
            PLATFORM,
            archive_url=url,
            cmd="./bin/agent",
            cache_dir=cache,
            allow_loopback_http=True,
            timeout=0.3,
        )
    assert caught.value.reason == f"download of {url} failed: timed out after 0.3 s"
    assert left_in(cache) == []


# -- cmd ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cmd", "reason"),
    [
        ("./bin/other", "the cmd './bin/other' is not in the archive"),
        ("bin", "the cmd 'bin' is a folder in the archive, not a file"),
        ("../agent", "the cmd '../agent' goes outside the folder ('..')"),
        ("/bin/sh", "the cmd '/bin/sh' is an absolute path"),
        ("C:/agent.exe", "the cmd 'C:/agent.exe' is an absolute path"),
        (".\\agent.exe", "the cmd '.\\\\agent.exe' contains a backslash"),
        ("./", "the cmd './' names no file"),
    ],
)
def test_a_bad_cmd_is_refused(server: LoopbackServer, cache: Path, cmd: str, reason: str) -> None:
    assert refused(server, cache, "agent.tar.gz", tar_gz(agent_entries()), cmd=cmd) == reason


@pytest.mark.parametrize(
    ("agent", "version", "platform", "reason"),
    [
        ("../escape", VERSION, PLATFORM, "the agent id '../escape' is not a valid folder name"),
        (AGENT, "1.0/../..", PLATFORM, "the version '1.0/../..' is not a valid folder name"),
        (AGENT, "..", PLATFORM, "the version '..' is not a valid folder name"),
        (AGENT, VERSION, "linux", "the platform 'linux' is not of the form os-arch"),
        ("con", VERSION, PLATFORM, "the agent id 'con' is not a valid folder name"),
    ],
)
def test_bad_names_are_refused(
    cache: Path, agent: str, version: str, platform: str, reason: str
) -> None:
    with pytest.raises(InstallError) as caught:
        install_binary(
            agent,
            version,
            platform,
            archive_url="https://example.com/a.zip",
            cmd="a",
            cache_dir=cache,
        )
    assert caught.value.reason == reason
    assert not cache.exists()


def test_a_malformed_sha256_is_refused(cache: Path) -> None:
    with pytest.raises(InstallError) as caught:
        install_binary(
            AGENT,
            VERSION,
            PLATFORM,
            archive_url="https://example.com/a.zip",
            sha256="abc",
            cmd="a",
            cache_dir=cache,
        )
    assert caught.value.reason == "the sha256 'abc' is not 64 hexadecimal digits"


# -- the cache ----------------------------------------------------------------------------------


def test_a_failed_install_leaves_the_cache_as_it_was(server: LoopbackServer, cache: Path) -> None:
    good = install(server, cache, "agent.tar.gz", tar_gz(agent_entries()))
    before = left_in(cache)
    bad = tar_gz([*agent_entries(), File("../escaped", b"x")])
    with pytest.raises(InstallError, match="goes outside the folder"):
        install(server, cache, "agent.tar.gz", bad, version="2.0.0")
    assert left_in(cache) == before
    assert installed_binary(AGENT, VERSION, PLATFORM, "./bin/agent", cache) == good
    runs(good)


def test_an_interrupted_install_is_not_installed_and_is_replaced(
    server: LoopbackServer, cache: Path
) -> None:
    version_dir = cache / AGENT / VERSION
    # What a killed install leaves: a partial folder, and (past the rename) a folder with
    # no marker beside it.
    partial = version_dir / f".{PLATFORM}.partial-k1lled"
    for folder in (partial, version_dir / PLATFORM):
        (folder / "bin").mkdir(parents=True)
        (folder / "bin" / "agent").write_bytes(b"#!/bin/sh\necho half\n")
        (folder / "bin" / "agent").chmod(0o755)
    (version_dir / f".{PLATFORM}.download-k1lled").write_bytes(b"half an archive")
    assert installed_binary(AGENT, VERSION, PLATFORM, "./bin/agent", cache) is None

    path = install(server, cache, "agent.tar.gz", tar_gz(agent_entries()))
    runs(path)
    assert len(server.requests) == 1
    assert sorted(p.name for p in version_dir.iterdir()) == [PLATFORM, f"{PLATFORM}.installed"]


def test_a_marker_without_its_folder_is_not_installed(server: LoopbackServer, cache: Path) -> None:
    path = install(server, cache, "agent.tar.gz", tar_gz(agent_entries()))
    folder = cache / AGENT / VERSION / PLATFORM
    (folder / "bin" / "agent").unlink()
    assert installed_binary(AGENT, VERSION, PLATFORM, "./bin/agent", cache) is None
    assert install(server, cache, "agent.tar.gz", tar_gz(agent_entries())) == path
    assert len(server.requests) == 2


def test_another_archive_for_the_same_version_is_installed_afresh(
    server: LoopbackServer, cache: Path
) -> None:
    install(server, cache, "agent.tar.gz", tar_gz(agent_entries()))
    path = install(server, cache, "agent.zip", zip_archive(agent_entries()))
    runs(path)
    assert [r.path for r in server.requests] == [
        f"/releases/{VERSION}/agent.tar.gz",
        f"/releases/{VERSION}/agent.zip",
    ]


def test_a_held_lock_is_waited_for_then_reported(server: LoopbackServer, cache: Path) -> None:
    lock_path = cache / ".locks" / AGENT / VERSION / f"{PLATFORM}.lock"
    lock_path.parent.mkdir(parents=True)
    with filelock.FileLock(str(lock_path)):
        reason = refused(server, cache, "agent.tar.gz", tar_gz(agent_entries()), lock_timeout=0.2)
    assert reason == f"another process holds the install lock {lock_path} for more than 0.2 s"
    assert server.requests == []


_INSTALLER = """
import sys
import filelock
from acp_adapters.registry.install import install_binary

acquire = filelock.FileLock.acquire

def announced(self, *args, **kwargs):
    print("acquiring", flush=True)
    held = acquire(self, *args, **kwargs)
    print("acquired", flush=True)
    return held

filelock.FileLock.acquire = announced
url, sha256, cache = sys.argv[1:]
path = install_binary(
    "test-agent", "1.0.0", "linux-x86_64", archive_url=url, sha256=sha256,
    cmd="./bin/agent", cache_dir=cache, allow_loopback_http=True,
)
print(path, flush=True)
"""


def _lines(process: subprocess.Popen[str]) -> queue.Queue[str]:
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line.rstrip("\n"))

    threading.Thread(target=pump, daemon=True).start()
    return lines


def test_two_processes_installing_at_once_give_one_install(
    server: LoopbackServer, cache: Path
) -> None:
    body = tar_gz(agent_entries())
    gate = threading.Event()
    url = server.add("/agent.tar.gz", body, gate=gate)
    argv = [sys.executable, "-c", _INSTALLER, url, sha256_hex(body), str(cache)]
    first = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    second: subprocess.Popen[str] | None = None
    try:
        first_lines = _lines(first)
        # The first holds the lock, its download held by the server.
        assert server.wait_for_requests(1, timeout=60)
        assert [first_lines.get(timeout=60), first_lines.get(timeout=60)] == [
            "acquiring",
            "acquired",
        ]
        second = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
        second_lines = _lines(second)
        assert second_lines.get(timeout=60) == "acquiring"
        # The second waits: no lock, no download, while the first holds the lock.
        with pytest.raises(queue.Empty):
            second_lines.get(timeout=1.0)
        assert len(server.requests) == 1
        gate.set()
        assert first.wait(timeout=60) == 0
        assert second.wait(timeout=60) == 0
        first_path = first_lines.get(timeout=60)
        assert [second_lines.get(timeout=60), second_lines.get(timeout=60)] == [
            "acquired",
            first_path,
        ]
    finally:
        gate.set()
        for process in (first, second):
            if process is not None:
                process.kill()
                process.wait()
                if process.stdout is not None:
                    process.stdout.close()
    assert len(server.requests) == 1
    assert Path(first_path) == (cache / AGENT / VERSION / PLATFORM / "bin" / "agent").resolve()
    runs(Path(first_path))


# -- the cache folder ---------------------------------------------------------------------------


def test_the_default_cache_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(CACHE_ENV, raising=False)
    expected = platformdirs.user_cache_path("acp-adapters", appauthor=False) / "agents"
    assert default_cache_dir() == expected.absolute()
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "elsewhere"))
    assert default_cache_dir() == tmp_path / "elsewhere" / "agents"


def test_the_default_cache_folder_is_used(
    server: LoopbackServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "elsewhere"))
    url = server.add("/agent.tar.gz", tar_gz(agent_entries()))
    path = install_binary(
        AGENT, VERSION, PLATFORM, archive_url=url, cmd="./bin/agent", allow_loopback_http=True
    )
    assert path == (tmp_path / "elsewhere" / "agents" / AGENT / VERSION / PLATFORM).resolve() / (
        "bin/agent"
    )
    assert installed_binary(AGENT, VERSION, PLATFORM, "./bin/agent") == path
