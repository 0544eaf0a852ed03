"""RULES_VERSION: the version of the rules that turn a judge's reply into a reward.

Those rules are: how a verdict is read from a reply (a JSON object by its structure, prose by its spans,
duplicate keys refused), the masking of text copied from the answer or the note, the same-verdict rule, the
reward formula (per judge, per note, failed judges) and the rounding of ties. Two runs scored under different
rules can give one answer different rewards, and nothing in the numbers shows it. So every note's record
carries the version it was scored under (``record.RULES_VERSION_KEY``), and the report warns when a suite's
records hold more than one (report/rules_versions.py).

The bump rule: any change that can move a number (a score read, a verdict voided, a reward, a rank's tie)
raises RULES_VERSION by one, and its CHANGELOG line says "(rules N)". A change that cannot move a number
(speed, messages, a new column) leaves it. Records written before versioning have no version: they read as
None ("unversioned"). Re-running a run with the current release re-scores it from HELM's cache (judge replies
are cached, so no judge is called) and writes the current version.
"""

from __future__ import annotations

RULES_VERSION = 1
"""1: the rules of release 0.2.0, the first to record a version."""
