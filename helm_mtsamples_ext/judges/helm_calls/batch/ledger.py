"""Where a run writes down the judge batches it submitted, so a killed run never submits (and pays) twice.

One JSON file per endpoint beside HELM's cache (``<HELM cache dir>/mtsamples_batches/<endpoint>.json``),
replaced atomically, keyed by the uploaded input file: that key exists before the batch does, so a run
killed between creating the batch and hearing its id still finds it (batch.py looks it up by its file).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any


class BatchLedger:
    """The batches of one deployment, on disk beside HELM's cache: {input file id: {"batch": id, "ids": [...]}}.

    Keyed by the uploaded file, written before the batch is created: a run killed between creating the batch
    and hearing its id finds it again by its input file (``batches.list``), never submits it twice."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def read(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {
            str(f): {"batch": e.get("batch"), "ids": [str(c) for c in e.get("ids") or []]}
            for f, e in data.items()
            if isinstance(e, dict)
        }

    def _write(self, entries: Mapping[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(entries), encoding="utf-8")
        tmp.replace(self.path)

    def put(self, file_id: str, batch_id: str | None, ids: list[str]) -> None:
        with self._lock:
            self._write({**self.read(), file_id: {"batch": batch_id, "ids": ids}})

    def remove(self, file_id: str) -> None:
        with self._lock:
            entries = self.read()
            entries.pop(file_id, None)
            self._write(entries)
