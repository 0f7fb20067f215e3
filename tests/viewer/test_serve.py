"""``acp-adapters serve`` as a browser meets it, over real HTTP: the thread list, a thread's
snapshot (the wire snapshot of its stored items), an item in full, live deltas over
server-sent events to several followers at once, the Host and Origin checks, the
Content-Security-Policy, hostile text served only as JSON data, and a missing store."""

from __future__ import annotations

import gzip
import http.client
import json
import re
import shlex
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from acp_adapters.store.open import open_store
from acp_adapters.viewer.guard import CONTENT_SECURITY_POLICY
from acp_adapters.wire import apply_deltas, wire_snapshot

from .serving import (
    HOSTILE,
    ROOT,
    command,
    edit_turn,
    hostile_store,
    served,
    served_with_prompts,
    stored,
)

ASSETS = ROOT / "framework" / "acp_adapters" / "viewer" / "assets"


def _get(
    port: int, path: str, headers: dict[str, str] | None = None
) -> tuple[int, http.client.HTTPMessage, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", path, headers=headers or {})
        answer = connection.getresponse()
        return answer.status, answer.headers, answer.read()
    finally:
        connection.close()


def _json(port: int, path: str) -> Any:
    status, headers, body = _get(port, path)
    assert status == 200, body
    assert headers["content-type"].startswith("application/json")
    return json.loads(body)


class _Events:
    """A follower of a thread's event stream, as a browser's EventSource reads it."""

    def __init__(self, port: int, thread_id: str) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.connection.request("GET", f"/api/threads/{thread_id}/events")
        self.answer = self.connection.getresponse()
        assert self.answer.status == 200
        assert self.answer.headers["content-type"].startswith("text/event-stream")

    def next(self) -> tuple[str, Any]:
        """The next event's name and data (keep-alive comments skipped)."""
        name, data = "message", None
        while True:
            raw = self.answer.readline()
            if not raw:
                raise AssertionError("the stream ended")
            line = raw.decode().rstrip("\n")
            if line.startswith(":"):
                continue
            if line.startswith("event: "):
                name = line[len("event: ") :]
            elif line.startswith("data: "):
                data = json.loads(line[len("data: ") :])
            elif line == "" and data is not None:
                return name, data

    def close(self) -> None:
        self.connection.close()


def test_the_list_a_thread_its_snapshot_and_an_item_in_full(db: Path) -> None:
    thread_id, items = stored(db)
    with served(db) as port:
        (row,) = _json(port, "/api/threads")["threads"]
        assert row["id"] == thread_id
        assert (row["name"], row["turns"], row["status"]) == ("t", 1, "completed")
        assert {"provider", "title", "updated_at"} <= row.keys()
        assert _json(port, "/api/threads/t") == row
        assert _json(port, f"/api/threads/{thread_id}") == row
        snapshot = _json(port, f"/api/threads/{thread_id}/snapshot")
        assert snapshot == wire_snapshot(items)
        change = next(i for i in items if i["kind"] == "file_change" and i.get("diff_str"))
        assert "diff_str" not in next(i for i in snapshot["items"] if i["id"] == change["id"])
        whole = _json(port, f"/api/threads/{thread_id}/items/{change['id']}")["item"]
        assert whole["diff_str"] == change["diff_str"]
        status, _, body = _get(port, "/api/threads/nobody/snapshot")
        assert status == 404
        assert "nobody" in json.loads(body)["error"]
        status, _, _ = _get(port, f"/api/threads/{thread_id}/items/nothing")
        assert status == 404


def test_the_pages_and_their_assets_come_from_the_app_with_a_strict_policy(db: Path) -> None:
    thread_id, _ = stored(db)
    with served(db) as port:
        for path, kind in [
            ("/", "text/html"),
            (f"/threads/{thread_id}", "text/html"),
            ("/assets/viewer.js", "text/javascript"),
            ("/assets/viewer.css", "text/css"),
            ("/api/threads", "application/json"),
        ]:
            status, headers, body = _get(port, path)
            assert status == 200, path
            assert headers["content-type"].startswith(kind)
            assert headers["content-security-policy"] == CONTENT_SECURITY_POLICY
            assert headers["x-content-type-options"] == "nosniff"
            if kind == "text/html":
                assert b'<script src="/assets/viewer.js" defer></script>' in body
                assert b"http" not in body.replace(b"http-equiv", b"")  # nothing from elsewhere
        assert "script-src 'self'" in CONTENT_SECURITY_POLICY
        assert "'unsafe-inline'" not in CONTENT_SECURITY_POLICY
        assert _get(port, "/assets/../app.py")[0] == 404
        assert _get(port, "/assets/app.py")[0] == 404


def test_host_and_origin_are_checked(db: Path) -> None:
    with served(db) as port:
        assert _get(port, "/api/threads", {"Host": "evil.example"})[0] == 421
        assert _get(port, "/", {"Host": f"evil.example:{port}"})[0] == 421
        assert _get(port, "/api/threads", {"Host": f"localhost:{port}"})[0] == 200
        for origin in ["http://evil.example", f"http://localhost:{port + 1}", "null"]:
            status, headers, _ = _get(port, "/api/threads", {"Origin": origin})
            assert status == 403, origin
            assert headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        own = {"Origin": f"http://127.0.0.1:{port}"}
        assert _get(port, "/api/threads", own)[0] == 200


def test_followers_are_sent_the_snapshot_then_the_deltas_of_what_is_committed(
    db: Path, workspace: Path
) -> None:
    thread_id, items = stored(db)
    with served(db) as port:
        followers = [_Events(port, thread_id), _Events(port, thread_id)]
        try:
            views = []
            for follower in followers:
                name, snapshot = follower.next()
                assert name == "snapshot"
                assert snapshot == wire_snapshot(items)
                views.append(snapshot)
            edit_turn(db, workspace, "say again <b>bold</b>")
            _, after = stored(db)
            wanted = wire_snapshot(after)
            assert wanted != views[0]
            for index, follower in enumerate(followers):
                deltas = []
                while apply_deltas(views[index], deltas) != wanted:
                    name, delta = follower.next()
                    assert name == "delta"
                    deltas.append(delta)
                added = [d["add"] for d in deltas if "add" in d]
                assert any(
                    a["kind"] == "user_message" and "say again <b>bold</b>" in a.get("text", "")
                    for a in added
                )
        finally:
            for follower in followers:
                follower.close()


def test_a_hostile_thread_is_served_only_as_json_data(tmp_path: Path) -> None:
    path = tmp_path / "hostile.db"
    thread_id = hostile_store(path)
    with served(path) as port:
        for page in ["/", f"/threads/{thread_id}", "/threads/h"]:
            status, headers, body = _get(port, page)
            assert status == 200
            assert headers["content-security-policy"] == CONTENT_SECURITY_POLICY
            for text in HOSTILE:  # the pages hold no text of a thread
                assert text.encode() not in body
                assert b"pwned" not in body
        (row,) = _json(port, "/api/threads")["threads"]
        assert (row["title"], row["provider"]) == (HOSTILE[0], HOSTILE[0])
        snapshot = _json(port, f"/api/threads/{thread_id}/snapshot")
        texts = [i.get("text") for i in snapshot["items"]]
        assert texts[:2] == [HOSTILE[0], " ".join(HOSTILE)]
        assert snapshot["items"][2]["paths"] == [HOSTILE[1]]
        whole = _json(port, f"/api/threads/{thread_id}/items/f")["item"]
        assert HOSTILE[0] in whole["diff_str"]
        # Its items were kept without a log: a follower is sent them as they are stored.
        follower = _Events(port, thread_id)
        try:
            assert follower.next() == ("snapshot", snapshot)
        finally:
            follower.close()
        # What the thread is named by in a URL is not taken as a path or markup either.
        status, headers, body = _get(port, "/api/threads/%3Cscript%3E/snapshot")
        assert status == 404
        assert headers["content-type"].startswith("application/json")


def test_the_page_puts_text_in_as_text_only() -> None:
    script = (ASSETS / "viewer.js").read_text()
    for sink in ["innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("]:
        assert sink not in script, sink
    assert "textContent" in script
    for page in ["index.html", "thread.html"]:
        html = (ASSETS / page).read_text()
        assert "<script>" not in html  # no inline script: the policy would refuse it anyway
        assert not re.search(r"\son[a-z]+=", html)  # no inline handler
        assert "style=" not in html


def test_a_missing_store_is_an_error_and_none_is_made(tmp_path: Path) -> None:
    missing = tmp_path / "typo.db"
    done = subprocess.run(
        command(missing, "--port", "0"),
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert f"no store at {missing}" in done.stderr
    assert not missing.exists()


def test_a_port_that_is_taken_is_one_line_and_exit_11(db: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        port = holder.getsockname()[1]
        done = subprocess.run(
            command(db, "--port", str(port)),
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 11
    assert done.stderr.splitlines() == [
        f"Error: cannot listen on 127.0.0.1:{port}: Address already in use: stop what holds "
        "it, or pass another --port"
    ]


def _post(port: int, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, Any]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("POST", path, body=body, headers=headers)
        answer = connection.getresponse()
        body = answer.read()
        if answer.headers["content-type"].startswith("application/json"):
            return answer.status, json.loads(body)
        return answer.status, body.decode()
    finally:
        connection.close()


def _queued(path: Path, thread_id: str) -> list[Any]:
    async def read() -> list[Any]:
        async with await open_store(path, create=False) as store:
            return [p.prompt for p in await store.queued_prompts(thread_id)]

    return anyio.run(read)


def test_a_read_only_viewer_queues_no_prompt(db: Path) -> None:
    thread_id, _ = stored(db)
    with served(db) as port:
        assert _json(port, "/api/settings") == {"prompts": False}
        status, body = _post(
            port,
            f"/api/threads/{thread_id}/prompts",
            b'{"text": "hi"}',
            {"content-type": "application/json", "authorization": "Bearer x"},
        )
        assert status == 403
        assert "--allow-prompts" in body["error"]
    assert _queued(db, thread_id) == []


def test_with_allow_prompts_the_token_queues_a_prompt(db: Path) -> None:
    thread_id, _ = stored(db)
    path = f"/api/threads/{thread_id}/prompts"
    with served_with_prompts(db) as (port, token):
        assert len(token) >= 24
        assert _json(port, "/api/settings") == {"prompts": True}
        good = {"content-type": "application/json", "authorization": f"Bearer {token}"}
        for headers, status in [
            ({"content-type": "application/json"}, 401),
            ({**good, "authorization": "Bearer " + token[:-1]}, 401),
            ({**good, "content-type": "text/plain"}, 415),
            ({**good, "origin": "http://evil.example"}, 403),
        ]:
            assert _post(port, path, b'{"text": "no"}', headers)[0] == status, headers
        assert _post(port, path, b'{"text": ""}', good)[0] == 400
        assert _post(port, "/api/threads/nobody/prompts", b'{"text": "x"}', good)[0] == 404
        status, body = _post(port, path, b'{"text": "queued from the page"}', good)
        assert status == 202
        assert body["state"] == "queued"
    assert _queued(db, thread_id) == [[{"type": "text", "text": "queued from the page"}]]
    with served_with_prompts(db) as (_, again):
        assert again != token  # a token is good for one run


def test_the_snapshot_is_gzipped_and_the_event_stream_is_not(db: Path) -> None:
    thread_id, items = stored(db)
    with served(db) as port:
        status, headers, body = _get(
            port, f"/api/threads/{thread_id}/snapshot", {"Accept-Encoding": "gzip"}
        )
        assert status == 200
        assert headers["content-encoding"] == "gzip"
        assert json.loads(gzip.decompress(body)) == wire_snapshot(items)
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            connection.request(
                "GET", f"/api/threads/{thread_id}/events", headers={"Accept-Encoding": "gzip"}
            )
            answer = connection.getresponse()
            assert answer.headers["content-encoding"] is None
            assert answer.readline() == b"event: snapshot\n"
        finally:
            connection.close()


def test_a_turn_s_whole_patch(db: Path) -> None:
    thread_id, items = stored(db)
    paths = sorted({p for i in items if i["kind"] == "file_change" for p in i.get("paths", [])})
    with served(db) as port:
        whole = _json(port, f"/api/threads/{thread_id}/turns/1/patch")
        assert whole["turn"] == 1
        assert sorted(whole["files"]) == paths
        for path in paths:
            assert f"+++ {path}" in whole["patch"]
        assert _get(port, f"/api/threads/{thread_id}/turns/2/patch")[0] == 404
        assert _get(port, f"/api/threads/{thread_id}/turns/x/patch")[0] == 404


def test_a_session_queued_by_sessions_send_is_listed_with_its_prompt_waiting(
    tmp_path: Path,
) -> None:
    store = tmp_path / "sent.db"
    queued = subprocess.run(
        [
            sys.executable,
            "-m",
            "acp_adapters",
            "sessions",
            "send",
            "later",
            "--command",
            "/no/agent/runs/it/yet",
            "--store",
            str(store),
            "do it later",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert queued.returncode == 0, queued.stderr
    with served(store) as port:
        (row,) = _json(port, "/api/threads")["threads"]
        assert (row["name"], row["status"], row["turns"]) == ("later", "queued", 0)
        assert _json(port, f"/api/threads/{row['id']}/snapshot")["items"] == []


def test_a_session_that_run_s_kept_is_drawn_from_its_store(tmp_path: Path) -> None:
    store = tmp_path / "run.db"
    agent = shlex.join([sys.executable, str(ROOT / "tests" / "agents" / "cli_agent.py")])
    run = ["run", "-s", "kept", "--command", agent, "--store", str(store), "--cwd", str(tmp_path)]
    ran = subprocess.run(
        [sys.executable, "-m", "acp_adapters", *run, "hello"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr
    with served(store) as port:
        (row,) = _json(port, "/api/threads")["threads"]
        assert (row["name"], row["turns"], row["status"]) == ("kept", 1, "completed")
        snapshot = _json(port, f"/api/threads/{row['id']}/snapshot")
        kinds = [item["kind"] for item in snapshot["items"]]
        assert "user_message" in kinds
        assert "assistant_message" in kinds
