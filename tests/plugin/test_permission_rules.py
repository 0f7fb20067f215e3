"""Permission rules: how a rule matches, how the policy decides by them, and how rules are read.

The requests matched here are real: the permission questions and client actions of live
sessions of the scripted SDK agent (``agents/sdk_agent.py``), with the true patches and
real paths the client gave them.
"""

from __future__ import annotations

import glob as globbing
import json
import os
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import acp_adapters
from acp_adapters import (
    ClientAction,
    PermissionQuery,
    PermissionRule,
    Policy,
    RulesError,
    count_changes,
    diff_patch,
    hookimpl,
    load_rules,
    rules_from_config,
    unified_diff,
)
from acp_adapters.builtin.permissions import decide_action_by_policy, decide_by_policy
from acp_adapters.plugin.manager import get_plugin_manager
from acp_adapters.plugin.rules import command_matches, first_match, path_matches

SDK_AGENT = [sys.executable, str(Path(__file__).parent.parent / "agents" / "sdk_agent.py")]
#: The prompts of the SDK agent whose requests are matched here, and what the folder
#: holds before each.
PROMPTS = ("change", "write", "patch", "rewrite", "capped", "shell")
BIG_BEFORE = "".join(f"row {n} of the old file\n" for n in range(600))


@dataclass
class Seen:
    """What one session's hooks were asked: permission questions, client actions."""

    workspace: Path
    policy: Policy | None = None
    queries: list[PermissionQuery] = field(default_factory=list)
    actions: list[ClientAction] = field(default_factory=list)


class _Recorder:
    """Sees every question before the built-in plugin answers it, and answers nothing."""

    def __init__(self, seen: Seen) -> None:
        self.seen = seen

    @hookimpl(tryfirst=True)
    def decide_permission(self, request: PermissionQuery, policy: Policy) -> None:
        self.seen.queries.append(request)
        self.seen.policy = policy

    @hookimpl(tryfirst=True)
    def decide_client_action(self, action: ClientAction, policy: Policy) -> None:
        self.seen.actions.append(action)
        self.seen.policy = policy


async def _allow(query: PermissionQuery) -> str:
    return next(str(o["optionId"]) for o in query.options if o["kind"] == "allow_once")


async def _session(prompt: str, workspace: Path) -> Seen:
    seen = Seen(workspace)
    pm = get_plugin_manager(load_entrypoints=False, environ={})
    pm.register(_Recorder(seen))
    async with acp_adapters.connect(
        command=SDK_AGENT, cwd=workspace, policy="ask", ask=_allow, pm=pm
    ) as session:
        await session.prompt("rewrite" if prompt == "capped" else prompt)
    return seen


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Seen]:
    """Each prompt's session, in a folder of its own (alpha/beta in existing.txt; for
    ``capped``, a big.txt of 600 other lines, which the rewrite replaces past the cap)."""
    found = {}
    for prompt in PROMPTS:
        folder = tmp_path_factory.mktemp(prompt) / "ws"
        folder.mkdir()
        (folder / "existing.txt").write_text("alpha\nbeta\n")
        if prompt == "capped":
            (folder / "big.txt").write_text(BIG_BEFORE)
        found[prompt] = anyio.run(_session, prompt, folder)
    return found


def _query(real: dict[str, Seen], prompt: str) -> PermissionQuery:
    (query,) = real[prompt].queries
    return query


def _action(real: dict[str, Seen], prompt: str, kind: str = "write") -> ClientAction:
    # As decided on its own, not covered by an answer the application gave its tool call.
    action = next(a for a in real[prompt].actions if a.kind == kind)
    return action.model_copy(update={"approved": False})


def _roots(real: dict[str, Seen], prompt: str) -> tuple[str, ...]:
    policy = real[prompt].policy
    assert policy is not None
    return policy.workspace


def rule(**fields: Any) -> PermissionRule:
    return PermissionRule.model_validate({"decision": "allow", **fields})


# --- what the sessions asked (the ground the rules stand on) ----------------------------------


def test_the_sessions_gave_real_paths_and_true_patches(real: dict[str, Seen]) -> None:
    change = _query(real, "change")
    existing = os.path.realpath(real["change"].workspace / "existing.txt")
    assert change.paths == (existing,)
    assert (change.additions, change.deletions) == (1, 1)
    assert _action(real, "change").path == existing
    assert _action(real, "change").patch is not None
    assert (_query(real, "rewrite").additions, _query(real, "rewrite").deletions) == (600, 0)
    assert _query(real, "capped").patch is None  # 1200 line edits: past the rewrite cap
    assert len(_query(real, "patch").paths) == 2
    assert _action(real, "shell", "command").command_line == (
        "echo hello from the shell && cat existing.txt"
    )


# --- size ---------------------------------------------------------------------------------------


def test_max_lines_counts_added_and_deleted_lines(real: dict[str, Seen]) -> None:
    roots = _roots(real, "change")
    for request in (_query(real, "change"), _action(real, "change")):
        assert rule(max_lines=2).matches(request, roots)
        assert not rule(max_lines=1).matches(request, roots)
    roots = _roots(real, "rewrite")
    assert rule(max_lines=600).matches(_query(real, "rewrite"), roots)
    assert not rule(max_lines=599).matches(_query(real, "rewrite"), roots)
    assert not rule(max_lines=599).matches(_action(real, "rewrite"), roots)


def test_a_request_without_a_patch_matches_no_size(real: dict[str, Seen]) -> None:
    huge = rule(max_lines=10**9)
    assert not huge.matches(_query(real, "capped"), _roots(real, "capped"))
    assert not huge.matches(_action(real, "shell", "command"), _roots(real, "shell"))
    assert not huge.matches(_query(real, "change").model_copy(update={"patch": None}))
    assert rule().matches(_query(real, "capped"), _roots(real, "capped"))  # no size: any


def test_a_patch_that_left_a_file_out_has_no_size(real: dict[str, Seen]) -> None:
    # An edit of two files (new.txt created, existing.txt changed), with a patch of both,
    # and with a patch of one (the other past the rewrite cap, say): that one's size is
    # not the edit's.
    edit, roots = _query(real, "patch"), _roots(real, "patch")
    assert edit.tool_call is not None
    diffs = list(edit.tool_call.content)
    assert len(diffs) == 2
    whole = diff_patch(diffs)
    added, deleted = count_changes(whole)
    assert (added, deleted) == (2, 1)
    complete = edit.model_copy(update={"patch": whole, "additions": added, "deletions": deleted})
    assert rule(max_lines=3).matches(complete, roots)
    assert not rule(max_lines=2).matches(complete, roots)
    one = diff_patch(diffs[1:])
    partial = edit.model_copy(update={"patch": one, "additions": 1, "deletions": 1})
    assert not rule(max_lines=10).matches(partial, roots)


_LINES = st.lists(st.sampled_from(["a", "b", "+++ b", "--- a", "-a", "+b", "@@ -1 +1 @@"]))


@settings(max_examples=300)
@given(old=_LINES, new=_LINES, old_end=st.booleans(), new_end=st.booleans())
def test_the_size_of_a_write_is_its_patchs_lines(
    old: list[str], new: list[str], old_end: bool, new_end: bool
) -> None:
    before = "\n".join(old) + ("\n" if old and old_end else "")
    after = "\n".join(new) + ("\n" if new and new_end else "")
    patch = unified_diff("/ws/f.txt", "/ws/f.txt", before, after)
    added, deleted = count_changes(patch)
    write = ClientAction(kind="write", path="/ws/f.txt", patch=patch)
    size = added + deleted
    assert rule(max_lines=size).matches(write, ["/ws"])
    assert size == 0 or not rule(max_lines=size - 1).matches(write, ["/ws"])


# --- paths --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("globs", "matches"),
    [
        (["existing.txt"], True),
        (["*.txt"], True),
        (["**/*.txt"], True),
        (["**"], True),
        (["*"], True),
        (["e*g.tx?"], True),
        (["e*t.tx?"], False),
        (["[de]xisting.txt"], True),
        (["Existing.txt"], False),  # case-sensitive
        (["src/**"], False),
        (["*/existing.txt"], False),  # * is one component
        (["*.py", "existing.*"], True),
        (["*.py"], False),
    ],
)
def test_path_globs(real: dict[str, Seen], globs: list[str], matches: bool) -> None:
    roots = _roots(real, "change")
    assert rule(paths=globs).matches(_query(real, "change"), roots) is matches
    assert rule(paths=globs).matches(_action(real, "change"), roots) is matches


def test_absolute_globs_are_followed_as_real_paths(real: dict[str, Seen], tmp_path: Path) -> None:
    folder = real["change"].workspace
    link = tmp_path / "link"
    link.symlink_to(folder)
    query, roots = _query(real, "change"), _roots(real, "change")
    assert rule(paths=[f"{folder}/**"]).matches(query, roots)
    assert rule(paths=[f"{link}/*.txt"]).matches(query, roots)  # the link leads to the folder
    assert not rule(paths=[f"{tmp_path}/**"]).matches(query, roots)


def test_every_path_of_the_request_must_match(real: dict[str, Seen]) -> None:
    query, roots = _query(real, "patch"), _roots(real, "patch")
    assert not rule(paths=["new.txt"]).matches(query, roots)
    assert not rule(paths=["existing.txt"]).matches(query, roots)
    assert rule(paths=["new.txt", "existing.txt"]).matches(query, roots)
    assert rule(paths=["*.txt"]).matches(query, roots)


def test_a_request_without_paths_matches_no_path_glob(real: dict[str, Seen]) -> None:
    command = _action(real, "shell", "command")
    assert not rule(decision="reject", paths=["**"]).matches(command, _roots(real, "shell"))
    assert rule(decision="reject").matches(command, _roots(real, "shell"))


@pytest.mark.parametrize(
    ("glob", "path", "matches"),
    [
        ("src/**", "src", False),  # what is inside src
        ("src/**", "src/a.py", True),
        ("src/**", "src/a/b/c.py", True),
        ("src/**/*.py", "src/c.py", True),
        ("src/**/*.py", "src/a/b/c.py", True),
        ("src/**/*.py", "src/a/b/c.pyc", False),
        ("**/test_*.py", "tests/x/test_a.py", True),
        ("**/test_*.py", "test_a.py", True),
        ("src/*/c.py", "src/a/b/c.py", False),
        ("a/**/b/**/c", "a/b/c", True),
        ("a/**/b/**/c", "a/x/b/y/z/c", True),
        ("a/**/b/**/c", "a/x/y/z/c", False),
        ("*", ".env", True),  # dotfiles too
        ("**", ".git/hooks/pre-commit", True),
        ("./src//*.py", "src/a.py", True),
    ],
)
def test_glob_semantics(tmp_path: Path, glob: str, path: str, matches: bool) -> None:
    root = os.path.realpath(tmp_path)
    assert path_matches(f"{root}/{path}", [glob], [root]) is matches


def test_relative_globs_are_read_from_each_folder(tmp_path: Path) -> None:
    first, second = (os.path.realpath(tmp_path / name) for name in ("one", "two"))
    assert path_matches(f"{second}/docs/a.md", ["docs/*.md"], [first, second])
    assert not path_matches(f"{second}/docs/a.md", ["docs/*.md"], [first])
    assert not path_matches("/elsewhere/docs/a.md", ["docs/*.md"], [first, second])
    assert not path_matches("docs/a.md", ["docs/*.md"], [first])  # not a real path


@settings(max_examples=150)
@given(
    files=st.lists(
        st.tuples(
            st.lists(st.sampled_from(["a", "b", ".h"]), max_size=2),
            st.sampled_from(["a.txt", "b.py", ".env", "ab", "x"]),
        ),
        min_size=1,
        max_size=8,
    ),
    glob=st.lists(
        st.sampled_from(["*", "**", "a", "b", "?", "[ab]", "*b", ".*", "a*", "*.txt", "x"]),
        min_size=1,
        max_size=4,
    ).map("/".join),
)
@pytest.mark.skipif(sys.version_info < (3, 11), reason="glob's include_hidden is 3.11+")
def test_globs_match_what_the_glob_module_finds(
    files: list[tuple[list[str], str]], glob: str
) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = os.path.realpath(scratch)
        made = set()
        for folders, name in files:
            relative = "/".join([*folders, name])
            Path(root, *folders).mkdir(parents=True, exist_ok=True)
            Path(root, relative).write_text("")
            made.add(relative)
        found = {
            p.rstrip("/")
            for p in globbing.glob(glob, root_dir=root, recursive=True, include_hidden=True)
        } & made
        ours = {p for p in made if path_matches(f"{root}/{p}", [glob], [root])}
        assert ours == found


# --- kinds --------------------------------------------------------------------------------------


def test_a_write_is_an_edit_and_a_command_is_an_execute(real: dict[str, Seen]) -> None:
    write, command = _action(real, "change"), _action(real, "shell", "command")
    roots = _roots(real, "change")
    assert rule(kinds=["edit"]).matches(write, roots)
    assert not rule(kinds=["execute"]).matches(write, roots)
    assert rule(kinds=["execute"]).matches(command, roots)
    assert not rule(kinds=["edit", "read"]).matches(command, roots)
    assert rule(kinds=["edit"]).matches(_query(real, "change"), roots)
    assert not rule(kinds=["read"]).matches(_query(real, "change"), roots)


# --- commands -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("glob", "line", "matches"),
    [
        ("echo *", "echo hello", True),
        ("echo *", "echo", False),
        ("echo *", "echo 'a b' c", True),
        ("echo *", "echo hi && rm -rf ~", False),
        ("echo *", "echo hi; rm x", False),
        ("echo *", "echo hi | sh", False),
        ("echo *", "echo hi > ~/.bashrc", False),
        ("echo *", "echo $(rm x)", False),
        ("echo *", "echo `rm x`", False),
        ("echo *", "echo hi\nrm x", False),
        ("ech? *", "echo hi", True),
        ("[!a]cho x", ";cho x", False),
        ("[!a]cho x", "echo x", True),
        ("git [sd]*", "git status", True),
        ("git [sd]*", "git push", False),
        ("make && make test", "make && make test", True),  # spelled out, it matches
        ("pytest *", "pytest -q tests/", True),
        ("*", "ls", True),
        ("*", "ls; rm x", False),
    ],
)
def test_command_globs(glob: str, line: str, matches: bool) -> None:
    assert command_matches(line, glob) is matches


def test_a_command_glob_reads_the_line_or_what_the_tool_call_says(
    real: dict[str, Seen],
) -> None:
    command, roots = _action(real, "shell", "command"), _roots(real, "shell")
    assert not rule(command=["echo *"]).matches(command, roots)
    assert rule(command=["echo * && cat *"]).matches(command, roots)
    # A permission request of a tool call that says which command it runs.
    edit = _query(real, "change")
    assert edit.tool_call is not None
    said = edit.model_copy(
        update={
            "tool_call": edit.tool_call.model_copy(
                update={"kind": "execute", "raw_input": {"command": ["echo", "from the tool"]}}
            )
        }
    )
    assert rule(command="echo *").matches(said, roots)
    assert not rule(command="rm *").matches(said, roots)
    assert not rule(command="echo *").matches(edit, roots)  # says no command


@settings(max_examples=300)
@given(
    words=st.lists(st.sampled_from(["echo", "ls", "*", "?", " ", "-", "x"]), max_size=6),
    line=st.text(alphabet="echo lsx-;&|<>()$`\n", max_size=20),
)
def test_a_command_wildcard_never_spans_a_second_command(words: list[str], line: str) -> None:
    glob = "".join(words)
    if command_matches(line, glob):
        assert not set(line) & set(";&|<>()$`\n")


# --- decisions ----------------------------------------------------------------------------------


def test_a_rule_allows_rejects_or_asks_with_the_offered_options(real: dict[str, Seen]) -> None:
    query, roots = _query(real, "change"), _roots(real, "change")
    offered = {o["kind"]: o["optionId"] for o in query.options}

    def decided(decision: str, name: str = "ask") -> Any:
        return decide_by_policy(
            query, Policy(name=name, workspace=roots, rules=[rule(decision=decision)])
        )  # type: ignore[arg-type]

    assert decided("allow").option_id == offered["allow_once"]
    assert decided("allow", "read-only").option_id == offered["allow_once"]
    assert decided("reject", "full-access").option_id == offered["reject_once"]
    assert decided("ask", "full-access").outcome == "ask"
    assert "rule 1" in decided("reject").reason
    # No rule matches: the policy judges.
    unmatched = Policy(name="read-only", workspace=roots, rules=[rule(kinds=["execute"])])
    assert decide_by_policy(query, unmatched).option_id == offered["reject_once"]
    assert decide_by_policy(query, unmatched).reason == "read-only refuses edit"


def test_a_rule_decides_client_actions(real: dict[str, Seen]) -> None:
    write, roots = _action(real, "change"), _roots(real, "change")

    def decided(decision: str, name: str = "ask", action: ClientAction = write) -> str:
        policy = Policy(name=name, workspace=roots, rules=[rule(decision=decision)])  # type: ignore[arg-type]
        return decide_action_by_policy(action, policy).outcome

    assert decided("allow", "read-only") == "allow"
    assert decided("reject", "full-access") == "refuse"
    assert decided("ask", "full-access") == "ask"
    # Asked about a write its tool call's permission already allowed: not asked twice.
    assert decided("ask", action=write.model_copy(update={"approved": True})) == "allow"


def test_no_rule_lets_a_write_out_of_the_folders(real: dict[str, Seen], tmp_path: Path) -> None:
    query = _query(real, "change")
    elsewhere = (os.path.realpath(tmp_path),)
    everything = rule(paths=["/**"])
    assert everything.matches(query, _roots(real, "change"))
    assert not everything.matches(query, elsewhere)  # its path is outside these folders
    assert not rule().matches(query, elsewhere)
    assert rule(decision="reject", paths=["/**"]).matches(query, elsewhere)
    policy = Policy(name="ask", workspace=elsewhere, rules=[rule()])
    assert decide_by_policy(query, policy).outcome == "ask"
    outside = _action(real, "change").model_copy(update={"inside": False})
    assert decide_action_by_policy(outside, policy).outcome == "refuse"
    # An edit that names no path cannot be allowed by a rule either.
    assert query.tool_call is not None
    unnamed = query.model_copy(
        update={
            "paths": (),
            "tool_call": query.tool_call.model_copy(
                update={"content": (), "locations": (), "raw_input": None}
            ),
        }
    )
    assert not rule().matches(unnamed, _roots(real, "change"))
    assert rule(decision="ask").matches(unnamed, _roots(real, "change"))


def test_the_first_matching_rule_wins(real: dict[str, Seen]) -> None:
    query, roots = _query(real, "change"), _roots(real, "change")
    rules = [
        rule(decision="reject", kinds=["execute"]),
        rule(decision="ask", paths=["existing.txt"]),
        rule(decision="allow"),
    ]
    found = first_match(rules, query, roots)
    assert found is not None
    assert found[0] == 2
    assert decide_by_policy(query, Policy(workspace=roots, rules=rules)).outcome == "ask"
    allowed = decide_by_policy(query, Policy(workspace=roots, rules=rules[::-1]))
    assert allowed.outcome == "selected"


_RULES = st.builds(
    lambda decision, kinds, paths, size, command: rule(
        decision=decision,
        kinds=kinds,
        paths=paths,
        **({"max_lines": size} if size is not None else {}),
        command=command,
    ),
    st.sampled_from(["allow", "reject", "ask"]),
    st.lists(st.sampled_from(["edit", "execute", "read", "delete"]), max_size=2),
    st.lists(st.sampled_from(["*.txt", "new.txt", "**", "src/**", "/**", "big.*"]), max_size=2),
    st.none() | st.sampled_from([0, 1, 2, 3, 600, 10**6]),
    st.lists(st.sampled_from(["echo *", "* && cat *", "ls"]), max_size=1),
)


def _requests(real: dict[str, Seen]) -> list[tuple[PermissionQuery | ClientAction, str]]:
    found: list[tuple[PermissionQuery | ClientAction, str]] = []
    for prompt, seen in real.items():
        found.extend((query, prompt) for query in seen.queries)
        found.extend(
            (action.model_copy(update={"approved": False}), prompt) for action in seen.actions
        )
    return found


def _decide(request: PermissionQuery | ClientAction, policy: Policy) -> Any:
    if isinstance(request, ClientAction):
        return decide_action_by_policy(request, policy).outcome
    return decide_by_policy(request, policy).model_dump(exclude={"reason"})


@settings(max_examples=300)
@given(
    data=st.data(),
    front=_RULES,
    rest=st.lists(_RULES, max_size=3),
    name=st.sampled_from(["ask", "read-only", "workspace-write", "full-access"]),
)
def test_a_rule_in_front_changes_a_decision_only_by_matching(
    real: dict[str, Seen],
    data: st.DataObject,
    front: PermissionRule,
    rest: list[PermissionRule],
    name: str,
) -> None:
    request, prompt = data.draw(st.sampled_from(_requests(real)))
    roots = _roots(real, prompt)
    before = Policy(name=name, workspace=roots, rules=rest)  # type: ignore[arg-type]
    after = before.model_copy(update={"rules": (front, *rest)})
    alone = Policy(name=name, workspace=roots, rules=[front])  # type: ignore[arg-type]
    if front.matches(request, roots):
        assert _decide(request, after) == _decide(request, alone)  # it decides
    else:
        assert _decide(request, after) == _decide(request, before)  # nothing changes


@settings(max_examples=200)
@given(rules=st.lists(_RULES, max_size=4))
def test_rules_read_back_as_they_were_written(rules: list[PermissionRule]) -> None:
    written = {"rules": [r.model_dump(exclude_defaults=True) for r in rules]}
    assert rules_from_config(json.loads(json.dumps(written))) == tuple(rules)


# --- reading rules ------------------------------------------------------------------------------


def test_load_rules_reads_json_and_toml(tmp_path: Path) -> None:
    as_json = tmp_path / "rules.json"
    as_json.write_text(
        json.dumps(
            {
                "rules": [
                    {"decision": "allow", "kinds": ["edit"], "paths": ["src/**"], "max_lines": 20},
                    {"decision": "allow", "kinds": "execute", "command": "pytest *"},
                    {"decision": "ask"},
                ]
            }
        )
    )
    as_toml = tmp_path / "rules.toml"
    as_toml.write_text(
        "[[rules]]\n"
        'decision = "allow"\nkinds = ["edit"]\npaths = ["src/**"]\nmax_lines = 20\n\n'
        "[[rules]]\n"
        'decision = "allow"\nkinds = "execute"\ncommand = "pytest *"\n\n'
        "[[rules]]\n"
        'decision = "ask"\n'
    )
    rules = load_rules(as_json)
    assert rules == load_rules(str(as_toml))
    assert rules[1] == PermissionRule(decision="allow", kinds=("execute",), command=("pytest *",))
    assert Policy(rules=rules).rules == rules


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ([], 'rules are an object: {"rules": [...]}'),
        ({}, 'no "rules" list'),
        ({"rule": []}, "unknown key 'rule'"),
        ({"rules": {"decision": "allow"}}, '"rules" is a list of rules, not dict'),
        ({"rules": ["allow"]}, "rule 1 is not an object"),
        ({"rules": [{"decision": "allow"}, {}]}, "rule 2: no 'decision'"),
        (
            {"rules": [{"decision": "allow"}, {"decision": "allow"}, {"decision": "yes"}]},
            "rule 3: decision 'yes' is not one of 'allow', 'reject', 'ask'",
        ),
        ({"rules": [{"decision": "allow", "kind": ["edit"]}]}, "rule 1: unknown field 'kind'"),
        (
            {"rules": [{"decision": "allow", "kinds": ["exec"]}]},
            "rule 1: kinds: unknown tool kind 'exec'",
        ),
        ({"rules": [{"decision": "allow", "max_lines": -1}]}, "rule 1: max_lines: "),
        ({"rules": [{"decision": "allow", "max_lines": "20"}]}, "rule 1: max_lines: "),
        ({"rules": [{"decision": "allow", "max_lines": True}]}, "rule 1: max_lines: "),
        (
            {"rules": [{"decision": "allow", "paths": ["src/a**"]}]},
            "'**' must be a whole path component",
        ),
        ({"rules": [{"decision": "allow", "paths": ["../x"]}]}, "'..' is not allowed"),
        ({"rules": [{"decision": "allow", "paths": ["~/x"]}]}, "~ is not expanded"),
        ({"rules": [{"decision": "allow", "paths": [""]}]}, "rule 1: paths: a path glob is empty"),
        (
            {"rules": [{"decision": "allow", "command": [" "]}]},
            "rule 1: command: a command glob is empty",
        ),
        ({"rules": [{"decision": "allow", "paths": [3]}]}, "rule 1: paths: "),
    ],
)
def test_what_is_wrong_with_rules_is_said(config: Any, message: str) -> None:
    with pytest.raises(RulesError) as raised:
        rules_from_config(config)
    assert message in str(raised.value)
    assert isinstance(raised.value, acp_adapters.AcpAdaptersError)


def test_a_file_that_is_not_rules_is_named(tmp_path: Path) -> None:
    bad_json = tmp_path / "bad.json"
    bad_json.write_text('{"rules": [\n  {"decision": "allow",}\n]}')
    with pytest.raises(RulesError, match=r"bad\.json: is not valid JSON \(.*line 2 column"):
        load_rules(bad_json)
    bad_toml = tmp_path / "bad.toml"
    bad_toml.write_text("[[rules]\n")
    with pytest.raises(RulesError, match=r"bad\.toml: is not valid TOML"):
        load_rules(bad_toml)
    wrong = tmp_path / "wrong.toml"
    wrong.write_text('[[rules]]\ndecision = "allow"\n\n[[rules]]\ndecision = "maybe"\n')
    with pytest.raises(RulesError, match=r"wrong\.toml: rule 2: decision 'maybe'"):
        load_rules(wrong)
    with pytest.raises(RulesError, match=r"missing\.json: cannot be read"):
        load_rules(tmp_path / "missing.json")
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe")
    with pytest.raises(RulesError, match="is not UTF-8 text"):
        load_rules(binary)
