"""`python -m helm_mtsamples_ext.report`, the same as `helm-mtsamples-report`."""

from helm_mtsamples_ext.report.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
