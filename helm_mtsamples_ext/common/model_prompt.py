"""The text the model under test reads for one note, exactly as HELM's generation adapter writes it.

Why here and pure: every front door (HELM's run spec, the Inspect task, a verifiers environment) must give the
model the same words, or the doors score different tasks. HELM builds the prompt from run_spec.py's
``get_generation_adapter_spec(instructions=..., input_noun="Patient Notes", newline_after_input_noun=False,
output_noun="Answer")`` with no in-context examples: the instructions and a newline, a blank line (HELM's
``instance_prefix``), ``Patient Notes: <note>``, a newline, then ``Answer:`` (the output prefix without its
trailing space). run_spec.py reads its instructions from here, and a HELM-venv test checks this text against
HELM's own adapter for both ``use_think`` values. Not reproduced: HELM's cutting of a prompt too long for the
model's context window (no note comes near one).
"""

from __future__ import annotations

__all__ = [
    "INPUT_NOUN",
    "INSTRUCTIONS",
    "OUTPUT_NOUN",
    "THINK_INSTRUCTIONS",
    "instructions",
    "max_tokens",
    "model_prompt",
]

INSTRUCTIONS = "Here are information about a patient, return a reasonable treatment plan for the patient."
THINK_INSTRUCTIONS = (
    " First reason step by step inside <think></think> tags; then, after the closing tag, give only the plan."
)
INPUT_NOUN = "Patient Notes"
OUTPUT_NOUN = "Answer"


def instructions(use_think: bool) -> str:
    """The instructions HELM's adapter spec carries (the reasoning request appended when ``use_think``)."""
    return INSTRUCTIONS + (THINK_INSTRUCTIONS if use_think else "")


def max_tokens(use_think: bool) -> int:
    """The model's token budget: reasoning spends tokens before the plan, and 512 would cut most plans off."""
    return 2048 if use_think else 512


def model_prompt(note: str, use_think: bool = False) -> str:
    """The whole prompt for one note's input text (``NoteSample.input``), as HELM's adapter writes it."""
    return f"{instructions(use_think)}\n\n{INPUT_NOUN}: {note}\n{OUTPUT_NOUN}:"
