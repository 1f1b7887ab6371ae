#!/usr/bin/env bash
# Test the built packages:  packaging/package_test.sh [VENV]
#  1. unpack dist/session-lens-<v>-linux-x86_64.tar.gz, install it with install.sh into a temporary prefix
#  2. check the installed layout, validate the installed desktop entry and metainfo, check the MIME database
#     maps session.jsonl / *.jsonl.zstd to our types, and that no bundled library has an unresolved dependency
#     (packaging/bundle_libs.sh)
#  3. launch the INSTALLED binary (clean environment, empty HOME, offscreen) on the demo store and on a
#     .jsonl.zstd file passed the way the desktop entry does (session-lens FILE), with --screenshot; fail when
#     the PNG is missing, empty or one flat colour; also under Xvfb (xcb) when xvfb-run exists; the seq index
#     of the opened file must be built by the binary run as its own child process (gui --wait-index), and every
#     worker kind of the one launcher must answer from a child process of the binary (doctor --json); scrolling
#     while a whole-log find runs keeps the event loop's p99 lag within 1.5x of the development app's
#     (app/ui/probe.py, alternating runs, medians; PROBE_RUNS, PROBE_SECONDS, PROBE_SIZE)
#  4. dpkg-deb --info / --contents checks of dist/session-lens_<v>_amd64.deb, and run its binary unpacked
# Prints sizes and start-up times.  KEEP=1 keeps the temporary folder; SHOT_DIR=DIR keeps the screenshots.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${1:-.venv}"
PY="$VENV/bin/python"
export LANG=C.UTF-8
APP_ID=io.sessionlens.SessionLens
VERSION="$("$PY" -c 'import app; print(app.__version__)')"
NAME="session-lens-$VERSION-linux-x86_64"
TAR="dist/$NAME.tar.gz"
DEB="dist/session-lens_${VERSION}_amd64.deb"
SIZES=(16 32 48 64 128 256 512)
fail() { echo "package-test: FAIL: $*" >&2; exit 1; }
ok() { echo "package-test: ok: $*"; }
[ -f "$TAR" ] || fail "$TAR is missing (run make package)"
[ -f "$DEB" ] || fail "$DEB is missing (run make package)"

T="$(mktemp -d /tmp/session-lens-pkgtest.XXXXXX)"
[ -n "${KEEP:-}" ] && echo "package-test: keeping $T" || trap 'rm -rf "$T"' EXIT
mkdir -p "$T/unpack" "$T/home" "$T/out"
PREFIX="$T/prefix"

# ------------------------------------------------------------------ 1. install
tar -C "$T/unpack" -xzf "$TAR"
"$T/unpack/$NAME/install.sh" --prefix "$PREFIX" > "$T/install.log" || { cat "$T/install.log"; fail "install.sh"; }
BIN="$PREFIX/bin/session-lens"
[ -L "$BIN" ] && [ -x "$BIN" ] || fail "$BIN is not an executable symlink"
[ "$(readlink "$BIN")" = "../lib/session-lens/session-lens" ] || fail "bin/session-lens points at $(readlink "$BIN")"
ok "installed into a temporary prefix ($(readlink "$BIN"))"

# ------------------------------------------------------------------ 2. layout, validation, MIME, libraries
S="$PREFIX/share"
for f in "applications/$APP_ID.desktop" "metainfo/$APP_ID.metainfo.xml" mime/packages/session-lens.xml \
         "icons/hicolor/scalable/apps/$APP_ID.svg"; do
  [ -s "$S/$f" ] || fail "share/$f is missing"
done
for n in "${SIZES[@]}"; do [ -s "$S/icons/hicolor/${n}x${n}/apps/$APP_ID.png" ] || fail "icon ${n}x${n} missing"; done
grep -q "^Exec=$BIN %F$" "$S/applications/$APP_ID.desktop" || fail "installed desktop Exec is not $BIN %F"
if command -v desktop-file-validate >/dev/null; then
  out="$(desktop-file-validate "$S/applications/$APP_ID.desktop" 2>&1)" && [ -z "$out" ] || fail "desktop-file-validate: $out"
  ok "desktop-file-validate (installed entry)"
fi
if command -v appstreamcli >/dev/null; then
  appstreamcli validate --no-net "$S/metainfo/$APP_ID.metainfo.xml" > "$T/as.log" 2>&1 || { cat "$T/as.log"; fail "appstreamcli validate"; }
  ok "appstreamcli validate --no-net: $(tail -1 "$T/as.log" | sed 's/^[^A-Za-z]*//')"
fi
if command -v update-mime-database >/dev/null; then
  G="$S/mime/globs2"
  [ -f "$G" ] || fail "install.sh did not build the MIME database"
  grep -q ':application/x-dsh-session-jsonl:session.jsonl$' "$G" || fail "session.jsonl glob not in $G"
  grep -q ':application/x-dsh-session-jsonl:\*.jsonl$' "$G" || fail "*.jsonl glob not in $G"
  grep -q ':application/x-dsh-session-zstd:\*.jsonl.zstd$' "$G" || fail "*.jsonl.zstd glob not in $G"
  ok "MIME database: session.jsonl, *.jsonl, *.jsonl.zstd"
fi
if command -v update-desktop-database >/dev/null; then
  C="$S/applications/mimeinfo.cache"
  grep -q "^application/x-dsh-session-jsonl=.*$APP_ID.desktop" "$C" && grep -q "^application/x-dsh-session-zstd=.*$APP_ID.desktop" "$C" \
    || fail "mimeinfo.cache does not associate the session types with $APP_ID.desktop"
  ok "desktop database associates both session types with $APP_ID.desktop"
fi
LIB="$PREFIX/lib/session-lens"
# resolved as at run time: RPATH, then _internal/ (the bootloader's LD_LIBRARY_PATH), then the system
missing="$(bash packaging/bundle_libs.sh "$LIB")" || fail "unresolved libraries in the bundle:
$missing"
ok "every bundled library resolves (ldd with the bootloader's search path; libwayland-* are the system's)"

# ------------------------------------------------------------------ 3. launch the installed binary
# a clean environment: no venv on PATH, no PYTHONPATH, an empty HOME (no Harness home, no settings)
RUN_ENV=(env -i PATH=/usr/bin:/bin HOME="$T/home" LANG=C.UTF-8 XDG_RUNTIME_DIR="$T/home")
chmod 700 "$T/home"
evict() {   # drop the installed bundle from the page cache (only these files) for a cold start
  "$PY" - "$LIB" <<'PYX' || true
import os, sys
for d, _, fs in os.walk(sys.argv[1]):
    for f in fs:
        try:
            fd = os.open(os.path.join(d, f), os.O_RDONLY)
            os.fdatasync(fd)            # dirty pages (a fresh copy) are not dropped
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            os.close(fd)
        except OSError:
            pass
PYX
}
check_png() {   # $1: png; not missing, not empty, not a single flat colour
  [ -s "$1" ] || fail "screenshot $1 is missing or empty"
  QT_QPA_PLATFORM=offscreen "$PY" - "$1" <<'PYX' || fail "screenshot $1 is not a real picture"
import sys
from PySide6.QtGui import QGuiApplication, QImage
app = QGuiApplication([])
img = QImage(sys.argv[1])
assert not img.isNull() and img.width() >= 320 and img.height() >= 240, (img.width(), img.height())
colours = {img.pixel(x, y) for x in range(0, img.width(), 7) for y in range(0, img.height(), 7)}
assert len(colours) > 16, f"only {len(colours)} colours"
print(f"  {sys.argv[1]}: {img.width()}x{img.height()}, {len(colours)} colours sampled", file=sys.stderr)
PYX
}
ms() { date +%s%N | cut -c1-13; }
launch() {  # $1: label, $2: png, rest: args; prints wall ms
  local label="$1" png="$2"; shift 2
  local t0 t1
  t0=$(ms)
  "${RUN_ENV[@]}" "$@" > "$T/out/$label.log" 2>&1 || { cat "$T/out/$label.log"; fail "$label: the installed binary exited non-zero"; }
  t1=$(ms)
  check_png "$png"
  echo $((t1 - t0))
}
"${RUN_ENV[@]}" "$BIN" --version | grep -q "session-lens $VERSION" || fail "--version"
evict
t_ver_cold=$( { t0=$(ms); "${RUN_ENV[@]}" "$BIN" --version >/dev/null; echo $(( $(ms) - t0 )); } )
evict
# cold start: spawn to the main window shown (Qt's own log), the bundle dropped from the page cache first; medians of
# START_RUNS, alternating with the development app (python -m app, its Qt/msgspec/app files dropped likewise)
"$PY" bench/frozen_start.py "$BIN" --runs "${START_RUNS:-3}" --json > "$T/out/start.json" || fail "bench/frozen_start.py"
start_line="$("$PY" - "$T/out/start.json" <<'PYX'
import json, statistics, sys
r = json.load(open(sys.argv[1]))
p, d = r["median"]["packaged"], r["median"]["development"]
print(f"cold: first window {p['cold']['window']:.0f} ms (development app {d['cold']['window']:.0f} ms), first paint "
      f"{p['cold']['paint']:.0f} ms ({d['cold']['paint']:.0f}), --version {p['cold']['version']:.0f} ms "
      f"({d['cold']['version']:.0f}); warm window {p['warm']['window']:.0f} ms ({d['warm']['window']:.0f}); "
      f"load {statistics.median(r['load']):.1f}")
sys.exit(0 if p["cold"]["window"] < 2000 else 1)
PYX
)" || fail "cold start to first window (median; target < 2000 ms): $start_line"
ok "installed binary, demo store, $start_line"
warm=()
for i in 1 2 3; do
  warm+=("$(launch "demo-warm$i" "$T/out/demo-warm$i.png" QT_QPA_PLATFORM=offscreen "$BIN" gui --screenshot "$T/out/demo-warm$i.png")")
done
ok "installed binary, demo store, warm: ${warm[*]} ms"
ZST="$(find "$LIB" -name 'session.jsonl.zstd' | head -1)"
[ -n "$ZST" ] || fail "no .jsonl.zstd in the installed demo store"
cp "$ZST" "$T/home/opened-by-file-manager.jsonl.zstd"
t_file=$(launch zstd-file "$T/out/zstd-file.png" QT_QPA_PLATFORM=offscreen "$BIN" "$T/home/opened-by-file-manager.jsonl.zstd" --screenshot "$T/out/zstd-file.png" --wait-index)
ok "installed binary opens a .jsonl.zstd the way the desktop entry passes it (session-lens FILE): ${t_file} ms"
# the seq index is scanned by the frozen binary run as its own child (--session-lens-index-child), not in a thread
idx_line="$(grep '^index: ' "$T/out/zstd-file.log" || true)"
[[ "$idx_line" == "index: ready, mode process, "* ]] || { cat "$T/out/zstd-file.log"; fail "index of the .jsonl.zstd not built by a child process: ${idx_line:-no index line}"; }
ok "installed binary builds the seq index in a child process (${idx_line#index: ready, mode process, })"
# the index's row scanner: the C one in the bundle when set-up built it here (its stamp), else the interpreted one
want_scanner=python; [ -f app/log/index/rowscan_c.stamp ] && want_scanner=c
scanner="$("${RUN_ENV[@]}" "$BIN" index "$T/home/opened-by-file-manager.jsonl.zstd" --json | grep -o '"scanner": "[a-z]*"' | cut -d'"' -f4)"
[ "$scanner" = "$want_scanner" ] || fail "installed binary indexes with the ${scanner:-unknown} row scanner, not the $want_scanner one"
ok "installed binary indexes with the $scanner row scanner"
# every worker kind of the one launcher (app/store/childproc.py WORKERS) runs as a child process of the installed
# binary: doctor starts each (--session-lens-worker KIND --ping) and reports its pid and parent pid
"${RUN_ENV[@]}" "$BIN" doctor --json > "$T/out/doctor.json" || fail "doctor --json"
workers_line="$("$PY" - "$T/out/doctor.json" "$want_scanner" <<'PYX'
import json, sys
from app.store.childproc import WORKERS
rep = json.load(open(sys.argv[1]))
assert rep["python"]["build"] == "packaged", rep["python"]
assert rep["scanner"] == sys.argv[2], rep["scanner"]
ws = rep["workers"]
assert [w["kind"] for w in ws] == list(WORKERS), [w["kind"] for w in ws]
bad = [w for w in ws if not (w["answered"] and w["ppid"] == rep["pid"] != w["pid"])]
assert not bad, bad
assert len({w["pid"] for w in ws}) == len(ws)
print(", ".join(f"{w['kind']} {w['ms']:.0f} ms" for w in ws))
PYX
)" || fail "the installed binary's worker kinds: $(head -c 800 "$T/out/doctor.json")"
ok "installed binary runs every worker kind in a child process: $workers_line"
# scrolling while a whole-log find runs: the event loop's p99 lag in the installed binary within 1.5x of the
# development app's (same probe, app/ui/probe.py via SESSION_LENS_PROBE=scroll-find, same log, same run;
# alternating runs, medians of PROBE_RUNS each; offscreen: Qt's raster paint path, as xcb, without the flush)
PROBE_RUNS="${PROBE_RUNS:-3}" PROBE_SECONDS="${PROBE_SECONDS:-8}"
"$PY" bench/gen.py "$T/probe.jsonl" --size "${PROBE_SIZE:-30MB}" --seed 7 > /dev/null || fail "bench/gen.py"
PYABS="$(cd "$(dirname "$PY")" && pwd)/$(basename "$PY")"
PROBE_ENV=(QT_QPA_PLATFORM=offscreen SESSION_LENS_PROBE=scroll-find SESSION_LENS_PROBE_SECONDS="$PROBE_SECONDS")
probe() {   # $1: label, rest: the command; prints the probe's JSON
  "${RUN_ENV[@]}" "${PROBE_ENV[@]}" "${@:2}" gui "$T/probe.jsonl" > "$T/out/probe-$1.log" 2>&1 \
    || { tail -20 "$T/out/probe-$1.log"; fail "probe $1 exited non-zero"; }
  grep '^probe: ' "$T/out/probe-$1.log" | tail -1 | cut -c8-
}
: > "$T/probe-frozen.jsonl"; : > "$T/probe-dev.jsonl"
for i in $(seq "$PROBE_RUNS"); do
  probe "frozen$i" "$BIN" >> "$T/probe-frozen.jsonl"
  probe "dev$i" "$PYABS" -m app >> "$T/probe-dev.jsonl"
done
probe_line="$("$PY" - "$T/probe-frozen.jsonl" "$T/probe-dev.jsonl" <<'PYX'
import json, statistics, sys
fz, dev = ([json.loads(x) for x in open(p)] for p in sys.argv[1:3])
assert all(r["frozen"] for r in fz) and not any(r["frozen"] for r in dev), "frozen/dev mix-up"
for r in fz + dev:
    assert r["find_children_max"] >= 1 and r["finds_started"] >= 1 and r["scroll_steps"] > 0, r
f99, d99 = (statistics.median(r["p99_ms"] for r in rs) for rs in (fz, dev))
f50, d50 = (statistics.median(r["p50_ms"] for r in rs) for rs in (fz, dev))
ratio = f99 / max(d99, 0.001)
load = statistics.median(r["loadavg"] for r in fz + dev)
print(f"p99 {f99:.1f} ms (installed) vs {d99:.1f} ms (development), ratio {ratio:.2f} (target <= 1.5); "
      f"p50 {f50:.2f} vs {d50:.2f} ms; runs {[r['p99_ms'] for r in fz]} vs {[r['p99_ms'] for r in dev]}; "
      f"finds {sum(r['finds_started'] for r in fz)} vs {sum(r['finds_started'] for r in dev)}, each in a child; "
      f"load {load:.1f}")
sys.exit(0 if ratio <= 1.5 else 1)
PYX
)" || fail "scrolling during a whole-log find: $probe_line"
ok "scrolling during a whole-log find: $probe_line"
launch crash "$T/out/crash.png" QT_QPA_PLATFORM=offscreen SESSION_LENS_CRASH_TEST=1 "$BIN" gui --screenshot "$T/out/crash.png" >/dev/null
CRASH_LOG="$(find "$T/home/.local/state/session-lens/log" -name 'crash-*.log' 2>/dev/null | head -1)"
[ -n "$CRASH_LOG" ] && grep -q "in _crash_test" "$CRASH_LOG" && grep -q "^PySide6" "$CRASH_LOG" \
  || fail "the installed binary did not write a crash log under ~/.local/state/session-lens/log"
ok "installed binary reports an exception from a Qt slot: ${CRASH_LOG#"$T/home/"}"
if command -v xvfb-run >/dev/null; then
  t_xcb=$(launch xcb "$T/out/xcb.png" xvfb-run -a -s "-screen 0 1600x1000x24" env QT_QPA_PLATFORM=xcb "$BIN" gui --screenshot "$T/out/xcb.png")
  ok "installed binary under Xvfb (xcb platform plugin): ${t_xcb} ms"
fi
if [ -n "${SHOT_DIR:-}" ]; then mkdir -p "$SHOT_DIR"; cp "$T"/out/*.png "$SHOT_DIR"/; echo "package-test: screenshots copied to $SHOT_DIR"; fi

# ------------------------------------------------------------------ 4. the .deb
dpkg-deb --info "$DEB" > "$T/deb-info.txt" || fail "dpkg-deb --info"
NEED="$(cat "$T/unpack/$NAME/MIN_GLIBC")"
for want in "Package: session-lens" "Version: $VERSION" "Architecture: amd64" "Depends: libc6 (>= $NEED)"; do
  grep -q "^ $want" "$T/deb-info.txt" || fail "deb control lacks '$want'"
done
dpkg-deb --contents "$DEB" > "$T/deb-contents.txt" || fail "dpkg-deb --contents"
grep -Eq '^lrwxrwxrwx root/root .* \./usr/bin/session-lens -> /opt/session-lens/session-lens$' "$T/deb-contents.txt" \
  || fail "deb: /usr/bin/session-lens symlink"
for f in ./opt/session-lens/session-lens "./usr/share/applications/$APP_ID.desktop" "./usr/share/metainfo/$APP_ID.metainfo.xml" \
         ./usr/share/mime/packages/session-lens.xml "./usr/share/icons/hicolor/scalable/apps/$APP_ID.svg" \
         ./usr/share/doc/session-lens/copyright; do
  grep -q " $f\$" "$T/deb-contents.txt" || fail "deb lacks $f"
done
for n in "${SIZES[@]}"; do grep -q " ./usr/share/icons/hicolor/${n}x${n}/apps/$APP_ID.png$" "$T/deb-contents.txt" || fail "deb lacks icon $n"; done
grep -vq ' root/root ' "$T/deb-contents.txt" && fail "deb has files not owned by root/root"
grep -q "^Exec=session-lens %F$" <(dpkg-deb --fsys-tarfile "$DEB" | tar -xO "./usr/share/applications/$APP_ID.desktop") || fail "deb desktop Exec"
mkdir -p "$T/deb"
dpkg-deb -x "$DEB" "$T/deb"
"${RUN_ENV[@]}" "$T/deb/opt/session-lens/session-lens" --version | grep -q "session-lens $VERSION" || fail "deb binary --version"
t_deb=$(launch deb "$T/out/deb.png" QT_QPA_PLATFORM=offscreen SESSION_LENS_CACHE_DIR="$T/deb-cache" "$T/deb/opt/session-lens/session-lens" gui --screenshot "$T/out/deb.png" --wait-index)
grep -q '^index: ready, mode process, ' "$T/out/deb.log" || { cat "$T/out/deb.log"; fail "deb binary: index not built by a child process"; }
ok "deb: control, $(wc -l < "$T/deb-contents.txt") entries owned by root/root, unpacked binary renders and indexes (${t_deb} ms)"

# ------------------------------------------------------------------ summary
echo
echo "package-test: PASS"
printf '  %-50s %s\n' "bundle folder (installed):" "$(du -sh "$LIB" | cut -f1)" \
  "tarball $(basename "$TAR"):" "$(du -h "$TAR" | cut -f1)" \
  "deb $(basename "$DEB"):" "$(du -h "$DEB" | cut -f1)" \
  "needs glibc >=" "$NEED" \
  "--version, cold:" "${t_ver_cold} ms" \
  "start-up (installed vs development, medians):" "$start_line" \
  "demo store to screenshot, warm:" "${warm[*]} ms" \
  ".jsonl.zstd file to screenshot:" "${t_file} ms"
echo "  (a --screenshot run includes 0.45 s of fixed settle delays after the tail page is shown)"
