"""The verifiers door's transport: one judge over the OpenAI SDK's async client, with its attempts."""

__all__ = ["attempts", "judge"]
"""The modules the doors import."""
