"""The class path HELM resolves for an endpoint judge's deployment (`names.ENDPOINT_CLIENT_CLASS`).

The path is frozen (names.py): HELM builds the client from it, so it stays here while the client itself lives
with HELM's call path in `helm_calls.endpoints`.
"""

from helm_mtsamples_ext.judges.helm_calls.endpoints import JudgeEndpointClient

__all__ = ["JudgeEndpointClient"]
