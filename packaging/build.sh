#!/usr/bin/env bash
# Build the Linux packages:  packaging/build.sh [VENV]
#   dist/session-lens-<version>-linux-x86_64.tar.gz   PyInstaller bundle + install.sh + desktop/metainfo/mime/icons
#   dist/session-lens_<version>_amd64.deb             the same bundle in /opt/session-lens, /usr/bin/session-lens
# PyInstaller is installed into VENV here (not by the bootstrap).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${1:-.venv}"
PY="$VENV/bin/python"
export LANG=C.UTF-8 QT_QPA_PLATFORM=offscreen
APP_ID=io.sessionlens.SessionLens
VERSION="$("$PY" -c 'import app; print(app.__version__)')"
ARCH=x86_64 DEB_ARCH=amd64
[ "$(uname -m)" = x86_64 ] || { echo "build: only x86_64 is supported (this is $(uname -m))" >&2; exit 1; }
NAME="session-lens-$VERSION-linux-$ARCH"
BUILD=build/package
mkdir -p dist "$BUILD"

SECONDS=0
"$PY" -m PyInstaller --version >/dev/null 2>&1 || "$PY" -m pip install -q --disable-pip-version-check pyinstaller
# icons are committed; regenerate them only when missing
[ -f "resources/icons/hicolor/512x512/apps/$APP_ID.png" ] || "$PY" packaging/make_icons.py

echo "build: PyInstaller bundle"
rm -rf "$BUILD/pyinstaller"
"$PY" -m PyInstaller --noconfirm --log-level WARN --distpath "$BUILD/pyinstaller/dist" \
      --workpath "$BUILD/pyinstaller/work" packaging/pyinstaller/session-lens.spec
BUNDLE="$BUILD/pyinstaller/dist/session-lens"
"$BUNDLE/session-lens" --version
# the newest glibc symbol any bundled binary needs (the build machine's libstdc++ etc. are bundled)
MIN_GLIBC="$(find "$BUNDLE" -type f \( -name '*.so*' -o -name session-lens \) -print0 | xargs -0 objdump -T 2>/dev/null \
             | grep -o 'GLIBC_2\.[0-9]*' | sed 's/GLIBC_//' | sort -uV | tail -1)"
[ -n "$MIN_GLIBC" ] || { echo "build: cannot determine the glibc the bundle needs (objdump from binutils?)" >&2; exit 1; }
echo "build: the bundle needs glibc >= $MIN_GLIBC"

# ------------------------------------------------------------------ shared data tree (share/)
stage_share() {   # $1: destination share/ folder
  local share="$1"
  install -Dm644 "resources/$APP_ID.desktop" "$share/applications/$APP_ID.desktop"
  install -Dm644 "resources/$APP_ID.metainfo.xml" "$share/metainfo/$APP_ID.metainfo.xml"
  install -Dm644 resources/mime/session-lens.xml "$share/mime/packages/session-lens.xml"
  (cd resources/icons && find hicolor -type f \( -name '*.png' -o -name '*.svg' \)) | while read -r f; do
    install -Dm644 "resources/icons/$f" "$share/icons/$f"
  done
}

# ------------------------------------------------------------------ tarball
echo "build: $NAME.tar.gz"
TSTAGE="$BUILD/tar/$NAME"
rm -rf "$BUILD/tar" && mkdir -p "$TSTAGE"
cp -a "$BUNDLE" "$TSTAGE/app"
stage_share "$TSTAGE/share"
install -m755 packaging/install.sh "$TSTAGE/install.sh"
echo "$VERSION" > "$TSTAGE/VERSION"
echo "$MIN_GLIBC" > "$TSTAGE/MIN_GLIBC"
cat > "$TSTAGE/README.txt" <<TXT
Session Lens $VERSION for Linux x86_64 (glibc >= $MIN_GLIBC)

  ./install.sh                      install for this user (~/.local) or, as root, into /usr/local
  ./install.sh --prefix DIR         install into DIR (DIR/bin/session-lens, DIR/share/...)
  ./install.sh --prefix DIR --uninstall
  ./app/session-lens [PATH]         run without installing

The app opens session.jsonl and session.jsonl.zstd files from the file manager once installed.
TXT
tar -C "$BUILD/tar" --owner=0 --group=0 --numeric-owner -czf "dist/$NAME.tar.gz" "$NAME"

# ------------------------------------------------------------------ .deb
DEB="session-lens_${VERSION}_$DEB_ARCH"
echo "build: $DEB.deb"
DSTAGE="$BUILD/deb/$DEB"
rm -rf "$BUILD/deb" && mkdir -p "$DSTAGE/opt" "$DSTAGE/usr/bin" "$DSTAGE/DEBIAN" "$DSTAGE/usr/share/doc/session-lens"
cp -a "$BUNDLE" "$DSTAGE/opt/session-lens"
ln -s /opt/session-lens/session-lens "$DSTAGE/usr/bin/session-lens"
stage_share "$DSTAGE/usr/share"
install -m644 packaging/debian/copyright "$DSTAGE/usr/share/doc/session-lens/copyright"
gzip -9n -c packaging/debian/changelog > "$DSTAGE/usr/share/doc/session-lens/changelog.gz"
SIZE_KB=$(du -sk --exclude=DEBIAN "$DSTAGE" | cut -f1)
sed -e "s/@VERSION@/$VERSION/" -e "s/@ARCH@/$DEB_ARCH/" -e "s/@INSTALLED_SIZE@/$SIZE_KB/" -e "s/@MIN_GLIBC@/$MIN_GLIBC/" \
    packaging/debian/control.in > "$DSTAGE/DEBIAN/control"
find "$DSTAGE" -type d -exec chmod 755 {} +
dpkg-deb --build --root-owner-group -Zxz "$DSTAGE" "dist/$DEB.deb" >/dev/null

echo "build: done in ${SECONDS} s"
echo "  bundle folder: $(du -sh "$BUNDLE" | cut -f1)"
ls -l "dist/$NAME.tar.gz" "dist/$DEB.deb" | awk '{printf "  %s: %.1f MB\n", $9, $5/1048576}'
