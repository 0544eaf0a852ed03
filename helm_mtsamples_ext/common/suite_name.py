"""``--suite`` is a suite name, as helm-run takes it, never a path.

Our commands join it under ``<output-path>/runs/`` (and ``mtsamples_report/``) to read a suite and to write
its report and schema: ``--suite ../../etc`` or ``--suite /tmp/x`` would read or write outside the output
directory. A name holding ``/``, ``\\`` or ``..`` (or an empty one) is refused with one line, and so is one longer
than ``MAX_LENGTH`` (a file name holds 255 bytes; ours add to it) or holding a control character. Pure.
"""

from __future__ import annotations

from helm_mtsamples_ext.common.outside_text import terminal

FORBIDDEN = ("/", "\\", "..")
MAX_LENGTH = 100
"""Characters in a suite name: a directory name, under a file system's 255 bytes with room for what is added."""


def suite_problem(suite: str) -> str | None:
    """The one line refusing ``suite``, or None for a plain name."""
    if len(suite) > MAX_LENGTH:
        return f"--suite is {len(suite)} characters long: a suite name takes at most {MAX_LENGTH}; choose a shorter one"
    if not suite.isprintable():
        return f"--suite {terminal(suite)!r} holds a control character or line break: choose a plain name"
    if suite.strip() and suite not in (".",) and not any(part in suite for part in FORBIDDEN):
        return None
    return (
        f"--suite {suite!r} is not a suite name: a suite is the plain name given to helm-run --suite "
        "(no '/', '\\' or '..'); to read another output directory use -o/--output-path"
    )
