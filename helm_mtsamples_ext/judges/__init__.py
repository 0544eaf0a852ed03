"""The judges wing: how one answer reaches a panel of LLM judges and comes back as verdicts.

`core/` is what every door shares and holds no harness: the prompt, reading a reply, one judge's turns, the panel
step, pacing and health, the endpoints' URLs, keys and capacity. Beside it, one folder per way a call travels:
`helm_calls/` (HELM's clients, cache, deadline, fan-out and batch APIs: helm-run and medhelm-run), `openai_calls/`
(the OpenAI SDK's async client: the verifiers door) and `inspect_calls/` (Inspect's model API: the Inspect door).
A change in `core/` applies at every door; a change in a transport folder applies at its door alone. Nothing here
is a path HELM stores except `endpoints.JudgeEndpointClient` (names.py), kept importable where it always was.
"""
