"""Generate the wire models of one pinned ACP schema.

    python tools/generate_protocol.py            # writes protocol/v1.py and protocol/v2.py
    python tools/generate_protocol.py --check    # fails when they are out of date

Each definition reachable from ``ROOTS`` becomes Python: string aliases stay
aliases, enums become ``Literal`` types (open where the schema lists a catch-all:
any other string is kept), objects become frozen pydantic models with camelCase
aliases, and tagged unions become discriminated unions of subclasses that carry
the tag. Where the schema says so, an unknown tag lands in a catch-all model that
keeps the whole object (v2's unions, both versions' elicitation), and a message
without the tag in the alternative that has none (v1's stdio MCP server, a
config value id). An object whose alternatives are other objects told apart by
their fields (an elicitation's session or request scope) becomes a plain union
of one model per alternative, each with the object's own fields.

The schema's ``x-deserialize-default-on-error`` and
``x-deserialize-skip-invalid-items`` become the ``DefaultOnError`` and
``SkipInvalidItems`` annotations of ``protocol/_fields.py``. A schema construct
this generator does not know stops it with an error rather than guessing.

Why not datamodel-code-generator: it knows neither extension, and v2's open
unions need a catch-all it cannot express.
"""

from __future__ import annotations

import argparse
import json
import keyword
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "framework" / "acp_adapters" / "protocol"

#: The definitions the project uses, with everything they reference.
ROOTS = (
    # what the agent sends the client
    "SessionNotification",
    "UpdateSessionNotification",
    "RequestPermissionRequest",
    "ReadTextFileRequest",
    "WriteTextFileRequest",
    "CreateTerminalRequest",
    "TerminalOutputRequest",
    "WaitForTerminalExitRequest",
    "KillTerminalRequest",
    "ReleaseTerminalRequest",
    "CreateElicitationRequest",
    "CompleteElicitationNotification",
    # and its answers to the client's requests
    "InitializeResponse",
    "AuthenticateResponse",
    "LoginAuthResponse",
    "LogoutResponse",
    "LogoutAuthResponse",
    "NewSessionResponse",
    "LoadSessionResponse",
    "ResumeSessionResponse",
    "ListSessionsResponse",
    "CloseSessionResponse",
    "PromptResponse",
    "SetSessionModeResponse",
    "SetSessionConfigOptionResponse",
    # what the client sends
    "InitializeRequest",
    "AuthenticateRequest",
    "LoginAuthRequest",
    "LogoutRequest",
    "LogoutAuthRequest",
    "NewSessionRequest",
    "LoadSessionRequest",
    "ResumeSessionRequest",
    "ListSessionsRequest",
    "CloseSessionRequest",
    "PromptRequest",
    "CancelNotification",
    "CancelSessionNotification",
    "SetSessionModeRequest",
    "SetSessionConfigOptionRequest",
    "RequestPermissionResponse",
    "ReadTextFileResponse",
    "WriteTextFileResponse",
    "CreateTerminalResponse",
    "TerminalOutputResponse",
    "WaitForTerminalExitResponse",
    "KillTerminalResponse",
    "ReleaseTerminalResponse",
    "CreateElicitationResponse",
)

#: Defaults of enum-typed fields that are optional but not nullable. The schema
#: leaves them implicit (they are the Rust types' ``Default``).
ENUM_DEFAULTS = {"ToolKind": "other", "ToolCallStatus": "pending"}

VERSIONS = {"v1": "1.21.0", "v2": "2.0.0-alpha.3"}


def snake(name: str) -> str:
    """``toolCallId`` -> ``tool_call_id``; ``_meta`` -> ``meta``."""
    name = name.lstrip("_")
    name = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()
    return name + "_" if keyword.iskeyword(name) else name


def pascal(tag: str) -> str:
    """``user_message_chunk`` -> ``UserMessageChunk``; ``resource_link`` -> ``ResourceLink``."""
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[_\-/ ]", tag) if part)


def ref_name(node: dict[str, Any]) -> str | None:
    """The definition a node stands for: ``$ref`` or a single-``allOf`` wrapper."""
    if "$ref" in node:
        return str(node["$ref"]).rsplit("/", 1)[-1]
    all_of = node.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and "$ref" in all_of[0]:
        return str(all_of[0]["$ref"]).rsplit("/", 1)[-1]
    return None


@dataclass
class Field:
    name: str
    alias: str
    annotation: str
    default: str | None  # Python source of the default, None when required
    default_on_error: bool
    skip_invalid: bool


@dataclass
class Generator:
    defs: dict[str, Any]
    out: list[str] = field(default_factory=list)
    done: set[str] = field(default_factory=set)
    busy: set[str] = field(default_factory=set)
    #: Model classes emitted so far.
    classes: set[str] = field(default_factory=set)
    #: Tagged unions emitted so far: name -> (tag alias, [(tag value, member class)],
    #: catch-all, the member for messages without the tag).
    unions: dict[str, tuple[str, list[tuple[str, str]], str | None, str | None]] = field(
        default_factory=dict
    )
    #: Untagged unions of objects emitted so far: name -> [(suffix, member class)].
    untagged: dict[str, list[tuple[str, str]]] = field(default_factory=dict)

    # --- types --------------------------------------------------------------------------

    def type_of(self, node: dict[str, Any]) -> str:
        """The Python type of a schema node, emitting the definitions it needs first."""
        name = ref_name(node)
        if name is not None:
            return self.define(name)
        for key in ("anyOf", "oneOf"):
            if key in node:
                return self.anonymous_union(node[key])
        if "const" in node:
            return f"Literal[{node['const']!r}]"
        kind = node.get("type")
        if isinstance(kind, list):
            parts = [self.type_of({**node, "type": k}) for k in kind if k != "null"]
            if len(parts) != 1:
                raise ValueError(f"unsupported type list {kind}")
            return f"{parts[0]} | None" if "null" in kind else parts[0]
        if kind == "string":
            return "str"
        if kind == "integer":
            return self.bounded("int", node)
        if kind == "number":
            return "float"
        if kind == "boolean":
            return "bool"
        if kind == "null":
            return "None"
        if kind == "array":
            return f"list[{self.type_of(node.get('items', {}))}]"
        if kind == "object":
            if node.get("properties"):
                raise ValueError(f"inline object with properties: {sorted(node)}")
            values = node.get("additionalProperties")
            return f"dict[str, {self.type_of(values) if isinstance(values, dict) else 'Any'}]"
        if kind is None and not {k for k in node if not k.startswith("x-")} - {
            "description",
            "title",
            "default",
        }:
            return "Any"
        raise ValueError(f"unsupported schema node: {node}")

    def bounded(self, base: str, node: dict[str, Any]) -> str:
        bounds = []
        if "minimum" in node:
            bounds.append(f"ge={node['minimum']}")
        if "maximum" in node:
            bounds.append(f"le={node['maximum']}")
        return f"Annotated[{base}, Field({', '.join(bounds)})]" if bounds else base

    def anonymous_union(self, alternatives: list[dict[str, Any]]) -> str:
        nullable = any(alt.get("type") == "null" for alt in alternatives)
        parts = [self.type_of(alt) for alt in alternatives if alt.get("type") != "null"]
        union = " | ".join(dict.fromkeys(parts))
        return f"{union} | None" if nullable else union

    # --- definitions --------------------------------------------------------------------

    def define(self, name: str) -> str:
        """Emit definition ``name`` (once) and return the name to use for it."""
        if name in self.done or name in self.busy:
            if name in self.busy and name not in self.done:
                raise ValueError(f"recursive definition {name}")
            return name
        self.busy.add(name)
        node = self.defs[name]
        doc = self.doc(node)
        if "properties" in node and any(k in node for k in ("oneOf", "anyOf")):
            alternatives = node.get("oneOf") or node.get("anyOf")
            if self.union_tag(alternatives) is None:
                self.untagged_union(name, node, alternatives, doc)
            else:
                self.tagged_union(name, node, alternatives, doc)
        elif any(k in node for k in ("oneOf", "anyOf")):
            alternatives = node.get("oneOf") or node.get("anyOf")
            if all(self.is_enum_value(a) for a in alternatives):
                self.enum(name, alternatives, doc)
            elif self.union_tag(alternatives) is not None:
                self.tagged_union(name, node, alternatives, doc)
            else:
                self.out.append(f"{name} = {self.anonymous_union(alternatives)}\n{doc}\n")
        elif node.get("type") == "object" or "properties" in node:
            self.model(name, node, doc)
        else:
            self.out.append(f"{name} = {self.type_of(node)}\n{doc}\n")
        self.busy.discard(name)
        self.done.add(name)
        return name

    @staticmethod
    def doc(node: dict[str, Any]) -> str:
        text = str(node.get("description", "")).strip().split("\n\n")[0].replace("\n", " ")
        text = text.replace('"""', "'''").replace("\\", "\\\\")
        return f'"""{text}"""' if text else ""

    @staticmethod
    def is_enum_value(alt: dict[str, Any]) -> bool:
        return ("const" in alt and alt.get("type") == "string") or (
            alt.get("type") == "string" and "const" not in alt and alt.get("title") is not None
        )

    def enum(self, name: str, alternatives: list[dict[str, Any]], doc: str) -> None:
        values = [a["const"] for a in alternatives if "const" in a]
        is_open = any("const" not in a for a in alternatives)
        literal = f"Literal[{', '.join(repr(v) for v in values)}]"
        constant = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).upper() + "_VALUES"
        self.out.append(
            f"{name} = {literal}{' | str' if is_open else ''}\n{doc}\n"
            f"{constant}: Final = frozenset({values!r})\n"
        )

    @staticmethod
    def union_tag(alternatives: list[dict[str, Any]]) -> str | None:
        """The property the tagged alternatives fix with a ``const``, if there is one.

        A catch-all (titled ``other``) names the tag without fixing it; an alternative
        that does not name it at all is the one for messages without the tag.
        """
        tags = None
        for alt in alternatives:
            consts = {k for k, v in alt.get("properties", {}).items() if "const" in v}
            if alt.get("title") in ("other", "unknown") or not consts:
                continue
            tags = consts if tags is None else tags & consts
        return next(iter(sorted(tags))) if tags else None

    def tagged_union(
        self, name: str, node: dict[str, Any], alternatives: list[dict[str, Any]], doc: str
    ) -> None:
        tag = self.union_tag(alternatives)
        if tag is None:
            raise ValueError(f"{name}: union without a tag")
        tag_field = snake(tag)
        common = self.fields(node) if "properties" in node else []
        members: list[tuple[str, str]] = []
        other: str | None = None
        absent: str | None = None
        for alt in alternatives:
            own = [f for f in self.fields(alt) if f.alias != tag]
            fixed = alt.get("properties", {}).get(tag, {})
            if "const" in fixed:
                value = fixed["const"]
                literal = Field(tag_field, tag, f"Literal[{value!r}]", None, False, False)
                variant = f"{name}{pascal(value)}"
                if variant in self.defs:
                    # AuthMethod + terminal: the name AuthMethodTerminal is the schema's own.
                    variant = f"{pascal(value)}{name}"
                self.variant(variant, alt, [*common, *own, literal], f"{name} ``{tag}: {value}``.")
                members.append((value, variant))
            elif tag in alt.get("properties", {}):  # the catch-all: the tag, not fixed
                other = f"{name}Other"
                fields = [*common, *own, Field(tag_field, tag, "str", None, False, False)]
                self.variant(other, alt, fields, f"{name} of a kind not known here, kept whole.")
            elif (base := ref_name(alt)) is not None and not own and not common:
                # No tag at all, a definition as it is: the default (v1's stdio MCP server).
                absent = self.define(base)
            else:  # no tag at all: the default (v1's config value ids, titled items)
                absent = f"{name}{pascal(alt.get('title') or 'default')}"
                if absent in self.defs:
                    absent = f"{pascal(alt.get('title') or 'default')}{name}"
                fields = [*common, *own, Field(tag_field, tag, "str | None", "None", False, False)]
                self.variant(absent, alt, fields, f"{name} without ``{tag}``.")
        self.emit_union(name, tag, members, other, absent, doc)

    def variant(self, name: str, alt: dict[str, Any], fields: list[Field], doc: str) -> None:
        """One alternative of a union as a model (or, when it is a union itself, as one)."""
        base = ref_name(alt)
        parent = self.define(base) if base else "WireModel"
        if parent in self.unions:
            # The variant's body is itself a tagged union (v2's state_update):
            # each of its members gains this union's fields.
            self.nested_union(name, parent, fields)
        elif parent in self.untagged:
            self.nested_untagged(name, self.untagged[parent], fields)
        elif "anyOf" in alt:  # its own alternatives: the scopes of an elicitation
            scopes = [
                (pascal(scope.get("title", "")), self.define(str(ref_name(scope))))
                for scope in alt["anyOf"]
            ]
            self.nested_untagged(name, scopes, fields)
        else:
            self.emit_model(name, parent, fields, f'"""{doc}"""')

    def emit_union(
        self,
        name: str,
        tag: str,
        members: list[tuple[str, str]],
        other: str | None,
        absent: str | None,
        doc: str,
    ) -> None:
        self.unions[name] = (tag, members, other, absent)
        known = [value for value, _ in members]
        tagged = [f"Annotated[{cls}, Tag({value!r})]" for value, cls in members]
        if other is not None:
            tagged.append(f'Annotated[{other}, Tag("__other__")]')
        if absent is not None:
            tagged.append(f'Annotated[{absent}, Tag("__absent__")]')
        # Without a catch-all, the default alternative takes unknown tags too.
        unknown = "__other__" if other else "__absent__" if absent else None
        discriminator = (
            f"Discriminator(tag_of({tag!r}, {snake(tag)!r}, frozenset({known!r}), "
            f"{unknown!r}, {'__absent__' if absent else None!r}))"
        )
        body = "\n    | ".join(tagged)
        self.out.append(f"{name} = Annotated[\n    {body},\n    {discriminator},\n]\n{doc}\n")

    def nested_union(self, name: str, inner: str, fields: list[Field]) -> None:
        tag, members, other, absent = self.unions[inner]
        nested = []
        for value, cls in members:
            variant = f"{name}{pascal(value)}"
            self.emit_model(variant, cls, fields, f'"""{cls} as a {name}."""')
            nested.append((value, variant))
        nested_other = nested_absent = None
        if other is not None:
            nested_other = f"{name}Other"
            self.emit_model(nested_other, other, fields, f'"""{other} as a {name}."""')
        if absent is not None:
            nested_absent = f"{name}Default"
            self.emit_model(nested_absent, absent, fields, f'"""{absent} as a {name}."""')
        self.emit_union(name, tag, nested, nested_other, nested_absent, "")

    def untagged_union(
        self, name: str, node: dict[str, Any], alternatives: list[dict[str, Any]], doc: str
    ) -> None:
        """An object whose alternatives are other definitions told apart by their fields."""
        scopes = []
        for alt in alternatives:
            base = ref_name(alt)
            if base is None:
                raise ValueError(f"{name}: an untagged alternative that is not a definition")
            scopes.append((pascal(alt.get("title") or base), self.define(base)))
        self.nested_untagged(name, scopes, self.fields(node), doc)

    def nested_untagged(
        self, name: str, scopes: list[tuple[str, str]], fields: list[Field], doc: str = ""
    ) -> None:
        """``name``: a union of each of ``scopes`` (suffix, class) with ``fields`` added."""
        members = []
        for suffix, cls in scopes:
            member = f"{name}{suffix}"
            self.emit_model(member, cls, fields, f'"""{name}, {suffix.lower()} kind."""')
            members.append((suffix, member))
        self.untagged[name] = members
        self.out.append(f"{name} = {' | '.join(m for _, m in members)}\n{doc}\n")

    def model(self, name: str, node: dict[str, Any], doc: str) -> None:
        if node.get("additionalProperties") is False:
            raise ValueError(f"{name}: closed objects are not supported")
        self.emit_model(name, "WireModel", self.fields(node), doc)

    def fields(self, node: dict[str, Any]) -> list[Field]:
        required = set(node.get("required", []))
        result = []
        for alias, prop in node.get("properties", {}).items():
            if "const" in prop:
                continue  # a union tag: the variant declares it
            annotation = self.type_of(prop)
            nullable = annotation.endswith("| None") or annotation == "Any"
            default: str | None
            if alias in required:
                default = None
            elif "default" in prop:
                default = repr(prop["default"])
            elif nullable:
                default = "None"
            elif annotation.startswith("list["):
                default = "[]"
            elif annotation.startswith("dict["):
                default = "{}"
            elif ref_name(prop) in ENUM_DEFAULTS:
                default = repr(ENUM_DEFAULTS[str(ref_name(prop))])
            else:
                raise ValueError(f"{alias}: optional, not nullable, and no default known")
            on_error = bool(prop.get("x-deserialize-default-on-error"))
            skip = bool(prop.get("x-deserialize-skip-invalid-items"))
            result.append(Field(snake(alias), alias, annotation, default, on_error, skip))
        return result

    def emit_model(self, name: str, parent: str, fields: list[Field], doc: str) -> None:
        self.classes.add(name)
        lines = [f"class {name}({parent}):"]
        lines.append(f"    {doc}" if doc else f'    """{name}."""')
        for f in fields:
            annotations = [f.annotation]
            if f.skip_invalid:
                annotations.append("SkipInvalidItems()")
            if f.default_on_error:
                fallback = f.default if f.default is not None else self.type_default(f)
                annotations.append(f"DefaultOnError({fallback})")
            annotation = (
                f"Annotated[{', '.join(annotations)}]" if len(annotations) > 1 else f.annotation
            )
            spec = [f"alias={f.alias!r}"]
            if f.default is not None:
                spec.insert(0, self.default_spec(f))
            lines.append(f"    {f.name}: {annotation} = Field({', '.join(spec)})")
        self.out.append("\n".join(lines) + "\n")

    def default_spec(self, f: Field) -> str:
        """``default=...`` or ``default_factory=...`` for a field's default."""
        if f.annotation in self.classes:
            # An object default: built as the model, not left a dict (pydantic does
            # not validate defaults).
            return f"default_factory=lambda: {f.annotation}.model_validate({f.default})"
        factories = {"[]": "default_factory=list", "{}": "default_factory=dict"}
        return factories.get(str(f.default), f"default={f.default}")

    @staticmethod
    def type_default(f: Field) -> str:
        """What a required field with ``x-deserialize-default-on-error`` falls back to."""
        if f.annotation.startswith("list["):
            return "[]"
        if f.annotation.startswith("dict["):
            return "{}"
        if f.annotation.endswith("| None"):
            return "None"
        raise ValueError(f"{f.alias}: required, default-on-error, and no default known")


def generate(version: str) -> str:
    schema_version = VERSIONS[version]
    schema = json.loads((REPO / "spec" / "acp" / version / "schema.json").read_text())
    gen = Generator(schema["$defs"])
    roots = [root for root in ROOTS if root in gen.defs]
    for root in roots:
        gen.define(root)
    header = f'''"""Wire models of ACP schema {schema_version} (``spec/acp/{version}/schema.json``).

Generated by ``python tools/generate_protocol.py``: do not edit; change the
generator and run it again. Definitions reachable from: {", ".join(roots)}.
"""

# ruff: noqa: E501
from __future__ import annotations

from typing import Annotated, Any, Final, Literal

from pydantic import Discriminator, Field, Tag

from ._base import WireModel, tag_of
from ._fields import DefaultOnError, SkipInvalidItems

SCHEMA_VERSION: Final = {schema_version!r}
'''
    return header + "\n\n" + "\n\n".join(gen.out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail when the files are out of date")
    args = parser.parse_args()
    stale = []
    for version in VERSIONS:
        target = OUT / f"{version}.py"
        source = generate(version)
        formatted = subprocess.run(
            [sys.executable, "-m", "ruff", "format", "-"],
            input=source,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        if args.check:
            if not target.exists() or target.read_text() != formatted:
                stale.append(str(target))
        else:
            target.write_text(formatted)
    if stale:
        print("out of date (run python tools/generate_protocol.py):", *stale, sep="\n  ")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
