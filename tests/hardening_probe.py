"""Run one read face over one input in this process, under a memory cap; print a JSON line
with the exit code, the peak RSS and what was read.  Used by the hardening tests and by
``bench/fuzz.py`` (always in a subprocess)."""
from __future__ import annotations

import io
import json
import resource
import sys
import contextlib


def _peak_mb() -> int:
    """Peak RSS of this process: VmHWM (reset at exec), else getrusage (which on Linux keeps the
    high-water mark of the forking parent's pages across exec)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) >> 10
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10


ARGV = {"inspect": ["inspect", "--json"], "messages": ["messages", "--json"],
        "page": ["page", "--json", "--physical", "--limit", "1000000"], "list": ["list", "--json"],
        "fork": ["fork", "--json", "--preview"]}


def run_face(face: str, path: str, extra: list) -> dict:
    """One face over ``path`` in this process: {rc, peak_mb, stderr, [seqs|events]}."""
    from app.cli.main import main as cli
    err = io.StringIO()
    text = ""
    seqs = None
    if face == "events":          # every event the forward reader yields (the reference for 'kept')
        from app.store.faces import open_reader
        try:
            r = open_reader(path)
            seqs = [ev.seq for ev in r.iter_events()]
            rc = 0
        except Exception as e:      # noqa: BLE001
            rc, err = 3, io.StringIO(f"{type(e).__name__}: {e}")
    else:
        if face.startswith("export"):
            args = ["export", path, f"--{face.split('-')[1]}", f"{extra[0]}.{face}", "--json"]
        else:
            args = ARGV[face] + [path]      # (EXTRA is the export's output: another face given it refused to run)

        class _Out(io.StringIO):
            buffer = None
        o = _Out()
        with contextlib.redirect_stdout(o), contextlib.redirect_stderr(err):
            try:
                rc = cli(args)
            except SystemExit as e:
                rc = e.code
            except MemoryError:
                rc = 4
        text = o.getvalue()
    res = {"face": face, "rc": rc, "peak_mb": _peak_mb(), "stderr": err.getvalue()[-300:]}
    if seqs is not None:
        res["seqs"] = seqs
    elif face == "page" and rc == 0:
        res["seqs"] = [e["event"]["seq"] for e in json.loads(text)["events"] if "event" in e]
    elif face == "inspect" and rc == 0:
        res["events"] = json.loads(text).get("events")
    return res


def main() -> int:
    """``hardening_probe.py FACE[,FACE…] PATH CAP_MB [EXTRA…]``: one JSON line per face (peak
    RSS so far); the address space is capped at CAP_MB for the whole run."""
    faces, path, cap_mb = sys.argv[1].split(","), sys.argv[2], int(sys.argv[3])
    extra = sys.argv[4:]
    if cap_mb:
        resource.setrlimit(resource.RLIMIT_AS, (cap_mb << 20, cap_mb << 20))
    for face in faces:
        sys.__stdout__.write(json.dumps(run_face(face, path, extra)) + "\n")
        sys.__stdout__.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
