"""MTSamples Procedures for HELM, done carefully.

Loaded by HELM through the `helm` entry point (`helm_mtsamples_ext.plugin`) or with
`--plugins helm_mtsamples_ext`. Importing a pure submodule (`sections`, `rubric`, `scoring`)
outside HELM must not drag in HELM's run-spec registry, so the package registers itself only
when HELM's registry is already loaded, which is the case whenever HELM imports a plugin.
"""

from __future__ import annotations

import sys

from helm_mtsamples_ext._version import __version__

__all__ = ["__version__"]

if "helm.benchmark.run_spec" in sys.modules:
    from helm_mtsamples_ext import plugin as _plugin  # noqa: F401  (registers on import)
