"""The generated wire models match the pinned schemas, field for field."""

from __future__ import annotations

import json
import types
import typing
from pathlib import Path
from typing import Any

import pytest
from pydantic import Tag

from acp_adapters.protocol import _base, v1, v2
from acp_adapters.protocol._fields import DefaultOnError, SkipInvalidItems

SPEC = Path(__file__).parents[2] / "spec" / "acp"
MODULES = {"v1": v1, "v2": v2}


def _defs(version: str) -> dict[str, Any]:
    return json.loads((SPEC / version / "schema.json").read_text(encoding="utf-8"))["$defs"]


def _ref(node: dict[str, Any]) -> str | None:
    if "$ref" in node:
        return str(node["$ref"]).rsplit("/", 1)[-1]
    all_of = node.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and "$ref" in all_of[0]:
        return str(all_of[0]["$ref"]).rsplit("/", 1)[-1]
    return None


def _nullable(node: dict[str, Any], defs: dict[str, Any] | None = None) -> bool:
    """Whether JSON null is a value of ``node`` (through the definition it names, with ``defs``)."""
    kind = node.get("type")
    if isinstance(kind, list) and "null" in kind:
        return True
    alternatives = node.get("anyOf") or node.get("oneOf") or []
    if any(alt.get("type") == "null" for alt in alternatives):
        return True
    ref = _ref(node)
    return defs is not None and ref is not None and _nullable(defs[ref], defs)


def _allows_none(annotation: Any) -> bool:
    if annotation is Any:
        return True
    if typing.get_origin(annotation) is typing.Annotated:
        return _allows_none(typing.get_args(annotation)[0])
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return any(arg is type(None) for arg in typing.get_args(annotation))
    return False


def _models(version: str) -> list[tuple[str, type[_base.WireModel]]]:
    module = MODULES[version]
    defs = _defs(version)
    return [
        (name, value)
        for name, value in vars(module).items()
        if isinstance(value, type)
        and issubclass(value, _base.WireModel)
        and value.__name__ == name
        and name in defs
    ]


@pytest.mark.parametrize("version", MODULES)
def test_every_object_definition_is_a_model(version: str) -> None:
    defs = _defs(version)
    module = MODULES[version]
    models = dict(_models(version))
    assert len(models) > 40
    # Every definition the generator reached is in the module, as a model or an alias.
    for name, value in vars(module).items():
        if name in defs:
            node = defs[name]
            if node.get("type") == "object" and "oneOf" not in node and "anyOf" not in node:
                assert name in models, name
            assert value is not None


@pytest.mark.parametrize(
    ("version", "name", "model"),
    [(v, n, m) for v in MODULES for n, m in _models(v)],
    ids=lambda x: x if isinstance(x, str) else "",
)
def test_model_fields_match_the_schema(
    version: str, name: str, model: type[_base.WireModel]
) -> None:
    node = _defs(version)[name]
    properties = {k: v for k, v in node.get("properties", {}).items() if "const" not in v}
    required = set(node.get("required", []))
    fields = {field.alias: field for field in model.model_fields.values()}
    assert set(fields) == set(properties), name
    for alias, prop in properties.items():
        field = fields[alias]
        where = f"{name}.{alias}"
        assert field.is_required() == (alias in required and "default" not in prop), where
        marks = {type(m) for m in field.metadata}
        assert (DefaultOnError in marks) == bool(prop.get("x-deserialize-default-on-error")), where
        assert (SkipInvalidItems in marks) == bool(prop.get("x-deserialize-skip-invalid-items")), (
            where
        )
        nullable = _nullable(prop, _defs(version))
        assert _allows_none(field.annotation) == (nullable or not _typed(prop)), where
        ref = _ref(prop) or _ref(prop.get("items", {}))
        if ref is not None:
            target = _parts(getattr(MODULES[version], ref)) - {type(None)}
            assert target & _parts(field.annotation), where
        if "default" in prop:
            default = field.get_default(call_default_factory=True)
            if isinstance(default, _base.WireModel):
                default = default.to_wire()
            assert default == prop["default"], where


def _parts(annotation: Any) -> set[Any]:
    """The annotation and every type nested in it."""
    found = {annotation}
    for arg in typing.get_args(annotation):
        found |= _parts(arg)
    return found


def _typed(node: dict[str, Any]) -> bool:
    return any(k in node for k in ("type", "$ref", "allOf", "anyOf", "oneOf", "const"))


@pytest.mark.parametrize("version", MODULES)
def test_enums_list_the_schema_values(version: str) -> None:
    module = MODULES[version]
    defs = _defs(version)
    checked = 0
    for name, node in defs.items():
        constant = "".join(f"_{c}" if c.isupper() else c for c in name).lstrip("_").upper()
        values = getattr(module, f"{constant}_VALUES", None)
        if values is None:
            continue
        alternatives = node.get("oneOf") or node.get("anyOf")
        assert values == {a["const"] for a in alternatives if "const" in a}, name
        checked += 1
    assert checked >= 8


@pytest.mark.parametrize("version", MODULES)
def test_session_update_tags_match_the_schema(version: str) -> None:
    module = MODULES[version]
    union = _defs(version)["SessionUpdate"]
    tags = {
        alt["properties"]["sessionUpdate"]["const"]
        for alt in union.get("oneOf") or union.get("anyOf")
        if "const" in alt.get("properties", {}).get("sessionUpdate", {})
    }
    members = typing.get_args(typing.get_args(module.SessionUpdate)[0])
    names = {
        meta.tag for member in members for meta in member.__metadata__ if isinstance(meta, Tag)
    }
    assert names - {"__other__"} == tags
    assert ("__other__" in names) == (version == "v2")  # v2's union is open
