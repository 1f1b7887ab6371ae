#!/usr/bin/env bash
# Install Session Lens from the unpacked tarball.
#
#   ./install.sh [--prefix DIR]          default: /usr/local as root, else ~/.local
#   ./install.sh [--prefix DIR] --uninstall
#
# Puts the bundle in DIR/lib/session-lens, a symlink DIR/bin/session-lens, and
# DIR/share/{applications,metainfo,mime/packages,icons/hicolor/<size>/apps}, then refreshes the
# MIME, desktop and icon caches when those tools exist (so .jsonl and .jsonl.zstd files open
# with Session Lens).  Set NO_CACHE_UPDATE=1 to skip the cache refresh.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
APP_ID=io.sessionlens.SessionLens
if [ "$(id -u)" = 0 ]; then PREFIX=/usr/local; else PREFIX="$HOME/.local"; fi
MODE=install
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) PREFIX="$2"; shift 2 ;;
    --prefix=*) PREFIX="${1#--prefix=}"; shift ;;
    --uninstall) MODE=uninstall; shift ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install.sh: unknown argument: $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$PREFIX"
PREFIX="$(cd "$PREFIX" && pwd)"
LIB="$PREFIX/lib/session-lens"
SHARE="$PREFIX/share"
MANIFEST="$LIB/.install-manifest"

refresh_caches() {
  [ -n "${NO_CACHE_UPDATE:-}" ] && return 0
  if command -v update-mime-database >/dev/null 2>&1 && [ -d "$SHARE/mime/packages" ]; then
    update-mime-database "$SHARE/mime" >/dev/null 2>&1 || echo "install.sh: update-mime-database failed (ignored)" >&2
  fi
  if command -v update-desktop-database >/dev/null 2>&1 && [ -d "$SHARE/applications" ]; then
    update-desktop-database -q "$SHARE/applications" 2>/dev/null || true
  fi
  if command -v gtk-update-icon-cache >/dev/null 2>&1 && [ -f "$SHARE/icons/hicolor/index.theme" ]; then
    gtk-update-icon-cache -q -t "$SHARE/icons/hicolor" 2>/dev/null || true
  fi
}

if [ "$MODE" = uninstall ]; then
  [ -f "$MANIFEST" ] || { echo "install.sh: no Session Lens install in $PREFIX" >&2; exit 1; }
  while read -r f; do rm -f "$PREFIX/$f"; done < "$MANIFEST"
  rm -rf "$LIB"
  refresh_caches
  echo "Session Lens removed from $PREFIX"
  exit 0
fi

[ -x "$HERE/app/session-lens" ] || { echo "install.sh: $HERE/app/session-lens is missing; run me from the unpacked tarball" >&2; exit 1; }
NEED="$(cat "$HERE/MIN_GLIBC" 2>/dev/null || echo 2.34)"
GLIBC="$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')"
if [ -n "$GLIBC" ] && [ "$(printf '%s\n%s\n' "$GLIBC" "$NEED" | sort -V | head -1)" != "$NEED" ]; then
  echo "install.sh: this system has glibc $GLIBC; Session Lens needs glibc >= $NEED" >&2
  [ -n "${FORCE:-}" ] || { echo "install.sh: not installed (FORCE=1 installs anyway)" >&2; exit 1; }
fi

# the bundle: copy to a fresh folder, then swap it in (a running copy keeps its files)
mkdir -p "$PREFIX/lib" "$PREFIX/bin"
rm -rf "$LIB.new"
cp -a "$HERE/app" "$LIB.new"
rm -rf "$LIB.old"; [ -d "$LIB" ] && mv "$LIB" "$LIB.old"
mv "$LIB.new" "$LIB"; rm -rf "$LIB.old"
ln -sfn "../lib/session-lens/session-lens" "$PREFIX/bin/session-lens"

files=("bin/session-lens")
while IFS= read -r rel; do
  dest="$SHARE/$rel"
  mkdir -p "$(dirname "$dest")"
  if [ "$rel" = "applications/$APP_ID.desktop" ]; then
    # an absolute Exec, so the entry works even when DIR/bin is not on PATH
    sed -e "s|^Exec=session-lens |Exec=$PREFIX/bin/session-lens |" -e "s|^TryExec=session-lens$|TryExec=$PREFIX/bin/session-lens|" \
        "$HERE/share/$rel" > "$dest"
    chmod 644 "$dest"
  else
    install -m644 "$HERE/share/$rel" "$dest"
  fi
  files+=("share/$rel")
done < <(cd "$HERE/share" && find . -type f | sed 's|^\./||' | sort)
printf '%s\n' "${files[@]}" > "$MANIFEST"
refresh_caches

echo "Session Lens $(cat "$HERE/VERSION" 2>/dev/null || echo) installed in $PREFIX"
echo "  run: $PREFIX/bin/session-lens [PATH]"
case ":$PATH:" in *":$PREFIX/bin:"*) ;; *) echo "  ($PREFIX/bin is not on PATH)";; esac
