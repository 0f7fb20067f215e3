"""The sessions the contract suite runs: real captures and Grok-shaped synthetic ones.

Each names the provider it belongs to (the generic ``acp`` for agents no plugin
claims) and, where the capture shows the files' content, the workspace before
and after: the scripted sessions start from ``existing.txt`` = ``alpha\\nbeta\\n``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

DATA = Path(__file__).parent.parent / "data"
WS = "<workspace>"
START = {f"{WS}/existing.txt": "alpha\nbeta\n"}
EDITED = {f"{WS}/existing.txt": "alpha\nBETA changed\n", f"{WS}/new.txt": "brand new\n"}


@dataclass(frozen=True)
class Scenario:
    name: str
    path: Path
    provider: str
    before: dict[str, str] | None = None
    after: dict[str, str] | None = None
    edits: int = 0  # edit tool calls in it
    tags: tuple[str, ...] = field(default=())


def _capture(name: str, provider: str, **kwargs: object) -> Scenario:
    return Scenario(name, DATA / "captures" / f"{name}.jsonl", provider, **kwargs)  # type: ignore[arg-type]


def _synthetic(name: str, **kwargs: object) -> Scenario:
    return Scenario(name, DATA / "synthetic" / f"{name}.jsonl", "grok", **kwargs)  # type: ignore[arg-type]


SCENARIOS = (
    _capture("claude-agent-acp-fakellm-tools-v1", "claude", before=START, after=EDITED, edits=2),
    _capture(
        "claude-agent-acp-fakellm-tools-v2-v2shape",
        "claude",
        before=START,
        after={**START, f"{WS}/new.txt": "brand new\n"},
        edits=1,
    ),
    _capture("claude-agent-acp-v1", "claude"),
    _capture("claude-agent-acp-v2", "acp"),
    _capture("zed-claude-code-acp-v1", "claude"),
    _capture("codex-acp-fakellm-tools-v1", "codex", before=START, after=EDITED, edits=2),
    _capture("codex-acp-fakellm-tools-v2", "codex", before=START, after=EDITED, edits=2),
    _capture("codex-acp-v1", "codex"),
    _capture(
        "fast-agent-passthrough-tools-v1",
        "acp",
        before=START,
        after={f"{WS}/existing.txt": "line one\nline 2 changed\n", f"{WS}/new.txt": "brand new\n"},
        edits=2,
    ),
    _capture("fast-agent-passthrough-shell-v1", "acp"),
    _capture("fast-agent-passthrough-v2", "acp"),
    _capture("kimi-cli-scripted-tools-v1", "acp", before=START, after=EDITED, edits=2),
    _capture("sdk-scripted-edit-agent-v1", "acp", before=START, after=EDITED, edits=2),
    _capture("sdk-scripted-edit-agent-v1-cancel", "acp"),
    _capture("sdk-echo_agent-v2", "acp"),
    _synthetic("grok-write-new-file-v1", before={}, after={f"{WS}/hello.txt": "hello\n"}, edits=1),
    _synthetic(
        "grok-search-replace-v1",
        before={f"{WS}/notes.txt": "alpha\nbeta\ngamma\n"},
        after={f"{WS}/notes.txt": "alpha\nBETA\ngamma\n"},
        edits=1,
    ),
    _synthetic(
        "grok-apply-patch-v1",
        before={f"{WS}/app.py": "x = 1\nprint(x)\n"},
        after={
            f"{WS}/app.py": "x = 2\nprint(x)\n",
            f"{WS}/util.py": "def helper():\n    return 1\n",
        },
        edits=1,
    ),
    _synthetic(
        "grok-stale-report-v1",
        before={f"{WS}/config.yaml": "port: 8080\nhost: local\n"},
        after={f"{WS}/config.yaml": "port: 8081\nhost: local\n"},
        edits=1,
    ),
)
