"""The report wing: `helm-mtsamples-report`, reading a finished suite and writing what a reader needs.

Stats and their render, cost, the judge audit and its warnings, the review page with its rating
mode, the rating sample, ratings, agreement between judges and with clinicians. Nothing here is
a path HELM stores; the console script's target is `report.cli:main`.
"""
