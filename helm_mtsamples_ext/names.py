"""Every name HELM stores or a user types: the frozen front doors, in one place.

HELM writes class paths into each run's `run_spec.json` and resolves them by import when a suite is
summarized, reported or re-run from its cache, and the run entry, annotation key and stat names are
written into `scenario_state.json`, `stats.json` and the leaderboard. A suite written by an earlier
release must keep working, so these strings never change; `tests/test_names.py` imports each one.
Everything not named here (the `judges/` and `report/` wings) is free to move.
"""

from __future__ import annotations

#: The run entry users type (`mtsamples_procedures:model=...`), HELM's scenario and run-group name, and the Inspect
#: task's (`inspect eval helm_mtsamples_ext/mtsamples_procedures`) and its dataset's name.
RUN_ENTRY = "mtsamples_procedures"
#: The key of our record in each request state's `annotations` (scenario_state.json).
ANNOTATION_KEY = RUN_ENTRY
#: Every stat we write starts with this (stats.json, the leaderboard's columns).
STAT_PREFIX = RUN_ENTRY
#: The run group of HELM's leaderboard schema.
RUN_GROUP = RUN_ENTRY
#: The tag HELM gives a correct reference in scenario_state.json (HELM's own CORRECT_TAG; tests/test_names.py
#: checks they agree), read here so the report reads a suite without HELM installed.
CORRECT_TAG = "correct"

#: Class paths stored in run_spec.json.
SCENARIO_CLASS = "helm_mtsamples_ext.scenario.MTSamplesProceduresScenario"
ANNOTATOR_CLASS = "helm_mtsamples_ext.annotator.JudgeAnnotator"
METRIC_CLASS = "helm_mtsamples_ext.metric.MTSamplesProceduresMetric"
#: Class paths HELM resolves from the model deployments we register (controls, endpoint judges).
CONTROL_CLIENT_CLASS = "helm_mtsamples_ext.controls_client.ControlClient"
ENDPOINT_CLIENT_CLASS = "helm_mtsamples_ext.judges.endpoints.JudgeEndpointClient"
STORED_CLASSES = (SCENARIO_CLASS, ANNOTATOR_CLASS, METRIC_CLASS, CONTROL_CLIENT_CLASS, ENDPOINT_CLIENT_CLASS)

#: The function HELM's run-spec registry calls for our run entry, and the plugin entry point (setup.cfg).
RUN_SPEC_FUNCTION = "helm_mtsamples_ext.run_spec.run_entry"
PLUGIN_MODULE = "helm_mtsamples_ext.plugin"
#: Console scripts (setup.cfg) and the `python -m` commands the README tells users to type.
CONSOLE_SCRIPTS = {"helm-mtsamples-report": "helm_mtsamples_ext.report.cli:main"}
MODULE_COMMANDS = (
    "helm_mtsamples_ext.schema",
    "helm_mtsamples_ext.estimate",
    "helm_mtsamples_ext.models",
    "helm_mtsamples_ext.custom_manifest",
    "helm_mtsamples_ext.report",
    "helm_mtsamples_ext.recheck",
)
