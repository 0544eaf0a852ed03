"""Keep HELM's import-time nltk download from printing an error our runs cannot act on.

HELM's BasicGenerationMetric (the efficiency and token-count stats every run of ours has) lives in
a module that imports `evaluate_reference_metrics`, which calls `install_nltk_resources()` at import:
without nltk's `punkt_tab` tokenizer on disk it calls `nltk.download`, and offline (air-gapped
clusters, CI) that prints four `[nltk_data] Error loading punkt_tab: <urlopen error ...>` lines to
stderr. Only HELM's ROUGE/BLEU/bias metrics use the tokenizer; ours do not.

So the plugin imports that module once, early, with `nltk.download` muted for the duration: the
download is still attempted exactly as HELM would (online it succeeds, and other benchmarks in the
same `helm-run` keep their tokenizer), only its error text is caught and replaced by one line that
says what it means. Nothing of HELM's stays patched afterwards.
"""

from __future__ import annotations

import importlib
import io
import sys
from collections.abc import Callable
from typing import Any

from helm.common.hierarchical_logger import hlog

HELM_NLTK_MODULE = "helm.benchmark.metrics.evaluate_reference_metrics"
EXPLANATION = (
    "nltk's punkt_tab tokenizer is not installed and could not be downloaded (offline?); only HELM's "
    "ROUGE/BLEU metrics need it, MTSamples Procedures does not. To install it: python -m nltk.downloader punkt_tab"
)


def _muted(download: Callable[..., Any], errors: io.StringIO) -> Callable[..., Any]:
    def muted_download(*args: Any, **kwargs: Any) -> Any:
        kwargs["quiet"] = True
        kwargs["print_error_to"] = errors
        return download(*args, **kwargs)

    return muted_download


def import_helm_reference_metrics_quietly() -> None:
    """Import HELM's reference-metric module with nltk's download errors caught; explain them once."""
    if HELM_NLTK_MODULE in sys.modules:
        return
    import nltk

    errors = io.StringIO()
    download = nltk.download
    nltk.download = _muted(download, errors)
    try:
        importlib.import_module(HELM_NLTK_MODULE)
    except Exception:  # not ours to report: HELM imports it again where it needs it, and raises there
        return
    finally:
        nltk.download = download
    if errors.getvalue():
        hlog(EXPLANATION)
