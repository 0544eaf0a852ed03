"""``--suite`` is a suite name, as helm-run takes it, never a path.

Our commands join it under ``<output-path>/runs/`` (and ``mtsamples_report/``) to read a suite and to write
its report and schema: ``--suite ../../etc`` or ``--suite /tmp/x`` would read or write outside the output
directory. A name holding ``/``, ``\\`` or ``..`` (or an empty one) is refused with one line. Pure.
"""

from __future__ import annotations

FORBIDDEN = ("/", "\\", "..")


def suite_problem(suite: str) -> str | None:
    """The one line refusing ``suite``, or None for a plain name."""
    if suite.strip() and suite not in (".",) and not any(part in suite for part in FORBIDDEN):
        return None
    return (
        f"--suite {suite!r} is not a suite name: a suite is the plain name given to helm-run --suite "
        "(no '/', '\\' or '..'); to read another output directory use -o/--output-path"
    )
