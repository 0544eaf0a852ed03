"""The Inspect door's tests run only in a venv with ``.[inspect]`` (README, Run the tests): a HELM venv, where
inspect-ai cannot be installed (its zstandard pin), does not collect them."""

from __future__ import annotations

import importlib.util

collect_ignore_glob = [] if importlib.util.find_spec("inspect_ai") else ["test_*.py"]
