"""The JSON Schema of a timeline's items, as applications store them."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from pydantic import TypeAdapter

from .items import TimelineItem


@cache
def _schema() -> str:
    schema = TypeAdapter(list[TimelineItem]).json_schema(mode="serialization")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "acp-adapters timeline"
    schema["description"] = (
        "A session's timeline as Timeline.to_json() writes it: its items in order, each with "
        "its kind."
    )
    return json.dumps(schema, sort_keys=True)


def timeline_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a timeline's JSON: an array of items, told by ``kind``.

    For applications that store timelines or read them in another language;
    ``docs/timeline.schema.json`` is a copy.
    """
    schema: dict[str, Any] = json.loads(_schema())
    return schema
