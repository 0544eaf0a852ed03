"""The verifiers door's tests run only where verifiers is installed (its own venv: `.[verifiers,test]`); the HELM
venvs' runs do not collect them (verifiers and a HELM cannot share a venv: docs in README)."""

from __future__ import annotations

import importlib.util

collect_ignore_glob = [] if importlib.util.find_spec("verifiers") else ["test_*.py"]
