"""Each error that ends a command: its exit code, and one line that says what to do."""

from __future__ import annotations

import signal

import pytest

from acp_adapters import (
    AgentNotFoundError,
    AuthenticationRequiredError,
    CaptureError,
    McpServerError,
    PluginError,
    ProtocolVersionError,
    UnknownProviderError,
)
from acp_adapters.cli.errors import Failure, Stopped, explain
from acp_adapters.transport import ConnectionClosed, RpcError


@pytest.mark.parametrize(
    ("error", "code", "says"),
    [
        (Failure("it broke", 7), 7, "it broke"),
        (UnknownProviderError("no loaded plugin provides 'x'"), 2, "acp-adapters providers"),
        (AgentNotFoundError("cannot start the agent: 'npx' was not found"), 3, "'npx'"),
        (
            AuthenticationRequiredError("needs a key", [{"id": "api-key"}]),
            4,
            "give the agent its credentials",
        ),
        (CaptureError("no capture at 'x'"), 5, "pass a capture file"),
        (McpServerError("MCP server 'x': the agent does not take sse servers"), 6, "--mcp-server"),
        (ProtocolVersionError("answered 7"), 1, "speaks ACP 1 or 2"),
        (
            ConnectionClosed("closed", 3, "Traceback (most recent call last):\n  ...\nboom\n"),
            1,
            "its stderr ends with: Traceback (most recent call last): | ... | boom",
        ),
        (
            # npx with a version that is not published: npm's reason, not its log pointer
            ConnectionClosed(
                "closed",
                1,
                "npm error code ETARGET\n"
                "npm error notarget No matching version found for @xai-official/grok@1.0.30.\n"
                "npm error A complete log of this run can be found in: /root/.npm/_logs/1.log\n",
            ),
            1,
            "its stderr ends with: npm: code ETARGET; notarget No matching version found for "
            "@xai-official/grok@1.0.30.; run again with --debug",
        ),
        (RpcError(-32603, "Internal error\nwith detail"), 1, "Internal error with detail"),
        (
            RpcError(-32603, "Internal error", {"details": "no\nsuch model: \x1b[2J"}),
            1,
            'data: {"details":"no\\nsuch model: \\u001b[2J"}; run again',
        ),
        (RpcError(-32000, "failed", "quota \x1b]0;x\x07"), 1, "data: quota \\x1b]0;x\\x07;"),
        (RpcError(-32000, "failed", "x" * 1000), 1, "data: " + "x" * 297 + "...;"),
        (Stopped(signal.SIGTERM, killed=True), 143, "stopped by SIGTERM: the agent and"),
        (Stopped(signal.SIGHUP, killed=True), 129, "stopped by SIGHUP"),
        (Stopped(signal.SIGINT, killed=False, cancelled=True), 130, "ended its turn cancelled"),
        (Stopped(signal.SIGTERM, killed=False), 143, "before the session was open"),
        (PluginError("plugin 'p' failed", hook="h", plugin="p"), 1, "ACP_ADAPTERS_DISABLE_PLUGINS"),
        (KeyboardInterrupt(), 130, "interrupted"),
        (ZeroDivisionError("x"), 1, "run again with --debug"),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, BaseException) else str(v),
)
def test_explain(error: BaseException, code: int, says: str) -> None:
    exit_code, line = explain(error)
    assert exit_code == code
    assert says in line
    assert "\n" not in line


def test_an_agent_that_fails_shows_the_last_lines_of_its_stderr_not_only_the_last() -> None:
    tail = "Error: ANTHROPIC_API_KEY not set\nsee https://docs.example\n  at main.js:1\n"
    code, line = explain(ConnectionClosed("the agent exited", 3, tail))
    assert code == 1
    assert "Error: ANTHROPIC_API_KEY not set | see https://docs.example | at main.js:1" in line


def test_an_authentication_error_shows_the_answers_data() -> None:
    from acp_adapters import AuthenticationRequiredError
    from acp_adapters.transport import RpcError

    try:
        try:
            raise RpcError(-32000, "err", {"details": "the key was revoked"})
        except RpcError as cause:
            raise AuthenticationRequiredError("err", []) from cause
    except AuthenticationRequiredError as error:
        code, line = explain(error)
    assert code == 4
    assert 'data: {"details":"the key was revoked"}' in line
