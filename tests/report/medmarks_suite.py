"""A small suite for the Medmarks export tests: two models, one note unjudged for one of them, a hostile answer.

Rewards (judge reward = sum/15, note reward = mean over the judges that gave one); every judge that scored
counted 100 tokens in and 20 out (``TOKENS_IN`` / ``TOKENS_OUT``), a failed judge none:

  note  manifest place  alpha: j1 / j2 -> note     beta: j1 / j2 -> note
  n3    0                555 / 555 -> 1.0            333 / 333 -> .6
  n1    1                555 / 444 -> .9 (hostile)   222 / 222 -> .4
  n2    2                444 / 444 -> .8             both failed -> unjudged (null)
  n4    3                555 / 555 -> 1.0            444 / 333 -> .7

alpha beats beta on every note both have. The manifest lists the notes out of name order (n3 first); each note's
id is the one data/example_ids.py gives it for this manifest, which the tests ask it for
(tests/report/medmarks_export.py's ``expected_ids``), the same for both models.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from helm_mtsamples_ext.data.custom_manifest import MANIFEST_ENV
from helm_mtsamples_ext.data.notes import BASE_URL_ENV, CACHE_DIR_ENV
from tests.report.suites import JUDGES, NOTES, Run, build_suite, failed
from tests.report.suites import ok as scored

TOKENS_IN, TOKENS_OUT = 100, 20


def ok(accuracy: int, completeness: int, clarity: int) -> dict[str, Any]:
    """A judge record that parsed, with its tokens in and out counted apart."""
    return {**scored(accuracy, completeness, clarity), "tokens_in": TOKENS_IN, "tokens_out": TOKENS_OUT}


ALPHA = "acme/alpha"
BETA = "acme/beta"
MANIFEST_ORDER = ["n3.txt", "n1.txt", "n2.txt", "n4.txt"]
HOSTILE = '<script>alert("x")</script>\x1b[31m"}\n{"reward": 1.0}\u2028</textarea>'
"""An answer with HTML, an escape sequence, a forged JSON line and a line separator: it must stay one string."""

ALPHA_RUN = Run(
    model=ALPHA,
    judges=JUDGES,
    verdicts={
        "n1.txt": {"judge-one": ok(5, 5, 5), "judge-two": ok(4, 4, 4)},
        "n2.txt": {"judge-one": ok(4, 4, 4), "judge-two": ok(4, 4, 4)},
        "n3.txt": {"judge-one": ok(5, 5, 5), "judge-two": ok(5, 5, 5)},
        "n4.txt": {"judge-one": ok(5, 5, 5), "judge-two": ok(5, 5, 5)},
    },
    outputs={"n1.txt": HOSTILE},
)
BETA_RUN = Run(
    model=BETA,
    judges=JUDGES,
    verdicts={
        "n1.txt": {"judge-one": ok(2, 2, 2), "judge-two": ok(2, 2, 2)},
        "n2.txt": {"judge-one": failed("call error: HTTP 500"), "judge-two": failed("no verdict in reply")},
        "n3.txt": {"judge-one": ok(3, 3, 3), "judge-two": ok(3, 3, 3)},
        "n4.txt": {"judge-one": ok(4, 4, 4), "judge-two": ok(3, 3, 3)},
    },
)
PANEL_DIR = "judge-one_judge-two"
"""The panel ``judge-one+judge-two`` as a directory name."""


def write_notes(output: Path, names: list[str]) -> Path:
    """The notes' files under ``output/notes`` (each with a PLAN, which MedARC keeps) and the manifest listing them
    in ``names``' order, whose path is returned. MedARC's id of a note outside the pinned manifest depends on its
    text (data/example_ids.py), so the export reads these files through ``note_env``."""
    notes = output / "notes"
    notes.mkdir(parents=True, exist_ok=True)
    rows = ["name\tbytes\tsha256"]
    for name in names:
        data = f"PROCEDURE: something.\nPLAN: follow up ({name}).\n".encode()
        (notes / name).write_bytes(data)
        rows.append(f"{name}\t{len(data)}\t{hashlib.sha256(data).hexdigest()}")
    manifest = output / "manifest.tsv"
    manifest.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return manifest


def note_env(output: Path) -> dict[str, str]:
    """The variables under which the report reads the suite's manifest and notes (written by ``write_notes``)."""
    return {
        MANIFEST_ENV: str(output / "manifest.tsv"),
        BASE_URL_ENV: str(output / "notes"),
        CACHE_DIR_ENV: str(output / "notes-cache"),
    }


def build_medmarks_suite(output: Path) -> Path:
    """The suite under ``output/runs/v1``, and the manifest it was "run with" (``write_notes``), whose path is
    returned."""
    build_suite(output, [ALPHA_RUN, BETA_RUN], notes=[n for n in NOTES if n.filename in MANIFEST_ORDER])
    return write_notes(output, MANIFEST_ORDER)
