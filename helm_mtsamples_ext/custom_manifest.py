"""``python -m helm_mtsamples_ext.custom_manifest DIR > manifest.tsv``: the manifest of a directory of notes, for
``MTSAMPLES_PROCEDURES_MANIFEST`` (data/custom_manifest.py reads and checks it)."""

from __future__ import annotations

import sys
from pathlib import Path

from helm_mtsamples_ext.data.custom_manifest import manifest_for


def main(argv: list[str] | None = None) -> int:
    """``python -m helm_mtsamples_ext.custom_manifest DIR > manifest.tsv``."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or not Path(args[0]).is_dir():
        print("usage: python -m helm_mtsamples_ext.custom_manifest DIR_OF_NOTES > manifest.tsv", file=sys.stderr)
        return 2
    sys.stdout.write(manifest_for(Path(args[0])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
