"""The parts of the build that pyproject.toml cannot state (metadata, packages and scripts are there).

- The row scanner in C (``app/log/index/rowscan_c.c``) as an *optional* extension: with a C compiler the
  wheel carries it (``session-lens --version`` says ``row scanner: c``); without one the build warns and goes
  on, and the interpreted scanner (``app/log/index/rowscan.py``) is used.  ``pipx install .``,
  ``pip install .`` and ``python -m build`` all go through here.
- The demo store (``resources/demo``) copied into the package as ``app/_resources/demo``, so an installed
  app opens it (``app/store/demo.py`` looks beside the source tree first); it is read-only there too.
"""
from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


class BuildPyWithDemo(build_py):
    def run(self) -> None:
        super().run()
        src = ROOT / "resources" / "demo"
        if src.is_dir():
            shutil.copytree(src, Path(self.build_lib) / "app" / "_resources" / "demo", dirs_exist_ok=True)


class BuildExtStamped(build_ext):
    """The optional C scanner, with the stamp the loader checks (the SHA-256 of the source it was built
    from: ``app.log.index.fastindex.load_rowscan_c``) beside it; nothing when the compiler fails."""

    def build_extension(self, ext: Extension) -> None:
        super().build_extension(ext)             # (optional=True: a failure warns and returns here)
        built = Path(self.get_ext_fullpath(ext.name))
        if built.exists():
            digest = hashlib.sha256((ROOT / ext.sources[0]).read_bytes()).hexdigest()
            built.with_name(Path(ext.sources[0]).stem + ".stamp").write_text(digest + "\n")


setup(
    ext_modules=[Extension("app.log.index.rowscan_c", ["app/log/index/rowscan_c.c"], extra_compile_args=["-O2"],
                           optional=True)],
    cmdclass={"build_py": BuildPyWithDemo, "build_ext": BuildExtStamped},
)
