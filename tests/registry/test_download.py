"""download.fetch and download.download_to against a loopback server: caps, deadline, HTTPS."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from acp_adapters.errors import AcpAdaptersError
from acp_adapters.registry.download import DownloadError, FetchResult, download_to, fetch

from .http_server import LoopbackServer

BODY = b"registry bytes " * 100


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as running:
        yield running


def get(url: str, **kwargs: object) -> FetchResult:
    options: dict[str, object] = {"max_bytes": 10_000, "timeout": 10.0}
    options.update(kwargs)
    return fetch(url, allow_loopback_http=True, **options)  # type: ignore[arg-type]


def test_fetch_returns_the_body_and_its_validators(server: LoopbackServer) -> None:
    date = server.http_date(1_700_000_000)
    url = server.add("/registry.json", BODY, etag='"v1"', last_modified=date)
    result = get(url)
    assert result == FetchResult(BODY, 200, '"v1"', date, False)
    (request,) = server.requests
    assert request.path == "/registry.json"
    assert request.headers["Accept-Encoding"] == "identity"


def test_a_matching_etag_is_not_modified(server: LoopbackServer) -> None:
    url = server.add("/registry.json", BODY, etag='"v1"')
    result = get(url, headers={"If-None-Match": '"v1"'})
    assert result.not_modified
    assert result.body is None
    assert result.status == 304
    assert result.etag == '"v1"'
    assert server.requests[0].headers["If-None-Match"] == '"v1"'
    changed = get(url, headers={"If-None-Match": '"v0"'})
    assert (changed.not_modified, changed.body) == (False, BODY)


def test_an_unchanged_last_modified_is_not_modified(server: LoopbackServer) -> None:
    date = server.http_date(1_700_000_000)
    url = server.add("/registry.json", BODY, last_modified=date)
    assert get(url, headers={"If-Modified-Since": date}).not_modified
    older = server.http_date(1_600_000_000)
    assert get(url, headers={"If-Modified-Since": older}).body == BODY


def test_a_body_announced_over_the_cap_is_refused(server: LoopbackServer) -> None:
    url = server.add("/big", b"x" * 2000)
    with pytest.raises(DownloadError) as caught:
        get(url, max_bytes=1000)
    assert caught.value.reason == "too large: the server announces 2000 bytes, the limit is 1000"
    assert url in str(caught.value)
    assert isinstance(caught.value, AcpAdaptersError)


def test_a_body_over_the_cap_without_a_length_is_refused_while_read(
    server: LoopbackServer,
) -> None:
    url = server.add("/big", b"x" * 5_000_000, omit_length=True)
    with pytest.raises(DownloadError, match=r"too large: more than the limit of 1000 bytes"):
        get(url, max_bytes=1000)


def test_a_body_of_exactly_the_cap_is_accepted(server: LoopbackServer) -> None:
    url = server.add("/exact", b"y" * 1000, omit_length=True)
    assert get(url, max_bytes=1000).body == b"y" * 1000


def test_a_body_shorter_than_its_content_length_is_truncated(server: LoopbackServer) -> None:
    url = server.add("/short", b"z" * 1000, truncate_at=400)
    with pytest.raises(DownloadError) as caught:
        get(url)
    assert caught.value.reason == (
        "truncated: received 400 of the 1000 bytes announced (Content-Length)"
    )


def test_a_trickling_body_hits_the_overall_deadline(server: LoopbackServer) -> None:
    # Each byte comes well within any socket timeout; the transfer as a whole does not.
    url = server.add("/slow", b"s" * 1000, drip=0.02)
    with pytest.raises(DownloadError) as caught:
        get(url, timeout=0.5)
    assert caught.value.reason == "timed out after 0.5 s"


def test_trickling_headers_hit_the_overall_deadline(server: LoopbackServer) -> None:
    url = server.add("/slow", BODY, drip=0.02, drip_headers=True)
    with pytest.raises(DownloadError) as caught:
        get(url, timeout=0.5)
    assert caught.value.reason == "timed out after 0.5 s"


def test_a_server_that_never_answers_times_out(server: LoopbackServer) -> None:
    url = server.add("/stalled", BODY, gate=threading.Event())
    with pytest.raises(DownloadError, match=r"timed out after 0.3 s"):
        get(url, timeout=0.3)


@pytest.mark.parametrize(
    "url",
    [
        "http://example.com/registry.json",
        "ftp://example.com/registry.json",
        "file:///etc/passwd",
        "http://127.0.0.2/registry.json",
        "https:///no-host",
    ],
)
def test_only_https_is_fetched(url: str) -> None:
    with pytest.raises(DownloadError) as caught:
        fetch(url, max_bytes=100, timeout=5.0, allow_loopback_http=True)
    assert caught.value.reason == (
        "not HTTPS (plain http:// is accepted only for 127.0.0.1, localhost and [::1])"
    )


def test_loopback_http_needs_the_flag(server: LoopbackServer) -> None:
    url = server.add("/registry.json", BODY)
    with pytest.raises(DownloadError) as caught:
        fetch(url, max_bytes=10_000, timeout=5.0)
    assert caught.value.reason == "not HTTPS (only https:// URLs are downloaded)"
    assert server.requests == []


def test_localhost_counts_as_loopback(server: LoopbackServer) -> None:
    server.add("/registry.json", BODY)
    assert get(f"http://localhost:{server.port}/registry.json").body == BODY


def test_an_http_error_status_is_named(server: LoopbackServer) -> None:
    with pytest.raises(DownloadError) as caught:
        get(server.url("/missing"))
    assert caught.value.reason == "HTTP 404 Not Found"


def test_a_redirect_to_plain_http_is_refused(server: LoopbackServer) -> None:
    url = server.add("/moved", b"", status=302, headers={"Location": "http://example.com/x"})
    with pytest.raises(DownloadError) as caught:
        get(url)
    assert caught.value.reason.startswith("redirected to http://example.com/x: not HTTPS")
    assert len(server.requests) == 1


def test_a_loopback_redirect_is_followed(server: LoopbackServer) -> None:
    server.add("/registry.json", BODY)
    url = server.add("/moved", b"", status=302, headers={"Location": "/registry.json"})
    assert get(url).body == BODY
    assert [r.path for r in server.requests] == ["/moved", "/registry.json"]


def test_credentials_are_not_shown(server: LoopbackServer) -> None:
    url = f"http://user:secret@127.0.0.1:{server.port}/missing"
    with pytest.raises(DownloadError) as caught:
        get(url)
    assert "secret" not in str(caught.value)
    assert f"http://127.0.0.1:{server.port}/missing" in str(caught.value)


def test_download_to_streams_to_a_file_with_its_sha256(
    server: LoopbackServer, tmp_path: Path
) -> None:
    body = bytes(range(256)) * 1000
    url = server.add("/agent.tar.gz", body)
    seen: list[tuple[int, int | None]] = []
    dest = tmp_path / "agent.tar.gz"
    path, digest, size = download_to(
        url,
        dest,
        max_bytes=len(body),
        timeout=10.0,
        allow_loopback_http=True,
        progress=lambda done, total: seen.append((done, total)),
    )
    assert (path, digest, size) == (dest, hashlib.sha256(body).hexdigest(), len(body))
    assert dest.read_bytes() == body
    assert seen[0] == (0, len(body))
    assert seen[-1] == (len(body), len(body))
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)


def test_download_to_removes_the_file_on_failure(server: LoopbackServer, tmp_path: Path) -> None:
    url = server.add("/agent.tar.gz", b"a" * 1000, truncate_at=10)
    dest = tmp_path / "agent.tar.gz"
    with pytest.raises(DownloadError, match="truncated"):
        download_to(url, dest, max_bytes=10_000, timeout=10.0, allow_loopback_http=True)
    assert not dest.exists()
