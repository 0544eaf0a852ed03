"""Clinicians' ratings: the `ratings.csv` files the review page exports, read, checked and matched to a suite.

One row per rated answer:
`run,instance_id,model,rater,accuracy,completeness,clarity,comment,bad_reference,inclusion_probability`. `run` is the
HELM run directory's name, so ratings of one answer under two extraction modes or two judge panels never mix, and
`instance_id` is HELM's instance id. A human reward is the reward's own rule applied to a rater: the mean of
score/5 over the three dimensions. `bad_reference` is 1 when the rater marked the note's reference as not a good
plan (stats/flagged_references.py reports the rewards without those notes); `inclusion_probability` is the answer's
chance of being in the rating sample that offered it (rating_sample.py), which the clinician-scale estimate weights
by. Files written before these two columns existed read unchanged: no flag, and no recorded probability (NaN: the
estimate treats such ratings as a uniform sample and says so). A bad value in either is an error like a bad score.

Bad input is loud and precise, since a rating round is expensive to redo: a score that is not an integer 1-5
written in ASCII digits (``²``, ``4.0``, ``4.9999999999999999`` are refused, never rounded), a column named twice,
a file over ``MAX_BYTES`` or one that is not a regular file (``/dev/zero``), and a rater rating one answer twice are
errors, each one line naming the file (and line); a row whose run or note is not in the suite is not an error (a
file may cover several suites) but is counted and named, never silently dropped. Rater names are one rater when
equal after rater_names.py's folding (``Dr Test``, ``dr test``, full-width ``Ｄｒ Ｔｅｓｔ``, ``Dr\u200bTest``), shown
as first written (format and control characters removed); names that only look alike (a Cyrillic ``е``) stay two
raters and are named in a warning.

The page's Export neutralises every cell a spreadsheet would run as a formula (``neutralise``); reading undoes it
(``restore``), so a comment starting with ``=`` or ``-`` round-trips.
"""

from __future__ import annotations

import csv
import io
import re
import stat
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from helm_mtsamples_ext.common.outside_text import encodable_text
from helm_mtsamples_ext.common.rubric import DIMENSIONS, MAX_SCORE, MIN_SCORE, RUBRIC, Rubric
from helm_mtsamples_ext.report.csv_safe import restore
from helm_mtsamples_ext.report.rater_names import lookalike_groups, rater_key, shown_name


def header(rubric: Rubric) -> tuple[str, ...]:
    """A ratings file's header for ``rubric``, in order: the answer, the rater, a column per dimension, a comment."""
    return ("run", "instance_id", "model", "rater", *rubric.dimensions, "comment", *OPTIONAL_AT_END)


OPTIONAL_AT_END = ("bad_reference", "inclusion_probability")
"""Columns added after the first exports: last in the header, and optional on reading."""
COLUMNS = header(RUBRIC)
"""The exported file's header, in order (the review page's Export writes exactly these)."""
REQUIRED = tuple(column for column in COLUMNS if column not in ("model", "comment", *OPTIONAL_AT_END))
"""The columns a ratings file cannot do without (``model``, ``comment`` and the two last it may leave out)."""
TRUE_WORDS = ("1", "yes", "true")
FALSE_WORDS = ("", "0", "no", "false")
ANSWER = ["run", "instance_id"]
"""One rated answer: a model's answer to one note in one run."""


MAX_BYTES = 10 * 1024 * 1024
"""The largest ratings file read (a round of a thousand rated answers with comments is well under 1 MB)."""
_SCORE = re.compile(r"[0-9]+", re.ASCII)
_PROBABILITY = re.compile(r"[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?", re.ASCII)
"""A probability as the page writes it, in ASCII digits: ``float`` alone would take ``０.5`` or ``1_0e-1``."""


class RatingsError(Exception):
    """A ratings file that cannot be used as given: the message names the file, the line and the fix."""


@dataclass(frozen=True)
class Matched:
    ratings: pd.DataFrame
    """The rows that match a run and note of the suite, with `human_reward` and where they came from."""
    unmatched: list[str]
    """One line per row that matches nothing: `file:line: run R ... not in the suite`."""


def _score(text: str, where: str, dimension: str) -> int:
    value = text.strip()
    if not _SCORE.fullmatch(value) or not MIN_SCORE <= int(value) <= MAX_SCORE:
        raise RatingsError(
            f"{where}: {dimension} is {text!r}, but a rating is an integer {MIN_SCORE}-{MAX_SCORE}; "
            "correct that cell (or re-export the file from the review page)"
        )
    return int(value)


def _flag(text: str, where: str) -> bool:
    value = text.strip().lower()
    if value not in TRUE_WORDS + FALSE_WORDS:
        raise RatingsError(
            f"{where}: bad_reference is {text!r}, but it is 1 (the rater marked the reference as not a good plan) "
            "or 0 (or blank); correct that cell (or re-export the file from the review page)"
        )
    return value in TRUE_WORDS


def _probability(text: str, where: str) -> float:
    value = text.strip()
    if not value:
        return float("nan")
    number = float(value) if _PROBABILITY.fullmatch(value) else float("nan")
    if not 0 < number <= 1:  # NaN fails too
        raise RatingsError(
            f"{where}: inclusion_probability is {text!r}, but it is a number in (0, 1] (the answer's chance of being "
            "in the rating sample) or blank; correct that cell (or re-export the file from the review page)"
        )
    return number


def _text(path: Path) -> str:
    """The file's text, read only if it is a regular file of at most MAX_BYTES (and never past that)."""
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            raise RatingsError(f"{path}: not a regular file; give the ratings.csv exported by the review page")
        with path.open("rb") as handle:
            data = handle.read(MAX_BYTES + 1)
    except OSError as error:
        raise RatingsError(f"{path}: cannot read it ({error.strerror or error})") from error
    if len(data) > MAX_BYTES:
        raise RatingsError(
            f"{path}: over {MAX_BYTES // (1024 * 1024)} MB, too large for a ratings file; give the ratings.csv "
            "exported by the review page"
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise RatingsError(f"{path}: cannot read it as a UTF-8 CSV file ({error})") from error


def _header(path: Path, fieldnames: Sequence[str] | None) -> None:
    names = list(fieldnames or [])
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise RatingsError(
            f"{path}:1: column {', '.join(twice)} appears more than once; keep one (a ratings file has the header "
            f"{','.join(COLUMNS)})"
        )
    missing = [c for c in REQUIRED if c not in names]
    if missing:
        raise RatingsError(
            f"{path}: no column {', '.join(missing)}; a ratings file has the header {','.join(COLUMNS)} "
            "(export it from the review page)"
        )


def read_file(path: Path) -> pd.DataFrame:
    """One ratings file as rows with `source` = "file:line" (line 1 is the header, as an editor counts)."""
    text = _text(path)
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        _header(path, reader.fieldnames)
        rows = []
        for raw in reader:
            where = f"{path}:{reader.line_num}"
            record = {k: restore(v) if isinstance(v, str) else "" for k, v in raw.items() if k is not None}
            row: dict[str, object] = {c: (record.get(c) or "").strip() for c in ("run", "instance_id", "model")}
            row["rater"] = shown_name(record.get("rater") or "")
            if not row["rater"]:
                raise RatingsError(f"{where}: the rater is empty; every rating names its rater")
            row.update({dim: _score(record.get(dim) or "", where, dim) for dim in DIMENSIONS})
            row["comment"] = encodable_text(record.get("comment") or "")  # a NUL or an escape is no comment
            row["bad_reference"] = _flag(record.get("bad_reference") or "", where)
            row["inclusion_probability"] = _probability(record.get("inclusion_probability") or "", where)
            row["source"] = where
            rows.append(row)
    except csv.Error as error:
        raise RatingsError(f"{path}: cannot read it as a UTF-8 CSV file ({error})") from error
    return pd.DataFrame(rows, columns=[*COLUMNS, "source"])


def read_ratings(paths: Sequence[Path]) -> pd.DataFrame:
    """Every file's rows; a rater who rated one answer twice (in one file or across files) is an error."""
    frames = [read_file(path) for path in paths]
    table = pd.concat(frames, ignore_index=True) if frames else _no_rows()
    keys = table["rater"].map(rater_key)
    first_written = dict(zip(keys[::-1], table["rater"][::-1], strict=True))  # the first spelling of each rater
    table["rater"] = keys.map(first_written)
    twice = table[table.duplicated(["rater", *ANSWER], keep=False)]
    if not twice.empty:
        first = twice.iloc[0]
        same = ["rater", *ANSWER]
        places = twice[twice[same].eq(first[same]).all(axis=1)]
        raise RatingsError(
            f"rater {first['rater']!r} rated {first['instance_id']} of run {first['run']} more than once "
            f"({', '.join(places['source'])}); keep one row per rater and answer (the latest export holds them all)"
        )
    return table.astype({**{dim: int for dim in DIMENSIONS}, "bad_reference": bool, "inclusion_probability": float})


def _no_rows() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=object) for c in [*COLUMNS, "source"]})


def human_reward(ratings: pd.DataFrame) -> pd.Series:
    """One rater's reward per row: mean of score/5 over the three dimensions (the reward's rule, scoring.py)."""
    return ratings[list(DIMENSIONS)].mean(axis=1) / MAX_SCORE


def match(ratings: pd.DataFrame, instances: pd.DataFrame) -> Matched:
    """Keep the ratings of answers in the suite (by run and instance id); name each row that matches nothing."""
    answers = instances[["run", "note_id"]].drop_duplicates().rename(columns={"note_id": "instance_id"})
    known_runs = set(answers["run"])
    joined = ratings.merge(answers.assign(_found=True), on=ANSWER, how="left")
    found = joined["_found"].eq(True)
    unmatched = [
        f"{row.source}: note {row.instance_id} is not in run {row.run}"
        if row.run in known_runs
        else f"{row.source}: run {row.run} is not in the suite"
        for row in joined[~found].itertuples(index=False)
    ]
    kept = joined[found].drop(columns="_found").reset_index(drop=True)
    return Matched(kept.assign(human_reward=human_reward(kept)), unmatched)


def suite_ratings(paths: Sequence[Path], instances: pd.DataFrame, suite: str) -> pd.DataFrame:
    """The ratings of this suite's answers; rows that match none are named on stderr (RatingsError if none do)."""
    ratings = read_ratings(paths)
    for group in lookalike_groups(ratings["rater"].unique()):
        print(f"warning: raters {', '.join(ascii(name) for name in group)} look alike but are written differently: "
              "counted as different raters; if they are one person, write the name the same way in every file",
              file=sys.stderr)  # fmt: skip
    matched = match(ratings, instances)
    if matched.unmatched:
        print(f"warning: {len(matched.unmatched)} of {len(ratings)} rating rows match no run or note of suite "
              f"{suite} and are left out:", file=sys.stderr)  # fmt: skip
        for line in matched.unmatched:
            print(f"  {line}", file=sys.stderr)
    if matched.ratings.empty:
        raise RatingsError(
            f"none of the {len(ratings)} rating rows matches a run and note of suite {suite} (wrong --suite?)"
        )
    return matched.ratings
