"""MedARC's keep rule as its own code states it: the oracle the tests of data/example_ids.py and of the verifiers
door check our ids against (read from med-lm-envs 3b9f18f, environments/mtsamples_procedures)."""

from __future__ import annotations


def medarc_row(text: str) -> bool:
    """MedARC's ``_extract_sections`` and its keep test (med-lm-envs 3b9f18f, mtsamples_procedures.py), transcribed
    statement by statement as the oracle: whether ``_load_dataset`` appends a row for the note."""
    plan, summary, findings = None, None, None
    text_upper = text.upper()
    if "PLAN:" in text_upper:
        idx = text_upper.find("PLAN:")
        first_line = text[idx + len("PLAN:") :].split("\n", 1)[0].strip()
        plan = first_line if first_line else None
    if "SUMMARY:" in text_upper:
        idx = text_upper.find("SUMMARY:")
        first_line = text[idx + len("SUMMARY:") :].split("\n", 1)[0].strip()
        summary = first_line if first_line else None
    if "FINDINGS:" in text_upper:
        idx = text_upper.find("FINDINGS:")
        first_line = text[idx + len("FINDINGS:") :].split("\n", 1)[0].strip()
        findings = first_line if first_line else None
    reference = plan or summary or findings
    return bool(reference)
