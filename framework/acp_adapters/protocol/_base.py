"""The base of every wire model, and the helpers the generated modules use."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict


class WireModel(BaseModel):
    """A message, or part of one, as the schema defines it.

    Fields carry snake_case names and the schema's camelCase aliases. Keys the
    schema does not name are kept (``extra="allow"``), so that a message
    round-trips: ``model_dump(mode="json", by_alias=True, exclude_unset=True)``
    gives back what was received, minus what the schema's rules dropped.
    Models are frozen: hooks receive them and must not change them.
    """

    model_config = ConfigDict(populate_by_name=True, extra="allow", frozen=True)

    def to_wire(self) -> dict[str, Any]:
        """The JSON object of this model, as it would be sent."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)


def tag_of(
    alias: str, field: str, known: frozenset[str], other: str | None, absent: str | None = None
) -> Callable[[Any], Any]:
    """A discriminator for a tagged union: the tag, ``other`` for an unknown tag.

    Closed unions (``other`` None) leave an unknown tag unmatched, which fails
    validation; open ones send it to their catch-all model. A union with a member
    for messages without the tag (``absent``) sends them there.
    """

    def discriminate(value: Any) -> Any:
        tag = value.get(alias) if isinstance(value, dict) else getattr(value, field, None)
        if tag is None:
            return absent
        if not isinstance(tag, str):
            return None
        if tag in known:
            return tag
        return other

    return discriminate
