"""The package's version is written once: setup.cfg reads it from ``_version.py``, and the package exports it."""

from __future__ import annotations

import configparser
import re
from pathlib import Path

from packaging.version import Version
from setuptools.config.setupcfg import read_configuration

import helm_mtsamples_ext
from helm_mtsamples_ext._version import __version__

REPO = Path(__file__).resolve().parents[1]


def test_setup_cfg_reads_the_version_from_the_one_source() -> None:
    config = configparser.ConfigParser()
    config.read(REPO / "setup.cfg")
    assert config["metadata"]["version"] == "attr: helm_mtsamples_ext._version.__version__"
    assert read_configuration(str(REPO / "setup.cfg"))["metadata"]["version"] == __version__


def test_the_package_exports_that_version_and_the_changelog_knows_it() -> None:
    """A release's version has its CHANGELOG heading, or is the one being prepared under [Unreleased]."""
    assert helm_mtsamples_ext.__version__ == __version__ and re.fullmatch(r"\d+\.\d+\.\d+", __version__)
    changelog = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    released = re.findall(r"^## \[(\d+\.\d+\.\d+)\]", changelog, re.M)
    newer = all(Version(__version__) > Version(v) for v in released)
    assert __version__ in released or ("## [Unreleased]" in changelog and newer)
