"""The MCP server answers the SDK's real client, over stdio and over streamable HTTP: the
threads of a store, a thread's text a page at a time, one item in full, a turn's patch, and
errors for bad arguments and for what the store does not have."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

import acp_adapters
from acp_adapters.store.open import open_store

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
FAKE = ROOT / "tests" / "agents" / "fake_agent.py"
TOOLS = {"list_threads", "read_thread", "list_items", "read_item", "turn_patch"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def db(workspace: Path, tmp_path: Path) -> Path:
    """A store with one thread, "t": a turn of the fake agent that edits two files."""
    path = tmp_path / "store.db"
    async with acp_adapters.connect(
        command=[sys.executable, str(FAKE), "edit", str(workspace)],
        cwd=workspace,
        policy="full-access",
        store=path,
        thread="t",
    ) as session:
        await session.prompt("edit")
    return path


def _command(db: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "acp_adapters", "mcp", "--store", str(db), *args]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@asynccontextmanager
async def _stdio(db: Path) -> AsyncIterator[ClientSession]:
    command = _command(db)
    parameters = StdioServerParameters(command=command[0], args=command[1:], cwd=str(ROOT))
    async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


async def _until_listening(process: subprocess.Popen[bytes], port: int) -> None:
    """Wait until the server takes connections (or fail if it exits first)."""
    while True:
        if process.poll() is not None:
            raise AssertionError(f"the server exited with {process.returncode}")
        try:
            connection = await anyio.connect_tcp("127.0.0.1", port)
        except OSError:
            await anyio.sleep(0.05)
        else:
            await connection.aclose()
            return


@asynccontextmanager
async def _http(db: Path) -> AsyncIterator[ClientSession]:
    port = _free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    process = subprocess.Popen(
        _command(db, "--transport", "http", "--port", str(port)),
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
    )
    try:
        await _until_listening(process, port)
        async with (
            streamable_http_client(url) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


TRANSPORTS = {"stdio": _stdio, "http": _http}


async def _call(session: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await session.call_tool(tool, arguments)
    text = "".join(getattr(block, "text", "") for block in result.content)
    assert not result.is_error, text
    answer: dict[str, Any] = json.loads(text)
    return answer


async def _error(session: ClientSession, tool: str, **arguments: Any) -> str:
    result = await session.call_tool(tool, arguments)
    text = "".join(getattr(block, "text", "") for block in result.content)
    assert result.is_error, text
    return text


@pytest.mark.parametrize("transport", list(TRANSPORTS))
async def test_the_tools_read_a_thread(transport: str, db: Path) -> None:
    async with await open_store(db) as store:
        thread = await store.thread_named("t")
        assert thread is not None
        stored = await store.items(thread.id)
    async with TRANSPORTS[transport](db) as session:
        tools = {tool.name for tool in (await session.list_tools()).tools}
        assert tools == TOOLS

        threads = (await _call(session, "list_threads"))["threads"]
        assert [(t["id"], t["name"], t["turns"]) for t in threads] == [(thread.id, "t", 1)]
        assert threads[0]["provider"] == thread.provider
        assert threads[0]["agent_session_id"] == thread.agent_session_id

        whole = await _call(session, "read_thread", thread="t", max_chars=200_000)
        assert not whole["truncated"]
        assert whole["next_offset"] is None
        assert "Edited" in whole["text"]
        assert "+BETA changed" in whole["text"]
        assert whole["total_chars"] == len(whole["text"])

        pages, offset = [], 0
        while True:
            page = await _call(session, "read_thread", thread=thread.id, offset=offset, max_chars=7)
            assert len(page["text"]) <= 7
            assert page["offset"] == offset
            pages.append(page["text"])
            if page["next_offset"] is None:
                assert not page["truncated"]
                break
            assert page["truncated"]
            offset = page["next_offset"]
        assert "".join(pages) == whole["text"]
        assert len(pages) > 1

        listed = (await _call(session, "list_items", thread="t"))["items"]
        assert [row["id"] for row in listed] == [item["id"] for item in stored]
        change = next(row for row in listed if row["kind"] == "file_change")
        item = (await _call(session, "read_item", thread="t", item_id=change["id"]))["item"]
        assert item == next(i for i in stored if i["id"] == change["id"])
        assert "+BETA changed" in item["diff_str"]

        patch = await _call(session, "turn_patch", thread="t", turn=1)
        assert "-beta\n+BETA changed\n" in patch["patch"]
        assert "+brand new\n" in patch["patch"]
        assert {Path(p).name for p in patch["files"]} == {"existing.txt", "new.txt"}


@pytest.mark.parametrize("transport", list(TRANSPORTS))
async def test_bad_arguments_and_what_the_store_lacks_are_errors(transport: str, db: Path) -> None:
    async with TRANSPORTS[transport](db) as session:
        assert "nope" in await _error(session, "read_thread", thread="nope")
        assert "nope" in await _error(session, "list_items", thread="nope")
        assert "nope" in await _error(session, "turn_patch", thread="nope", turn=1)
        assert "item-x" in await _error(session, "read_item", thread="t", item_id="item-x")
        assert "turn 2" in await _error(session, "turn_patch", thread="t", turn=2)
        for arguments in (
            {"thread": "t", "offset": -1},
            {"thread": "t", "max_chars": 0},
            {"thread": "t", "max_chars": 200_001},
            {"thread": "t", "offset": "zero"},
            {},
        ):
            await _error(session, "read_thread", **arguments)
        await _error(session, "turn_patch", thread="t", turn=0)
        await _error(session, "read_item", thread="t")


async def test_a_large_turn_patch_is_capped_and_made_off_the_event_loop(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While one client's turn_patch is being made, another client's call is answered: the
    patch is made in a worker thread (held here until the other call is done)."""
    import threading

    from acp_adapters.mcp_server import server as module

    release = threading.Event()
    made = module._turn_patch

    def held(files: Any, **options: Any) -> str:
        assert options == {"max_edits": 1000}  # the edit cap
        assert release.wait(10), "the other call never came back"
        return made(files, **options)

    monkeypatch.setattr(module, "_turn_patch", held)
    async with await open_store(db) as store:
        server = module.create_server(store)
        answers: dict[str, Any] = {}

        async def patch() -> None:
            answers["patch"] = await server.call_tool("turn_patch", {"thread": "t", "turn": 1})

        with anyio.fail_after(20):
            async with anyio.create_task_group() as group:
                group.start_soon(patch)
                await anyio.sleep(0.05)
                answers["list"] = await server.call_tool("list_threads", {})
                release.set()
    assert "list" in answers
    assert "BETA changed" in json.dumps(answers["patch"].model_dump(mode="json"))


def test_a_turns_rewrite_past_the_cap_says_its_patch_was_left_out() -> None:
    from acp_adapters.history.turn_patches import FileTurn, turn_patch

    old = "".join(f"old line {n}\n" for n in range(3000))
    new = "".join(f"new line {n}\n" for n in range(3000))
    capped = turn_patch([FileTurn("/ws/big.txt", old, new)], max_edits=1000)
    assert capped == (
        "--- /ws/big.txt\n+++ /ws/big.txt\n"
        "# /ws/big.txt: more than 1000 line edits, its patch left out\n"
    )
    assert turn_patch([FileTurn("/ws/big.txt", old, new)], max_edits=None).count("\n") > 6000


async def test_http_says_its_whole_url_and_serves_there(db: Path) -> None:
    process = subprocess.Popen(
        _command(db, "--transport", "http", "--port", "0"),  # a port the system picks
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        line = await anyio.to_thread.run_sync(process.stderr.readline)
        prefix, _, rest = line.partition("http://127.0.0.1:")
        assert prefix == "Serving MCP at "
        url = "http://127.0.0.1:" + rest.split()[0]
        assert url.endswith("/mcp")
        async with (
            streamable_http_client(url) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            threads = await _call(session, "list_threads")
        assert [t["name"] for t in threads["threads"]] == ["t"]
    finally:
        process.terminate()
        _, rest_of_stderr = process.communicate(timeout=10)  # and closes the pipe
    assert "INFO" not in rest_of_stderr


async def test_http_on_a_taken_port_fails_at_once_with_its_own_code(db: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        port = holder.getsockname()[1]
        done = subprocess.run(
            _command(db, "--transport", "http", "--port", str(port)),
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


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_missing_store_is_an_error_and_none_is_made(tmp_path: Path, transport: str) -> None:
    missing = tmp_path / "typo.db"
    done = subprocess.run(
        _command(missing, "--transport", transport, "--port", "0"),
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert f"no store at {missing}" in done.stderr
    assert not missing.exists()
