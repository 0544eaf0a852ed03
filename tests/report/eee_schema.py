"""Every Eval Ever's schemas for the export's tests: the copies in tests/report/eee_schemas/, the wheel they came from,
and the repository checks EEE's validator adds to the schemas.

Why copies: ``every-eval-ever`` 0.3.0 needs Python 3.12 to install and the test venvs run 3.11, so its JSON schemas
are read, not its validator run; kept in tests/, the export is validated on every run, offline. They are the wheel's
files byte for byte: ``wheel_schemas`` fetches the wheel from PyPI (pip, never GitHub), once, into
``~/.cache/helm_mtsamples_ext/eee/`` (``$XDG_CACHE_HOME`` if set), checks its sha256, and test_eee_export.py compares;
when PyPI cannot be reached that test skips with one line, and fails with it under ``CI=true``. Updating to a new
schema: change ``VERSION`` and ``WHEEL_SHA256`` and copy the wheel's ``schemas/*.schema.json`` here.

``datastore_problems`` is what EEE's ``validate`` checks beyond the schemas (every_eval_ever/validator/
validation_core.py of the wheel): datastore paths, the aggregate and its samples file pointing at each other, the
checksum and row count, scores inside their bounds; offline, on every run. ``eee_validate`` runs the wheel's own
validator too, when the wheel can be had (its code runs on 3.11; only its install asks for 3.12).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

from jsonschema import Draft7Validator

VERSION = "0.3.0"
WHEEL = f"every_eval_ever-{VERSION}-py3-none-any.whl"
WHEEL_SHA256 = "564b8bc624c1f822f749a769dc69dc058a736e83d920cbeb147c3a30d3152317"
"""PyPI's file (https://pypi.org/project/every-eval-ever/0.3.0/#files)."""
SCHEMA_DIR = Path(__file__).with_name("eee_schemas")
SCHEMAS = ("eval.schema.json", "instance_level_eval.schema.json")


def validators() -> tuple[Draft7Validator, Draft7Validator]:
    """(aggregate, instance) validators of the copied schemas (JSON Schema draft 7, as they declare)."""
    aggregate, instance = (json.loads((SCHEMA_DIR / name).read_text(encoding="utf-8")) for name in SCHEMAS)
    return Draft7Validator(aggregate), Draft7Validator(instance)


class WheelUnavailable(Exception):
    """PyPI could not be reached: one line saying what to do."""


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "helm_mtsamples_ext" / "eee"


def wheel_schemas() -> dict[str, bytes]:
    """{schema file name: its bytes} from the wheel, downloaded by pip from PyPI into the cache once."""
    wheel = cache_dir() / WHEEL
    if not wheel.is_file():
        wheel.parent.mkdir(parents=True, exist_ok=True)
        command = [sys.executable, "-m", "pip", "download", f"every-eval-ever=={VERSION}", "--no-deps"]
        command += ["--only-binary=:all:", "--python-version", "3.12", "--retries", "1", "--timeout", "20"]
        done = subprocess.run([*command, "-d", str(wheel.parent)], capture_output=True, text=True, check=False)
        if done.returncode != 0 or not wheel.is_file():
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise WheelUnavailable(
                f"every-eval-ever {VERSION} could not be fetched from PyPI ({last}); put {WHEEL} in {wheel.parent} "
                "to compare the schema copies with it"
            )
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    assert digest == WHEEL_SHA256, f"{wheel} is not PyPI's wheel (sha256 {digest}): delete it and run again"
    with zipfile.ZipFile(wheel) as archive:
        return {name: archive.read(f"every_eval_ever/schemas/{name}") for name in SCHEMAS}


_VALIDATE = """
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from every_eval_ever.validator.validation_core import validate_file
problems = []
for panel in map(Path, sys.argv[2:]):
    files = sorted(p for p in panel.rglob("*") if p.is_file())
    available = {p.relative_to(panel).as_posix() for p in files}
    for path in files:
        relative = path.relative_to(panel).as_posix()
        read = lambda name, panel=panel: (panel / name).read_text(encoding="utf-8")
        report = validate_file(path, repo_path=relative, available_files=available, read_repo_file=read,
                               run_semantic_checks=True)
        problems += [f"{relative}: {item}" for item in (*report.errors, *report.warnings)]
        problems += [] if report.valid else [f"{relative}: not valid"]
print(json.dumps(problems))
"""


def eee_validate(panel_dirs: list[Path]) -> list[str]:
    """What the wheel's own validator (``every_eval_ever validate``: its pydantic models and repository checks, the
    CLI's semantic checks on) says of each file of the panels' directories, one line per error or warning. It runs
    here on 3.11, in a process of its own, from the wheel unpacked once into the cache."""
    wheel_schemas()  # fetched and checked
    unpacked = cache_dir() / f"every_eval_ever-{VERSION}"
    if not (unpacked / "every_eval_ever" / "validator").is_dir():
        with zipfile.ZipFile(cache_dir() / WHEEL) as archive:
            archive.extractall(unpacked)
    done = subprocess.run(
        [sys.executable, "-c", _VALIDATE, str(unpacked), *map(str, panel_dirs)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    problems: list[str] = json.loads(done.stdout)
    return problems


_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"
_UNSAFE = re.compile(r'[<>:"\\|?*\x00-\x1f]')


def _path_problems(relative: str) -> list[str]:
    parts = relative.split("/")
    if len(parts) != 5 or parts[0] != "data":
        return [f"{relative}: not data/<collection>/<developer>/<model>/<file>"]
    problems = [f"{relative}: component {p!r} is not portable" for p in parts[1:4] if _UNSAFE.search(p) or p == "data"]
    if not re.fullmatch(rf"{_UUID}(\.json|_samples\.jsonl)", parts[4]):
        problems.append(f"{relative}: file name is not <uuid4>.json or <uuid4>_samples.jsonl")
    return problems


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _score_problems(where: str, aggregate: dict[str, Any]) -> list[str]:
    problems = []
    for result in aggregate["evaluation_results"]:
        config, details = result["metric_config"], result["score_details"]
        score, low, high = details["score"], config.get("min_score"), config.get("max_score")
        if not _finite(score) or not (_finite(low) and _finite(high) and low <= score <= high):
            problems.append(f"{where}: {result['evaluation_result_id']} score {score} outside [{low}, {high}]")
        interval = details.get("uncertainty", {}).get("confidence_interval")
        if interval is not None and not interval["lower"] <= score <= interval["upper"]:
            problems.append(f"{where}: {result['evaluation_result_id']} interval does not hold its score")
    return problems


def datastore_problems(panel_dir: Path) -> list[str]:
    """What EEE's ``validate`` would refuse in one panel's directory (the schemas apart), one line each."""
    problems: list[str] = []
    files = sorted(p.relative_to(panel_dir).as_posix() for p in panel_dir.rglob("*") if p.is_file())
    for relative in files:
        problems += _path_problems(relative)
    for relative in (f for f in files if f.endswith(".json")):
        aggregate = json.loads((panel_dir / relative).read_text(encoding="utf-8"))
        detail = aggregate["detailed_evaluation_results"]
        expected = relative.removesuffix(".json") + "_samples.jsonl"
        if detail["file_path"] != expected or expected not in files:
            problems.append(f"{relative}: file_path {detail['file_path']!r} is not its samples file {expected!r}")
            continue
        raw = (panel_dir / expected).read_bytes()
        lines = [json.loads(line) for line in raw.decode("utf-8").splitlines() if line.strip()]
        if detail["hash_algorithm"] != "sha256" or hashlib.sha256(raw).hexdigest() != detail["checksum"]:
            problems.append(f"{relative}: checksum does not match {expected}")
        if detail["total_rows"] != len(lines) or not lines:
            problems.append(f"{relative}: total_rows {detail['total_rows']} but {len(lines)} lines")
        results = {r["evaluation_result_id"] for r in aggregate["evaluation_results"]}
        for line in lines:
            if (line["evaluation_id"], line["model_id"]) != (aggregate["evaluation_id"], aggregate["model_info"]["id"]):
                problems.append(f"{expected}: a line's evaluation_id or model_id is not the aggregate's")
            if line["evaluation_result_id"] not in results:
                problems.append(f"{expected}: evaluation_result_id {line['evaluation_result_id']!r} has no result")
        problems += _score_problems(relative, aggregate)
    return problems
