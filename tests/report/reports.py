"""How the report tests run `helm-mtsamples-report`: on a suite under `<output>/runs/v1`, with few resamples."""

from __future__ import annotations

from pathlib import Path

from helm_mtsamples_ext.report.cli import main

BOOT = ["--bootstrap", "400", "--seed", "0"]


def run_report(output: Path, out: Path, *extra: str) -> int:
    return main(["--suite", "v1", "-o", str(output), "--out", str(out), *BOOT, *extra])
