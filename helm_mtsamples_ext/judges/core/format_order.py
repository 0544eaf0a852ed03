"""The structured-output forms a judge is asked in, best first, and how a server's refusal of one reads: one home
for every door (HELM's path in ``formats.py``, the Inspect task, the verifiers environment).

Why apart from ``formats.py``: that module builds HELM's ``ResponseFormat``; the doors without HELM need the same
order and the same reading, and a copy had drifted (the verifiers door skipped ``json_object``, so the
llama-cpp-python judge the README starts got no schema at all there). See ``formats.py`` for why each form.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence

FALLBACK_ORDER: tuple[str, ...] = ("json_schema", "json_object", "off")
"""``judge_structured=auto``'s forms: OpenAI's and vLLM's schema, llama.cpp's ``json_object`` with a schema, none."""
FORMAT_SUSPECT_STATUS = (400, 415, 422, 500, 501)
"""How servers refuse a response_format they do not know (llama-cpp-python: 500, pydantic's literal_error)."""
_NAMES_FORMAT = re.compile(r"response_format|json_schema|json_object|schema", re.IGNORECASE)


def names_format(said: str) -> bool:
    """Whether a server's error names the structured-output form: the evidence a form is refused, which waiting
    cannot fix (a retry would get the same refusal), so the next form is asked at once."""
    return bool(_NAMES_FORMAT.search(said))


class FormatChoice:
    """One judge's structured-output form, shared by all its calls and safe when they run at once.

    Why a decision and not a list each call cuts: calls that start together each read the form to send first;
    when several are refused at once and each cut a shared list by its own position, the list ran out (three
    concurrent refusals left no form at all, and every later call failed without asking) or skipped a form that
    works. Here a refusal only moves the judge's choice past the form that was refused, never past a later one,
    and the last form is never dropped. Once a form worked, it stays: a later refusal-looking error in that form is
    the server's (a 500 under load), so no call falls back from it; a call still in an earlier form moves to it.
    """

    def __init__(self, forms: Sequence[str]) -> None:
        if not forms:
            raise ValueError("a judge needs at least one structured-output form")
        self.forms = tuple(forms)
        self._index = 0
        self._settled = False
        self._lock = threading.Lock()

    def first(self) -> int:
        """The form (its index in ``forms``) a new call is sent in: the judge's current choice."""
        with self._lock:
            return self._index

    def may_fall_back(self, index: int) -> bool:
        """Whether a refusal of ``forms[index]`` would be followed by the next form (none after the last, and
        none once a form worked)."""
        with self._lock:
            return self._next(index) is not None

    def refused(self, index: int) -> int | None:
        """``forms[index]`` was refused, naming the form: the index this call tries next (None: no other form is
        left to it), and the judge's later calls start there too."""
        with self._lock:
            following = self._next(index)
            if following is not None:
                self._index = following
            return following

    def _next(self, index: int) -> int | None:
        if self._settled:  # a call sent before another's form worked moves to that form, never past it
            return self._index if self._index > index else None
        return max(self._index, index + 1) if index + 1 < len(self.forms) else None

    def worked(self, index: int) -> None:
        """``forms[index]`` got a reply: the judge keeps it (the first form that worked wins)."""
        with self._lock:
            if not self._settled:
                self._index, self._settled = index, True


__all__ = ["FALLBACK_ORDER", "FORMAT_SUSPECT_STATUS", "FormatChoice", "names_format"]
