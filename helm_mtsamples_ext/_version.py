"""The package's version, in one place: ``setup.cfg`` reads it (``version = attr:``) and ``__init__`` exports it.

A module of its own, with no imports, so setuptools reads it without importing the package (and HELM)."""

__version__ = "0.2.0"
