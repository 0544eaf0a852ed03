"""The judges wing: how one answer reaches a panel of LLM judges and comes back as verdicts.

The prompt and its parser, the reply formats, one call, its attempts, the exchange with HELM's
clients, throttling, the run's deadline, endpoint judges, the fan-out over a panel and the batch
APIs. Nothing here is a path HELM stores: the front doors at the package's top (the annotator)
import from here, so everything in this folder may be renamed or regrouped.
"""
