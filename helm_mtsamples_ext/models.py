"""``python -m helm_mtsamples_ext.models [TEXT]``: the models a run entry's ``model=`` may name here.

HELM has no command listing them; helm-run's "unknown model" line (model_check.py) points here. It reads what
helm-run reads: HELM's own configs, ``prod_env``'s (or ``--local-path``'s) and this plugin's (the controls).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from helm_mtsamples_ext.common.helm_paths import LOCAL_PATH


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m helm_mtsamples_ext.models", description=__doc__.split("\n")[0])
    parser.add_argument("text", nargs="?", default="", help="only names containing this text (case-insensitive)")
    parser.add_argument("--local-path", default=LOCAL_PATH, help="as given to helm-run")
    args = parser.parse_args(argv)

    from helm.benchmark.config_registry import (
        register_builtin_configs_from_helm_package,
        register_configs_from_directory,
    )

    register_builtin_configs_from_helm_package()
    register_configs_from_directory(args.local_path)
    import helm_mtsamples_ext.plugin  # noqa: F401  (registers the control models)
    from helm_mtsamples_ext.helm_host.model_check import known_models

    names = [name for name in known_models() if args.text.lower() in name.lower()]
    print("\n".join(names))
    print(
        f"{len(names)} model names; any openai/<OpenAI model id> works too (crfm-helm generates its deployment, "
        "this plugin registers it on medhelm)",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
