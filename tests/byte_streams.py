"""In-memory stand-ins for an agent's pipes, for tests of the JSON-RPC connection alone."""

from __future__ import annotations

import json
from typing import Any

import anyio
import anyio.lowlevel
from anyio.abc import ByteReceiveStream, ByteSendStream


class Chunks(ByteReceiveStream):
    """An agent's output: these chunks, then its end."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = list(chunks)

    async def receive(self, max_bytes: int = 65536) -> bytes:
        await anyio.lowlevel.checkpoint()
        if not self.chunks:
            raise anyio.EndOfStream
        return self.chunks.pop(0)

    async def aclose(self) -> None:
        self.chunks.clear()


class Sink(ByteSendStream):
    """An agent's input: what the client wrote to it."""

    def __init__(self) -> None:
        self.sent = bytearray()

    async def send(self, item: bytes) -> None:
        self.sent += item

    def messages(self) -> list[Any]:
        """Every line written, read as strict JSON (NaN and Infinity are refused)."""

        def refuse(word: str) -> Any:
            raise AssertionError(f"the client wrote {word}, which is not JSON")

        return [json.loads(line, parse_constant=refuse) for line in self.sent.splitlines()]

    async def aclose(self) -> None:
        pass
