#!/usr/bin/env bash
# Check that every shared library of a PyInstaller one-folder bundle resolves:  packaging/bundle_libs.sh BUNDLE
# BUNDLE is the folder holding the session-lens binary and _internal/.  Each bundled .so is resolved the way it is
# at run time: its own RPATH/RUNPATH (PySide6's modules and Qt's plugins point at PySide6/Qt/lib, which PyInstaller
# 6.x may or may not create), then LD_LIBRARY_PATH = _internal, which the bootloader sets before loading Python
# (sys._MEIPASS; PyInstaller 6.x puts the collected libraries there, or symlinks to them), then the system.
# libwayland-* come from the system of a Wayland session (Qt falls back to xcb without them).
# Prints the unresolved libraries with the bundled files that need them; exit 1 when there is any.
set -euo pipefail
B="${1:?usage: bundle_libs.sh BUNDLE}"
INTERNAL="$B/_internal"
[ -d "$INTERNAL" ] || INTERNAL="$B"            # PyInstaller < 6: everything beside the binary
out="$(find "$B" -name '*.so*' -type f -print0 | LD_LIBRARY_PATH="$INTERNAL" xargs -0 -n 50 sh -c \
         'for f; do ldd "$f" 2>/dev/null | sed -n "s|^[[:space:]]*\([^ ]*\) => not found.*|\1  (needed by $f)|p"; done' _ \
       | grep -v '^libwayland-' | sed "s|(needed by $B/|(needed by |" | sort -u || true)"
if [ -n "$out" ]; then
  echo "$out"
  exit 1
fi
