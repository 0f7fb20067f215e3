"""How far a diff may go."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from .content import DEFAULT_MAX_EDITS


class DiffLimits(BaseModel):
    """The rewrite cap: the edit search of one file stops past ``max_edits`` line edits."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_edits: int = Field(default=DEFAULT_MAX_EDITS, ge=0)
