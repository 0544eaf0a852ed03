"""The Inspect door's transport: one judge over Inspect's model API, its errors and its wire to the server."""

__all__ = ["errors", "judge", "wire"]
"""The modules the doors import."""
