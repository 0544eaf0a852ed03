"""``inspect eval`` of our task as the Inspect door's tests run it: the command and its environment, once.

Why a helper: each test module ran the same command with the same loopback variables (the notes' mirror and their
cache, the model under test as Inspect's ``openai-api/loop`` provider, no judge key), and a variable added to one
was missed in the others."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

INSPECT = str(Path(sys.executable).parent / "inspect")
TASK = "helm_mtsamples_ext/mtsamples_procedures"


def eval_env(notes_env: Mapping[str, str], tmp: Path, model_url: str) -> dict[str, str]:
    """This process's environment with the notes (``notes_env``, cached under ``tmp``) and the model under test at
    ``model_url``; no ``JUDGE_API_KEY`` (the loopback judges take none)."""
    env = {
        **os.environ,
        **notes_env,
        "MTSAMPLES_PROCEDURES_CACHE_DIR": str(tmp / "notes"),
        "LOOP_BASE_URL": model_url,
        "LOOP_API_KEY": "EMPTY",
    }
    env.pop("JUDGE_API_KEY", None)
    return env


def eval_command(tmp: Path, *args: str) -> list[str]:
    """``inspect eval`` of our task against the loopback model, its log under ``tmp/logs``, then ``args``."""
    return [
        INSPECT,
        "eval",
        TASK,
        "--model",
        "openai-api/loop/m",
        "--display",
        "none",
        "--log-dir",
        str(tmp / "logs"),
        *args,
    ]
