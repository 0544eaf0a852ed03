"""The batch path: a run's judge calls submitted to a provider's batch API, its ledger and its results."""

__all__ = ["run"]
"""The modules the doors import."""
