"""A suite for the Every Eval Ever export's tests, its rewards derived by hand (judge reward = mean of score/5 over
its valid scores; note reward = mean over the judges that scored it; a failed judge counts for nothing).

Panel judge-one+judge-two (judge-one's server reports ``SERVED``), six notes:

  note   alpha: j1 / j2 -> note                          beta
  n1     555 / 444 -> (1.0 + .8) / 2 = .9 (hostile)      both failed
  n2     444 / failed (HTTP 500) -> .8                   both failed
  n3     both failed -> unjudged: no reward, an error     both failed
  n4     empty answer -> 0 (judged: the model's failure) both failed
  n5     333 / 333 -> .6                                 both failed
  n6     543 / 222 -> (.8 + .4) / 2 = .6                 both failed

alpha's reward is the mean over its 5 judged notes, (.9 + .8 + 0 + .6 + .6) / 5 = .58, with an interval (5 notes is
the minimum); beta has no reward at all (every note unjudged). A control run under the panel is left out. Panel
judge-three judges alpha on two notes (5/5/5 and 4/4/4: .9), too few for an interval.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.report.medmarks_suite import HOSTILE
from tests.report.suites import EMPTY, JUDGES, NOTES, Run, build_suite, control_run, failed, ok

ALPHA = "acme/alpha"
BETA = "acme/beta"
SERVED = "judge-one-2026-01-15"
"""The model judge-one's server said it ran (``reported_model``)."""
PANEL = "+".join(JUDGES)
SOLO = "judge-three"
EEE_NOTES = [n for n in NOTES if n.filename in {f"n{i}.txt" for i in range(1, 7)}]


def served(record: dict[str, Any]) -> dict[str, Any]:
    return {**record, "reported_model": SERVED}


ALPHA_RUN = Run(
    model=ALPHA,
    judges=JUDGES,
    verdicts={
        "n1.txt": {"judge-one": served(ok(5, 5, 5)), "judge-two": ok(4, 4, 4)},
        "n2.txt": {"judge-one": served(ok(4, 4, 4)), "judge-two": failed("call error: HTTP 500")},
        "n3.txt": {"judge-one": failed("call error: timeout after 60s"), "judge-two": failed("no verdict in reply")},
        "n4.txt": EMPTY,
        "n5.txt": {"judge-one": served(ok(3, 3, 3)), "judge-two": ok(3, 3, 3)},
        "n6.txt": {"judge-one": served(ok(5, 4, 3)), "judge-two": ok(2, 2, 2)},
    },
    outputs={"n1.txt": HOSTILE},
)
BETA_RUN = Run(
    model=BETA,
    judges=JUDGES,
    verdicts={
        f"n{i}.txt": {"judge-one": failed("call error: HTTP 500"), "judge-two": failed("no verdict in reply")}
        for i in range(1, 7)
    },
)
CONTROL_RUN = control_run("reference", {f"n{i}.txt": {"judge-one": 1.0, "judge-two": 0.8} for i in range(1, 7)})
SOLO_RUN = Run(
    model=ALPHA,
    judges=[SOLO],
    verdicts={"n1.txt": {SOLO: ok(5, 5, 5)}, "n2.txt": {SOLO: ok(4, 4, 4)}},
    extra_args="judges=judge-three",
)


def build_eee_suite(output: Path) -> Path:
    """The suite under ``output/runs/v1``."""
    return build_suite(output, [ALPHA_RUN, BETA_RUN, CONTROL_RUN, SOLO_RUN], notes=EEE_NOTES)
