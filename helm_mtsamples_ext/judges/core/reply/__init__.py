"""Reading a judge's reply into a verdict: spans, structure, copied text, explanations, shape. Pure; never HELM."""

__all__: list[str] = []
"""No door imports these modules: the judges' call path does (judges/helm_calls/call.py,
judges/helm_calls/outcome.py)."""
