"""HELM's call path for the judges: HELM's clients and cache, the run's deadline, the fan-out and the batch APIs."""

__all__ = ["call", "deployments", "endpoints", "entries", "keys", "recheck_calls", "session"]
"""The modules the doors import."""
