"""The ground floor every wing stands on: the rubric, the record, the panel, the run-entry arguments, secrets and
the text and file rules. Imports nothing of ours but ``names``, and never HELM."""
