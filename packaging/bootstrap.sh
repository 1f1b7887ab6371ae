#!/usr/bin/env bash
# Fresh-machine set-up: Qt's system libraries and the packaging validators (Debian/Ubuntu, when root),
# then .venv with the project.
set -euo pipefail
VENV="${1:-.venv}"
APT_PKGS=(libxcb-icccm4 libxcb-keysyms1 libxcb-cursor0 libxcb-image0 libxcb-render-util0 libxcb-shape0
          libxcb-xinerama0 libxcb-xkb1 libxkbcommon-x11-0 libxkbcommon0 libegl1 libgl1 libfontconfig1
          libdbus-1-3 fonts-dejavu-core xvfb xauth
          # transcripts hold emoji and CJK text: without these fonts Qt draws boxes
          fonts-noto-color-emoji fonts-noto-cjk
          # packaging checks (tests/test_packaging.py, make package / package-test): desktop-file-validate and
          # update-desktop-database, appstreamcli, update-mime-database, objdump (the bundle's glibc floor)
          desktop-file-utils appstream shared-mime-info binutils)
PYTHON="${PYTHON:-python3}"
if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  missing=()
  for p in "${APT_PKGS[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  # the index's row scanner is built in C (packaging/build_native.py): a C compiler and the
  # interpreter's headers (python3-dev only helps the system interpreter); without them it runs interpreted
  command -v cc >/dev/null 2>&1 || command -v gcc >/dev/null 2>&1 || missing+=(gcc libc6-dev)
  pyinc="$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["include"])' 2>/dev/null || true)"
  if [ -n "$pyinc" ] && [ ! -f "$pyinc/Python.h" ] && [[ "$(command -v "$PYTHON")" == /usr/* ]]; then
    missing+=(python3-dev)
  fi
  # glib is named libglib2.0-0 on Debian 12 and libglib2.0-0t64 on Debian 13 / Ubuntu 24.04
  if ! dpkg -s libglib2.0-0 >/dev/null 2>&1 && ! dpkg -s libglib2.0-0t64 >/dev/null 2>&1; then
    if apt-cache show libglib2.0-0t64 >/dev/null 2>&1; then missing+=(libglib2.0-0t64); else missing+=(libglib2.0-0); fi
  fi
  if [ ${#missing[@]} -gt 0 ]; then
    echo "bootstrap: installing system packages: ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
else
  echo "bootstrap: not root or no apt-get; make sure Qt's XCB libraries are installed" >&2
fi
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check -e ".[dev]"
# the C row scanner built (never fatal: when it cannot be, the interpreted module is used)
"$VENV/bin/python" packaging/build_native.py || true
echo "bootstrap: ready ($VENV)"
