"""Reading a judge's reply against its note and answer with a run's calls in flight: the automata of the untrusted
texts kept by size (reply/copied.py's CACHED_CHARACTERS) against the 16-text cache kept before.

A run's fan-out has about 48 calls in flight, 16 notes of 3 judges each; each call reads its reply against its
note and answer, and the automaton of a text costs about 9 ms and 2 MB to build for a 6 KB note. With 16 texts
kept and 32 texts in flight, nearly every call rebuilt both. The workload here: --notes notes of about --note-kb
KB with an answer each, judged by 3 judges, the calls interleaved as the fan-out interleaves them (a window of
--window notes). Goal: the sized cache builds each text once (builds = texts) and reads at least 2x faster.

    python benchmarks/bench_copied.py [--notes 64] [--note-kb 6] [--window 16]
"""

from __future__ import annotations

import argparse
import sys
import time
from functools import lru_cache
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks import parse_args  # noqa: E402

GOAL = 2.0
JUDGES = 3


def workload(notes: int, note_kb: int, window: int) -> list[tuple[str, str]]:
    """(note, answer) per call, in the fan-out's order: a window of notes in flight, each note's judges in turn."""
    sentence = "The patient was brought to the operating room and placed supine; the site was prepped. "
    texts = [
        (f"Note {i}. " + sentence * (note_kb * 1024 // len(sentence)), f"Plan {i}: rest, ice and follow-up. " * 20)
        for i in range(notes)
    ]
    calls = []
    for start in range(0, notes, window):
        batch = texts[start : start + window]
        calls += [pair for _ in range(JUDGES) for pair in batch]
    return calls


def timed(calls: list[tuple[str, str]], reply: str) -> tuple[float, int]:
    from helm_mtsamples_ext.judges.core.reply import copied

    start = time.perf_counter()
    for note, answer in calls:
        copied.copied_spans(reply, (answer, note))
    return time.perf_counter() - start, 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=64)
    parser.add_argument("--note-kb", type=int, default=6)
    parser.add_argument("--window", type=int, default=16)
    args = parse_args(parser, argv, notes=4, note_kb=1, window=2)

    from helm_mtsamples_ext.judges.core.reply import copied

    calls = workload(args.notes, args.note_kb, args.window)
    reply = '{"accuracy": {"score": 4, "explanation": "The patient was brought to the operating room, as planned."}}'
    results = {}
    for name, cache in (
        ("16 texts (before)", lambda build: lru_cache(maxsize=16)(build)),
        ("by size (now)", lambda build: copied._SizedCache(build, copied.CACHED_CHARACTERS)),
    ):
        built: list[str] = []
        kept = copied._automaton, copied._normalised_form
        copied._automaton = cache(lambda text, built=built: built.append(text) or copied._Automaton(text))  # type: ignore[assignment]
        copied._normalised_form = cache(copied.normalised)  # type: ignore[assignment]
        try:
            seconds, _ = timed(calls, reply)
        finally:
            copied._automaton, copied._normalised_form = kept
        results[name] = (seconds, len(built))
        print(f"{name:>18}: {seconds:7.3f} s for {len(calls)} calls, {len(built)} automata built")
    (before, built_before), (now, built_now) = results.values()
    ratio = before / now if now else float("inf")
    texts = 2 * args.notes
    print(
        f"speed-up {ratio:.2f}x (goal >= {GOAL}x: {'met' if ratio >= GOAL else 'NOT met'}); "
        f"builds {built_now} for {texts} texts (goal: each once: {'met' if built_now == texts else 'NOT met'})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
