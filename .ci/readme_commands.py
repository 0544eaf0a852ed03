"""The README's shell commands, read from its ```bash blocks: what .ci/run runs and tests/e2e/test_readme_commands.py
checks, so that when the README changes both follow.

    python3 .ci/readme_commands.py   # the "Run the tests" command: its block's one line

Standard library only: .ci/run calls it with the system's python3, before any venv exists.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"
TESTS_HEADING = "**Run the tests**"


@dataclass(frozen=True)
class Block:
    start_line: int  # of the opening fence, 1-based, for messages
    commands: tuple[str, ...]  # continuation lines joined; comments and blank lines dropped
    after: str  # the README text between the previous block and this one


def commands_of(code: str) -> tuple[str, ...]:
    """One entry per command line: ``\\``-continued lines joined, comment and blank lines left out."""
    joined = re.sub(r"\\\n\s*", " ", code)
    return tuple(line.strip() for line in joined.splitlines() if line.strip() and not line.lstrip().startswith("#"))


def bash_blocks(text: str | None = None) -> list[Block]:
    """Every ```bash block of the README, in order."""
    text = README.read_text(encoding="utf-8") if text is None else text
    blocks, previous_end = [], 0
    for match in re.finditer(r"^```bash\n(.*?)^```", text, re.S | re.M):
        line = text.count("\n", 0, match.start()) + 1
        blocks.append(Block(line, commands_of(match.group(1)), text[previous_end : match.start()]))
        previous_end = match.end()
    return blocks


def test_block(text: str | None = None) -> Block:
    """The block of "Run the tests": the first ```bash block after that heading."""
    for block in bash_blocks(text):
        if TESTS_HEADING in block.after:
            return block
    raise SystemExit(f"README.md: no ```bash block after {TESTS_HEADING}")


def test_command(text: str | None = None) -> str:
    """The one command of "Run the tests" (its block holds nothing else)."""
    commands = test_block(text).commands
    if len(commands) != 1:
        raise SystemExit(f"README.md, {TESTS_HEADING}: one command line, not {len(commands)}: {list(commands)}")
    return commands[0]


if __name__ == "__main__":
    if len(sys.argv) != 1:
        raise SystemExit("usage: python3 .ci/readme_commands.py")
    print(test_command())
