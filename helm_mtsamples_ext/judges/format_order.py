"""The structured-output forms a judge is asked in, best first, and how a server's refusal of one reads: one home
for every door (HELM's path in ``formats.py``, the Inspect task, the verifiers environment).

Why apart from ``formats.py``: that module builds HELM's ``ResponseFormat``; the doors without HELM need the same
order and the same reading, and a copy had drifted (the verifiers door skipped ``json_object``, so the
llama-cpp-python judge the README starts got no schema at all there). See ``formats.py`` for why each form.
"""

from __future__ import annotations

import re

FALLBACK_ORDER: tuple[str, ...] = ("json_schema", "json_object", "off")
"""``judge_structured=auto``'s forms: OpenAI's and vLLM's schema, llama.cpp's ``json_object`` with a schema, none."""
FORMAT_SUSPECT_STATUS = (400, 415, 422, 500, 501)
"""How servers refuse a response_format they do not know (llama-cpp-python: 500, pydantic's literal_error)."""
_NAMES_FORMAT = re.compile(r"response_format|json_schema|json_object|schema", re.IGNORECASE)


def names_format(said: str) -> bool:
    """Whether a server's error names the structured-output form: the evidence a form is refused, which waiting
    cannot fix (a retry would get the same refusal), so the next form is asked at once."""
    return bool(_NAMES_FORMAT.search(said))


__all__ = ["FALLBACK_ORDER", "FORMAT_SUSPECT_STATUS", "names_format"]
