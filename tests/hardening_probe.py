"""Run one read face over one input in this process, under a memory cap; print a JSON line
with the exit code, the peak RSS and what was read.  Used by the hardening tests and by
``bench/fuzz.py`` (always in a subprocess)."""
from __future__ import annotations

import io
import json
import os
import resource
import sys
import contextlib


def main() -> int:
    face, path, cap_mb = sys.argv[1], sys.argv[2], int(sys.argv[3])
    extra = sys.argv[4:]
    if cap_mb:
        resource.setrlimit(resource.RLIMIT_AS, (cap_mb << 20, cap_mb << 20))
    from app.cli.main import main as cli
    argv = {"inspect": ["inspect", "--json"], "messages": ["messages", "--json"],
            "page": ["page", "--json", "--physical", "--limit", "1000000"], "export-logical": ["export"],
            "export-raw": ["export"], "list": ["list", "--json"], "fork": ["fork", "--json", "--preview"],
            "events": None}[face]
    out, err = io.StringIO(), io.StringIO()
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
        args = argv + [path] + extra
        if face.startswith("export"):
            kind = face.split("-")[1]
            args = ["export", path, f"--{kind}", extra[0], "--json"]
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
        out = o
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10
    res = {"rc": rc, "peak_mb": peak, "stderr": err.getvalue()[-300:]}
    text = out.getvalue()
    if seqs is not None:
        res["seqs"] = seqs
    elif face == "page" and rc == 0:
        res["seqs"] = [e["event"]["seq"] for e in json.loads(text)["events"] if "event" in e]
    elif face == "inspect" and rc == 0:
        res["events"] = json.loads(text).get("events")
    sys.__stdout__.write(json.dumps(res) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
