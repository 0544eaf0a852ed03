"""The report at leaderboard scale: `helm-mtsamples-report` on 1-, 16- and 64-model suites, beside helm-summarize.

Each suite is one finished 131-note, 3-judge run copied under new model names. The run is synthesised with the
builders the tests use (tests/report/suites.py `write_run`, HELM's own dataclasses, the files HELM's runner
writes): the notes' texts are the pinned notes from ../shared when present (else a paragraph per note), each
answer about 120 words and each explanation about 30, drawn from the note with a seeded generator. A copy is not
an exact copy: each model's judge scores are the base run's moved by a seeded -1/0/+1 per judge and dimension, so
the models differ a little, as real ones do, and the pairwise bootstraps are not all ties.

For each suite, in a subprocess of its own: the report's wall time and peak RSS, report.md's and report.html's
sizes and the text report.html must hold (its embedded strings, each once), then report.html in headless Chromium
(/usr/bin/chromium, through Playwright): its first screen (the page's `review:first-screen` mark) and its `load`
event; and HELM's built-in on the same suite in the same run, `helm-summarize` with the suite's schema,
with the ratio. The goal line is the issue's: the 64-model report within 2.5x the 16-model one.

    python benchmarks/bench_report.py [--models 1 16 64] [--bootstrap 2000] [--keep DIR] [--no-browser]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks import parse_args  # noqa: E402
from helm_mtsamples_ext.data import notes as data  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
JUDGES = ["judge-alpha", "judge-beta", "judge-gamma"]
N_NOTES = 131
SHARED_NOTES = REPO.parent / "shared" / "data" / "mtsamples_procedures" / data.PINNED_COMMIT
SUITE_PREFIX = "bench"


def _note_texts() -> list[tuple[str, str]]:
    """(file name, text) of 131 notes: the pinned snapshot when it is beside the checkout, else made up."""
    if SHARED_NOTES.is_dir():
        files = sorted(SHARED_NOTES.glob("*.txt"))[:N_NOTES]
        if len(files) == N_NOTES:
            return [(f.name, f.read_text(encoding="utf-8", errors="replace")) for f in files]
    rng = random.Random(1)
    words = "patient procedure incision closed sutures drain sterile anesthesia tolerated well recovery".split()
    return [(f"note {i:03d}.txt", " ".join(rng.choices(words, k=400))) for i in range(N_NOTES)]


def _words(rng: random.Random, text: str, n: int) -> str:
    vocabulary = re.findall(r"[A-Za-z]{3,}", text) or ["plan"]
    return " ".join(rng.choices(vocabulary, k=n)).capitalize() + "."


def _record(rng: random.Random, scores: tuple[int, ...], note: str) -> dict[str, object]:
    from tests.report.suites import ok

    record = ok(scores[0], scores[1], scores[2])
    for dim in ("accuracy", "completeness", "clarity"):
        record[dim]["explanation"] = _words(rng, note, 30)
    return record


def build_suite(output: Path, n_models: int, suite: str) -> Path:
    """`<output>/runs/<suite>`: the base run copied under ``n_models`` names, scores moved per model (seeded)."""
    from tests.report.suites import Note, Run, write_run  # here: the measured child process never imports HELM's runner

    texts = _note_texts()
    notes = [Note(name, "Surgery", "PLAN", body=text) for name, text in texts]
    base = random.Random(0)
    base_scores = {name: {j: tuple(base.randint(2, 5) for _ in range(3)) for j in JUDGES} for name, _ in texts}
    suite_dir = output / "runs" / suite
    for k in range(n_models):
        rng = random.Random(1000 + k)
        verdicts = {
            name: {
                j: _record(rng, tuple(min(5, max(1, s + rng.choice((-1, 0, 1)))) for s in base_scores[name][j]), text)
                for j in JUDGES
            }
            for name, text in texts
        }
        outputs = {name: _words(rng, text, 120) for name, text in texts}
        write_run(suite_dir, Run(f"bench/model-{k:02d}", JUDGES, verdicts, outputs), notes)
    return suite_dir


@dataclass
class Measured:
    seconds: float
    peak_rss_mib: float
    returncode: int
    steps: dict[str, float] = field(default_factory=dict)


def measure(command: list[str], env: dict[str, str], steps_file: Path | None = None) -> Measured:
    """Wall time and peak RSS of one command, in a process of its own (os.wait4 gives that child's rusage)."""
    start = time.perf_counter()
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0 and proc.stderr is not None:
        print(proc.stderr.read().decode(errors="replace")[-2000:], file=sys.stderr)
    steps = json.loads(steps_file.read_text()) if steps_file and steps_file.is_file() else {}
    if steps:
        steps = {"start-up and the rest": seconds - sum(steps.values()), **steps}
    return Measured(seconds, usage.ru_maxrss / 1024, proc.returncode, steps)


def report_child(steps_file: str, argv: list[str]) -> int:
    """The measured process: `helm-mtsamples-report` itself, with the time of each of its steps (progress.py's,
    announced by the command as it runs) written to ``steps_file``. The parent adds "start-up and the rest": the
    wall time not in a step (Python, the imports, the arguments, the leaderboard printed at the end)."""
    from helm_mtsamples_ext.report import progress
    from helm_mtsamples_ext.report.cli import main as report_main

    marks: list[tuple[str, float]] = []
    step = progress.ReportProgress.step

    def timed_step(self: progress.ReportProgress, name: str) -> None:
        marks.append((name, time.perf_counter()))
        step(self, name)

    progress.ReportProgress.step = timed_step  # type: ignore[method-assign]
    code = report_main(argv)
    ends = [t for _, t in marks[1:]] + [time.perf_counter()]
    steps = {name: end - start for (name, start), end in zip(marks, ends, strict=True)}
    Path(steps_file).write_text(json.dumps(steps))
    return code


def chromium_load(html: Path) -> tuple[float, float | None] | None:
    """Seconds from `goto` to the `load` event of report.html in headless Chromium, and to the page's first screen
    (the `review:first-screen` mark the page's script sets once the first notes are drawn); None without a browser.
    """
    if not Path(CHROMIUM).exists():
        return None
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.goto("about:blank")
        start = time.perf_counter()
        page.goto(html.as_uri(), wait_until="load", timeout=600_000)
        seconds = time.perf_counter() - start
        mark = page.evaluate(
            "() => { const m = performance.getEntriesByName('review:first-screen'); return m.length ? m[0].startTime"
            " : null; }"
        )
        browser.close()
    return seconds, None if mark is None else mark / 1000


@dataclass(frozen=True)
class Sizes:
    """What a suite's report wrote (None: not written, or not readable)."""

    md_kb: float | None
    html_mb: float | None
    text_mb: float | None


def _size(value: float | None, width: int, digits: int) -> str:
    """A table cell: the number, or "missing" when the file (or step) was not there."""
    return f"{'missing':>{width}}" if value is None else f"{value:>{width}.{digits}f}"


def text_held(html: Path) -> float | None:
    """MB of text the page must hold: the UTF-8 bytes of every string in its embedded data, each counted once."""
    from tests.report.review_page import DATA_BLOCK  # the tests' reader of the page's data

    match = DATA_BLOCK.search(html.read_text())
    if not match:
        return None
    return sum(len(text.encode()) for text in json.loads(match.group(1))["strings"]) / 1e6


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        sys.exit(report_child(sys.argv[2], sys.argv[3:]))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, nargs="+", default=[1, 16, 64], help="suite sizes (default 1 16 64)")
    parser.add_argument("--bootstrap", type=int, default=2000, help="the report's --bootstrap (default 2000)")
    parser.add_argument("--keep", type=Path, help="build the suites here and keep them (default: a temp dir)")
    parser.add_argument("--no-browser", action="store_true", help="skip the Chromium load")
    args = parse_args(parser, models=[1], bootstrap=100, no_browser=True)

    scratch = args.keep or Path(tempfile.mkdtemp(prefix="bench_report_"))
    bin_dir = Path(sys.executable).parent
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        "PATH": os.pathsep.join([str(bin_dir), os.environ.get("PATH", "")]),
    }
    rows = []
    try:
        for n in args.models:
            suite = f"{SUITE_PREFIX}{n}"
            built = time.perf_counter()
            if not (scratch / "runs" / suite).is_dir():
                build_suite(scratch, n, suite)
            print(f"{n} model(s): suite built in {time.perf_counter() - built:.1f} s", file=sys.stderr)
            out = scratch / "mtsamples_report" / suite
            steps_file = scratch / f"steps{n}.json"
            report = measure(
                [sys.executable, __file__, "--child", str(steps_file), "--suite", suite, "-o", str(scratch),
                 "--out", str(out), "--bootstrap", str(args.bootstrap)],
                env,
                steps_file,
            )  # fmt: skip
            schema = subprocess.run(
                [sys.executable, "-m", "helm_mtsamples_ext.schema", "--suite", suite, "-o", str(scratch)],
                env=env, capture_output=True, text=True, check=True,
            ).stdout.strip()  # fmt: skip
            summarize = measure(
                [str(bin_dir / "helm-summarize"), "--suite", suite, "-o", str(scratch), "--schema-path", schema,
                 "--num-threads", "1"],
                env,
            )  # fmt: skip
            html = out / "report.html"
            load = None if args.no_browser or not html.is_file() else chromium_load(html)
            md = out / "report.md"
            # read now: the scratch folder is removed before the table is printed
            sizes = Sizes(
                md.stat().st_size / 1024 if md.is_file() else None,
                html.stat().st_size / 1e6 if html.is_file() else None,
                text_held(html) if html.is_file() else None,
            )
            rows.append((n, report, summarize, sizes, load))
    finally:
        if args.keep is None:
            shutil.rmtree(scratch, ignore_errors=True)

    print(f"\n{N_NOTES} notes x {len(JUDGES)} judges per model, --bootstrap {args.bootstrap}")
    header = (
        "models  report s  peak RSS MiB  report.md KB  text held MB  report.html MB  first screen s  Chromium load s"
        "  helm-summarize s  ratio"
    )
    print(header)
    seconds = {}
    for n, report, summarize, sizes, load in rows:
        seconds[n] = report.seconds
        load_text = "n/a" if load is None else f"{load[0]:.2f}"
        first = "n/a" if load is None or load[1] is None else f"{load[1]:.2f}"
        ratio = report.seconds / summarize.seconds
        failed = "" if report.returncode == 0 and summarize.returncode == 0 else "  (a command failed: see stderr)"
        print(
            f"{n:>6}  {report.seconds:>8.1f}  {report.peak_rss_mib:>12.0f}  {_size(sizes.md_kb, 12, 1)}  "
            f"{_size(sizes.text_mb, 12, 1)}  {_size(sizes.html_mb, 14, 1)}  {first:>14}  {load_text:>15}  "
            f"{summarize.seconds:>16.1f}  {ratio:>5.2f}{failed}"
        )
    print("ratio: the report's time / helm-summarize's on the same suite")
    print("\nseconds per step of the report (progress.py's steps; start-up: Python, imports, printing):")
    names = list(dict.fromkeys(name for row in rows for name in row[1].steps))
    print("models  " + "  ".join(names))
    for n, report, *_ in rows:
        print(f"{n:>6}  " + "  ".join(_size(report.steps.get(name), len(name), 2) for name in names))
    broken = [
        n
        for n, report, summarize, sizes, _ in rows
        if report.returncode or summarize.returncode or None in (sizes.md_kb, sizes.html_mb, sizes.text_mb)
    ]
    if 16 in seconds and 64 in seconds:
        print(f"\n64 models / 16 models: {seconds[64] / seconds[16]:.2f}x the time (goal <= 2.5x)")
        steps = {n: row[1].steps for row in rows for n in (row[0],) if n in (16, 64)}
        if all("review page" in steps[n] for n in (16, 64)):
            rest = {n: seconds[n] - steps[n]["review page"] for n in (16, 64)}
            print(f"without the review page: {rest[16]:.1f} s and {rest[64]:.1f} s, {rest[64] / rest[16]:.2f}x")
    if broken:
        sys.exit(f"bench_report.py: a command failed or a file is missing for {broken} model(s): see above")


if __name__ == "__main__":
    main()
