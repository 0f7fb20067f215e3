"""The sessions the contract suite runs: real captures and Grok-shaped synthetic ones.

Each names the provider it belongs to (the generic ``acp`` for agents no plugin
claims), the named scenarios it shows (``KINDS``), and, where the capture shows
the files' content, the workspace before and after: the scripted sessions start
from ``existing.txt`` = ``alpha\\nbeta\\n``.

Three sources: ``data/captures`` (traffic of real agents recorded by another
client), ``data/recorded`` (claude-agent-acp as v1 and v2, codex-acp and Grok Build,
recorded by this project with ``tests/peers/record_scenarios.py``, each with a
``.files.json`` of the workspace before and after), and ``data/synthetic``
(Grok-shaped sessions written by ``generate_grok.py``). ``data/recorded`` also
holds the scripted agent on the official Python SDK (``sdk-*``, the generic provider),
and the traffic patterns of real agents it plays (``patterns-*``, the generic provider
too; ``contract/test_patterns.py`` checks each one's true patch). The scenarios of the agent
that changes the workspace itself (``workspace-*``) have their own checks
(``contract/test_workspace_agent.py``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

#: The named scenarios (docs/contract.md): what a session shows.
KINDS = (
    "write-approved",
    "edit-existing",
    "multi-file-patch",
    "capped-rewrite",
    "rejected-permission",
    "cancelled-turn",
    "shell-command",
    "plan",
    "multi-turn",
    "crash-mid-turn",
)

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
    #: The named scenarios (``KINDS``) this session shows.
    shows: tuple[str, ...] = ()


def _capture(name: str, provider: str, **kwargs: object) -> Scenario:
    return Scenario(name, DATA / "captures" / f"{name}.jsonl", provider, **kwargs)  # type: ignore[arg-type]


def _synthetic(name: str, **kwargs: object) -> Scenario:
    return Scenario(name, DATA / "synthetic" / f"{name}.jsonl", "grok", **kwargs)  # type: ignore[arg-type]


#: Edit tool calls in each recorded scenario (the one a crash or a refusal stops counts).
#: (The SDK agent's cancelled turn waits on a command, not an edit.)
RECORDED_EDITS = {
    "shell-command": 0,
    "plan": 0,
    "multi-turn": 2,
    "sdk-cancelled-turn": 0,
    "patterns-command-output": 0,
}
#: Recorded sessions whose patches are what the agent claimed, not what the disk shows:
#: the client could check nothing, and the agent wrote nothing.
CLAIMED_ONLY = {"patterns-empty-oldtext-unknown"}
PROVIDERS = {"codex": "codex", "grok": "grok", "sdk": "acp", "patterns": "acp"}


def _recorded() -> list[Scenario]:
    """The sessions of ``data/recorded``: ``<agent>-<scenario>.jsonl`` and its files."""
    scenarios = []
    for path in sorted((DATA / "recorded").glob("*.jsonl")):
        agent, _, kind = path.stem.partition("-")
        if agent == "workspace":
            # Changes no tool call made are items there too: contract/test_workspace_agent.py
            # checks each of those recordings, change by change.
            continue
        if agent == "claude":
            version, _, kind = kind.partition("-")
            agent = f"claude-{version}"
        files = json.loads(path.with_suffix(".files.json").read_text(encoding="utf-8"))
        # A capped rewrite's patch is left out.
        patched = kind not in ("capped-rewrite",) and path.stem not in CLAIMED_ONLY
        scenarios.append(
            Scenario(
                path.stem,
                path,
                PROVIDERS.get(agent, "claude"),
                before=files["before"],
                after=files["after"] if patched else None,
                edits=RECORDED_EDITS.get(path.stem, RECORDED_EDITS.get(kind, 1)),
                shows=(kind,) if kind in KINDS else (),  # a pattern is no named scenario
            )
        )
    return scenarios


SCENARIOS = (
    _capture(
        "claude-agent-acp-fakellm-tools-v1",
        "claude",
        before=START,
        after=EDITED,
        edits=2,
        shows=("write-approved", "edit-existing", "shell-command", "multi-turn"),
    ),
    _capture(
        "claude-agent-acp-fakellm-tools-v2-v2shape",
        "claude",
        before=START,
        after={**START, f"{WS}/new.txt": "brand new\n"},
        edits=1,  # a write in "auto" mode: never asked, so not a write approved on request
    ),
    _capture("claude-agent-acp-v1", "claude"),
    _capture("claude-agent-acp-v2", "acp"),
    _capture("zed-claude-code-acp-v1", "claude"),
    *(
        _capture(
            f"codex-acp-fakellm-tools-{version}",
            "codex",
            before=START,
            after=EDITED,
            edits=2,
            shows=("write-approved", "edit-existing", "shell-command", "multi-turn"),
        )
        for version in ("v1", "v2")
    ),
    _capture("codex-acp-v1", "codex"),
    _capture(
        "fast-agent-passthrough-tools-v1",
        "acp",
        before=START,
        after={f"{WS}/existing.txt": "line one\nline 2 changed\n", f"{WS}/new.txt": "brand new\n"},
        edits=2,
        shows=("write-approved", "edit-existing", "multi-turn"),
    ),
    _capture("fast-agent-passthrough-shell-v1", "acp", shows=("shell-command", "multi-turn")),
    _capture("fast-agent-passthrough-v2", "acp"),
    _capture(
        "kimi-cli-scripted-tools-v1",
        "acp",
        before=START,
        after=EDITED,
        edits=2,
        shows=("write-approved", "edit-existing", "multi-turn"),
    ),
    _capture(
        "sdk-scripted-edit-agent-v1",
        "acp",
        before=START,
        after=EDITED,
        edits=2,
        shows=("write-approved", "edit-existing", "shell-command", "multi-turn"),
    ),
    _capture("sdk-scripted-edit-agent-v1-cancel", "acp"),
    _capture("sdk-echo_agent-v2", "acp"),
    _synthetic(
        "grok-write-new-file-v1",
        before={},
        after={f"{WS}/hello.txt": "hello\n"},
        edits=1,
        shows=("write-approved",),
    ),
    _synthetic(
        "grok-search-replace-v1",
        before={f"{WS}/notes.txt": "alpha\nbeta\ngamma\n"},
        after={f"{WS}/notes.txt": "alpha\nBETA\ngamma\n"},
        edits=1,
        shows=("edit-existing",),
    ),
    _synthetic(
        "grok-apply-patch-v1",
        before={f"{WS}/app.py": "x = 1\nprint(x)\n"},
        after={
            f"{WS}/app.py": "x = 2\nprint(x)\n",
            f"{WS}/util.py": "def helper():\n    return 1\n",
        },
        edits=1,
        shows=("multi-file-patch",),
    ),
    _synthetic(
        "grok-stale-report-v1",
        before={f"{WS}/config.yaml": "port: 8080\nhost: local\n"},
        after={f"{WS}/config.yaml": "port: 8081\nhost: local\n"},
        edits=1,
        shows=("edit-existing",),
    ),
    _synthetic("grok-rejected-permission-v1", edits=1, shows=("rejected-permission",)),
    _synthetic("grok-cancelled-turn-v1", edits=1, shows=("cancelled-turn",)),
    _synthetic("grok-shell-command-v1", shows=("shell-command",)),
    _synthetic("grok-plan-v1", shows=("plan",)),
    _synthetic(
        "grok-multi-turn-v1",
        before={},
        after={f"{WS}/hello.txt": "hello world\n"},
        edits=2,
        shows=("multi-turn", "write-approved", "edit-existing"),
    ),
    _synthetic("grok-crash-mid-turn-v1", edits=1, shows=("crash-mid-turn",)),
    _synthetic("grok-capped-rewrite-v1", edits=1, shows=("capped-rewrite",)),
    *_recorded(),
)
