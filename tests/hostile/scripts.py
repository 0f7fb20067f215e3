"""Running the scripted agent of the hostile tests: a script in, the client's answers out."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

AGENT = Path(__file__).parent / "agents" / "scripted.py"


class Script:
    """A script for ``agents/scripted.py`` in ``folder``, and the answers the client gave."""

    def __init__(self, folder: Path, steps: list[dict[str, Any]]) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / "script.json"
        self.answers_path = folder / "answers.json"
        self.path.write_text(json.dumps(steps), encoding="utf-8")

    @property
    def command(self) -> list[str]:
        return [sys.executable, str(AGENT), str(self.path), str(self.answers_path)]

    def answers(self) -> list[dict[str, Any]]:
        if not self.answers_path.exists():
            return []
        answers: list[dict[str, Any]] = json.loads(self.answers_path.read_text(encoding="utf-8"))
        return answers


def run_shell(command: str, **extra: Any) -> dict[str, Any]:
    """A ``terminal/create`` step running ``command`` as a shell line, then waiting for it."""
    return {"request": "terminal/create", "params": {"command": command, **extra}}
