"""The bash blocks of the README and docs/*.md as a door's test reads them: the block that runs a given command,
line by line.

Why one: each door's test of its line found its block the same way, and a change to how the pages are read (a
fence, a set-up line, a block moved from the README to a docs page) would have been made in one and missed in the
other. Pure: the pages read, nothing run."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
"""Where a reader finds commands: the README, then each docs page (as tests/e2e/test_readme_commands.py reads them)."""


def block_running(command: str, skip_prefix: str | None = None) -> list[str]:
    """The non-blank lines of the one ```bash block of the README or a docs page holding ``command`` (e.g.
    ``/bin/inspect eval ``), without those starting with ``skip_prefix`` (a venv's set-up line)."""
    blocks = [
        block
        for page in PAGES
        for block in re.findall(r"```bash\n(.*?)```", page.read_text(encoding="utf-8"), re.DOTALL)
    ]
    (block,) = [b for b in blocks if command in b]
    lines = [line for line in block.splitlines() if line.strip()]
    return [line for line in lines if not (skip_prefix and line.startswith(skip_prefix))]
