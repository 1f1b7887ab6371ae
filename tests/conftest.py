"""Shared test helpers: where the dsh fixture corpus lives.

``fixtures_dir`` (pytest fixture) is the corpus root; ``fixture(rel)`` (plain function,
also offered as the ``fixture_path`` pytest fixture) resolves one file and fails clearly
when it is missing.  Importing this conftest also applies the PySide6/None work-around of
``app.ui.qtcompat`` for every Qt test.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

try:  # PySide6 6.12 on Python < 3.12 drops a None reference per void Qt call: see app/ui/qtcompat.py
    from app.ui.qtcompat import keep_none_alive

    keep_none_alive()
except ImportError:
    pass

# CI (.ci/run sets SESSION_LENS_CI): the property tests draw the same examples every run, so a
# submission is judged on what was tested before it; a plain `make test` keeps exploring new ones
if os.environ.get("SESSION_LENS_CI"):
    from hypothesis import settings as _hsettings

    _hsettings.register_profile("ci", derandomize=True, database=None)
    _hsettings.load_profile("ci")

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXTURES_DIR = REPO_ROOT.parent / "shared" / "fixtures" / "dsh"


def fixture(rel: str) -> Path:
    p = FIXTURES_DIR / rel
    if not p.exists():
        pytest.fail(f"missing fixture {p}")
    return p


@pytest.fixture(autouse=True)
def _private_config_dir(tmp_path_factory, monkeypatch):
    """Settings, recent stores and the tour's state go to a temporary dir, never the user's."""
    import os
    if not os.environ.get("SESSION_LENS_CONFIG_DIR"):
        monkeypatch.setenv("SESSION_LENS_CONFIG_DIR", str(tmp_path_factory.mktemp("config")))
    monkeypatch.setenv("SESSION_LENS_NO_TOUR", "1")       # the first-run tour has its own test


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES_DIR


@pytest.fixture
def fixture_path():
    return fixture


@pytest.fixture
def win(qtbot):
    """A shown main window (page size 20, light theme), shut down after the test."""
    from app.ui.main_window import MainWindow
    w = MainWindow(page_size=20, theme_mode="light")
    qtbot.addWidget(w)
    w.resize(1200, 800)
    w.show()
    yield w
    w.shutdown()


# The persistent index cache (app/store/indexcache.py) of every test, and of every process a
# test starts, lives in a temporary folder: tests never read or write the user's cache.
if not os.environ.get("SESSION_LENS_CACHE_DIR"):
    import atexit
    import shutil
    os.environ["SESSION_LENS_CACHE_DIR"] = tempfile.mkdtemp(prefix="session-lens-test-cache-")
    atexit.register(shutil.rmtree, os.environ["SESSION_LENS_CACHE_DIR"], True)

# Logs, crash and fatal reports (app/store/diagnostics.py) of every test and every process it starts
# go to a temporary folder too, never the user's log folder.
if not os.environ.get("SESSION_LENS_LOG_DIR"):
    import atexit
    import shutil
    os.environ["SESSION_LENS_LOG_DIR"] = tempfile.mkdtemp(prefix="session-lens-test-logs-")
    atexit.register(shutil.rmtree, os.environ["SESSION_LENS_LOG_DIR"], True)

# The user data folder (forks of the demo store go there: app/store/demo.py) is a temporary one too.
if not os.environ.get("SESSION_LENS_DATA_DIR"):
    import atexit
    import shutil
    os.environ["SESSION_LENS_DATA_DIR"] = tempfile.mkdtemp(prefix="session-lens-test-data-")
    atexit.register(shutil.rmtree, os.environ["SESSION_LENS_DATA_DIR"], True)
