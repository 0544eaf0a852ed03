"""The README's bash blocks as a door's test reads them: the block that runs a given command, line by line.

Why one: each door's test of its README line found its block the same way, and a change to how the README is
read (a fence, a set-up line) would have been made in one and missed in the other. Pure: the README read, nothing
run."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def block_running(command: str, skip_prefix: str | None = None) -> list[str]:
    """The non-blank lines of the one README ```bash block holding ``command`` (e.g. ``/bin/inspect eval ``),
    without those starting with ``skip_prefix`` (a venv's set-up line)."""
    blocks = re.findall(r"```bash\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)
    (block,) = [b for b in blocks if command in b]
    lines = [line for line in block.splitlines() if line.strip()]
    return [line for line in lines if not (skip_prefix and line.startswith(skip_prefix))]
