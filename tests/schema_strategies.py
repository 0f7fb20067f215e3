"""Hypothesis strategies that draw instances of the pinned ACP schemas.

A small generator of our own: it covers the constructs the ACP schemas use
($ref, allOf, anyOf/oneOf, const, type lists, arrays, objects with required and
optional properties). ``mutated`` then breaks a drawn message in one random
place, for the tests that feed the reducer bad input.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

SPEC = Path(__file__).parent.parent / "spec" / "acp"

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)


@cache
def _defs(version: str) -> dict[str, Any]:
    return json.loads((SPEC / version / "schema.json").read_text(encoding="utf-8"))["$defs"]


def instances(version: str, name: str) -> st.SearchStrategy[Any]:
    """Instances of definition ``name`` of schema ``version`` ("v1" or "v2")."""
    return _node(version, {"$ref": f"#/$defs/{name}"}, 0)


def _node(version: str, node: dict[str, Any], depth: int) -> st.SearchStrategy[Any]:
    defs = _defs(version)
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        return st.deferred(lambda: _node(version, defs[name], depth + 1))
    if "const" in node:
        return st.just(node["const"])
    alternatives = node.get("anyOf") or node.get("oneOf")
    if alternatives and "properties" not in node:
        return st.one_of([_node(version, alt, depth) for alt in alternatives])
    if "allOf" in node and "properties" not in node and "type" not in node:
        return _node(version, node["allOf"][0], depth)
    kind = node.get("type")
    if isinstance(kind, list):
        return st.one_of([_node(version, {**node, "type": k}, depth) for k in kind])
    if kind == "string":
        return st.text(max_size=16)
    if kind == "integer":
        low = node.get("minimum", -(2**31))
        return st.integers(
            min_value=max(low, -(2**31)), max_value=min(node.get("maximum", 2**31), 2**31)
        )
    if kind == "number":
        return st.floats(allow_nan=False, allow_infinity=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        if depth > 6:
            return st.just([])
        return st.lists(_node(version, node.get("items", {}), depth + 1), max_size=3)
    if kind == "object" or "properties" in node:
        return _object(version, node, depth)
    return JSON


def _object(version: str, node: dict[str, Any], depth: int) -> st.SearchStrategy[Any]:
    required = set(node.get("required", []))
    parts = [node, *node.get("allOf", [])]
    alternatives = node.get("anyOf") or node.get("oneOf")

    @st.composite
    def draw(draw: st.DrawFn) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for part in parts:
            target = part
            if "$ref" in part:
                target = _defs(version)[part["$ref"].rsplit("/", 1)[-1]]
            for key, prop in target.get("properties", {}).items():
                keep = key in set(target.get("required", [])) or key in required
                if keep or (depth < 6 and draw(st.booleans())):
                    result[key] = draw(_node(version, prop, depth + 1))
        if alternatives:
            extra = draw(st.one_of([_node(version, alt, depth + 1) for alt in alternatives]))
            if isinstance(extra, dict):
                result.update(extra)
        return result

    return draw()


@st.composite
def mutated(draw: st.DrawFn, message: Any) -> Any:
    """``message`` with one value somewhere inside replaced by arbitrary JSON."""
    paths: list[tuple[Any, ...]] = []

    def walk(value: Any, path: tuple[Any, ...]) -> None:
        paths.append(path)
        if isinstance(value, dict):
            for key, inner in value.items():
                walk(inner, (*path, key))
        elif isinstance(value, list):
            for index, inner in enumerate(value):
                walk(inner, (*path, index))

    walk(message, ())
    path = draw(st.sampled_from(paths))
    replacement = draw(JSON)
    if not path:
        return replacement
    copy = json.loads(json.dumps(message))
    target = copy
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = replacement
    return copy
