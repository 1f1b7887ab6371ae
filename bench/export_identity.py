"""Exports byte for byte: every format (raw, logical, Markdown, HTML, ZIP), plain and redacted, with the
redaction report and the raw export's ``.sha256``, written by this checkout and by another one (e.g. main),
over every fixture session (dsh, dsh-next), generated logs with secrets planted (v0 and v4, app/tools/plant.py's
planted words too), hostile logs and mutants of them.  Prints the count of files compared and every one
that differs; exit status 1 when one does.  A ZIP bundle's entries are dated at the export: its entry names
and their bytes are compared.  (tests/test_redact_quiet.py runs a smaller set in the suite.)

    python bench/export_identity.py --code /work/main [--work DIR] [--formats raw,logical,...]

Each checkout runs in a child process of its own, importing its own ``app`` (and its own built C module).
"""
from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
SHARED = REPO.parents[1] / "shared" / "fixtures" if (REPO.parents[1] / "shared").is_dir() else Path("/work/shared/fixtures")

# (word, secret) pairs: a secret put in about a third of the places the word was (escapes written as in JSON)
SECRETS = [(b"config", b"api_key=sk-abcdefghijklmnop1234"), (b" file", b" mail bob.smith@example.com file"),
           (b"src/", b"/home/alice/src/"), (b"Let ", b"Authorization: Bearer abcdefgh12345678 Let "),
           (b"cache", b"KEY: \\u0130token=\\u017fecret123 PASSWORD : hunter22 c:\\\\Users\\\\carol\\\\x"),
           (b"lazily", b"ghp_abcdefghijklmnopqrstuvwxyz0123 AKIAABCDEFGHIJKLMNOP xoxb-1234567890-abc"),
           (b"index", b"basic QWxhZGRpbjpvcGVuIHNlc2FtZQ== \\u212aey=abcdef glpat-abcdefghijklmnopqrstu"),
           (b"module", b"-----BEGIN RSA PRIVATE KEY-----\\nMIIEabc\\n-----END RSA PRIVATE KEY----- token=[REDACTED:x]"),
           (b"sorted", b"AIzaSyA1234567890abcdefghijklmnopqrstuv secret\\u003dabcdef1234 /Users/dave/x \\u0131"),
           (b"with", b"\\u001b[1mtok\\u001ben=abcdef \\u001bpassword=hunter2222 \\/home\\/eve\\/x ke\\ny: abcdef"),
           (b"then", "token=ab\u212acdef /home/\u00e9l\u00e8ve/x".encode())]

_CHILD = r"""
import hashlib, json, os, sys, zipfile
sys.path.insert(0, sys.argv[1])
from app.store.faces import open_reader
from app.store.export import export
from app.log.index.fastindex import load_rowscan_c
assert load_rowscan_c() is not None, "the C module of " + sys.argv[1] + " is not built"
jobs, out_dir = json.load(open(sys.argv[2])), sys.argv[3]
got = {}
for log, fmt, red in jobs:
    key = f"{log}|{fmt}|{int(red)}"
    out = os.path.join(out_dir, "out." + fmt)
    try:
        export(open_reader(log), fmt, out, redact=red, overwrite=True)
    except Exception as e:
        got[key] = "error: " + type(e).__name__ + ": " + str(e).replace(out_dir, "OUT")
        continue
    for suffix in ("", ".sha256", ".redaction.json"):
        f = out + suffix
        if os.path.exists(f):
            if fmt == "zip" and not suffix:     # (entries dated at the export: their names and bytes compared)
                with zipfile.ZipFile(f) as z:
                    data = json.dumps([(i.filename, hashlib.sha256(z.read(i)).hexdigest()) for i in z.infolist()])
                got[key] = hashlib.sha256(data.encode()).hexdigest()
            else:
                with open(f, "rb") as fh:
                    got[key + suffix] = hashlib.sha256(fh.read().replace(out_dir.encode(), b"OUT")).hexdigest()
            os.unlink(f)
print(json.dumps(got))
"""


def _planted(data: bytes, seed: int) -> bytes:
    hdr, rest = data.split(b"\n", 1)
    rng = random.Random(seed)
    for word, secret in SECRETS:
        parts = rest.split(word)
        rest = b"".join(p + (secret if rng.random() < 0.3 else word) for p in parts[:-1]) + parts[-1]
    return hdr + b"\n" + rest


def _sessions(base: Path) -> list[Path]:
    """Every JSONL file under ``base`` whose first line is a session header (as tests/fixtures_util's)."""
    out = []
    for p in sorted(base.rglob("*.jsonl")):
        with open(p, "rb") as f:
            first = f.readline()
        try:
            if json.loads(first).get("type") == "session":
                out.append(p)
        except (ValueError, AttributeError):
            pass
    return out


def corpus(work: Path, size: int) -> list[str]:
    """The logs compared: fixtures, generated logs with secrets planted, hostile logs and mutants."""
    from app.tools.hostile import deep_row, hostile_session, jsonl_mutants
    from app.tools.plant import PlantingSynth
    from app.tools.synth import SessionSynth, write_jsonl
    logs = [str(p) for p in _sessions(SHARED / "dsh") + _sessions(SHARED / "dsh-next")]
    gen = work / "logs"
    gen.mkdir(parents=True, exist_ok=True)
    planted = []
    for version, seed in ((0, 40), (0, 41), (4, 42), (4, 43)):        # (the generator writes v0 and v4)
        p = gen / f"plain-v{version}-{seed}.jsonl"
        write_jsonl(str(p), SessionSynth(seed, version=version), target_bytes=size)
        q = gen / f"secrets-v{version}-{seed}.jsonl"
        q.write_bytes(_planted(p.read_bytes(), seed))
        planted += [p, q]
    p = gen / "planting-v0.jsonl"
    write_jsonl(str(p), PlantingSynth(9), target_bytes=size)
    planted.append(p)
    for src in (planted[1], planted[5]):
        h = gen / f"hostile-{src.stem}.jsonl"
        h.write_bytes(hostile_session(src.read_bytes().splitlines(True), 1) + deep_row(10 ** 6, 100) + b"\n")
        planted.append(h)
    for k, (_name, data, _kept) in enumerate(jsonl_mutants(planted[1].read_bytes()[:size // 2], 5, 10)):
        m = gen / f"mutant-{k}.jsonl"
        m.write_bytes(data)
        planted.append(m)
    return logs + [str(p) for p in planted]


def run(code: Path, jobs: list, work: Path) -> dict[str, str]:
    d = Path(tempfile.mkdtemp(dir=work, prefix="out-"))
    jf = d / "jobs.json"
    jf.write_text(json.dumps(jobs))
    got = subprocess.run([sys.executable, "-c", _CHILD, str(code), str(jf), str(d)], capture_output=True, text=True)
    if got.returncode:
        sys.exit(f"{code}: the child failed:\n{got.stderr[-3000:]}")
    shutil.rmtree(d)
    return json.loads(got.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--code", required=True, help="the other checkout (e.g. /work/main), its C module built")
    ap.add_argument("--work", help="scratch folder (default: a new temporary one, removed after)")
    ap.add_argument("--formats", default="raw,logical,markdown,html,zip")
    ap.add_argument("--size", type=int, default=400_000, help="bytes of each generated log")
    a = ap.parse_args(argv)
    work = Path(a.work or tempfile.mkdtemp(prefix="export-identity-"))
    work.mkdir(parents=True, exist_ok=True)
    logs = corpus(work, a.size)
    jobs = [(log, fmt, red) for log in logs for fmt in a.formats.split(",") for red in (False, True)]
    t = time.perf_counter()
    new = run(REPO, jobs, work)
    old = run(Path(a.code), jobs, work)
    bad = sorted(k for k in set(new) | set(old) if new.get(k) != old.get(k))
    for k in bad:
        print(f"DIFFERS {k}: {new.get(k)} (this) vs {old.get(k)} ({a.code})")
    errors = sum(v.startswith("error") for v in new.values())
    print(f"{len(logs)} logs, {len(jobs)} exports, {len(new)} files (errors, the same on both sides: {errors}): "
          f"{len(bad)} differ; {time.perf_counter() - t:.0f} s")
    if not a.work:
        shutil.rmtree(work)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
