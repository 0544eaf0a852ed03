"""The report directory's files: the CSV/parquet tables, the figure, report.md and the review page.

Written beside the suite (`<output>/mtsamples_report/<suite>/` by default), never inside it, where
helm-summarize would take the directory for a broken run. instances.csv keeps the columns a reader
analyses; the notes' texts go to the review page alone.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pandas as pd

from helm_mtsamples_ext.common.atomic import whole_directory
from helm_mtsamples_ext.common.rubric import DIMENSIONS
from helm_mtsamples_ext.report.audit_warnings import blind_panels
from helm_mtsamples_ext.report.cost import cost_markdown
from helm_mtsamples_ext.report.csv_safe import write_csv
from helm_mtsamples_ext.report.eee_export import EXPORT_DIR as EEE_DIR
from helm_mtsamples_ext.report.eee_export import EeeExport, write_eee
from helm_mtsamples_ext.report.figure import write_figure
from helm_mtsamples_ext.report.medmarks_export import EXPORT_DIR, ModelExport, write_export
from helm_mtsamples_ext.report.progress import ReportProgress
from helm_mtsamples_ext.report.rating_plan import PLAN_TABLE
from helm_mtsamples_ext.report.rating_sample import EVERY_ANSWER, RatingRound
from helm_mtsamples_ext.report.render import markdown_report
from helm_mtsamples_ext.report.review import Overview, write_review
from helm_mtsamples_ext.report.tables import audit_lines

FIGURE_NAME = "leaderboard.png"
TABLES = ("instances", "leaderboard", "pairwise", "by_specialty", "judge_self_preference", "judge_audit",
          "judge_versions", "judge_human_agreement", "flagged_references")  # fmt: skip
REPORT_FILES = (
    *(f"{t}.csv" for t in TABLES), "instances.parquet", FIGURE_NAME, "report.html", "report.md", EXPORT_DIR,
    "judge_dropout.csv", "rating_plan.csv", EEE_DIR,
)  # fmt: skip
"""Every file the report may write: one this report does not write is not carried over from the previous one (an
earlier Medmarks export would be stale beside new tables, so a report without ``--export medmarks`` drops it)."""
PAUSE_ENV = "HELM_MTSAMPLES_REPORT_PAUSE"
INSTANCE_COLUMNS = [
    "panel", "model", "judge", "note", "note_id", "specialty", "extracted_section", *DIMENSIONS,
    "judge_reward", "status", "failure", "invalid", "empty_answer", "output_words", "run",
    "tokens_in", "tokens_out", "reported_model", "system_fingerprint", "loaded_model", "rules_version",
]  # fmt: skip


def write_report(
    tables: dict[str, pd.DataFrame],
    out: Path,
    suite: str,
    problems: list[str],
    settings_text: str,
    sample: RatingRound = EVERY_ANSWER,
    progress: ReportProgress | None = None,
    medmarks: list[ModelExport] | None = None,
    eee: list[EeeExport] | None = None,
) -> None:
    """Every file of the report directory ``out`` (created if missing), the set replaced whole (atomic.py): a
    report that fails or is killed leaves the previous set as it was. judge_audit.csv only for a suite with
    control runs, judge_human_agreement.csv only with clinicians' ratings. judge_versions.csv always.
    ``progress`` is told each step. ``medmarks``: the Medmarks export (medmarks_export.py), in ``medmarks/``;
    ``eee``: the Every Eval Ever export (eee_export.py), in ``eee/``."""
    with whole_directory(out, REPORT_FILES) as new:
        _write_files(tables, new, suite, problems, settings_text, sample, progress)
        if medmarks is not None:
            if progress is not None:
                progress.step("Medmarks export")
            write_export(medmarks, new / EXPORT_DIR)
        if eee is not None:
            if progress is not None:
                progress.step("Every Eval Ever export")
            write_eee(eee, new / EEE_DIR)


def _pause_for_tests(step: str) -> None:
    """``PAUSE_ENV`` = ``<step>:<fifo>``: at that step, say its name into the FIFO and stop (SIGSTOP), so a test
    kills the report (kill -9) at a known point without timing anything."""
    wanted, _, fifo = os.environ.get(PAUSE_ENV, "").partition(":")
    if wanted == step and fifo:
        with open(fifo, "w", encoding="utf-8") as said:
            said.write(step + "\n")
        os.kill(os.getpid(), signal.SIGSTOP)


def _write_files(
    tables: dict[str, pd.DataFrame],
    out: Path,
    suite: str,
    problems: list[str],
    settings_text: str,
    sample: RatingRound,
    progress: ReportProgress | None,
) -> None:
    def step(name: str) -> None:
        if progress is not None:
            progress.step(name)
        _pause_for_tests(name)

    step("CSV tables")
    instances = tables["instances"][INSTANCE_COLUMNS].astype({dim: "Int64" for dim in (*DIMENSIONS, "rules_version")})
    write_csv(instances, out / "instances.csv")
    instances.to_parquet(out / "instances.parquet", index=False)
    for name in ("leaderboard", "pairwise", "by_specialty", "judge_self_preference"):
        write_csv(tables[name], out / f"{name}.csv")
    audit = tables["judge_audit"]
    if not audit.empty:  # only a suite with control runs has an audit
        write_csv(audit, out / "judge_audit.csv")
    write_csv(tables["judge_versions"], out / "judge_versions.csv")
    if "judge_human_agreement" in tables:
        write_csv(tables["judge_human_agreement"], out / "judge_human_agreement.csv")
    dropout = tables.get("judge_dropout")
    if dropout is not None and not dropout.empty:  # only for a panel of three or more judges
        write_csv(dropout, out / "judge_dropout.csv")
    if "flagged_references" in tables:  # only with ratings that flag a reference
        write_csv(tables["flagged_references"], out / "flagged_references.csv")
    if PLAN_TABLE in tables:  # only with --plan-ratings or --rating-sample plan
        write_csv(tables[PLAN_TABLE], out / f"{PLAN_TABLE}.csv")
    step("figure")
    write_figure(tables["leaderboard"], out / FIGURE_NAME, suite, blind_panels(audit))
    step("review page")
    overview = Overview(tables["leaderboard"], audit_lines(tables), (out / FIGURE_NAME).read_bytes())
    write_review(tables["instances"], out / "report.html", suite, sample, overview)
    step("report.md")
    report = markdown_report(
        suite,
        tables,
        FIGURE_NAME,
        problems,
        settings_text,
        audit,
        audit_lines(tables),
        cost_markdown(tables["leaderboard"]),
    )
    (out / "report.md").write_text(report, encoding="utf-8")
    _pause_for_tests("written")
