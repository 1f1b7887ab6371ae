#!/usr/bin/env python3
"""Big generated logs (4 GB, 16 GB) at disk speed: a synth base, extended by re-sequenced copies of its body.

    python bench/bigfile.py OUT --size 16GB [--version 4] [--base-size 1GB]

The synth (``app/tools/synth.py``) writes about 20 MB/s, so a 16 GB log would take a quarter of an hour of
CPU.  Instead a base log is generated once (``--base-size``, default 1 GB; kept beside OUT as
``base-<MB>MB-v<N>.jsonl``) and cut where a turn begins right
after a turn that compacted (so the surface is ``[system head (v4)], summary, kept nodes``).  The copied body
C runs from the first such turn start S to the last one, E1, where the base now ends.  Copy k (k = 1, 2, …)
is C with

* every seq, ``seq0`` and seq reference ``r >= S`` moved by ``k * (E1 - S)``; a reference ``r < S`` (the
  surface at S: the head and the summary a later compaction replaces from) moved to the node in the same
  place of the surface at E1 of copy k - 1 (positions clamped; first and last kept as first and last);
* every ``time``/``time0`` (top level, packed rows, v4 stream records) moved by ``k * (time(E1) - time(S))``;
* every ``data.turn`` moved by ``k * (turn(E1) - turn(S))``;
* message, retry, request and compaction ids and tool call ids given a per-copy tag (kept unique).

So the log stays contiguous, turns well formed, compactions replace nodes on the surface, and references
point backwards.  Rows that carry seq references (``sourceEventSeqs``, ``surfaceOp`` ranges, compaction
and title rows: about a tenth) are decoded and re-encoded; every other row is rewritten by one regex pass
over 32 MB blocks.  The output stops after the first ``turn/end`` past the size asked for.
The base's bookkeeping (S, E1, both surfaces, times, turns, offsets) is kept in ``BASE.ext.json``.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import msgspec  # noqa: E402

BLOCK = 32 << 20

# every row's head (the synth writes the envelope keys in this order); a stream record's time
_HEAD_AT = re.compile(rb'\{"type":"[^"\n]*","seq0?":(\d+),"time0?":(\d+),"data":\{(?:"turn":(\d+))?')
_AFTER_TIME = re.compile(rb'0?":(\d+)')
_TIME = re.compile(rb'"(time0?)":(\d+)')
_IDS = re.compile(rb'(?:"id|Id)":"')           # the values of "id" and of every "…Id" key (call ids too)
_ID_KEYS = (b'"id":"', b'Id":"')
_SES = re.compile(rb'"sourceEventSeqs":\[([0-9,\[\]]*)\]')
_NUM = re.compile(rb'\d+')
# rows with seq references or turns outside the head: decoded (a marker inside a text only costs a decode)
_SLOW = (b'"sourceEventSeq":', b'"surfaceOp":{', b'"messageSeqs"', b'"compactionId"')
_TURN_END = re.compile(rb'\{"type":"turn/end","seq":\d+,[^\n]*\n')

_dec = msgspec.json.Decoder()
_enc = msgspec.json.Encoder()


def _surface(synth) -> list[int]:
    """The synth's model surface now (v4: the system head first, v0 seqs mapped to v4 seqs)."""
    nodes = list(synth._nodes)
    v4 = synth._v4
    if v4 is None:
        return nodes
    out = [v4.head] if v4.head is not None else []
    return out + [v4.map[s] for s in nodes]


def make_base(path: Path, size: int, version: int, seed: int = 42) -> dict:
    """Generate the base log with the synth and cut it at the last turn start that follows a compaction;
    write and return its bookkeeping (``path.ext.json``)."""
    from app.tools.synth import SessionSynth, write_jsonl
    from app.tools.synth_items import DeltaRun
    synth = SessionSynth(seed=seed, version=version)
    marks: list[dict[str, Any]] = []
    state = {"compacted": False}
    orig = synth.turn_items

    def turn_items():
        seq0, nodes = synth.next_seq, _surface(synth)
        items = orig()
        first = items[0]
        marks.append({"seq": seq0, "time": first.ts[0] if type(first) is DeltaRun else first["time"],
                      "turn": synth.turn, "surface": nodes, "afterCompaction": state["compacted"]})
        state["compacted"] = any(type(it) is not DeltaRun and it["type"] == "compaction/start" for it in items)
        return items

    synth.turn_items = turn_items
    tmp = path.with_name(path.name + ".part")
    t = time.perf_counter()
    write_jsonl(str(tmp), synth, target_bytes=size)
    cuts = [m for m in marks if m["afterCompaction"]]
    if len(cuts) < 2:
        tmp.unlink()
        raise SystemExit(f"{path}: fewer than two compactions in {size} bytes: a bigger base is needed")
    s, e1 = cuts[0], cuts[-1]
    with open(tmp, "r+b") as f:
        data = f.read()
        offs = []
        for m in (s, e1):
            hit = re.search(rb'\n\{"type":"[^"]+","seq":%d,' % m["seq"], data)
            assert hit, m["seq"]
            offs.append(hit.start() + 1)
        del data
        f.truncate(offs[1])
    meta = {"version": version, "seed": seed, "start": s["seq"], "end": e1["seq"], "startOffset": offs[0],
            "endOffset": offs[1], "startTime": s["time"], "endTime": e1["time"], "startTurn": s["turn"],
            "endTurn": e1["turn"], "startSurface": s["surface"], "endSurface": e1["surface"]}
    Path(str(path) + ".ext.json").write_text(json.dumps(meta))
    os.replace(tmp, path)
    print(f"  base {path.name}: {offs[1] / 1e6:.0f} MB, seqs 0..{e1['seq'] - 1}, copied body {s['seq']}.."
          f"{e1['seq'] - 1} ({(offs[1] - offs[0]) / 1e6:.0f} MB) in {time.perf_counter() - t:.1f} s", flush=True)
    return meta


class _Copy:
    """The rewrite of the body for copy ``k``."""

    def __init__(self, meta: dict, k: int):
        self.k = k
        s, e1 = meta["start"], meta["end"]
        n = e1 - s
        self.s = s
        self.d_seq = k * n
        self.d_time = k * (meta["endTime"] - meta["startTime"])
        self.d_turn = k * (meta["endTurn"] - meta["startTurn"])
        self.v4 = meta["version"] >= 2
        p, q = meta["startSurface"], meta["endSurface"]
        qk = [x + (k - 1) * n if x >= s else x for x in q]
        self.qk = qk
        self.prefix = {}                      # a node of the surface at S -> its place in the surface at E1
        for i, x in enumerate(p):
            self.prefix[x] = len(q) - 1 if i == len(p) - 1 else min(i, len(q) - 1)
        self.tag = b"x%d-" % k
        self.ids = b"\\g<0>" + self.tag

    def ref(self, v: Any) -> Any:
        if type(v) is not int:
            return v
        if v >= self.s:
            return v + self.d_seq
        j = self.prefix.get(v)
        return v if j is None else self.qk[j]

    def refs(self, xs: Any, ranges: bool) -> Any:
        if not isinstance(xs, list):
            return xs
        d, lo = self.d_seq, self.s
        try:
            if min(xs) >= lo:                     # plain seqs, all in the copied body
                return [x + d for x in xs]
        except (TypeError, ValueError):
            pass
        if all(type(x) is int and x >= lo or type(x) is list and x and type(x[0]) is int and x[0] >= lo
               for x in xs):                      # all in the copied body: moved as they are
            return [x + d if type(x) is int else [y + d for y in x] for x in xs]
        flat: list = []
        for x in xs:
            if isinstance(x, list) and len(x) == 2 and all(type(y) is int for y in x):
                flat.extend(range(x[0], x[1] + 1))
            else:
                flat.append(x)
        mapped: list = []
        i = 0
        while i < len(flat):                  # a run of nodes of the surface at S: every node between
            j = i                             # the places of its ends in the surface at E1 (a replace
            while j < len(flat) and flat[j] in self.prefix:    # cites every node it shadows)
                j += 1
            if j > i:
                a, b = self.prefix[flat[i]], self.prefix[flat[j - 1]]
                mapped.extend(self.qk[a:b + 1] if a <= b else [self.qk[a]])
                i = j
            else:
                mapped.append(self.ref(flat[i]))
                i += 1
        out: list = []
        seen: set = set()
        for x in mapped:
            if x not in seen:
                seen.add(x)
                out.append(x)
        if ranges:
            from app.tools.synth_v4 import encode_seq_ranges
            return encode_seq_ranges(out)
        return out

    def _time(self, m: re.Match) -> bytes:
        return b'"%s":%d' % (m.group(1), int(m.group(2)) + self.d_time)

    def slow(self, row: bytes) -> bytes:
        o = _dec.decode(row)
        for key in ("seq", "seq0"):
            if type(o.get(key)) is int:
                o[key] += self.d_seq
        if "sourceEventSeqs" in o:
            o["sourceEventSeqs"] = self.refs(o["sourceEventSeqs"], self.v4)
        op = o.get("surfaceOp")
        if isinstance(op, dict):
            for key in ("start", "end", "startSeq", "endSeq"):
                if key in op:
                    op[key] = self.ref(op[key])
        d = o.get("data")
        if isinstance(d, dict):
            if type(d.get("turn")) is int:
                d["turn"] += self.d_turn
            r = d.get("shadowedRange")
            if isinstance(r, dict):
                for key in ("start", "end"):
                    if key in r:
                        r[key] = self.ref(r[key])
            for key in ("shadowedSeqs", "messageSeqs"):
                if key in d:
                    d[key] = self.refs(d[key], False)
            if "sourceEventSeq" in d:
                d["sourceEventSeq"] = self.ref(d["sourceEventSeq"])
        return _TIME.sub(self._time, _enc.encode(o))

    def _tagged(self, row: bytes) -> bytes:
        return _IDS.sub(self.ids, row)

    def _scan(self, data: bytes, lo: int, hi: int, edits: list) -> None:
        """Edits for the rows with no seq references in ``data[lo:hi]`` (``data[lo]`` is the newline
        before the first; ``hi`` the end or the newline before the next rewritten row)."""
        add = edits.append
        i, d_seq, d_time, d_turn = lo, self.d_seq, self.d_time, self.d_turn
        find, head = data.find, _HEAD_AT.match
        while i < hi and i + 1 < len(data):       # each row's head: seq, time, data.turn
            m = head(data, i + 1)
            if m is None:
                raise ValueError(f"unexpected row head at byte {i + 1}: {data[i + 1:i + 80]!r}")
            add((m.start(1), m.end(1), b"%d" % (int(m.group(1)) + d_seq)))
            add((m.start(2), m.end(2), b"%d" % (int(m.group(2)) + d_time)))
            if m.group(3) is not None:
                add((m.start(3), m.end(3), b"%d" % (int(m.group(3)) + d_turn)))
            i = find(b"\n", m.end())
            if i < 0:
                break
        if self.v4:                               # stream records' times
            j = find(b'","time', lo, hi)
            while j >= 0:
                m = _AFTER_TIME.match(data, j + 7)
                if m is not None:
                    add((m.start(1), m.end(1), b"%d" % (int(m.group(1)) + d_time)))
                j = find(b'","time', j + 7, hi)
        tag = self.tag                            # ids: the tag before the value
        for needle in _ID_KEYS:
            n = len(needle)
            j = find(needle, lo, hi)
            while j >= 0:
                add((j + n, j + n, tag))
                j = find(needle, j + n, hi)

    def _ses(self, m: re.Match) -> bytes:
        return b"%d" % (int(m.group(0)) + self.d_seq)

    def block(self, data: bytes) -> bytes:
        """Rewrite whole rows (``data`` ends with a newline): one scan per needle (``bytes.find``) and
        the edits spliced in one join; rows with seq references are decoded and re-encoded."""
        data = b"\n" + data
        slow = set()
        for marker in _SLOW:
            i = data.find(marker)
            while i >= 0:
                slow.add(data.rfind(b"\n", 0, i))
                i = data.find(marker, data.index(b"\n", i))
        edits: list = []
        i = data.find(b'"sourceEventSeqs":[')     # all in the copied body: moved in place
        while i >= 0:
            a = data.rfind(b"\n", 0, i)
            m = _SES.match(data, i)
            if a not in slow:
                if m is not None and min(map(int, _NUM.findall(m.group(1))), default=-1) >= self.s:
                    edits.append((m.start(1), m.end(1), _NUM.sub(self._ses, m.group(1))))
                else:
                    slow.add(a)
            i = data.find(b'"sourceEventSeqs":[', i + 19)
        edits = [e for e in edits if data.rfind(b"\n", 0, e[0]) not in slow]
        prev = 0
        for a in sorted(slow):
            b = data.index(b"\n", a + 1)
            self._scan(data, prev, a, edits)
            edits.append((a + 1, b, self._tagged(self.slow(data[a + 1:b]))))
            prev = b
        self._scan(data, prev, len(data), edits)
        edits.sort()
        out = []
        at = 1
        for s, e, rep in edits:
            out.append(data[at:s])
            out.append(rep)
            at = e
        out.append(data[at:])
        return b"".join(out)


def extend(base: Path, out: Path, size: int) -> dict:
    """``out``: the base followed by re-sequenced copies of its body until ``size`` bytes, cut after the
    first ``turn/end`` past it.  Written beside ``out`` and renamed into place."""
    meta = json.loads(Path(str(base) + ".ext.json").read_text())
    tmp = out.with_name(out.name + ".part")
    t0 = time.perf_counter()
    c0 = time.process_time()
    copies = 0
    with open(base, "rb") as src, open(tmp, "wb") as dst:
        left = meta["endOffset"]                  # the base as it is (it ends at E1)
        try:
            while left:
                got = os.copy_file_range(src.fileno(), dst.fileno(), left)
                if not got:
                    break
                left -= got
        except (AttributeError, OSError):
            src.seek(0)
            dst.seek(0)
            dst.truncate()
            shutil.copyfileobj(src, dst, 8 << 20)
        dst.seek(0, os.SEEK_END)
        written = dst.tell()
        done = written >= size
        k = 0
        while not done:
            k += 1
            copy = _Copy(meta, k)
            at, end = meta["startOffset"], meta["endOffset"]
            while at < end and not done:
                src.seek(at)
                data = src.read(min(BLOCK, end - at))
                if at + len(data) < end:
                    data = data[:data.rindex(b"\n") + 1]
                at += len(data)
                chunk = copy.block(data)
                if written + len(chunk) >= size:
                    m = _TURN_END.search(chunk, max(0, size - written - 1))
                    if m is not None:
                        chunk = chunk[:m.end()]
                        done = True
                dst.write(chunk)
                written += len(chunk)
            copies = k
    os.replace(tmp, out)
    return {"bytes": out.stat().st_size, "copies": copies, "seconds": time.perf_counter() - t0,
            "cpuSeconds": time.process_time() - c0}


def ensure_big(path: Path, size: int, version: int, base_size: int = 1 << 30) -> Path:
    """``path`` of at least ``size`` bytes (format ``version``), extended from a cached synth base."""
    if path.exists() and path.stat().st_size > 0:
        return path
    base = path.parent / f"base-{base_size >> 20}MB-v{version}.jsonl"
    if not (base.exists() and Path(str(base) + ".ext.json").exists()):
        make_base(base, base_size, version)
    st = extend(base, path, size)
    print(f"  extended {path.name}: {st['bytes'] / 1e6:.0f} MB ({st['copies']} copies) in {st['seconds']:.1f} s "
          f"({st['cpuSeconds']:.1f} s CPU)", flush=True)
    return path


def main() -> None:
    from run import parse_size
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--size", default="4GB")
    ap.add_argument("--version", type=int, default=4)
    ap.add_argument("--base-size", default="1GB")
    a = ap.parse_args()
    ensure_big(Path(a.out), parse_size(a.size), a.version, parse_size(a.base_size))


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    main()
