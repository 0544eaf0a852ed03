"""Debian's Chromium as every browser test drives it (Playwright cannot download a browser here): where it is, the
flags, and one line naming the fix when it is missing. Shared by the HELM pages' tests and the Inspect door's."""

from __future__ import annotations

from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def require_chromium() -> None:
    if not Path(CHROMIUM).exists():
        pytest.fail(
            "Debian's Chromium is needed for the browser check: `apt-get install -y chromium` "
            "(the README's test command installs it: see 'Run the tests')."
        )
