"""The reward: its arithmetic, the same-verdict rule, unjudged notes, failure reasons and stat metadata.
Imports only ``common``; never HELM."""
