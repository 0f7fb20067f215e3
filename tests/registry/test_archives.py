"""An archive's unpacking, through install_binary against a loopback server: its kind,
links kept inside, and hostile archives refused with the cache left as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_adapters.registry.archives import archive_kind

from .archives import (
    AGENT_SCRIPT,
    Device,
    Dir,
    Entry,
    Fifo,
    File,
    Hardlink,
    Symlink,
    agent_entries,
    tar_bz2,
    tar_gz,
    zip_archive,
)
from .http_server import LoopbackServer
from .installs import PACKERS, install, refused, runs

# -- archive kinds ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        ("https://example.com/a.zip", "zip"),
        ("https://example.com/a.ZIP?token=1", "zip"),
        ("https://example.com/a.tar.gz", "tar.gz"),
        ("https://example.com/a.tgz", "tar.gz"),
        ("https://example.com/a.tar.bz2", "tar.bz2"),
        ("https://example.com/a.tbz2", "tar.bz2"),
        ("https://example.com/agent", "raw"),
        ("https://example.com/agent.exe", "raw"),
        ("https://example.com/download?file=a.zip", "raw"),
    ],
)
def test_the_archive_kind_is_read_from_the_url_path(url: str, kind: str) -> None:
    assert archive_kind(url) == kind


def test_the_archive_kind_is_still_importable_from_the_installer() -> None:
    from acp_adapters.registry import install

    assert install.archive_kind is archive_kind
    assert install.INSTALLER_SUFFIXES == (".dmg", ".pkg", ".deb", ".rpm", ".msi")


@pytest.mark.parametrize("suffix", [".dmg", ".pkg", ".deb", ".rpm", ".msi"])
def test_installer_formats_are_refused_without_a_download(
    server: LoopbackServer, cache: Path, suffix: str
) -> None:
    reason = refused(server, cache, f"agent{suffix}", b"installer")
    assert reason == f"installer formats ({suffix}) are not supported"
    assert server.requests == []


def test_an_archive_whose_bytes_are_not_its_kind_is_refused(
    server: LoopbackServer, cache: Path
) -> None:
    reason = refused(server, cache, "agent.tar.gz", zip_archive(agent_entries()))
    assert (
        reason
        == "the archive is named .tar.gz but is not gzip data (it starts with b'PK\\x03\\x04')"
    )
    reason = refused(server, cache, "agent.zip", tar_gz(agent_entries()))
    assert reason.startswith("the archive is named .zip but is not a zip file")


def test_a_corrupt_archive_is_refused(server: LoopbackServer, cache: Path) -> None:
    reason = refused(server, cache, "agent.tar.gz", b"\x1f\x8b" + b"garbage" * 50)
    assert reason.startswith("the archive is not a valid tar.gz archive (")
    reason = refused(server, cache, "agent.zip", b"PK\x03\x04" + b"garbage" * 50)
    assert reason.startswith("the archive is not a valid zip archive (")


def test_links_inside_the_folder_are_kept(server: LoopbackServer, cache: Path) -> None:
    entries: list[Entry] = [
        Dir("lib"),
        File("lib/agent-1.0", AGENT_SCRIPT, 0o755),
        Dir("bin"),
        Symlink("bin/agent", "../lib/agent-1.0"),
        Hardlink("lib/agent-copy", "lib/agent-1.0"),
    ]
    path = install(server, cache, "agent.tar.gz", tar_gz(entries))
    assert path.is_symlink()
    runs(path)
    assert (path.parent.parent / "lib" / "agent-copy").read_bytes() == AGENT_SCRIPT


# -- hostile entries ----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", PACKERS)
@pytest.mark.parametrize(
    ("entry", "reason"),
    [
        (File("../escaped", b"x"), "archive entry '../escaped' goes outside the folder ('..')"),
        (
            File("bin/../../escaped", b"x"),
            "archive entry 'bin/../../escaped' goes outside the folder ('..')",
        ),
        (File("/tmp/escaped", b"x"), "archive entry '/tmp/escaped' is an absolute path"),
        (File("C:/escaped", b"x"), "archive entry 'C:/escaped' has a drive letter"),
        (File("..\\escaped", b"x"), "archive entry '..\\\\escaped' contains a backslash"),
        (
            Symlink("link", "../../escaped"),
            "symlink 'link' points outside the folder ('../../escaped')",
        ),
        (
            Symlink("link", "/etc/passwd"),
            "symlink 'link' points to an absolute path ('/etc/passwd')",
        ),
        (Device("dev/null"), "archive entry 'dev/null' is a device file"),
        (Device("dev/sda", block=True), "archive entry 'dev/sda' is a device file"),
        (Fifo("pipe"), "archive entry 'pipe' is a FIFO"),
        (
            File("bin/agent", b"again"),
            "archive entry 'bin/agent' appears twice (or differs only in case)",
        ),
        (
            File("BIN/AGENT", b"again"),
            "archive entry 'BIN/AGENT' appears twice (or differs only in case)",
        ),
    ],
)
def test_a_hostile_entry_is_refused(
    server: LoopbackServer, cache: Path, tmp_path: Path, kind: str, entry: Entry, reason: str
) -> None:
    body = PACKERS[kind]([*agent_entries(), entry])
    assert refused(server, cache, f"agent.{kind}", body) == reason
    assert not (tmp_path / "escaped").exists()
    assert not (cache / "escaped").exists()


@pytest.mark.parametrize("kind", PACKERS)
def test_a_symlink_out_through_another_link_is_refused(
    server: LoopbackServer, cache: Path, kind: str
) -> None:
    # Each link looks inside on its own: "here" is the folder, "here/../x" is "x"; on disk,
    # "here/.." is the folder's parent.
    body = PACKERS[kind]([*agent_entries(), Symlink("here", "."), Symlink("up", "here/../x")])
    assert refused(server, cache, f"agent.{kind}", body) == (
        "symlink 'up' points outside the folder ('here/../x')"
    )


@pytest.mark.parametrize("kind", PACKERS)
def test_an_entry_beneath_a_symlink_is_refused(
    server: LoopbackServer, cache: Path, kind: str
) -> None:
    body = PACKERS[kind](
        [*agent_entries(), Dir("real"), Symlink("alias", "real"), File("alias/x", b"x")]
    )
    assert refused(server, cache, f"agent.{kind}", body) == (
        "archive entry 'alias/x' lies beneath the symlink 'alias'"
    )


@pytest.mark.parametrize(
    ("entry", "reason"),
    [
        (Hardlink("hl", "../escaped"), "hardlink 'hl' points outside the folder ('../escaped')"),
        (Hardlink("hl", "/etc/passwd"), "hardlink 'hl' points to an absolute path ('/etc/passwd')"),
        (
            Hardlink("hl", "missing"),
            "hardlink 'hl' points to 'missing', which is not a file unpacked before it",
        ),
        (
            Hardlink("hl", "bin"),
            "hardlink 'hl' points to 'bin', which is not a file unpacked before it",
        ),
    ],
)
def test_a_hostile_hardlink_is_refused(
    server: LoopbackServer, cache: Path, entry: Entry, reason: str
) -> None:
    body = tar_gz([*agent_entries(), entry])
    assert refused(server, cache, "agent.tar.gz", body) == reason


@pytest.mark.parametrize("kind", PACKERS)
def test_too_many_entries_are_refused(server: LoopbackServer, cache: Path, kind: str) -> None:
    entries = [*agent_entries(), *(File(f"data/{n}", b"") for n in range(20))]
    reason = refused(server, cache, f"agent.{kind}", PACKERS[kind](entries), max_entries=10)
    assert reason == "the archive has more than 10 entries"


@pytest.mark.parametrize("kind", ["tar.gz", "tar.bz2", "zip"])
def test_an_archive_that_unpacks_too_large_is_refused(
    server: LoopbackServer, cache: Path, kind: str
) -> None:
    pack = {"tar.gz": tar_gz, "tar.bz2": tar_bz2, "zip": zip_archive}[kind]
    body = pack([*agent_entries(), File("zeros", bytes(4_000_000))])
    assert len(body) < 100_000  # a bomb: small to download, large unpacked
    reason = refused(server, cache, f"agent.{kind}", body, max_extracted_bytes=1_000_000)
    assert reason == "the archive unpacks to more than 1000000 bytes"
