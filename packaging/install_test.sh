#!/usr/bin/env bash
# The README's Python install paths, checked:  packaging/install_test.sh [VENV]
#  1. a wheel from `python -m build` (sdist, then the wheel built from it) with the C compiler: the wheel
#     carries the C row scanner and its stamp;
#  2. the same with no C compiler (CC=false): the build warns and goes on, the wheel has no C scanner;
#  3. `pip install .` from the checkout into a fresh venv (what `pipx install .` runs);
#  4. `pipx install .` itself (pipx from the registry; its venv gets every dependency, ~30 s from local wheels);
#  each installed into a fresh venv (--no-deps; the dependencies come from VENV's site-packages through a
#  .pth, so no Qt wheel is downloaded), then, from a folder outside the checkout: `session-lens --version`
#  names the scanner expected, `doctor --json` reports the same scanner, the venv's Python and every worker
#  kind answering from a child process, `index` of the installed demo's zstd session uses that scanner,
#  and `gui --screenshot --wait-index` opens the installed demo store and indexes it in a child process.
# Needs the `build` package from the registry (installed into a temporary venv). KEEP=1 keeps the folder.
set -euo pipefail
cd "$(dirname "$0")/.."
SRC="$PWD"
VENV="${1:-.venv}"
PY="$(cd "$VENV/bin" && pwd)/python"
export LANG=C.UTF-8 QT_QPA_PLATFORM=offscreen
fail() { echo "install-test: FAIL: $*" >&2; exit 1; }
ok() { echo "install-test: ok: $*"; }
T="$(mktemp -d /tmp/session-lens-installtest.XXXXXX)"
[ -n "${KEEP:-}" ] && echo "install-test: keeping $T" || trap 'rm -rf "$T"' EXIT
DEPS="$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
export SESSION_LENS_CONFIG_DIR="$T/config" SESSION_LENS_CACHE_DIR="$T/cache" SESSION_LENS_LOG_DIR="$T/logs" \
       SESSION_LENS_DATA_DIR="$T/data" SESSION_LENS_NO_TOUR=1 SESSION_LENS_NO_CRASH_DIALOG=1
unset PYTHONPATH

"$PY" -m venv "$T/builder"
"$T/builder/bin/pip" install -q --disable-pip-version-check build > "$T/builder.log" 2>&1 || { cat "$T/builder.log"; fail "pip install build"; }

venv_with() {   # venv_with NAME: a fresh venv seeing VENV's dependencies
  "$PY" -m venv "$T/$1"
  local site; site="$("$T/$1/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  echo "$DEPS" > "$site/_session_lens_deps.pth"
}

check() {       # check NAME SCANNER: the installed app in venv NAME runs with row scanner SCANNER
  local name="$1" want="$2" bin="$T/$1/bin/session-lens"
  [ -x "$bin" ] || fail "$name: no session-lens script"
  (cd "$T" && "$bin" --version) > "$T/$name.version" || fail "$name: --version"
  grep -qx "session-lens [0-9.]* (row scanner: $want)" "$T/$name.version" || fail "$name: --version says $(cat "$T/$name.version")"
  (cd "$T" && "$bin" doctor --json) > "$T/$name.doctor.json" || fail "$name: doctor"
  local demo
  demo="$(cd "$T" && "$T/$name/bin/python" - "$T/$name.doctor.json" "$want" "$T/$name/bin/python" <<'PY'
import json, sys
from pathlib import Path
rep = json.load(open(sys.argv[1]))
want, python = sys.argv[2], sys.argv[3]
assert rep["scanner"] == want, rep["scanner"]
import os
assert os.path.realpath(rep["python"]["executable"]) == os.path.realpath(python), rep["python"]["executable"]
assert rep["python"]["build"] == "installed", rep["python"]["build"]
bad = [w for w in rep["workers"] if not w["answered"]]
assert not bad, bad
assert len({w["pid"] for w in rep["workers"]}) == len(rep["workers"])
assert all(w["ppid"] == rep["pid"] != w["pid"] for w in rep["workers"]), rep["workers"]     # children of doctor
import app.store.demo as d
demo = d.shipped_demo()
assert "site-packages" in str(demo), demo                     # the wheel's copy, not the checkout
print(sorted(demo.rglob("*.jsonl.zstd"))[0])
PY
)" || fail "$name: doctor --json: $(cat "$T/$name.doctor.json" | head -c 600)"
  (cd "$T" && "$bin" index "$demo" --json) > "$T/$name.index.json" || fail "$name: index"
  grep -q "\"scanner\": \"$want\"" "$T/$name.index.json" || fail "$name: index used $(grep -o '"scanner": "[a-z]*"' "$T/$name.index.json")"
  (cd "$T" && SESSION_LENS_CACHE_DIR="$T/cache-gui-$name" "$bin" gui --screenshot "$T/$name.png" --wait-index) > "$T/$name.gui.log" 2>&1 || { cat "$T/$name.gui.log"; fail "$name: gui"; }
  grep -q "^index: ready, mode process" "$T/$name.gui.log" || { cat "$T/$name.gui.log"; fail "$name: the demo's index not built by a child"; }
  [ -s "$T/$name.png" ] || fail "$name: no screenshot"
  ok "$name: --version, doctor (every worker kind answered), index and the demo window, row scanner $want"
}

for mode in c nocc; do
  rm -rf "$T/src-$mode" && mkdir "$T/src-$mode"
  git -C "$SRC" ls-files -z | (cd "$SRC" && xargs -0 cp --parents -t "$T/src-$mode")   # the tracked tree only
  if [ "$mode" = c ]; then cc=(); else cc=(env CC=false); fi
  "${cc[@]}" "$T/builder/bin/python" -m build -o "$T/dist-$mode" "$T/src-$mode" > "$T/build-$mode.log" 2>&1 \
    || { tail -30 "$T/build-$mode.log"; fail "python -m build ($mode)"; }
  whl="$(ls "$T/dist-$mode"/*.whl)"
  unzip -l "$whl" > "$T/wheel-$mode.txt"      # (a file: grep -q would end unzip's pipe early under pipefail)
  if [ "$mode" = c ]; then
    grep -q 'app/log/index/rowscan_c\..*\.so' "$T/wheel-$mode.txt" || fail "the wheel built with a compiler has no C scanner"
    grep -q 'app/log/index/rowscan_c\.stamp' "$T/wheel-$mode.txt" || fail "the wheel's C scanner has no stamp"
  else
    grep -q 'building extension "app.log.index.rowscan_c" failed' "$T/build-$mode.log" || fail "no compiler warning"
    ! grep -q 'rowscan_c\..*\.so' "$T/wheel-$mode.txt" || fail "a C scanner in the wheel built without a compiler"
  fi
  ok "python -m build ($mode): $(basename "$whl"), $(du -k "$whl" | cut -f1) KiB"
  venv_with "venv-$mode"
  "$T/venv-$mode/bin/pip" install -q --disable-pip-version-check --no-deps "$whl" > "$T/pip-$mode.log" 2>&1 || { cat "$T/pip-$mode.log"; fail "pip install wheel ($mode)"; }
  check "venv-$mode" "$([ "$mode" = c ] && echo c || echo python)"
done

# pip install . (what pipx install . does: its own venv, the project built from the folder)
venv_with venv-pip
"$T/venv-pip/bin/pip" install -q --disable-pip-version-check --no-deps "$T/src-c" > "$T/pip-dot.log" 2>&1 || { cat "$T/pip-dot.log"; fail "pip install ."; }
check venv-pip c

# pipx install . (pipx from the registry into the builder venv; its own venv with every dependency installed)
"$T/builder/bin/pip" install -q --disable-pip-version-check pipx > "$T/pipx-get.log" 2>&1 || { cat "$T/pipx-get.log"; fail "pip install pipx"; }
PIPX_HOME="$T/pipx" PIPX_BIN_DIR="$T/pipx-bin" PIPX_MAN_DIR="$T/pipx-man" "$T/builder/bin/pipx" install "$T/src-c" \
  > "$T/pipx.log" 2>&1 || { cat "$T/pipx.log"; fail "pipx install ."; }
[ "$(readlink -f "$T/pipx-bin/session-lens")" = "$(readlink -f "$T/pipx/venvs/session-lens/bin/session-lens")" ] \
  || fail "pipx put no session-lens on its bin folder"
check pipx/venvs/session-lens c
ok "every install path"
