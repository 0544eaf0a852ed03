"""The values a run entry's choice arguments may take, written once below every layer that reads them.

``RunEntryArgs`` checks a run entry against these; data/ extracts by ``EXTRACTION_MODES``, the judges build their
prompt by a style of ``STORED_STYLES`` and ask for a response format of ``STRUCTURED_MODES``. Kept here, pure, so
parsing a run entry needs neither the judges nor the data.
"""

from __future__ import annotations

__all__ = ["EXTRACTION_MODES", "HELM_FENCED", "PROMPT_STYLES", "STORED_STYLES", "STRUCTURED_MODES"]

EXTRACTION_MODES: tuple[str, ...] = ("helm", "sections")
"""How a note is cut into input and reference (data/sections.py; docs/extraction.md)."""

STRUCTURED_MODES: tuple[str, ...] = ("auto", "json_schema", "json_object", "off")
"""The response format asked of a judge (judges/helm_calls/formats.py): ``auto`` tries the others in order."""

PROMPT_STYLES: tuple[str, ...] = ("ours", "helm", "prefix")
"""What a run entry may name: ``prefix`` (judges/core/prefix_prompt.py) is what a new run gets; ``ours`` and ``helm``
stay
for runs that stored them."""

HELM_FENCED = "helm_fenced"
"""What run_spec.json stores for ``judge_prompt=helm`` since HELM's template has its block tags fenced. A stored
``helm`` is the unfenced template exactly as HELM sends it: a suite judged with it keeps those bytes, which HELM's
cache holds (helm_host/prompt_default.py)."""

STORED_STYLES: tuple[str, ...] = (*PROMPT_STYLES, HELM_FENCED)
"""Every prompt style a run_spec.json may hold."""
