"""Write ``docs/timeline.schema.json``: the JSON Schema of a timeline's JSON.

    python tools/generate_timeline_schema.py          # writes it
    python tools/generate_timeline_schema.py --check  # fails when it is out of date

The schema comes from the item models (``acp_adapters.timeline_json_schema()``);
the file is a copy for applications that read stored timelines in another language.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from acp_adapters import timeline_json_schema

TARGET = Path(__file__).resolve().parents[1] / "docs" / "timeline.schema.json"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail when the file is out of date")
    args = parser.parse_args()
    text = json.dumps(timeline_json_schema(), indent=2, sort_keys=True) + "\n"
    if args.check:
        if not TARGET.exists() or TARGET.read_text(encoding="utf-8") != text:
            print(f"out of date (run python tools/generate_timeline_schema.py): {TARGET}")
            return 1
        return 0
    TARGET.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
