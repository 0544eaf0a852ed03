"""HELM plugin: makes `mtsamples_procedures` run *our* implementation.

HELM 0.5.16 ships its own `mtsamples_procedures` run spec, and its `run_spec_function` decorator
refuses a second function under a registered name. Plugins load before HELM discovers its
built-in run specs, so registering ours first would make that discovery raise and break every
`helm-run`. Hence the one deliberate override below: run HELM's discovery now, then replace the
entry. Every other run entry is left exactly as HELM registered it.

Loading the plugin also imports HELM's reference-metric module with nltk's offline download error
caught and explained in one line (nltk_quiet.py): HELM's SlurmRunner workers import us (by class name)
before any metric, so they are quiet too.

It also registers the control "models" (``mtsamples-control/<kind>``, see ``controls.py``) as HELM
model deployments, so a run entry can name them like any model.
It first checks the installed HELM (helm_compat.py): crfm-helm 0.5.16 or medhelm 0.8, one of them.
"""

from __future__ import annotations

from helm_mtsamples_ext.helm_host.compat import check_helm

check_helm()  # before anything imports `helm`: no HELM, two of them, or an unknown one fails with one line

from helm.benchmark import run_spec as helm_run_spec  # noqa: E402
from helm.common.hierarchical_logger import hlog  # noqa: E402

from helm_mtsamples_ext import names  # noqa: E402
from helm_mtsamples_ext.controls_client import register_control_models  # noqa: E402
from helm_mtsamples_ext.helm_host.nltk_quiet import import_helm_reference_metrics_quietly  # noqa: E402
from helm_mtsamples_ext.run_spec import run_entry  # noqa: E402


def register() -> None:
    """Idempotent: the entry point and `--plugins helm_mtsamples_ext` may both load us."""
    helm_run_spec.discover_run_spec_functions()
    registry = helm_run_spec._REGISTERED_RUN_SPEC_FUNCTIONS
    if registry.get(names.RUN_ENTRY) is not run_entry:
        registry[names.RUN_ENTRY] = run_entry
        hlog(f"helm-mtsamples-ext: `{names.RUN_ENTRY}` now runs helm_mtsamples_ext (replacing HELM's built-in)")
    import_helm_reference_metrics_quietly()
    register_control_models()


register()
