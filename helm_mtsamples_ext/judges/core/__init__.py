"""The judging core every door shares: prompt, reply reading, a judge's turns, the panel step, pacing, endpoints.

No HELM, no Inspect, no verifiers here (the `core-without-helm` contract names this folder): a door brings a
transport (`judges.helm_calls`, `judges.openai_calls`, `judges.inspect_calls`) and the core does the rest.
"""

__all__ = [
    "async_panel",
    "capacity",
    "endpoint_keys",
    "format_order",
    "health",
    "judgment",
    "prompt",
    "question",
    "reachability",
    "reply",
    "sdk_errors",
    "settings",
    "throttle",
    "turns",
    "urls",
]
"""The modules the doors import."""
