"""The reward: its arithmetic, the same-verdict rule, unjudged notes, failure reasons and stat metadata."""

__all__ = ["failure_reasons", "reward", "stat_metadata", "unjudged", "verdict_view"]
"""The modules the doors import."""
