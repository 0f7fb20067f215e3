"""JSON-RPC 2.0 over newline-delimited JSON, in both directions at once.

:class:`Connection` reads messages from one byte stream and writes them to
another (an agent's stdout and stdin). Requests go both ways: the client's
wait for their answers, the agent's are answered by a handler, each in a task
of its own, so a slow answer blocks nothing. Messages are taken in the order
they arrived: a notification is handled before the next message is looked at,
so an answer or a request never overtakes the updates sent before it. A batch
(a JSON array) is taken apart; the answers to its requests go back as one array.

Every line from the agent is untrusted, and none of what follows ends the
connection. Lines are cut at ``\\n`` only. A line that is not JSON, or not a
message, is skipped and reported; so is a line longer than ``max_line_bytes``
(dropped as it comes, its bytes never held whole), and one holding more than
``max_elements`` values (``[{},{},...]``: counted before it is parsed, in steps
that let the event loop run, so that it costs neither gigabytes nor seconds in
which no other session runs). An answer to an id that was not asked for is reported and dropped.

Ids keep their JSON type: ``1`` and ``"1"`` are different requests, and an
answer echoes the id as it was sent. A request's id is a string, an integer or
null: JSON-RPC 2.0 also allows fractional numbers but discourages them, and no
ACP agent uses them, so a request whose id is anything else (``1.5``, an
object, an array, ``true``) is answered ``{"id": null, "error": {"code":
-32600}}`` and never handled. ``NaN`` and ``Infinity`` are not JSON at all: a
request holding one is answered the same way, and nothing here ever writes them.

The agent's requests are handled concurrently, at most ``max_pending_requests``
at once: one past that is answered at once with error -32000 ("too many
requests in progress"), without a task for it, so a flood of requests costs no
more than that many tasks. ``$/cancel_request`` works both ways: the client can
cancel its own request, and a request the agent cancels is answered with error
-32800.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from itertools import count
from typing import Any

import anyio
import anyio.lowlevel
from anyio.abc import ByteReceiveStream, ByteSendStream, TaskGroup

from .. import _json
from .._json import (
    DEFAULT_MAX_ELEMENTS,
    DEFAULT_MAX_LINE_BYTES,
    LineSplitter,
    LineTooLong,
    NotFiniteError,
    TooDeepError,
    count_elements,
)
from ..errors import AcpAdaptersError
from .share import Account, loop_share

__all__ = [
    "DEFAULT_MAX_ELEMENTS",
    "DEFAULT_MAX_LINE_BYTES",
    "DEFAULT_MAX_PENDING_REQUESTS",
    "INBOX_MESSAGES",
    "Connection",
    "ConnectionClosed",
    "Problem",
    "RpcError",
]

log = logging.getLogger("acp_adapters.transport")

#: JSON-RPC error codes used here.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REQUEST_CANCELLED = -32800
#: How many problems of one kind a connection logs as warnings (all are in ``problems``).
LOGGED_PER_KIND = 10
#: How many refusals may wait for the agent to read them before reading waits too (a few
#: MiB of small answers; see :meth:`Connection._refuse`).
QUEUED_ANSWERS = 65536
#: A request refused because too many of the agent's are in progress (a server error).
TOO_MANY_REQUESTS = -32000

CANCEL_METHOD = "$/cancel_request"
#: How many of the agent's requests may be in progress at once.
DEFAULT_MAX_PENDING_REQUESTS = 256
#: How many messages read ahead of the dispatcher may wait for it.
INBOX_MESSAGES = 256
#: How many messages the dispatcher handles before it lets the event loop run the others'
#: tasks (a flooding agent takes turns with the process's other sessions, in slices of
#: about a millisecond).
DISPATCH_SLICE = 32


class RpcError(AcpAdaptersError):
    """An error answer to a request: ``code``, ``message`` and ``data`` as the peer sent them."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} (JSON-RPC error {code})")
        self.code = code
        self.message = message
        self.data = data

    def to_wire(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class AnswerSent(Exception):
    """Raised by a request handler that sent its answer itself (:meth:`Connection.answer_now`)."""


class ConnectionClosed(AcpAdaptersError):
    """The agent went away (exited, crashed, or closed its output) while requests were pending.

    ``exit_status`` is its exit code (negative: the signal that ended it; None:
    not known yet); ``stderr_tail`` is the end of what it wrote to stderr.
    """

    def __init__(self, reason: str, exit_status: int | None = None, stderr_tail: str = "") -> None:
        detail = f"; stderr ends with: {stderr_tail[-500:]}" if stderr_tail.strip() else ""
        super().__init__(f"{reason} (exit status {exit_status}){detail}")
        self.exit_status = exit_status
        self.stderr_tail = stderr_tail


@dataclass(frozen=True)
class Problem:
    """Something the connection skipped: what, and a short look at it."""

    #: "not_json", "not_a_message", "line_too_long", "too_many_elements", "invalid_request",
    #: "too_many_requests", "unknown_id", "handler_error"
    kind: str
    detail: str


#: Answers an agent's request: ``(method, params, request id) -> result``; raise RpcError to refuse.
RequestHandler = Callable[[str, Any, Any], Awaitable[Any]]
NotificationHandler = Callable[[str, Any], Awaitable[None]]
ProblemHandler = Callable[[Problem], None]


def _key(request_id: Any) -> tuple[str, Any] | None:
    """A request id as a dict key that keeps its JSON type (``1`` is not ``"1"``)."""
    if isinstance(request_id, bool) or not isinstance(request_id, int | str):
        return None
    return (type(request_id).__name__, request_id)


def _valid_id(request_id: Any) -> bool:
    """Whether a request may have this id: a string, an integer or null (no fractions)."""
    return request_id is None or _key(request_id) is not None


@dataclass(frozen=True)
class _Refused:
    """A request refused before it could be read as a message (it held ``NaN``): to be
    answered in its turn, with ``request_id`` (None: its id could not be echoed)."""

    request_id: Any
    reason: str


@dataclass
class _Pending:
    event: anyio.Event = field(default_factory=anyio.Event)
    response: dict[str, Any] | None = None
    closed: ConnectionClosed | None = None


class Connection:
    """One JSON-RPC connection over a pair of byte streams."""

    def __init__(
        self,
        receive: ByteReceiveStream,
        send: ByteSendStream,
        *,
        on_request: RequestHandler,
        on_notification: NotificationHandler,
        on_problem: ProblemHandler | None = None,
        on_message: Callable[[str, Any], None] | None = None,
        on_drained: Callable[[], None] | None = None,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        max_elements: int = DEFAULT_MAX_ELEMENTS,
        max_pending_requests: int = DEFAULT_MAX_PENDING_REQUESTS,
    ) -> None:
        """``max_line_bytes``: the longest line read; ``max_elements``: the most values a
        line may hold (see :func:`acp_adapters._json.count_elements`), counted only in lines
        longer than that many bytes; ``max_pending_requests``: how many of the agent's
        requests may be in progress at once."""
        self._receive = receive
        self._send = send
        self._on_request = on_request
        self._on_notification = on_notification
        self._on_problem = on_problem or (lambda problem: None)
        #: Sees every message as it goes out ("out") or comes in ("in"), and each line read
        #: that is not JSON ("raw", its text): for recording.
        self._on_message = on_message or (lambda direction, message: None)
        #: Called when every message read so far has been handled: a moment to catch up.
        self._on_drained = on_drained or (lambda: None)
        self.max_line_bytes = max_line_bytes
        self.max_elements = max_elements
        self.max_pending_requests = max_pending_requests
        #: How many problems of each kind were logged.
        self._logged: dict[str, int] = {}
        #: The agent's requests being handled now (each in a task).
        self._in_progress = 0
        self._ids = count(1)
        self._pending: dict[tuple[str, Any], _Pending] = {}
        self._handling: dict[tuple[str, Any], anyio.CancelScope] = {}
        #: The agent's requests in progress that came in a batch.
        self._batched: set[tuple[str, Any] | None] = set()
        self._write_lock = anyio.Lock()
        #: Answers the writer task sends (see :meth:`send_soon`), whether it runs, and what
        #: the dispatcher waits for when too many wait.
        self._queued: deque[Any] = deque()
        self._writing = False
        self._queue_space = anyio.Event()
        # Every message read, in arrival order, for the dispatcher. Bounded: when the
        # dispatcher falls behind a flood, reading waits, and the agent's pipe fills.
        self._inbox_out, self._inbox_in = anyio.create_memory_object_stream[Any](INBOX_MESSAGES)
        self._task_group: TaskGroup | None = None
        #: This connection's use of the event loop (made when it starts serving).
        self._account: Account | None = None
        self._closed: ConnectionClosed | None = None

    # --- running ------------------------------------------------------------------------

    async def serve(self, task_group: TaskGroup) -> None:
        """Read until the agent's output ends; run in a task of ``task_group``."""
        self._task_group = task_group
        self._account = loop_share().account()
        done = anyio.Event()
        task_group.start_soon(self._dispatch, done)
        splitter = LineSplitter(self.max_line_bytes)
        try:
            while True:
                try:
                    chunk = await self._receive.receive(65536)
                except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                    await self._take_lines(splitter.end())
                    break
                if not await self._take_lines(splitter.feed(chunk)):
                    break
        finally:
            self._inbox_out.close()
        await done.wait()

    async def _take_lines(self, lines: Iterable[bytes | LineTooLong]) -> bool:
        """Parse ``lines`` into the inbox; False once the dispatcher is gone. The loop time
        it takes is this connection's (see :mod:`.share`)."""
        account = self._account
        assert account is not None, "serve() makes it"
        started = time.thread_time()
        counting = True  # not while it waits: what runs then is not this connection's
        try:
            for line in lines:
                if isinstance(line, LineTooLong):
                    self._problem("line_too_long", f"more than {line.limit} bytes")
                    continue
                if len(line) > self.max_elements:
                    account.spent(time.thread_time() - started)
                    counting = False
                    many = await self._too_many_elements(line)
                    started, counting = time.thread_time(), True
                    if many:
                        continue
                message = self._parse_line(line)
                if message is None:
                    continue
                try:
                    self._inbox_out.send_nowait(message)
                except anyio.WouldBlock:
                    # The dispatcher is behind: wait (the agent's pipe fills meanwhile).
                    account.spent(time.thread_time() - started)
                    counting = False
                    await self._inbox_out.send(message)
                    started, counting = time.thread_time(), True
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            # The dispatcher is gone (the session is closing and cancelled it first):
            # nothing will handle what the agent sends now.
            return False
        finally:
            if counting:
                account.spent(time.thread_time() - started)
        return True

    def fail_pending(self, error: ConnectionClosed) -> None:
        """The agent is gone: every request waiting for an answer fails with ``error``."""
        self._closed = error
        for pending in self._pending.values():
            pending.closed = error
            pending.event.set()

    async def _too_many_elements(self, line: bytes) -> bool:
        """Whether a long line holds more than ``max_elements`` values (then it is reported).

        Counted before parsing: parsing 48 MiB of ``{},`` makes sixteen million
        objects, gigabytes and seconds during which no other session runs. The count
        stops past the limit and lets the event loop run between its steps.
        """
        counted = 0
        for so_far in count_elements(line, self.max_elements):
            counted = so_far
            await anyio.sleep(0)
        if counted <= self.max_elements:
            return False
        self._problem(
            "too_many_elements", f"more than {self.max_elements} values in {len(line)} bytes"
        )
        return True

    def _problem(self, kind: str, detail: str) -> None:
        problem = Problem(kind, detail[:300])
        # A flood of one kind is logged a few times, then once more to say so: the log of an
        # application that set none up is stderr, and an agent must not fill it.
        seen = self._logged[kind] = self._logged.get(kind, 0) + 1
        if seen <= LOGGED_PER_KIND:
            log.warning("acp connection: %s: %s", kind, problem.detail)
        elif seen == LOGGED_PER_KIND + 1:
            log.warning("acp connection: more %s problems; not logged (see problems)", kind)
        else:
            log.debug("acp connection: %s: %s", kind, problem.detail)
        self._on_problem(problem)

    def _parse_line(self, line: bytes) -> Any:
        """The message of one line; None for a blank line or one that is not JSON; a
        :class:`_Refused` for a request that holds what JSON does not have (``NaN``)."""
        try:
            message = _json.loads(line)  # the common case: UTF-8 JSON, read as it is
        except TooDeepError:
            return self._too_deep()
        except ValueError:
            text = line.decode("utf-8", errors="replace").strip()
            if not text:
                return None
            try:
                message = _json.loads(text)
            except TooDeepError:
                return self._too_deep()
            except ValueError as error:
                self._problem("not_json", text[:200])
                self._on_message("raw", text)
                return self._refused(text) if isinstance(error, NotFiniteError) else None
        return message

    def _too_deep(self) -> None:
        """A message nested past the limit: dropped, as one over the other limits is (it
        is JSON, and an agent's message: not a line of text to keep)."""
        self._problem("too_deep", f"nested deeper than {_json.MAX_DEPTH} levels")
        return None

    @staticmethod
    def _refused(text: str) -> _Refused | None:
        """A line refused for a ``NaN`` or an infinity: when it is a request, it is answered
        (an agent waits for that answer), with its id when that id is a valid one."""
        try:
            message = _json.loads(text, finite=False)
        except ValueError:
            return None
        if not (isinstance(message, dict) and "id" in message and "method" in message):
            return None
        request_id = message["id"]
        return _Refused(
            request_id if _valid_id(request_id) else None,
            "invalid request: NaN and Infinity are not JSON",
        )

    async def _dispatch(self, done: anyio.Event) -> None:
        """Take the messages in arrival order; notifications are awaited one by one."""
        account = self._account
        assert account is not None, "serve() makes it before it starts this"
        try:
            async with self._inbox_in:
                async for first in self._inbox_in:
                    # Handle what is already read without going back to the event loop
                    # for each message; notifications are handled one by one, in order.
                    started = time.thread_time()
                    message = first
                    handled = 0
                    while True:
                        if not isinstance(message, _Refused):
                            # Seen as it is handled, in the order it is handled: what the
                            # session projects and records follows the answers it sends.
                            self._on_message("in", message)
                        if isinstance(message, list):
                            await self._handle_batch(message)
                        else:
                            await self._handle_message(message, batch=None)
                        handled += 1
                        if handled % DISPATCH_SLICE == 0:
                            # A backlog: the other sessions get their turn, and, when
                            # this one takes more than its share of the loop, some time.
                            wait = account.wait_after_slice(time.thread_time() - started)
                            if wait:
                                await anyio.sleep(wait)
                            else:
                                await anyio.lowlevel.checkpoint()
                            started = time.thread_time()
                        try:
                            message = self._inbox_in.receive_nowait()
                        except (anyio.WouldBlock, anyio.EndOfStream):
                            break  # nothing more for now; or the output ended
                    self._on_drained()
                    account.spent(time.thread_time() - started)
        finally:
            done.set()

    async def _handle_batch(self, messages: list[Any]) -> None:
        # Exactly the messages _handle_message answers: the batch's answer goes out once
        # each of them has one.
        requests = [
            m
            for m in messages
            if isinstance(m, dict) and isinstance(m.get("method"), str) and "id" in m
        ]
        batch = _Batch(len(requests), self) if requests else None
        for message in messages:
            await self._handle_message(message, batch=batch)

    async def _handle_message(self, message: Any, batch: _Batch | None) -> None:
        if isinstance(message, _Refused):
            await self._refuse(message.request_id, INVALID_REQUEST, message.reason, None)
            return
        if not isinstance(message, dict):
            self._problem("not_a_message", repr(message)[:200])
            return
        method = message.get("method")
        if isinstance(method, str):
            if "id" in message:
                await self._take_request(message, method, batch)
            elif method == CANCEL_METHOD:
                self._cancel_handling(message.get("params"))
            else:
                try:
                    await self._on_notification(method, message.get("params"))
                except Exception as exc:  # keep reading whatever one handler did
                    self._problem("handler_error", f"{method}: {exc!r}")
            return
        if "id" in message and ("result" in message or "error" in message):
            key = _key(message["id"])
            pending = self._pending.get(key) if key is not None else None
            if pending is None or pending.event.is_set():
                self._problem("unknown_id", f"an answer to {message['id']!r}, which was not asked")
                return
            pending.response = message
            pending.event.set()
            return
        self._problem("not_a_message", json.dumps(message)[:200])

    async def _take_request(
        self, message: dict[str, Any], method: str, batch: _Batch | None
    ) -> None:
        """Start handling one of the agent's requests, or refuse it at once."""
        request_id = message["id"]
        if not _valid_id(request_id):
            self._problem("invalid_request", f"{method}: the id {request_id!r}"[:200])
            reason = "invalid request: an id is a string, an integer or null"
            await self._refuse(None, INVALID_REQUEST, reason, batch)
            return
        if self._in_progress >= self.max_pending_requests:
            # No task for it: a flood of requests costs what the limit allows, no more.
            limit = self.max_pending_requests
            self._problem("too_many_requests", f"{method}: more than {limit} in progress")
            reason = f"too many requests in progress (limit {limit})"
            await self._refuse(request_id, TOO_MANY_REQUESTS, reason, batch)
            return
        assert self._task_group is not None
        self._in_progress += 1
        if batch is not None:
            self._batched.add(_key(request_id))
        self._task_group.start_soon(self._answer, request_id, method, message.get("params"), batch)

    async def _refuse(self, request_id: Any, code: int, reason: str, batch: _Batch | None) -> None:
        """Answer a request with an error without handling it, and without waiting on the
        agent: the dispatcher must go on reading whether or not the agent reads its answers
        (an agent that sends all its requests before it reads one would otherwise block on
        its full output pipe while this waits on its full input pipe)."""
        response = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": reason}}
        while len(self._queued) >= QUEUED_ANSWERS:
            # So many unread answers that memory would grow: only now does reading wait.
            self._queue_space = anyio.Event()
            await self._queue_space.wait()
        if batch is not None:
            batch.add_soon(response)
        else:
            self.send_soon(response)

    def send_soon(self, message: Any) -> None:
        """Send ``message`` from the writer task, after what waits before it; never waits."""
        self._queued.append(message)
        if not self._writing and self._task_group is not None:
            self._writing = True
            self._task_group.start_soon(self._write_queued)

    async def _write_queued(self) -> None:
        try:
            while self._queued:
                message = self._queued.popleft()
                self._queue_space.set()
                with contextlib.suppress(ConnectionClosed):  # gone: no one to answer
                    await self._write(message)
        finally:
            self._writing = False

    async def _answer(
        self, request_id: Any, method: str, params: Any, batch: _Batch | None
    ) -> None:
        try:
            await self._answer_one(request_id, method, params, batch)
        finally:
            self._in_progress -= 1

    async def _answer_one(
        self, request_id: Any, method: str, params: Any, batch: _Batch | None
    ) -> None:
        key = _key(request_id)
        response: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id}
        with anyio.CancelScope() as scope:
            if key is not None:
                self._handling[key] = scope
            try:
                response["result"] = await self._on_request(method, params, request_id)
            except AnswerSent:
                if key is not None:
                    self._handling.pop(key, None)
                return
            except RpcError as error:
                response["error"] = error.to_wire()
            except Exception as exc:  # a bug in a handler must not end the connection
                self._problem("handler_error", f"{method}: {exc!r}")
                response["error"] = {"code": INTERNAL_ERROR, "message": f"internal error: {exc}"}
        if scope.cancelled_caught:
            response.pop("result", None)
            response["error"] = {"code": REQUEST_CANCELLED, "message": "request cancelled"}
        if key is not None:
            self._handling.pop(key, None)
            self._batched.discard(key)
        try:
            data = self._encode(response)
        except ValueError as exc:  # NaN in a handler's result: JSON has no such number
            self._problem("handler_error", f"{method}: {exc}")
            response.pop("result", None)
            response["error"] = {"code": INTERNAL_ERROR, "message": f"internal error: {exc}"}
            data = self._encode(response)
        with contextlib.suppress(ConnectionClosed):  # the agent is gone: no one to answer
            if batch is not None:
                await batch.add(response)
            else:
                await self._write(response, data)

    def _cancel_handling(self, params: Any) -> None:
        request_id = params.get("requestId") if isinstance(params, dict) else None
        key = _key(request_id)
        scope = self._handling.get(key) if key is not None else None
        if scope is not None:
            scope.cancel()

    # --- sending ------------------------------------------------------------------------

    @staticmethod
    def _encode(message: Any) -> bytes:
        """The line of a message; ValueError when it holds NaN or an infinity."""
        return (_json.dumps(message, separators=(",", ":")) + "\n").encode()

    async def _write(self, message: Any, data: bytes | None = None) -> None:
        """Send one message (or batch), encoded as ``data`` if given; ValueError, before
        anything is sent or seen, when it holds NaN or an infinity."""
        data = self._encode(message) if data is None else data
        self._on_message("out", message)
        async with self._write_lock:
            try:
                await self._send.send(data)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError) as exc:
                closed = self._closed or ConnectionClosed("the agent's input is closed")
                raise closed from exc

    async def notify(self, method: str, params: Any = None) -> None:
        """Send a notification.

        :raises ValueError: ``params`` hold NaN or an infinity, which JSON does not have.
        """
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self._write(message)

    async def answer_now(self, request_id: Any, result: Any) -> bool:
        """Send the answer to one of the agent's requests from inside its handler, which then
        raises :class:`AnswerSent`; False (nothing sent) for a request of a batch, whose
        answer goes out with the batch's.

        For an answer too large to keep waiting: a handler that holds a lock until its answer
        is written bounds how many such answers are in memory at once.
        """
        key = _key(request_id)
        if key is None or key in self._batched:
            return False
        response = {"jsonrpc": "2.0", "id": request_id, "result": result}
        with contextlib.suppress(ConnectionClosed):  # the agent is gone: no one to answer
            await self._write(response)
        return True

    def new_id(self) -> int:
        """An id for a request of this side that no other request of it has (what a caller
        that must know its request's id before it is sent passes to :meth:`request`)."""
        return next(self._ids)

    async def request(self, method: str, params: Any = None, *, request_id: Any = None) -> Any:
        """Send a request and wait for its answer.

        :raises RpcError: the agent answered with an error.
        :raises ConnectionClosed: the agent went away first.
        :raises ValueError: ``params`` hold NaN or an infinity, which JSON does not have.
        """
        if self._closed is not None:
            raise self._closed
        request_id = next(self._ids) if request_id is None else request_id
        key = _key(request_id)
        assert key is not None
        pending = _Pending()
        self._pending[key] = pending
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        try:
            await self._write(message)
            try:
                await pending.event.wait()
            except anyio.get_cancelled_exc_class():
                # The caller gave up (a timeout, a cancelled turn): tell the agent, if it
                # is still there to hear it.
                with (
                    anyio.CancelScope(shield=True),
                    anyio.move_on_after(1),
                    contextlib.suppress(ConnectionClosed),
                ):
                    await self.notify(CANCEL_METHOD, {"requestId": request_id})
                raise
        finally:
            self._pending.pop(key, None)
        if pending.closed is not None:
            raise pending.closed
        response = pending.response or {}
        error = response.get("error")
        if error is not None:
            if not isinstance(error, dict):
                raise RpcError(INTERNAL_ERROR, f"malformed error answer: {error!r}"[:300])
            code = error.get("code")
            raise RpcError(
                code if isinstance(code, int) and not isinstance(code, bool) else INTERNAL_ERROR,
                str(error.get("message", "error")),
                error.get("data"),
            )
        return response.get("result")


class _Batch:
    """Collects the answers to the requests of one batch, then sends them as one array."""

    def __init__(self, expected: int, connection: Connection) -> None:
        self.expected = expected
        self.connection = connection
        self.responses: list[dict[str, Any]] = []

    async def add(self, response: dict[str, Any]) -> None:
        self.responses.append(response)
        if len(self.responses) == self.expected:
            await self.connection._write(self.responses)

    def add_soon(self, response: dict[str, Any]) -> None:
        """Add an answer from the dispatcher: the whole batch goes out through the writer task."""
        self.responses.append(response)
        if len(self.responses) == self.expected:
            self.connection.send_soon(self.responses)
