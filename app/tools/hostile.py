"""Generators of hostile inputs (tests, ``bench/fuzz.py``): markup and control characters in
log text, and mutants of real logs (truncations, flips, garbage, deep nesting, huge strings,
zstd bombs, broken frames, corrupt SQLite pages).  Everything is derived from a seed."""
from __future__ import annotations

import json
import os
import random
from collections.abc import Iterator

MARK = "HOSTILE"
HOSTILE_TEXTS = [
    f"<b>{MARK} bold</b> <a href='https://example.invalid/x'>{MARK} link</a>",
    f"<img src='file:///etc/passwd'> {MARK} <i>img</i>",
    f"\u202e{MARK} reversed title \u202d",
    f"{MARK} \x1b]0;pwned\x07 \x1b[2J clear \x9b31m c1 \x00 nul",
    f"[{MARK} click](javascript:alert(1)) ![{MARK}](http://example.invalid/t.png) <script>x</script>",
]


def hostile_session(src_lines: list, seed: int = 0) -> bytes:
    """A real log (its lines) with every user text, the cwd and a new title made hostile."""
    rng = random.Random(seed)
    hdr = json.loads(src_lines[0])
    hdr["cwd"] = "/tmp/" + MARK + "\n# injected heading\n<b>cwd</b>"
    hdr["id"] = f"<b>{MARK}</b>-<img src='file:///etc/hosts'>-\u202eid"
    dump = lambda o: json.dumps(o, separators=(",", ":"))  # noqa: E731 (dsh writes compact rows)
    out = [dump(hdr)]
    last = -1
    for ln in src_lines[1:]:
        if not ln.strip():
            continue
        row = json.loads(ln)
        if row.get("type") == "user/message" and isinstance(row.get("data"), dict):
            for block in row["data"].get("content") or []:
                if isinstance(block, dict) and block.get("type") == "text":
                    block["text"] = rng.choice(HOSTILE_TEXTS) + "\n" + "\n".join(HOSTILE_TEXTS)
        s = row.get("seq", row.get("seq0"))
        n = len(row["data"]["dt"]) + 1 if "seq0" in row else 1
        if isinstance(s, int):
            last = max(last, s + n - 1)
        out.append(dump(row))
    out.append(dump({"type": "session/title", "seq": last + 1, "time": 0,
                           "data": {"title": HOSTILE_TEXTS[2] + " " + HOSTILE_TEXTS[0]}}))
    return ("\n".join(out) + "\n").encode()


# ----------------------------------------------------------------------------- big inputs

def zstd_bomb(header_line: bytes, plain_bytes: int, kind: str = "line") -> bytes:
    """A ``session.jsonl.zstd`` whose second frame expands to ``plain_bytes``: one huge line
    (``kind="line"``) or many small rows (``kind="rows"``); then a normal small frame."""
    from ..log.source.zstdlib import zstd
    from ..log.source.zstdframes import encode_frame
    opts: dict[int, int] = {zstd.CompressionParameter.compression_level: 1, zstd.CompressionParameter.checksum_flag: 1}
    c = zstd.ZstdCompressor(options=opts)
    out = [encode_frame(header_line.rstrip(b"\n") + b"\n")]
    parts = []
    if kind == "line":
        parts.append(c.compress(b'{"type":"x","seq":0,"time":0,"data":"'))
        block = b"A" * (1 << 20)
        for _ in range(plain_bytes >> 20):
            parts.append(c.compress(block))
        parts.append(c.compress(b'"}\n'))
        first = 1
    else:
        row = b'{"type":"log/x","seq":%d,"time":0,"data":{}}\n'
        n, seq = 0, 0
        buf = []
        while n < plain_bytes:
            r = row % seq
            buf.append(r)
            n += len(r)
            seq += 1
            if len(buf) >= 4096:
                parts.append(c.compress(b"".join(buf)))
                buf = []
        parts.append(c.compress(b"".join(buf)))
        first = seq
    parts.append(c.flush(zstd.ZstdCompressor.FLUSH_FRAME))
    out.append(b"".join(parts))
    out.append(encode_frame(b'{"type":"session/title","seq":%d,"time":0,"data":{"title":"after the bomb"}}\n' % first))
    return b"".join(out)


def long_line_file(path: str, header_line: bytes, size: int) -> None:
    """A JSONL log with one line of ``size`` bytes between two good rows."""
    with open(path, "wb") as f:
        f.write(header_line.rstrip(b"\n") + b"\n")
        f.write(b'{"type":"session/title","seq":0,"time":0,"data":{"title":"before"}}\n')
        f.write(b'{"type":"x","seq":1,"time":0,"data":"')
        block = b"B" * (1 << 20)
        left = size
        while left > 0:
            f.write(block[:left])
            left -= len(block)
        f.write(b'"}\n')
        f.write(b'{"type":"session/title","seq":2,"time":0,"data":{"title":"after"}}\n')


def huge_frame_file(path: str, header_line: bytes, stored_bytes: int) -> int:
    """A ``session.jsonl.zstd`` whose third frame *stores* ``stored_bytes`` (raw blocks; a
    zstd frame's compressed size is bounded by nothing but the file): header frame, a good
    frame (seq 0), the huge frame, a good frame (seq 1).  The file is sparse: only the block
    headers are written, so it costs a few MB of disk for a GiB frame.  -> the huge frame's offset."""
    from ..log.source.zstdframes import MAGIC, encode_frame
    block = 1 << 17                                  # the largest zstd block (window 128 KiB)
    head = encode_frame(header_line.rstrip(b"\n") + b"\n")
    before = encode_frame(b'{"type":"session/title","seq":0,"time":0,"data":{"title":"before"}}\n')
    after = encode_frame(b'{"type":"session/title","seq":1,"time":0,"data":{"title":"after"}}\n')
    with open(path, "wb") as f:
        f.write(head + before)
        at = f.tell()
        f.write(MAGIC + bytes([0x00, 7 << 3]))       # no content size, no checksum; window 2^(10+7)
        n = max(1, -(-stored_bytes // (block + 3)))
        p = f.tell()
        for i in range(n):
            last = 1 if i == n - 1 else 0
            f.seek(p)
            f.write(((block << 3) | last).to_bytes(3, "little"))   # a raw block of zeros (a hole)
            p += 3 + block
        f.truncate(p)
        f.seek(p)
        f.write(after)
    return at


# ----------------------------------------------------------------------------- mutants

def deep_row(seq: int, depth: int) -> bytes:
    return b'{"type":"x","seq":%d,"time":0,"data":' % seq + b"[" * depth + b"]" * depth + b"}"


def packed_row(seq0: int, members: int) -> bytes:
    return json.dumps({"type": "text-chunks", "seq0": seq0, "time0": 0,
                       "data": {"turn": 0, "step": 0, "index": 0, "dt": [0] * (members - 1),
                                "texts": ["x"] * members}}, separators=(",", ":")).encode()


def jsonl_mutants(data: bytes, seed: int, count: int) -> Iterator[tuple]:
    """(name, bytes, kept_lines) mutants of a raw JSONL log.  ``kept_lines`` are the row
    lines (after the header) the mutant leaves intact: every event they hold must still be read."""
    rng = random.Random(seed)
    lines = data.split(b"\n")
    header, rows = lines[0], [ln for ln in lines[1:] if ln]
    kinds = ["truncate", "flip", "garbage", "duplicate", "reorder", "deep", "huge", "packed", "crlf", "nul"]
    for i in range(count):
        k = kinds[i % len(kinds)]
        r = list(rows)
        j = rng.randrange(len(r)) if r else 0
        touched = set()
        if not r:
            continue
        if k == "truncate":
            cut = rng.randrange(1, len(r[j]) + 1)
            r[j] = r[j][:cut]
            touched.add(j)
        elif k == "flip":
            b = bytearray(r[j])
            for _ in range(rng.randint(1, 4)):
                p = rng.randrange(len(b))
                b[p] ^= 1 << rng.randrange(8)
            r[j] = bytes(b)
            touched.add(j)
        elif k == "garbage":
            r.insert(j, os.urandom(rng.randint(1, 300)).replace(b"\n", b" "))
            touched.add(j)
            touched = {x + (1 if x > j else 0) for x in touched}
        elif k == "duplicate":
            r.insert(j, r[j])
            touched.update({j, j + 1})
        elif k == "reorder" and len(r) > 1:
            a = rng.randrange(len(r) - 1)
            r[a], r[a + 1] = r[a + 1], r[a]
            touched.update({a, a + 1})
        elif k == "deep":
            r.insert(j, deep_row(10 ** 6, rng.choice([300, 5000, 100_000])))
            touched.add(j)
        elif k == "huge":
            r.insert(j, b'{"type":"x","seq":999999,"time":0,"data":"' + b"H" * rng.choice([1 << 16, 1 << 22]) + b'"}')
            touched.add(j)
        elif k == "packed":
            r.insert(j, packed_row(10 ** 6, rng.choice([5000, 200_000])))
            touched.add(j)
        elif k == "crlf":
            r[j] = r[j] + b"\r"
            touched.add(j)
        elif k == "nul":
            r[j] = r[j][:len(r[j]) // 2] + b"\0" + r[j][len(r[j]) // 2:]
            touched.add(j)
        kept = [ln for x, ln in enumerate(r) if x not in touched]
        yield f"{k}-{i}", header + b"\n" + b"\n".join(r) + b"\n", kept


def zstd_mutants(header: bytes, rows: list, seed: int, count: int) -> Iterator[tuple]:
    """(name, bytes, kept_rows) mutants of a ``.jsonl.zstd`` built from ``rows`` in frames of 5."""
    from ..log.source.zstdframes import encode_frame
    rng = random.Random(seed)
    batches = [rows[i:i + 5] for i in range(0, len(rows), 5)]
    frames = [encode_frame(b"\n".join(b) + b"\n") for b in batches]
    head = encode_frame(header + b"\n")
    kinds = ["flip-middle", "truncate", "garbage-between", "drop-magic", "bomb-rows", "bomb-line", "size-runaway"]
    for i in range(count):
        k = kinds[i % len(kinds)]
        fs = list(frames)
        lost: set = set()
        if not fs:
            return
        j = rng.randrange(len(fs))
        if k == "flip-middle":
            b = bytearray(fs[j])
            p = rng.randrange(12, max(13, len(b) - 4))
            b[min(p, len(b) - 1)] ^= 0xFF
            fs[j] = bytes(b)
            lost.add(j)
        elif k == "truncate":
            fs = fs[:j + 1]
            fs[j] = fs[j][:rng.randrange(1, len(fs[j]))]
            lost.add(j)
        elif k == "garbage-between":
            fs.insert(j, os.urandom(rng.randint(1, 200)))
            lost = set()
            kept = [r for b in batches for r in b]
            yield f"{k}-{i}", head + b"".join(fs), kept
            continue
        elif k == "drop-magic":
            fs[j] = b"\0\0\0\0" + fs[j][4:]
            lost.add(j)
        elif k == "bomb-rows" or k == "bomb-line":
            bomb = zstd_bomb(header, 96 << 20 if k == "bomb-line" else 4 << 20,
                             "line" if k == "bomb-line" else "rows")
            # keep only the bomb frame itself (skip its header frame and its trailing frame)
            from ..log.source.zstdframes import iter_frames
            spans = list(iter_frames(bomb))
            fs.insert(j, bomb[spans[1][1]:spans[1][2]])
            yield f"{k}-{i}", head + b"".join(fs), [r for b in batches for r in b]
            continue
        elif k == "size-runaway":
            # a block header of a middle frame claims a size that runs past the end of the file
            b = bytearray(fs[j])
            if len(b) > 12:
                hs = 6 + (1 if not b[4] & 0x20 else 0)
                from ..log.source.zstdframes import header_size
                hs = header_size(b[4]) or 6
                h = int.from_bytes(b[hs:hs + 3], "little")
                h = (h & 7) | (((1 << 21) - 1) << 3)
                b[hs:hs + 3] = h.to_bytes(3, "little")
            fs[j] = bytes(b)
            lost.add(j)
        if k == "truncate":
            kept = [r for x, b in enumerate(batches[:j]) for r in b]
        else:
            kept = [r for x, b in enumerate(batches) if x not in lost for r in b]
        yield f"{k}-{i}", head + b"".join(fs), kept


def sqlite_mutants(header: dict, rows: list, seed: int, count: int, workdir: str) -> Iterator[tuple]:
    """(name, bytes, []) mutants of a SQLite store holding one session: flipped bytes in random
    pages, a zeroed page, a truncated file (SQLite pages are not row-aligned: nothing is promised
    about which events survive, only that reading fails cleanly)."""
    from ..store.sqlite_writer import append_batch, create_store
    rng = random.Random(seed)
    base = os.path.join(workdir, f"clean-{seed}.sqlite")
    if not os.path.exists(base):
        create_store(base, journal_mode="DELETE")
        append_batch(base, header, rows)
    with open(base, "rb") as f:
        clean = f.read()
    page = int.from_bytes(clean[16:18], "big") or 65536
    n_pages = max(1, len(clean) // page)
    kinds = ["flip-page", "zero-page", "truncate", "flip-header"]
    for i in range(count):
        k = kinds[i % len(kinds)]
        b = bytearray(clean)
        if k == "flip-page":
            pg = rng.randrange(1, n_pages) if n_pages > 1 else 0
            for _ in range(rng.randint(1, 16)):
                p = pg * page + rng.randrange(page)
                if p < len(b):
                    b[p] ^= 1 << rng.randrange(8)
        elif k == "zero-page":
            pg = rng.randrange(1, n_pages) if n_pages > 1 else 0
            b[pg * page:(pg + 1) * page] = bytes(page)
        elif k == "truncate":
            b = b[:rng.randrange(100, len(b))]
        else:
            p = rng.randrange(16, 100)
            b[p] ^= 0xFF
        yield f"sqlite-{k}-{i}", bytes(b), []


# ----------------------------------------------------------------------------- caches (issue 28)

def _row_last_seq(line: bytes) -> int:
    row = json.loads(line)
    if "seq0" in row:
        return int(row["seq0"]) + len(row["data"]["dt"])
    return int(row["seq"])


def rewrite_in_place(path: str, swap_at: float = 0.5, append: bool = False) -> None:
    """Rewrite a raw JSONL log in place as an attacker would to fool a cache: two adjacent event rows
    near ``swap_at`` (a fraction of the rows) swap places; the inode, the size, the header and the last
    rows stay as they were.  ``append``: one valid row is then appended (the log "grew")."""
    with open(path, "rb") as f:
        data = f.read()
    lines = data.splitlines(keepends=True)
    i = max(1, int(len(lines) * swap_at))
    while i + 1 < len(lines) and not (b'"seq":' in lines[i][:80] and b'"seq":' in lines[i + 1][:80]):
        i += 1
    lines[i], lines[i + 1] = lines[i + 1], lines[i]
    new = b"".join(lines)
    assert len(new) == len(data)
    with open(path, "r+b") as f:
        f.write(new)
        if append:
            last = max(_row_last_seq(ln) for ln in lines[-50:] if ln.strip())
            f.write(b'{"type":"session/title","seq":%d,"time":0,"data":{"title":"appended"}}\n' % (last + 1))


def _resign(meta_json: bytes, arrays: bytes, keyed: bool = True) -> bytes:
    """A ``.idx`` body signed as Session Lens signs it (``keyed``: with the cache folder's key, as
    someone who can read it would; else unkeyed, as anyone else could)."""
    from ..store.indexcache import DIGEST_SIZE, MAGIC, keyed_hasher
    import hashlib
    import struct
    body = MAGIC + struct.pack("<I", len(meta_json)) + meta_json + arrays
    return body + (keyed_hasher(body) if keyed else hashlib.blake2b(body, digest_size=DIGEST_SIZE)).digest()


def forged_index(blob: bytes, forge: str, keyed: bool = True) -> bytes:
    """A sound ``.idx`` file (``blob``) with its marks or segments changed and its (unkeyed) digest
    computed again: ``drop-turn-start`` (a turn/start mark in the second half is left out),
    ``move-turn-end`` (a turn/end mark moved three seqs earlier), ``shift-segment`` (a segment's
    first seq and the marks made to say the log holds one row less there)."""
    from array import array
    from ..log.index.reader import MARK_CODES
    from ..store.indexcache import dump, load
    got = load(blob)
    assert got is not None, "not a sound index file"
    idx, meta = got
    seqs, codes = list(idx.mark_seq), list(idx.mark_code)
    half = [k for k in range(len(seqs)) if seqs[k] > idx.last // 2]
    if forge == "drop-turn-start":
        k = next(k for k in half[1:] if codes[k] == MARK_CODES["turn/start"])
        del seqs[k], codes[k]
    elif forge == "move-turn-end":
        k = next(k for k in half[1:] if codes[k] == MARK_CODES["turn/end"])
        seqs[k] -= 3
        order = sorted(range(len(seqs)), key=lambda j: seqs[j])
        seqs, codes = [seqs[j] for j in order], [codes[j] for j in order]
    elif forge == "shift-segment":
        k = next(k for k in half[1:] if codes[k] == MARK_CODES["turn/start"])
        seqs = seqs[:k] + [s + 1 for s in seqs[k:]]
    else:
        raise ValueError(forge)
    idx.mark_seq, idx.mark_code = array("q", seqs), array("b", codes)
    meta.pop("lengths", None)
    out = dump(idx, meta)
    if keyed:
        return out
    import struct
    from ..store.indexcache import DIGEST_SIZE, MAGIC
    (n,) = struct.unpack_from("<I", out, len(MAGIC))
    at = len(MAGIC) + 4
    return _resign(out[at:at + n], out[at + n:-DIGEST_SIZE], keyed=False)


def retyped_index(blob: bytes, field: str, value: object) -> bytes:
    """A ``.idx`` file with one meta field given a value of another type, correctly signed."""
    import struct
    from ..store.indexcache import DIGEST_SIZE, MAGIC
    (n,) = struct.unpack_from("<I", blob, len(MAGIC))
    at = len(MAGIC) + 4
    meta = json.loads(blob[at:at + n])
    meta[field] = value
    return _resign(json.dumps(meta).encode(), blob[at + n:-DIGEST_SIZE])


def hostile_cache_file(path: str, kind: str) -> None:
    """Replace the cache file ``path`` with a hostile one: ``dev-zero-link`` (a symlink to /dev/zero),
    ``fifo`` (a named pipe nobody writes), ``symlink-to-real`` (a link to a copy of the sound file),
    ``huge-sparse`` (the sound file's start, then a hole to 8 GiB)."""
    with open(path, "rb") as f:
        sound = f.read()
    os.unlink(path)
    if kind == "dev-zero-link":
        os.symlink("/dev/zero", path)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "symlink-to-real":
        copy = path + ".elsewhere"
        with open(copy, "wb") as f:
            f.write(sound)
        os.symlink(copy, path)
    elif kind == "huge-sparse":
        with open(path, "wb") as f:
            f.write(sound)
            f.truncate(8 << 30)
    else:
        raise ValueError(kind)


def rename_in_place(path: str, old: bytes, new: bytes) -> None:
    """Overwrite the last ``old`` in a file with ``new`` (the same length): the size is kept."""
    assert len(old) == len(new)
    with open(path, "r+b") as f:
        data = f.read()
        at = data.rindex(old)
        f.seek(at)
        f.write(new)


def sqlite_bomb(path: str, header: dict, rows: list, blob_plain: int = 256 << 20, text_bytes: int = 0) -> list[int]:
    """A SQLite store holding ``rows`` in which one row's ``data`` is a zstd BLOB expanding to
    ``blob_plain`` bytes (a JSON string of one letter, compressed ~10,000:1) and, with ``text_bytes``,
    another row's ``data`` a TEXT JSON string of that many bytes.  -> the seqs of the rows changed."""
    import sqlite3
    from ..log.source.zstdlib import zstd
    from ..store.sqlite_writer import append_batch, create_store
    create_store(path, journal_mode="DELETE")
    append_batch(path, header, rows)
    c = sqlite3.connect(path)
    try:
        seqs = [r[0] for r in c.execute("SELECT seq FROM events WHERE ignorable IS NOT 0 ORDER BY seq")]
        mid = seqs[len(seqs) // 2:len(seqs) // 2 + 2]
        comp = zstd.ZstdCompressor(level=1)
        parts = [comp.compress(b'"')]
        block = b"A" * (1 << 20)
        left = blob_plain - 2
        while left > 0:
            parts.append(comp.compress(block[:left]))
            left -= len(block)
        parts.append(comp.compress(b'"', zstd.ZstdCompressor.FLUSH_FRAME))
        c.execute("UPDATE events SET data = ? WHERE seq = ?", (b"".join(parts), mid[0]))
        if text_bytes:
            c.execute("UPDATE events SET data = ? WHERE seq = ?", ('"' + "B" * (text_bytes - 2) + '"', mid[1]))
        c.commit()
    finally:
        c.close()
    return mid[:2] if text_bytes else mid[:1]


FORGED_LINE = "  forged-session  jsonl           1  Forged title"
ESC_TOOL = "\x1b]0;pwned\x07\x1b[31mtool"


def hostile_names_session(src: bytes) -> bytes:
    """A real log (raw JSONL bytes) whose one-line fields are hostile: the session id holds a newline
    that would forge a line of ``list`` and a right-to-left override, the title an override and an
    escape sequence, every tool name an OSC title change and a colour escape, user texts bidi controls."""
    lines = [ln for ln in src.split(b"\n") if ln.strip()]
    hdr = json.loads(lines[0])
    hdr["id"] = "hostile-id\n" + FORGED_LINE + "\n    /etc/passwd\u202e"
    out = [json.dumps(hdr, separators=(",", ":"))]
    last = -1
    for ln in lines[1:]:
        row = json.loads(ln)
        d = row.get("data")
        if isinstance(d, dict) and isinstance(d.get("name"), str) and str(row.get("type", "")).startswith("tool/"):
            d["name"] = ESC_TOOL + d["name"]
        if row.get("type") == "user/message" and isinstance(d, dict):
            for block in d.get("content") or []:
                if isinstance(block, dict) and block.get("type") == "text":
                    block["text"] = "\u202e\u2066reversed\u200f " + block["text"]
        s = row.get("seq", row.get("seq0"))
        n = len(row["data"]["dt"]) + 1 if "seq0" in row else 1
        if isinstance(s, int):
            last = max(last, s + n - 1)
        out.append(json.dumps(row, separators=(",", ":")))
    out.append(json.dumps({"type": "session/title", "seq": last + 1, "time": 0,
                           "data": {"title": "\u202eevil title\x1b[2J"}}, separators=(",", ":")))
    return ("\n".join(out) + "\n").encode()


def cache_mutants(blob: bytes, seed: int, count: int) -> Iterator[tuple[str, bytes]]:
    """(name, bytes) mutants of a sound ``.idx`` file: flipped bytes, a truncation, garbage appended,
    forged marks re-signed, meta fields of other types re-signed (each must be a miss or a hint the
    fork checks, never a wrong answer)."""
    rng = random.Random(seed)
    forges = ["drop-turn-start", "move-turn-end", "shift-segment"]
    fields: list[tuple[str, object]] = [("size", "1"), ("resume", None), ("problems", {}), ("lengths", [1, 2]), ("ctime_ns", -1.5),
              ("legacy", [2]), ("kind", 3), ("tail", 0), ("contiguous_through", "9")]
    for i in range(count):
        k = i % 5
        if k == 0:
            b = bytearray(blob)
            for _ in range(rng.randint(1, 8)):
                b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
            yield f"flip-{i}", bytes(b)
        elif k == 1:
            yield f"truncate-{i}", blob[:rng.randrange(len(blob))]
        elif k == 2:
            yield f"garbage-{i}", blob + os.urandom(rng.randint(1, 4096))
        elif k == 3:
            try:
                yield f"forged-{i}", forged_index(blob, forges[rng.randrange(len(forges))])
            except StopIteration:            # (a log without the mark to forge)
                continue
        else:
            field, value = fields[rng.randrange(len(fields))]
            yield f"retyped-{i}", retyped_index(blob, field, value)
