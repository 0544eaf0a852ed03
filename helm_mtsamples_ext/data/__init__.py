"""The notes: the pinned or a custom manifest, download, verified cache, section extraction, the controls' answers."""

__all__ = ["controls", "custom_manifest", "notes", "sections"]
"""The modules the doors import."""
