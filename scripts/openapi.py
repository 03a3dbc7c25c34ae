"""memstack's OpenAPI document, as the server publishes it at ``/openapi.json``, written to
``clients/typescript/openapi.json``, the file the TypeScript client's types are generated from
(``npm run generate`` in ``clients/typescript``).

    python scripts/openapi.py           # write it
    python scripts/openapi.py --check   # exit 1 when the committed file is not the server's document

The document is built from the app (``create_app(...).openapi()``) on a temporary home, with no ``MEMSTACK_*``
variables read: it depends on the code alone. ``tests/clients/test_typescript.py`` runs the check.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

TARGET = Path(__file__).resolve().parent.parent / "clients" / "typescript" / "openapi.json"


def document() -> dict[str, Any]:
    """The server's OpenAPI document, whatever the environment says."""
    from memstack.config import Config
    from memstack.server import create_app

    for name in [n for n in os.environ if n.startswith("MEMSTACK_")]:
        del os.environ[name]
    with tempfile.TemporaryDirectory() as home:
        schema: dict[str, Any] = create_app(Config.resolve(home=home)).openapi()
    return schema


def text(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed file instead of writing it")
    args = parser.parse_args()
    wanted = text(document())
    if args.check:
        have = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
        if have != wanted:
            print(
                f"{TARGET.relative_to(TARGET.parents[2])} is not the server's OpenAPI document: run "
                "`python scripts/openapi.py` and then `npm run generate` in clients/typescript, and commit both",
                file=sys.stderr,
            )
            return 1
        return 0
    TARGET.write_text(wanted, encoding="utf-8")
    print(f"wrote {TARGET.relative_to(TARGET.parents[2])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
