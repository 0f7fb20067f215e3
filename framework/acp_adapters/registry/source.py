"""Loading the ACP agent registry: from a file, from a URL through an on-disk cache, offline.

:func:`load_registry` reads a registry file, or downloads one (the official
:data:`DEFAULT_REGISTRY_URL` by default) with a size cap, an overall deadline and a
conditional request (``If-None-Match`` / ``If-Modified-Since`` from the cached copy: a 304
reuses it). Offline, or when the network fails, the cached copy is used, and for the default
URL the snapshot bundled with acp-adapters when there is none; each fallback is noted in
:attr:`Registry.warnings`. A registry is untrusted: the document must match
``registry.schema.json``, and each agent entry ``agent.schema.json`` and then the models; an
invalid entry is skipped and noted in :attr:`Registry.skipped`, the others load.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .errors import RegistryError

if TYPE_CHECKING:
    from .models import Origin, Registry

# The models (pydantic) and the downloader are imported by the functions that parse and
# fetch: reading a file or the cache (what :mod:`.resolved` does first) loads neither.

#: The official registry: where :func:`load_registry` looks when given no source.
DEFAULT_REGISTRY_URL = "https://cdn.agentclientprotocol.com/registry/v1/latest/registry.json"
#: The largest registry document read, in bytes (1 MiB).
MAX_REGISTRY_BYTES = 1 << 20
#: The most agents kept from one registry; the rest are dropped with a warning.
MAX_AGENTS = 512
#: The time a registry download may take in all, in seconds.
DEFAULT_TIMEOUT = 30.0
#: The environment variable that moves acp-adapters' cache folder.
CACHE_ENV = "ACP_ADAPTERS_CACHE"

_HERE = Path(__file__).parent
#: The registry snapshot shipped with acp-adapters.
BUNDLED_REGISTRY = _HERE / "bundled.json"
SCHEMAS = _HERE / "schemas"
_LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
#: The download failures that refuse the registry rather than fall back to a copy of it: the
#: source is broken or hostile, not the network down.
_REFUSALS = ("too large", "not HTTPS", "redirected", "not a valid URL")


def default_cache_dir() -> Path:
    """The registry cache folder: ``$ACP_ADAPTERS_CACHE/registry``, else the user cache
    folder's ``acp-adapters/registry`` (``~/.cache/acp-adapters/registry`` on Linux)."""
    root = os.environ.get(CACHE_ENV)
    if root:
        return Path(root) / "registry"
    import platformdirs

    return Path(platformdirs.user_cache_dir("acp-adapters", appauthor=False)) / "registry"


def is_url(source: str | os.PathLike[str]) -> bool:
    """Whether a registry source names a URL (``scheme://...``), not a file."""
    return isinstance(source, str) and re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", source) is not None


def check_url(url: str, *, allow_loopback_http: bool = False) -> None:
    """Refuse a URL that is not HTTPS (plain HTTP only to 127.0.0.1/localhost, for tests)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme == "https" and parts.hostname:
        return
    if scheme == "http" and allow_loopback_http and parts.hostname in _LOOPBACK_HOSTS:
        return
    raise RegistryError(f"registry URL {url!r} refused: only https:// is fetched")


def load_registry(
    source: str | os.PathLike[str] | None = None,
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    offline: bool = False,
    timeout: float = DEFAULT_TIMEOUT,
    max_bytes: int = MAX_REGISTRY_BYTES,
    max_agents: int = MAX_AGENTS,
    allow_loopback_http: bool = False,
) -> Registry:
    """The registry at ``source``: a file path, an ``https://`` URL, or None (the official one).

    A URL goes through the cache in ``cache_dir`` (default :func:`default_cache_dir`):
    a conditional request from the cached copy's ETag / Last-Modified, a 304 reusing it,
    a 200 replacing it. ``offline``, or a network failure (unreachable, timeout, an HTTP
    error status), uses the cached copy, and for the default URL the bundled snapshot when
    there is none, with a warning. ``timeout`` bounds the whole download; a document over
    ``max_bytes`` is refused (a :class:`RegistryError`, never a fallback: the source is
    broken, not the network); agents beyond ``max_agents`` are dropped with a warning.

    :raises RegistryError: the file cannot be read, the document is not a registry or is too
        big, the URL is not HTTPS, or there is no copy to fall back to.
    """
    if source is None:
        source = DEFAULT_REGISTRY_URL
    if not is_url(source):
        path = Path(source)
        return parse_registry(
            _read_file(path, max_bytes), source=str(path), origin="file", max_agents=max_agents
        )
    from .download import DownloadError, fetch

    url = str(source)
    check_url(url, allow_loopback_http=allow_loopback_http)
    store = _Cache(Path(cache_dir) if cache_dir is not None else default_cache_dir(), url)
    cached = store.read(max_bytes)
    if offline:
        return _fallback(url, cached, "offline", max_bytes=max_bytes, max_agents=max_agents)
    headers: dict[str, str] = {}
    if cached is not None:
        if cached.etag:
            headers["If-None-Match"] = cached.etag
        if cached.last_modified:
            headers["If-Modified-Since"] = cached.last_modified
    try:
        answer = fetch(
            url,
            max_bytes=max_bytes,
            timeout=timeout,
            headers=headers,
            allow_loopback_http=allow_loopback_http,
        )
    except DownloadError as exc:
        if exc.reason.startswith(_REFUSALS):
            raise RegistryError(f"registry {url} refused: {exc.reason}") from None
        return _fallback(url, cached, exc.reason, max_bytes=max_bytes, max_agents=max_agents)
    if answer.not_modified:
        if cached is None:
            return _fallback(
                url,
                None,
                "a 304 answer with nothing cached",
                max_bytes=max_bytes,
                max_agents=max_agents,
            )
        return parse_registry(cached.body, source=url, origin="url", max_agents=max_agents)
    body = answer.body or b""
    registry = parse_registry(body, source=url, origin="url", max_agents=max_agents)
    store.write(body, etag=answer.etag, last_modified=answer.last_modified)
    return registry


def cached_registry(
    url: str = DEFAULT_REGISTRY_URL,
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    max_agents: int = MAX_AGENTS,
) -> Registry | None:
    """The cached copy of a URL's registry, without the network; None when there is none
    (or it no longer reads as a registry)."""
    store = _Cache(Path(cache_dir) if cache_dir is not None else default_cache_dir(), url)
    cached = store.read(MAX_REGISTRY_BYTES)
    if cached is None:
        return None
    try:
        return parse_registry(cached.body, source=url, origin="cache", max_agents=max_agents)
    except RegistryError:
        return None


def bundled_registry(*, max_agents: int = MAX_AGENTS) -> Registry:
    """The registry snapshot shipped with acp-adapters."""
    return parse_registry(
        _read_file(BUNDLED_REGISTRY, MAX_REGISTRY_BYTES),
        source=str(BUNDLED_REGISTRY),
        origin="bundled",
        max_agents=max_agents,
    )


def parse_registry(
    data: bytes | str,
    *,
    source: str,
    origin: Origin = "file",
    max_agents: int = MAX_AGENTS,
    warnings: list[str] | None = None,
) -> Registry:
    """A registry from its JSON text, each agent entry validated on its own.

    :raises RegistryError: not JSON, or not a registry document (``registry.schema.json``).
    """
    from pydantic import ValidationError

    from .models import Registry, RegistryAgent

    try:
        document: Any = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise RegistryError(f"registry {source}: not JSON: {exc}") from None
    reason = _document_error(document)
    if reason is not None:
        raise RegistryError(f"registry {source} is not an ACP registry: {reason}")
    notes = list(warnings or [])
    entries: list[Any] = document["agents"]
    if len(entries) > max_agents:
        notes.append(
            f"registry {source} lists {len(entries)} agents: only the first {max_agents} are kept"
        )
        entries = entries[:max_agents]
    validator = _agent_validator()
    agents: list[RegistryAgent] = []
    skipped: list[str] = []
    seen: set[str] = set()
    for index, entry in enumerate(entries):
        label = f"agent #{index}"
        if isinstance(entry, dict) and isinstance(entry.get("id"), str):
            label += f" {entry['id'][:80]!r}"
        error = _best_error(validator, entry)
        if error is not None:
            skipped.append(f"{label}: {error}")
            continue
        try:
            agent = RegistryAgent.model_validate(entry)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            skipped.append(f"{label}: {where}: {first['msg']}" if where else first["msg"])
            continue
        if agent.id in seen:
            skipped.append(f"{label}: the id {agent.id!r} appears twice (the first is kept)")
            continue
        seen.add(agent.id)
        agents.append(agent)
    return Registry(
        version=document["version"],
        agents=tuple(agents),
        skipped=skipped,
        warnings=notes,
        source=source,
        origin=origin,
    )


# -- validation --------------------------------------------------------------------------------


@cache
def schema(name: str) -> dict[str, Any]:
    """One of the registry's JSON schemas shipped with acp-adapters (``agent``, ``registry``)."""
    loaded: dict[str, Any] = json.loads((SCHEMAS / f"{name}.schema.json").read_text("utf-8"))
    return loaded


def _jsonschema() -> Any:
    """jsonschema, imported when a registry is first validated (it has no type stubs)."""
    import jsonschema  # type: ignore[import-untyped,unused-ignore]
    import jsonschema.exceptions  # type: ignore[import-untyped,unused-ignore]

    return jsonschema


@cache
def _agent_validator() -> Any:
    return _jsonschema().Draft7Validator(schema("agent"))


@cache
def _document_validator() -> Any:
    """``registry.schema.json`` for the document alone: its agent lists are checked entry by
    entry, so that one bad entry does not refuse the whole registry."""
    document = json.loads(json.dumps(schema("registry")))
    for key in ("agents", "extensions"):
        document["properties"][key].pop("items", None)
    return _jsonschema().Draft7Validator(document)


def _document_error(document: Any) -> str | None:
    return _best_error(_document_validator(), document)


def _best_error(validator: Any, instance: Any) -> str | None:
    error = _jsonschema().exceptions.best_match(validator.iter_errors(instance))
    if error is None:
        return None
    where = "/".join(str(part) for part in error.absolute_path)
    message = str(error.message)
    if len(message) > 300:
        message = message[:300] + "..."
    return f"{where}: {message}" if where else message


def _fallback(
    url: str, cached: _Cached | None, why: str, *, max_bytes: int, max_agents: int
) -> Registry:
    """The cached copy of ``url``, else (for the default URL) the bundled snapshot."""
    if cached is not None:
        try:
            return parse_registry(
                cached.body,
                source=url,
                origin="cache",
                max_agents=max_agents,
                warnings=[f"registry {url} not fetched ({why}): using the cached copy"],
            )
        except RegistryError:
            pass  # a cached copy that no longer reads: as if there were none
    if url == DEFAULT_REGISTRY_URL:
        registry = bundled_registry(max_agents=max_agents)
        return registry.model_copy(
            update={
                "warnings": [
                    f"registry {url} not fetched ({why}) and not cached: "
                    "using the snapshot bundled with acp-adapters",
                    *registry.warnings,
                ]
            }
        )
    raise RegistryError(f"registry {url} not fetched ({why}) and no cached copy")


def _read_file(path: Path, max_bytes: int) -> bytes:
    try:
        with path.open("rb") as stream:
            data = stream.read(max_bytes + 1)
    except OSError as exc:
        raise RegistryError(f"registry {path}: cannot read it: {exc.strerror or exc}") from None
    if len(data) > max_bytes:
        raise RegistryError(f"registry {path} is over {max_bytes} bytes: refused")
    return data


# -- the cache ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Cached:
    body: bytes
    etag: str | None
    last_modified: str | None


class _Cache:
    """One URL's cached registry: ``<key>.json`` (the body as received) and ``<key>.meta.json``
    (its URL, ETag and Last-Modified), ``<key>`` being the URL's sha256. Both are replaced
    atomically, the body first: a reader sees an old or a new copy, never half of one."""

    def __init__(self, folder: Path, url: str) -> None:
        key = hashlib.sha256(url.encode("utf-8")).hexdigest()[:32]
        self.url = url
        self.body_path = folder / f"{key}.json"
        self.meta_path = folder / f"{key}.meta.json"

    def read(self, max_bytes: int) -> _Cached | None:
        try:
            meta = json.loads(self.meta_path.read_text("utf-8"))
            with self.body_path.open("rb") as stream:
                body = stream.read(max_bytes + 1)
        except (OSError, ValueError):
            return None
        if not isinstance(meta, dict) or meta.get("url") != self.url or len(body) > max_bytes:
            return None
        if meta.get("sha256") != hashlib.sha256(body).hexdigest():
            return None  # the body and its meta are not of one download
        etag, modified = meta.get("etag"), meta.get("last_modified")
        return _Cached(
            body=body,
            etag=etag if isinstance(etag, str) else None,
            last_modified=modified if isinstance(modified, str) else None,
        )

    def write(self, body: bytes, *, etag: str | None, last_modified: str | None) -> None:
        meta = {
            "url": self.url,
            "etag": etag,
            "last_modified": last_modified,
            "sha256": hashlib.sha256(body).hexdigest(),
            "fetched_at": time.time(),
        }
        with contextlib.suppress(OSError):  # a cache that cannot be written is no cache
            self.body_path.parent.mkdir(parents=True, exist_ok=True)
            _atomic_write(self.body_path, body)
            _atomic_write(self.meta_path, json.dumps(meta).encode("utf-8"))


def _atomic_write(path: Path, data: bytes) -> None:
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
