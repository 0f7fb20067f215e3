"""The transport layer: JSON-RPC over newline-delimited JSON, the agent's process, its family.

The only layer that touches processes and time, with ``client``.
"""

from .jsonrpc import (
    DEFAULT_MAX_ELEMENTS,
    DEFAULT_MAX_LINE_BYTES,
    DEFAULT_MAX_PENDING_REQUESTS,
    METHOD_NOT_FOUND,
    REQUEST_CANCELLED,
    AnswerSent,
    Connection,
    ConnectionClosed,
    Problem,
    RpcError,
)
from .process import AgentProcess, StderrRing

__all__ = [
    "DEFAULT_MAX_ELEMENTS",
    "DEFAULT_MAX_LINE_BYTES",
    "DEFAULT_MAX_PENDING_REQUESTS",
    "METHOD_NOT_FOUND",
    "REQUEST_CANCELLED",
    "AgentProcess",
    "AnswerSent",
    "Connection",
    "ConnectionClosed",
    "Problem",
    "RpcError",
    "StderrRing",
]
