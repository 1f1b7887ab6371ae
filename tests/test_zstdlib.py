"""zstd through one module (app/log/source/zstdlib.py): ``compression.zstd`` where it exists (3.14+),
else ``backports.zstd``.  Each path runs in a fresh interpreter whose ``sys.modules`` hides one of
the two modules, then reads the demo's zstd sessions through the ordinary source and compares them
with this process's reading (every segment's text, the sized decoder's availability)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from app.log.source import zstdlib
from app.log.source.sources import open_source
from app.log.source.zstdframes import sized_decoder

REPO = Path(__file__).resolve().parents[1]
DEMO_ZSTD = sorted(str(p) for p in (REPO / "resources" / "demo").rglob("*.jsonl.zstd"))

# a 3.14 interpreter as seen from below 3.14: the backport's objects under the standard library's
# names, and the backport itself unimportable (pyproject installs it only below 3.14)
_AS_STDLIB = """
import sys, types
import backports.zstd as b
from backports.zstd import _zstd as native
pkg = types.ModuleType("compression"); pkg.__path__ = []; pkg.zstd = b
sys.modules.update({"compression": pkg, "compression.zstd": b, "_zstd": native})
sys.modules["backports.zstd"] = None
sys.modules["backports.zstd._zstd"] = None
"""
# below 3.14: no compression.zstd
_NO_STDLIB = """
import sys
sys.modules["compression.zstd"] = None
"""
_NEITHER = _NO_STDLIB + 'sys.modules["backports.zstd"] = None\n'

_READ = """
import json, sys
from app.log.source import zstdlib
from app.log.source.sources import open_source
from app.log.source.zstdframes import sized_decoder
out = {"module": zstdlib.MODULE_NAME, "native": zstdlib.native_library_path() is not None,
       "sized": sized_decoder() is not None, "files": {}}
for p in sys.argv[1:]:
    out["files"][p] = [seg.data.decode("utf-8") for seg in open_source(p).forward()]
print(json.dumps(out))
"""


def _child(preamble: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", preamble + _READ, *DEMO_ZSTD], cwd=REPO,
                          capture_output=True, text=True, timeout=120)


def _here() -> dict[str, list[str]]:
    return {p: [seg.data.decode("utf-8") for seg in open_source(p).forward()] for p in DEMO_ZSTD}


def _check_reads(preamble: str, module: str) -> None:
    assert DEMO_ZSTD, "the demo store has zstd sessions"
    r = _child(preamble)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert got["module"] == module
    assert got["native"] and got["sized"], "libzstd reachable for the sized decoder through the module in use"
    here = _here()
    assert got["files"] == here
    assert all(len(segs) >= 2 for segs in here.values())


def test_stdlib_module_is_used_where_it_exists() -> None:
    """Python 3.14+: compression.zstd, with backports.zstd absent (the old code imported it)."""
    _check_reads("" if sys.version_info >= (3, 14) else _AS_STDLIB, zstdlib.STDLIB)


@pytest.mark.skipif(sys.version_info >= (3, 14), reason="the backport is installed below 3.14 only")
def test_backport_is_used_below_314() -> None:
    _check_reads(_NO_STDLIB, zstdlib.BACKPORT)
    assert zstdlib.MODULE_NAME == zstdlib.BACKPORT          # this interpreter (3.11..3.13)
    assert sized_decoder() is not None


def test_neither_module_is_a_clear_error() -> None:
    r = _child(_NEITHER)
    assert r.returncode != 0
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("app.log.source.zstdlib.ZstdUnavailable: no zstd module (compression.zstd:"), last
    assert "install backports.zstd" in last


def test_no_module_imports_the_backport_directly() -> None:
    """Every zstd user goes through zstdlib (a direct backport import breaks 3.14, where it is absent)."""
    offenders = []
    for root in ("app", "tests", "bench", "packaging"):
        for p in sorted((REPO / root).rglob("*.py")):
            if p.name in ("zstdlib.py", "test_zstdlib.py"):
                continue
            text = p.read_text(encoding="utf-8")
            if "from backports" in text or "import backports" in text:
                offenders.append(str(p.relative_to(REPO)))
    assert offenders == []
