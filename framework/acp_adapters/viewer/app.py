"""The viewer's ASGI app: a store's threads as pages and as JSON, read-only unless given a prompt
token.

Routes:

* ``GET /``: the page listing the threads; ``GET /threads/{id}``: a thread's page. Both are
  the same static HTML for every thread (no text of a thread is in them): their script
  (``/assets/viewer.js``) fetches the JSON below and draws it as text, never as markup.
* ``GET /api/threads``: ``{"threads": [...]}``, each one's ``id``, ``name``, ``provider``,
  ``title``, ``turns``, ``updated_at`` and ``status``, the most recently updated first.
* ``GET /api/threads/{id}``: one of those rows (``{id}`` an id or a name).
* ``GET /api/threads/{id}/snapshot``: the thread's :func:`~acp_adapters.wire.wire_snapshot`
  (its stored items through the wire projection).
* ``GET /api/threads/{id}/items/{item_id}``: one item in full, as the store keeps it (a
  file change's ``diff_str``, a command's ``output``: what the wire leaves out, on demand).
* ``GET /api/threads/{id}/turns/{n}/patch``: what turn ``n`` did to the files, as one unified
  patch (:func:`~acp_adapters.history.turn_patches.turn_patch`: from the turn's checkpoints
  where the log has them, else from its other evidence), with
  each file's path and operation; 409 when the log lacks a file's whole text.
* ``GET /api/settings``: ``{"prompts": true}`` when the page may queue prompts.
* ``POST /api/threads/{id}/prompts`` (only with a prompt token, see :func:`create_app`):
  queues a prompt to the thread.
* ``GET /api/threads/{id}/events``: server-sent events: one ``snapshot`` (the wire snapshot
  of the thread read to the end of its log), then a ``delta`` event for each wire delta
  (:class:`~acp_adapters.wire.WireFollower`) as the thread is committed, from any process.

Every answer goes through :class:`~.guard.Guard`: a ``Host`` other than a local name, an
``Origin`` other than the page's own, is refused; every answer has a strict
Content-Security-Policy. An answer of 500 bytes or more is gzip'd for a client that takes it, but
for the event stream.
"""

from __future__ import annotations

import contextlib
import hmac
from collections.abc import AsyncIterator
from importlib import resources
from typing import Any

import anyio
import pluggy
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from .._json import dumps
from ..history.turn_patches import MissingEvidence, thread_turn_files, turn_patch
from ..store.base import Store, Thread, ThreadNotFound
from ..wire.projection import wire_snapshot
from .guard import Guard
from .live import Feeds

#: The page's files, served from the package (no build step, nothing from elsewhere).
ASSETS = {
    "viewer.js": "text/javascript; charset=utf-8",
    "viewer.css": "text/css; charset=utf-8",
}

#: Seconds between two keep-alive comments of an event stream with nothing to send.
KEEP_ALIVE_SECONDS = 15.0

#: How often an event stream with nothing to send looks whether the server stops (seconds).
LOOK_SECONDS = 0.5


class Stopping:
    """Set when the server stops (from its signal handler: a flag, nothing more): each event
    stream then ends within :data:`LOOK_SECONDS`, so that the server stops at once."""

    def __init__(self) -> None:
        self.is_set = False

    def set(self) -> None:
        self.is_set = True


def _json(value: Any, status_code: int = 200) -> Response:
    return Response(
        dumps(value), status_code=status_code, media_type="application/json; charset=utf-8"
    )


def _asset(name: str) -> bytes:
    return resources.files(__package__).joinpath("assets").joinpath(name).read_bytes()


def _error(status_code: int, text: str) -> Response:
    return _json({"error": text}, status_code)


async def _statuses(store: Store, threads: list[Thread]) -> dict[str, str]:
    """Each thread's status: ``running`` (a prompt or a turn runs), ``lost`` (its owner went
    away in a turn), ``queued`` (prompts wait), else its last turn's (``completed``,
    ``failed``, ``cancelled``), or ``new`` when it has none."""
    lost = set(await store.lost_threads())
    found: dict[str, str] = {}
    for thread in threads:
        turns = await store.turns(thread.id)
        prompts = await store.prompts(thread.id)
        if thread.id in lost:
            found[thread.id] = "lost"
        elif any(p.state == "running" for p in prompts) or (
            turns and turns[-1].status == "running"
        ):
            found[thread.id] = "running"
        elif prompts:
            found[thread.id] = "queued"
        else:
            found[thread.id] = turns[-1].status if turns else "new"
    return found


async def _row(store: Store, thread: Thread, status: str) -> dict[str, Any]:
    return {
        "id": thread.id,
        "name": thread.name,
        "provider": thread.provider,
        "title": thread.title,
        "turns": len(await store.turns(thread.id)),
        "updated_at": thread.updated_at,
        "status": status,
    }


def _sse(event: str, data: Any) -> bytes:
    # One line of JSON (dumps escapes every line break a string holds): one data field.
    return f"event: {event}\ndata: {dumps(data)}\n\n".encode()


#: The most characters a prompt sent from the page may hold.
PROMPT_CHARS = 100_000


def create_app(
    store: Store,
    *,
    pm: pluggy.PluginManager | None = None,
    stopping: Stopping | None = None,
    prompt_token: str | None = None,
) -> Starlette:
    """The viewer of ``store`` (open; the caller closes it, after the app's lifespan); its event
    streams end once ``stopping`` is set (:func:`~.listening.serve_app` sets it).

    Read-only, unless ``prompt_token`` is given: then ``POST /api/threads/{id}/prompts`` with
    ``Authorization: Bearer <prompt_token>`` and the JSON ``{"text": ...}`` queues that prompt
    to the thread (:meth:`~acp_adapters.store.base.Store.enqueue`), for its owner or a worker.
    """
    stopping = stopping if stopping is not None else Stopping()
    feeds: list[Feeds] = []

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with anyio.create_task_group() as tasks:
            feeds.append(Feeds(store, tasks, pm=pm))
            try:
                yield
            finally:
                feeds.clear()
                tasks.cancel_scope.cancel()

    async def find(request: Request) -> Thread | None:
        key = request.path_params["thread"]
        named = await store.thread_named(key)
        if named is not None:
            return named
        try:
            return await store.thread(key)
        except ThreadNotFound:
            return None

    def no_thread(request: Request) -> Response:
        return _error(404, f"no thread has the id or name {request.path_params['thread']!r}")

    async def no_icon(request: Request) -> Response:
        return Response(status_code=204)

    async def list_page(request: Request) -> Response:
        return Response(_asset("index.html"), media_type="text/html; charset=utf-8")

    async def thread_page(request: Request) -> Response:
        return Response(_asset("thread.html"), media_type="text/html; charset=utf-8")

    async def asset(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in ASSETS:
            return _error(404, "no such file")
        return Response(_asset(name), media_type=ASSETS[name])

    async def threads(request: Request) -> Response:
        found = await store.threads()
        statuses = await _statuses(store, found)
        return _json({"threads": [await _row(store, t, statuses[t.id]) for t in found]})

    async def thread(request: Request) -> Response:
        found = await find(request)
        if found is None:
            return no_thread(request)
        statuses = await _statuses(store, [found])
        return _json(await _row(store, found, statuses[found.id]))

    async def snapshot(request: Request) -> Response:
        found = await find(request)
        if found is None:
            return no_thread(request)
        return _json(wire_snapshot(await store.items(found.id)))

    async def item(request: Request) -> Response:
        found = await find(request)
        if found is None:
            return no_thread(request)
        wanted = request.path_params["item"]
        for stored in await store.items(found.id):
            if stored.get("id") == wanted:
                return _json({"item": stored})
        return _error(404, f"the thread has no item {wanted!r}")

    async def whole_turn(request: Request) -> Response:
        found = await find(request)
        if found is None:
            return no_thread(request)
        try:
            index = int(request.path_params["turn"])
        except ValueError:
            return _error(404, "a turn is a number, from 1")
        turns = await store.turns(found.id)
        if not any(t.index == index for t in turns):
            return _error(404, f"the thread has no turn {index} (it has {len(turns)})")
        try:
            files = await thread_turn_files(store, found.id, index)
        except MissingEvidence as error:
            return _error(409, str(error))
        # Off the event loop, and capped: one browser's large patch never stalls another.
        text = await anyio.to_thread.run_sync(lambda: turn_patch(files))
        return _json(
            {
                "turn": index,
                "patch": text,
                "files": [f.path for f in files],
                "operations": {f.path: f.operation for f in files},
            }
        )

    async def settings(request: Request) -> Response:
        return _json({"prompts": prompt_token is not None})

    async def prompt(request: Request) -> Response:
        if prompt_token is None:
            return _error(403, "read-only: start acp-adapters serve with --allow-prompts")
        given = request.headers.get("authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {prompt_token}".encode()):
            return _error(401, "a prompt needs the token acp-adapters serve printed")
        if not request.headers.get("content-type", "").startswith("application/json"):
            return _error(415, 'a prompt is sent as JSON: {"text": ...}')
        found = await find(request)
        if found is None:
            return no_thread(request)
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "the body is not JSON")
        text = body.get("text") if isinstance(body, dict) else None
        if not isinstance(text, str) or not text.strip() or len(text) > PROMPT_CHARS:
            return _error(400, f"text: a prompt of 1 to {PROMPT_CHARS} characters")
        queued = await store.enqueue(found.id, [{"type": "text", "text": text}])
        return _json({"id": queued.id, "position": queued.position, "state": queued.state}, 202)

    async def events(request: Request) -> Response:
        found = await find(request)
        if found is None:
            return no_thread(request)
        if not feeds:
            return _error(503, "the viewer is not running (its lifespan has not started)")
        following = feeds[0]

        async def stream() -> AsyncIterator[bytes]:
            async with following.follow(found.id) as (first, deltas):
                yield _sse("snapshot", first)
                quiet = 0.0
                while not stopping.is_set:
                    # No yield inside the timeout's scope: it would span the consumer's code.
                    sent: dict[str, Any] | None = None
                    with anyio.move_on_after(LOOK_SECONDS):
                        try:
                            sent = await deltas.receive()
                        except anyio.EndOfStream:
                            return
                    if sent is not None:
                        quiet = 0.0
                        yield _sse("delta", sent)
                        continue
                    quiet += LOOK_SECONDS
                    if quiet >= KEEP_ALIVE_SECONDS:
                        quiet = 0.0
                        yield b": keep-alive\n\n"

        return StreamingResponse(
            stream(),
            media_type="text/event-stream",
            headers={"cache-control": "no-store", "x-accel-buffering": "no"},
        )

    return Starlette(
        routes=[
            Route("/", list_page),
            Route("/favicon.ico", no_icon),
            Route("/threads/{thread}", thread_page),
            Route("/assets/{name}", asset),
            Route("/api/settings", settings),
            Route("/api/threads", threads),
            Route("/api/threads/{thread}", thread),
            Route("/api/threads/{thread}/snapshot", snapshot),
            Route("/api/threads/{thread}/items/{item}", item),
            Route("/api/threads/{thread}/events", events),
            Route("/api/threads/{thread}/turns/{turn}/patch", whole_turn),
            Route("/api/threads/{thread}/prompts", prompt, methods=["POST"]),
        ],
        # gzip for what is worth it (the snapshot, the script), never the event stream.
        middleware=[Middleware(Guard), Middleware(GZipMiddleware, minimum_size=500)],
        lifespan=lifespan,
    )
