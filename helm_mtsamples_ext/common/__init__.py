"""What every layer shares (rubric, record, panel, run-entry arguments, failure kinds); never imports HELM."""

__all__ = [
    "answer",
    "answer_cap",
    "atomic",
    "choices",
    "families",
    "outside_text",
    "panel",
    "record",
    "rubric",
    "run_entry_args",
    "suite_name",
]
"""The modules the doors import."""
