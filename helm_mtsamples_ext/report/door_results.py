"""The runs of the doors without HELM, read back as the report's per-judge rows: Inspect's logs and verifiers' results.

Why: a judge that fails far more often on one model's answers than on the others' is a door for those answers (a
lost judgment counts for nothing, so an answer that makes a harsh judge fail keeps only the kind one's verdict),
and it shows only across the runs of several models. HELM's door keeps them in one suite; Inspect writes one log
per model and verifiers one ``results.jsonl`` per model (``vf-eval -s``, ``medarc-eval``). Read back here, each
judge's verdict is the record the door kept (the same ``NoteRecord`` every door writes), scored by the suite
report's own rule (``rows.judge_rows``), and answer_failures.py's tests give each judge's failed share per model,
the reward with failed judgments at the scale's minimum, and the warning.

What is read, and nothing else (never a model's or judge's words as instructions: every text stays data):
- an Inspect log (``.eval``, a zip; or ``.json``): its model (``eval.model``) and each sample's ``panel_scorer``
  metadata (``judges``, ``failures``, ``empty_answer``);
- a verifiers ``results.jsonl``: each rollout's ``info.record`` (else ``info.judge_feedback``: MedARC's list of
  evaluations, its last one read, or the one dict older files hold), its ``example_id``, and the model from the
  ``metadata.json`` beside it. Python's ``json`` reads verifiers' ``NaN`` reward (docs/verifiers.md); it is not used.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from helm_mtsamples_ext.common.record import NoteRecord
from helm_mtsamples_ext.report.answer_failures import (
    BOUNDED,
    SHARE_PREFIX,
    failure_shares,
    warning_lines,
    with_failure_shares,
)
from helm_mtsamples_ext.report.rows import judge_rows

__all__ = ["DoorRuns", "DoorSummary", "door_lines", "read_door_runs", "runs_in", "summarize"]

SCORER = "panel_scorer"
"""The Inspect task's scorer, whose metadata holds the panel's entries."""
MAX_MEMBER_BYTES = 64 * 1024 * 1024
"""The largest log member read: a sample holds a few replies clipped at the cap, never more than a few MB."""


@dataclass
class DoorRuns:
    """The rows read (one per judge per note), and one line per file that could not be read."""

    rows: pd.DataFrame
    problems: list[str] = field(default_factory=list)


def runs_in(paths: Iterable[Path]) -> list[Path]:
    """The run files ``paths`` name: each file as given, each directory's Inspect logs and results.jsonl files."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += sorted(p for p in path.rglob("*") if p.is_file() and _is_run_file(p))
        else:
            found.append(path)
    return list(dict.fromkeys(found))


def _is_run_file(path: Path) -> bool:
    return path.suffix == ".eval" or path.name == "results.jsonl"


def read_door_runs(paths: Iterable[Path]) -> DoorRuns:
    """Every judge row of every run file in ``paths``; a file that cannot be read is a line in ``problems``."""
    rows: list[dict[str, Any]] = []
    problems: list[str] = []
    for path in runs_in(paths):
        if not path.exists():
            problems.append(f"{path}: no such file or folder")
            continue
        try:
            rows += list(_rows_of(path))
        except NotImplementedError:  # zipfile without zstd
            problems.append(f"{path}: an Inspect log compressed with zstd: read it where inspect-ai is installed")
        except (OSError, ValueError, KeyError, TypeError, zipfile.BadZipFile) as e:
            problems.append(f"{path}: not an Inspect log of this task nor a verifiers results.jsonl ({e})")
    return DoorRuns(pd.DataFrame(rows), problems)


def _rows_of(path: Path) -> Iterator[dict[str, Any]]:
    if path.name.endswith(".jsonl"):
        yield from _verifiers_rows(path)
    elif path.suffix == ".eval":
        yield from _inspect_rows(*_eval_zip(path))
    elif path.suffix == ".json":
        log = json.loads(path.read_text(encoding="utf-8"))
        yield from _inspect_rows(log.get("eval") or {}, log.get("samples") or [])
    else:
        raise ValueError("expected a .eval or .json Inspect log or a results.jsonl")


def _eval_zip(path: Path) -> tuple[Mapping[str, Any], list[Any]]:
    """An ``.eval`` log's header and samples (Inspect's zip: ``header.json`` or ``_journal/start.json``,
    ``samples/*.json``). Inspect compresses its members with zstd, which Python's zipfile reads only once
    ``zipfile_zstd`` (an inspect-ai dependency) has registered it: where Inspect is installed."""
    try:
        import zipfile_zstd  # type: ignore[import-not-found,unused-ignore]  # noqa: F401  registers zstd
    except ImportError:
        pass
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        head = "header.json" if "header.json" in names else "_journal/start.json"
        header = json.loads(_member(archive, head))
        samples = [json.loads(_member(archive, n)) for n in names if n.startswith("samples/") and n.endswith(".json")]
    return header.get("eval") or {}, samples


def _member(archive: zipfile.ZipFile, name: str) -> bytes:
    if archive.getinfo(name).file_size > MAX_MEMBER_BYTES:
        raise ValueError(f"{name} is over {MAX_MEMBER_BYTES} bytes")
    return archive.read(name)


def _inspect_rows(header: Mapping[str, Any], samples: list[Any]) -> Iterator[dict[str, Any]]:
    model = str(header.get("model") or "?")
    task = str(header.get("task") or "")
    for sample in samples:
        score = (sample.get("scores") or {}).get(SCORER)
        if not isinstance(score, Mapping):
            if task and "mtsamples" not in task:
                raise ValueError(f"task {task!r} is not mtsamples_procedures")
            continue  # a sample not scored (cancelled): no judge was asked
        metadata = score.get("metadata") or {}
        judges = metadata.get("judges") or {}
        if metadata.get("empty_answer"):
            record: dict[str, Any] = NoteRecord.empty().to_dict()
        else:
            record = {**judges, "failed_judges": list(metadata.get("failures") or {})}
        note = f"{sample.get('id')}#{sample.get('epoch', 1)}"
        yield from _note_rows(record, list(judges), model, note)


def _verifiers_rows(path: Path) -> Iterator[dict[str, Any]]:
    metadata = path.with_name("metadata.json")
    model = json.loads(metadata.read_text(encoding="utf-8")).get("model") if metadata.is_file() else None
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines):
            if not line.strip():
                continue
            rollout = json.loads(line)
            info = rollout.get("info") or {}
            record, judges = _verifiers_record(info)
            note = str(rollout.get("example_id", number))  # a note's rollouts (-r) are averaged as one note
            yield from _note_rows(record, judges, str(model or path.parent.name), note)


def _verifiers_record(info: Mapping[str, Any]) -> tuple[object, list[str]]:
    """A rollout's record and panel: ``info.record`` as the door wrote it, else rebuilt from ``judge_feedback``."""
    feedback = _last_evaluation(info.get("judge_feedback"))
    entries = [j for j in feedback.get("judges") or [] if isinstance(j, Mapping)]
    judges = [_judge_name(j) for j in entries]
    record = info.get("record")
    if isinstance(record, Mapping):
        parsed = NoteRecord.from_dict(record)
        return record, judges or (list(parsed.judges) if parsed is not None else [])
    if feedback.get("empty_answer"):
        return NoteRecord.empty().to_dict(), judges
    failed = [_judge_name(j) for j in entries if j.get("error")]
    rebuilt = {
        _judge_name(j): {
            **{d: {"score": _score(s)} for d, s in (j.get("scores") or {}).items()},
            "failure": j.get("error"),
            "failure_kind": j.get("failure_kind"),  # absent from a rollout written before kinds were stored
        }
        for j in entries
    }
    return {**rebuilt, "failed_judges": failed}, judges


def _last_evaluation(feedback: object) -> Mapping[str, Any]:
    """``judge_feedback``'s evaluation: the last of MedARC's list (as its readers take it), or the one dict an older
    door wrote."""
    if isinstance(feedback, list):
        feedback = feedback[-1] if feedback else None
    return feedback if isinstance(feedback, Mapping) else {}


def _judge_name(judge: Mapping[str, Any]) -> str:
    """A judge's name in the panel: ``judge`` (MedARC's shape, ours beside ``model``), ``name`` in older files."""
    return str(judge.get("judge", judge.get("name", judge.get("model"))))


def _score(value: object) -> object:
    """A dimension's score: MedARC's ``{"score": s, "explanation": e}``, or the bare score older files kept."""
    return value.get("score") if isinstance(value, Mapping) else value


def _note_rows(record: object, judges: list[str], model: str, note: str) -> Iterator[dict[str, Any]]:
    panel = "+".join(judges)
    for row in judge_rows(record, judges):
        yield {"panel": panel, "model": model, "note": note, **row}


@dataclass(frozen=True)
class DoorSummary:
    """Per (panel, model): notes, the reward (over the notes with one), unjudged notes, the reward with failed
    judgments at the scale's minimum, each judge's failed share; and the warnings of answer_failures.py."""

    board: pd.DataFrame
    warnings: list[str]


def summarize(rows: pd.DataFrame) -> DoorSummary:
    """The door runs' board and warnings, by the suite report's rules (answer_failures.py)."""
    if rows.empty:
        return DoorSummary(pd.DataFrame(columns=["panel", "model", "notes", "reward", "unjudged", BOUNDED]), [])
    notes = rows.groupby(["panel", "model", "note"], as_index=False, sort=False)["note_reward"].first()
    board = notes.groupby(["panel", "model"], as_index=False, sort=False).agg(
        notes=("note", "size"),
        reward=("note_reward", "mean"),
        unjudged=("note_reward", lambda r: int(r.isna().sum())),
    )
    shares = failure_shares(rows)
    board = with_failure_shares(board, rows, shares)
    return DoorSummary(board, warning_lines(shares, board, rows))


def share_columns(board: pd.DataFrame) -> list[str]:
    """The board's failed-share columns, one per judge."""
    return [c for c in board.columns if str(c).startswith(SHARE_PREFIX)]


def door_lines(summary: DoorSummary) -> list[str]:
    """The board as terminal lines (a model's name is the run's, shown as data), then the warnings."""
    board = summary.board
    judges = share_columns(board)
    head = [
        "model",
        "notes",
        "reward",
        BOUNDED,
        "unjudged",
        *(c.removeprefix(SHARE_PREFIX) + " failed" for c in judges),
    ]
    lines = []
    for panel, rows in board.groupby("panel", sort=False):
        lines.append(f"panel {panel}:")
        lines.append("  " + " | ".join(head))
        for row in rows.to_dict("records"):
            cells = [str(row["model"]), str(row["notes"]), _number(row["reward"]), _number(row[BOUNDED])]
            cells += [str(row["unjudged"]), *(_share(row[c]) for c in judges)]
            lines.append("  " + " | ".join(cells))
    return lines + summary.warnings


def _number(value: object) -> str:
    return "-" if value is None or pd.isna(value) else f"{float(value):.3f}"  # type: ignore[arg-type]


def _share(value: object) -> str:
    return "-" if value is None or pd.isna(value) else f"{float(value):.0%}"  # type: ignore[arg-type]
