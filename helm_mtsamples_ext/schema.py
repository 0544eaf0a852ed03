"""Where the leaderboard schema lives, so helm-summarize can be pointed at it from a shell:

    helm-summarize --suite SUITE --schema-path "$(python -m helm_mtsamples_ext.schema)" --schema-validation error

The schema ships inside the package (package_data), so the path is the installed copy, not a
checkout's.
"""

from __future__ import annotations

from pathlib import Path

SCHEMA_FILENAME = "schema_mtsamples_procedures.yaml"
SCHEMA_PATH: str = str(Path(__file__).resolve().parent / SCHEMA_FILENAME)


def main() -> None:
    print(SCHEMA_PATH)


if __name__ == "__main__":
    main()
