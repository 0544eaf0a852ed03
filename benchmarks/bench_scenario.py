"""Cold and warm load of the 429 notes: our scenario against HELM 0.5.16's built-in one.

Both read from the same loopback mirror (tests/servers/mirror.py, in a child process so that its CPU work does
not compete for this process's GIL) with a fixed latency per request, so the
numbers measure the loading strategy, not the internet. HELM's `fetch_file_list` calls the GitHub
API; here (and only here) it is patched to return the manifest names, and its RAW_BASE_URL is
pointed at the mirror. HELM still does not URL-quote, so its seven `#` notes fail, as they do live.

    python benchmarks/bench_scenario.py [--latency 0.05] [--notes N] [--smallest]

The notes come from ../shared's pinned snapshot when it is beside the checkout, else through our downloader from
``MTSAMPLES_PROCEDURES_BASE_URL`` (a mirror or a directory; GitHub when unset), the notes
``MTSAMPLES_PROCEDURES_MANIFEST`` lists when set.
"""

from __future__ import annotations

import argparse
import inspect
import math
import multiprocessing
import os
import sys
import tempfile
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from helm.benchmark.scenarios.mtsamples_procedures_scenario import (  # noqa: E402
    MTSamplesProceduresScenario as HelmScenario,
)

from benchmarks import parse_args  # noqa: E402
from helm_mtsamples_ext.data import notes as data  # noqa: E402
from helm_mtsamples_ext.data.custom_manifest import MANIFEST_ENV, ManifestUnusable, resolve_manifest  # noqa: E402
from helm_mtsamples_ext.scenario import MTSamplesProceduresScenario  # noqa: E402
from tests.servers.mirror import NoteMirror  # noqa: E402

SHARED_NOTES = REPO.parent / "shared" / "data" / "mtsamples_procedures" / data.PINNED_COMMIT


def notes_dir(scratch: Path, manifest: list[data.ManifestEntry], pinned: bool) -> Path:
    """The pinned snapshot from ../shared, else fetched once with our downloader from where the user's
    ``MTSAMPLES_PROCEDURES_BASE_URL`` says (else GitHub), not timed; one line and exit 1 when it cannot be."""
    if pinned and SHARED_NOTES.is_dir():
        return SHARED_NOTES
    target = scratch / "snapshot"
    try:
        data.ensure_notes(target, base_url=data.resolve_base_url(), manifest=manifest, progress=False)
    except (data.DataError, data.NoteHostUnreachable) as e:
        first = str(e).splitlines()[0].rstrip(":")
        sys.exit(f"bench_scenario.py: {first} (or put the pinned snapshot at {SHARED_NOTES})")
    return target


def smaller_manifest(entries: list[data.ManifestEntry], n: int | None, scratch: Path) -> list[data.ManifestEntry]:
    """The first ``n`` notes, written as the manifest the scenario reads (``MTSAMPLES_PROCEDURES_MANIFEST``)."""
    if n is None or n >= len(entries):
        return entries
    chosen = entries[:n]
    path = scratch / "manifest.tsv"
    path.write_text("name\tbytes\tsha256\n" + "".join(f"{e.name}\t{e.size}\t{e.sha256}\n" for e in chosen))
    os.environ[MANIFEST_ENV] = str(path)
    return chosen


def _serve(directory: str, latency: float, conn: Connection) -> None:
    """Child process: the mirror, answering the parent's `count`/`reset`/`stop` over a pipe."""
    with NoteMirror(Path(directory), latency=latency, max_lifetime=600) as mirror:
        conn.send(mirror.base_url)
        while (command := conn.recv()) != "stop":
            if command == "reset":
                mirror.reset_counts()
            conn.send(mirror.request_count)


class ProcessMirror:
    """The loopback mirror in its own process, so its CPU work does not share our GIL."""

    def __init__(self, directory: Path, latency: float) -> None:
        self._conn, child = multiprocessing.Pipe()
        self._proc = multiprocessing.Process(target=_serve, args=(str(directory), latency, child), daemon=True)
        self._proc.start()
        self.base_url: str = self._conn.recv()

    @property
    def request_count(self) -> int:
        self._conn.send("count")
        return int(self._conn.recv())

    def reset_counts(self) -> None:
        self._conn.send("reset")
        self._conn.recv()

    def __enter__(self) -> ProcessMirror:
        return self

    def __exit__(self, *exc: object) -> None:
        self._conn.send("stop")
        self._proc.join(timeout=10)


def timed(mirror: ProcessMirror, load: Callable[[], list[Any]]) -> tuple[float, int, int]:
    """(seconds, requests the mirror saw, instances) for one load."""
    mirror.reset_counts()
    start = time.perf_counter()
    instances = load()
    return time.perf_counter() - start, mirror.request_count, len(instances)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.05, help="seconds added to every request")
    parser.add_argument("--scratch", default=None, help="where the caches go (default: the system temp dir)")
    parser.add_argument("--notes", type=int, default=None, help="the first N notes of the manifest (default: all)")
    args = parse_args(parser, latency=0.01, notes=20)

    workers = inspect.signature(data.ensure_notes).parameters["max_workers"].default  # what the scenario uses
    try:
        everything = resolve_manifest()
    except ManifestUnusable as e:
        sys.exit(f"bench_scenario.py: {e}")
    pinned = MANIFEST_ENV not in os.environ
    os.environ.pop(data.CACHE_DIR_ENV, None)  # each scenario caches in its own output path
    with tempfile.TemporaryDirectory(prefix="bench_mtsamples_", dir=args.scratch) as tmp:
        scratch = Path(tmp)
        manifest = smaller_manifest(everything, args.notes, scratch)
        names = [e.name for e in manifest]
        source = notes_dir(scratch, manifest, pinned)
        with ProcessMirror(source, latency=args.latency) as mirror:
            os.environ[data.BASE_URL_ENV] = mirror.base_url
            ours_dir = str(scratch / "ours")
            ours = MTSamplesProceduresScenario(extraction="helm")
            # The downloader alone (no instance building), to show where the scenario's time goes.
            dl_dir = scratch / "downloader"
            rows = {
                "data cold": timed(mirror, lambda: list(data.ensure_notes(dl_dir, manifest=manifest, progress=False))),
                "data warm": timed(mirror, lambda: list(data.ensure_notes(dl_dir, manifest=manifest, progress=False))),
                "ours cold": timed(mirror, lambda: ours.get_instances(ours_dir)),
                "ours warm": timed(mirror, lambda: ours.get_instances(ours_dir)),
            }

            helm = HelmScenario()
            helm.RAW_BASE_URL = mirror.base_url
            helm.fetch_file_list = lambda: list(names)  # type: ignore[method-assign]
            helm_dir = str(scratch / "helm")
            rows["HELM cold"] = timed(mirror, lambda: helm.get_instances(helm_dir))
            rows["HELM warm"] = timed(mirror, lambda: helm.get_instances(helm_dir))
        os.environ.pop(data.BASE_URL_ENV, None)

    bound = args.latency * math.ceil(len(names) / workers)
    print(f"\nscratch: {scratch} ('data' rows: the downloader alone, its last column counts notes)")
    print(f"{len(names)} notes, {args.latency * 1000:.0f} ms per request, our concurrency {workers}")
    print(f"{'load':<10} {'seconds':>8} {'requests':>9} {'instances':>10}")
    for label, (seconds, requests, instances) in rows.items():
        print(f"{label:<10} {seconds:>8.3f} {requests:>9} {instances:>10}")
    cold_ratio = rows["HELM cold"][0] / rows["ours cold"][0]
    print(f"cold speed-up vs HELM: {cold_ratio:.1f}x (goal >= 15x)")
    print(
        f"bound latency x ceil({len(names)}/{workers}) = {bound:.3f} s; ours cold / bound = "
        f"{rows['ours cold'][0] / bound:.2f} (goal <= 2); downloader alone / bound = {rows['data cold'][0] / bound:.2f}"
    )
    print(f"ours warm: {rows['ours warm'][0]:.3f} s with {rows['ours warm'][1]} requests (goal <= 0.2 s, 0 requests)")


if __name__ == "__main__":
    main()
