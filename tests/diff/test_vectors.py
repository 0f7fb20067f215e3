"""Every public jsdiff 8.0.3 vector, byte for byte, through the public entry points."""

from __future__ import annotations

import pytest

from acp_adapters import diff_patch, file_patches, unified_diff
from diff_helpers import Vector, apply_patch, public_vectors
from jsdiff_reference import create_two_files_patch

VECTORS = public_vectors()


def _cap(vector: Vector) -> int | None:
    # jsdiff caps the search only when both texts are non-empty.
    return 1000 if vector.old_text and vector.new_text else None


def test_every_vector_is_loaded() -> None:
    assert len(VECTORS) == 201
    assert len({v.id for v in VECTORS}) == len(VECTORS)
    assert any(v.expected is None for v in VECTORS)
    assert any(v.old_text is None for v in VECTORS)


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v.id)
def test_diff_patch_matches_jsdiff(vector: Vector) -> None:
    entry = {"type": "diff", "path": vector.new_name, "newText": vector.new_text}
    if vector.old_text is not None:
        entry["oldText"] = vector.old_text
    assert diff_patch([entry]) == vector.expected


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v.id)
def test_unified_diff_matches_jsdiff(vector: Vector) -> None:
    got = unified_diff(
        vector.old_name,
        vector.new_name,
        vector.old_text or "",
        vector.new_text,
        max_edits=_cap(vector),
    )
    assert got == vector.expected


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v.id)
def test_file_patches_say_why_a_vector_has_no_patch(vector: Vector) -> None:
    entry = {
        "type": "diff",
        "path": vector.new_name,
        "oldText": vector.old_text,
        "newText": vector.new_text,
    }
    (patch,) = file_patches([entry])
    assert patch.patch == vector.expected
    assert patch.operation == ("add" if vector.old_text is None else "modify")
    assert patch.omitted_reason == (None if vector.expected is not None else "capped")


@pytest.mark.parametrize(
    "vector", [v for v in VECTORS if v.expected is not None], ids=lambda v: v.id
)
def test_applying_a_vector_patch_gives_the_new_text(vector: Vector) -> None:
    old = {} if vector.old_text is None else {vector.new_name: vector.old_text}
    assert apply_patch(vector.expected or "", old) == {vector.new_name: vector.new_text}


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v.id)
def test_reference_transcription_matches_jsdiff(vector: Vector) -> None:
    """The test oracle (a plain transcription of jsdiff) is itself right on every vector."""
    got = create_two_files_patch(
        vector.old_name,
        vector.new_name,
        vector.old_text or "",
        vector.new_text,
        max_edit_length=_cap(vector),
    )
    assert got == vector.expected
