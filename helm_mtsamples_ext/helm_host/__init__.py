"""What needs HELM installed and is not a door: compat, the model check, families, nltk, the prompt default."""

__all__ = ["compat", "families", "model_check", "nltk_quiet", "prompt_default"]
"""The modules the doors import."""
