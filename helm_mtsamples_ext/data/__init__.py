"""The notes: the pinned manifest, download, verification and cache, section extraction, the controls' answers.
Imports only ``common``; never HELM."""
