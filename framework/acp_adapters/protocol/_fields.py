"""The schema's deserialization extensions, as pydantic annotations.

The ACP schemas mark how a receiver must treat a malformed value:

* ``x-deserialize-default-on-error``: a malformed value of that field takes the
  field's default; the rest of the message is kept (:class:`DefaultOnError`).
* ``x-deserialize-skip-invalid-items``: a malformed item of that array is
  dropped; the others are kept (:class:`SkipInvalidItems`).

Every other field is strict: a malformed value makes its message invalid.
Both annotations stay visible in a field's metadata, which is how the schema
test checks that every generated model honours every extension.
"""

from __future__ import annotations

import copy
from typing import Any, get_args, get_origin

from pydantic import GetCoreSchemaHandler, TypeAdapter, ValidationError
from pydantic_core import core_schema


class DefaultOnError:
    """A malformed value takes ``default`` instead of failing the message."""

    __slots__ = ("default",)

    def __init__(self, default: Any) -> None:
        self.default = default

    def __repr__(self) -> str:
        return f"DefaultOnError({self.default!r})"

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        default = self.default

        def validate(value: Any, inner: core_schema.ValidatorFunctionWrapHandler) -> Any:
            try:
                return inner(value)
            except ValidationError:
                # A fresh copy: defaults like [] must not be shared between messages.
                return copy.copy(default)

        return core_schema.no_info_wrap_validator_function(validate, handler(source))


class SkipInvalidItems:
    """Items of a list that fail validation are dropped; the list itself must be a list."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "SkipInvalidItems()"

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        item_type = _list_item_type(source)
        adapter: TypeAdapter[Any] = TypeAdapter(item_type)

        def validate(value: Any, inner: core_schema.ValidatorFunctionWrapHandler) -> Any:
            if isinstance(value, list):
                return [item for item in map(_validated(adapter), value) if item is not _INVALID]
            return inner(value)

        return core_schema.no_info_wrap_validator_function(validate, handler(source))


_INVALID: Any = object()


def _validated(adapter: TypeAdapter[Any]) -> Any:
    """``adapter.validate_python``, giving ``_INVALID`` for a value that fails."""

    def validate(item: Any) -> Any:
        try:
            return adapter.validate_python(item)
        except ValidationError:
            return _INVALID

    return validate


def _list_item_type(source: Any) -> Any:
    """The item type of ``list[X]`` or ``list[X] | None``."""
    if get_origin(source) is list:
        return get_args(source)[0]
    for arg in get_args(source):
        if get_origin(arg) is list:
            return get_args(arg)[0]
    raise TypeError(f"SkipInvalidItems needs a list type, not {source!r}")
