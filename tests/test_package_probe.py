"""What package-test runs beside the installed binary: the scroll-during-find probe (app/ui/probe.py) and the
bundle's library check (packaging/bundle_libs.sh), each on real inputs."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _env(tmp_path: Path, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SESSION_LENS_")}
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env.update(HOME=str(home), QT_QPA_PLATFORM="offscreen", SESSION_LENS_CACHE_DIR=str(tmp_path / "cache"),
               SESSION_LENS_LOG_DIR=str(tmp_path / "log"), SESSION_LENS_NO_CRASH_DIALOG="1", **extra)
    return env


def test_the_scroll_find_probe_measures_the_window_while_a_find_runs_in_a_child(tmp_path):
    log = tmp_path / "probe.jsonl"
    subprocess.run([sys.executable, str(ROOT / "bench" / "gen.py"), str(log), "--size", "2MB", "--seed", "7"],
                   check=True, capture_output=True, cwd=ROOT, timeout=120)
    r = subprocess.run([sys.executable, "-m", "app", "gui", str(log)], capture_output=True, text=True, cwd=ROOT,
                       timeout=240, env=_env(tmp_path, SESSION_LENS_PROBE="scroll-find",
                                             SESSION_LENS_PROBE_SECONDS="2"))
    assert r.returncode == 0, r.stdout + r.stderr[-2000:]
    rep = json.loads(next(x for x in r.stdout.splitlines() if x.startswith("probe: "))[7:])
    assert rep["probe"] == "scroll-find" and rep["frozen"] is False and rep["platform"] == "offscreen"
    assert rep["seconds"] >= 2 and rep["ticks"] > 20 and rep["scroll_steps"] > 10 and rep["rows"] > 0
    assert rep["finds_started"] >= 1 and rep["find_children_max"] >= 1       # the find ran in a child process
    assert 0 <= rep["p50_ms"] <= rep["p99_ms"] <= rep["max_ms"]


def test_an_unknown_probe_is_refused(tmp_path):
    r = subprocess.run([sys.executable, "-m", "app", "gui", str(tmp_path)], capture_output=True, text=True,
                       cwd=ROOT, timeout=120, env=_env(tmp_path, SESSION_LENS_PROBE="nope"))
    assert r.returncode == 2 and "unknown probe 'nope'" in r.stderr
    # a test hook, not a user feature: not in the command line's help
    h = subprocess.run([sys.executable, "-m", "app", "gui", "--help"], capture_output=True, text=True, cwd=ROOT,
                       timeout=60)
    assert h.returncode == 0 and "probe" not in h.stdout.lower()


@pytest.mark.skipif(not (shutil.which("cc") and shutil.which("ldd")), reason="needs a C compiler and ldd")
def test_bundle_libs_finds_libraries_in_internal_and_fails_on_a_missing_one(tmp_path):
    """A module under _internal/pkg/ needs a library PyInstaller 6.x put in _internal/ (no RPATH to it):
    resolved, as the bootloader's LD_LIBRARY_PATH does at run time; removed: reported with its user."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "b.c").write_text("int b(void) { return 1; }\n")
    (src / "a.c").write_text("int b(void);\nint a(void) { return b(); }\n")
    bundle = tmp_path / "bundle"
    internal = bundle / "_internal"
    (internal / "pkg").mkdir(parents=True)
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(internal / "libsltestb.so.1"), "-Wl,-soname,libsltestb.so.1",
                    str(src / "b.c")], check=True)
    (internal / "libsltestb.so").symlink_to("libsltestb.so.1")
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(internal / "pkg" / "mod.so"), str(src / "a.c"),
                    f"-L{internal}", "-lsltestb"], check=True)
    (internal / "libsltestb.so").unlink()
    check = ["bash", str(ROOT / "packaging" / "bundle_libs.sh"), str(bundle)]
    ok = subprocess.run(check, capture_output=True, text=True)
    assert ok.returncode == 0 and ok.stdout == "", ok.stdout + ok.stderr
    (internal / "libsltestb.so.1").unlink()
    bad = subprocess.run(check, capture_output=True, text=True)
    assert bad.returncode == 1
    assert bad.stdout.strip() == "libsltestb.so.1  (needed by _internal/pkg/mod.so)"


def test_the_bundles_qt_runtime_hook_sets_qts_paths_without_importing_qt(tmp_path):
    """packaging/pyinstaller/rth_qt_paths.py replaces PyInstaller's pyi_rth_pyside6, which imported PySide6.QtCore
    at every start of the binary (each worker child too); the spec drops that hook and multiprocessing's."""
    hook = ROOT / "packaging" / "pyinstaller" / "rth_qt_paths.py"
    code = (f"import sys, os, runpy; sys._MEIPASS = {str(tmp_path)!r}; runpy.run_path({str(hook)!r}); "
            "print(os.environ['QT_PLUGIN_PATH']); print(sorted(m for m in sys.modules if 'PySide6' in m or "
            "m.startswith(('shiboken6', 'multiprocessing'))))")
    env = {k: v for k, v in os.environ.items() if not k.startswith("QT_")}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [str(tmp_path / "PySide6" / "Qt" / "plugins"), "[]"]
    spec = (ROOT / "packaging" / "pyinstaller" / "session-lens.spec").read_text()
    assert 'SLOW_RTHOOKS = ("pyi_rth_pyside6", "pyi_rth_multiprocessing")' in spec
    assert 'runtime_hooks=[os.path.join(SPECPATH, "rth_qt_paths.py")]' in spec
