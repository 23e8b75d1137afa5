"""Headless Chromium (Debian's `chromium`) for tests that look at an HTML page as a browser draws it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    if os.environ.get("ARNES_REQUIRE_BROWSER"):
        pytest.fail("chromium is required here (.ci/run installs Debian's chromium package)")
    pytest.skip("no chromium on this machine (apt-get install chromium)")


def dump_dom(page: Path) -> str:
    """The page's DOM after its scripts ran (the load handler included)."""
    with tempfile.TemporaryDirectory() as profile:
        done = subprocess.run(
            [chromium(), *FLAGS, f"--user-data-dir={profile}", "--virtual-time-budget=5000", "--dump-dom",
             page.resolve().as_uri()],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def rendered_bars(dom: str) -> int:
    match = re.search(r'data-rendered-bars="(\d+)"', dom)
    assert match, "the page's render check did not run"
    return int(match.group(1))


def screenshot(page: Path, png: Path, size: str = "1200,1400") -> None:
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            [chromium(), *FLAGS, f"--user-data-dir={profile}", f"--window-size={size}", f"--screenshot={png}",
             page.resolve().as_uri()],
            capture_output=True, timeout=120, check=True,
        )  # fmt: skip
