"""Exports: raw (byte-identical + sha256 sidecar), logical, Markdown, HTML (escaping), redaction, ZIP bundle."""
from __future__ import annotations

import hashlib
import json
import subprocess
import zipfile
from pathlib import Path

import pytest

from app.cli.main import main as cli
from app.store.export import Redactor, export, sanitize_id
from app.store.faces import open_reader

repo_root = Path(__file__).resolve().parents[1]
fixtures = repo_root.parent / "shared" / "fixtures" / "dsh"
SNAP = fixtures / "examples/acp-agent/tests/snapshots"
RETRY = SNAP / "empty-response-retry/session.jsonl"
MULTI = SNAP / "subagent-multi"

HOSTILE = "<script>alert(1)</script> and <img src=x onerror=alert(2)>"
SECRETS = {
    "api": "sk-proj-abcdefghijklmnopqrstuvwx1234",
    "gh": "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "aws": "AKIAIOSFODNN7EXAMPLE",
    "bearer": "eyJhbGciOiJIUzI1NiJ9.payloadpayload.sig",
    "token": "s3cr3tT0kenValue99",
    "email": "alice.smith@example.com",
    "home": "/home/alice/secret",
}


def _plant(tmp_path: Path, text: str) -> Path:
    """A copy of the retry fixture whose first user message says ``text``."""
    lines = RETRY.read_text().splitlines()
    out = []
    for ln in lines:
        o = json.loads(ln)
        if o.get("seq") == 4:
            o["data"]["content"][0]["text"] = text
            ln = json.dumps(o, ensure_ascii=False)
        out.append(ln)
    d = tmp_path / "sess"
    d.mkdir(exist_ok=True)
    p = d / "session.jsonl"
    p.write_text("\n".join(out) + "\n")
    return p


def _secret_text() -> str:
    s = SECRETS
    return (f"key {s['api']} gh {s['gh']} aws {s['aws']}\nAuthorization: Bearer {s['bearer']}\n"
            f"token={s['token']} mail {s['email']} file {s['home']}/notes.txt")


def test_raw_byte_identical_with_sidecar(tmp_path):
    r = open_reader(str(RETRY))
    out = tmp_path / "raw.jsonl"
    res = export(r, "raw", str(out))
    assert out.read_bytes() == RETRY.read_bytes()
    digest = hashlib.sha256(RETRY.read_bytes()).hexdigest()
    assert res["sha256"] == digest and res["byteIdentical"]
    side = Path(str(out) + ".sha256").read_text()
    assert side == f"{digest}  raw.jsonl\n"
    assert subprocess.run(["sha256sum", "-c", "raw.jsonl.sha256"], cwd=tmp_path, capture_output=True).returncode == 0


def test_logical_jsonl(tmp_path):
    r = open_reader(str(RETRY))
    out = tmp_path / "logical.jsonl"
    res = export(r, "logical", str(out))
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert rows[0]["type"] == "session"
    assert [x["seq"] for x in rows[1:]] == list(range(21)) and res["events"] == 21


def test_markdown_transcript(tmp_path):
    p = _plant(tmp_path, HOSTILE)
    out = tmp_path / "t.md"
    export(open_reader(str(p)), "markdown", str(out))
    md = out.read_text()
    assert "## Turn 1" in md and "Recovered." in md
    assert "attempt 9–10 failed: EMPTY_RESPONSE" in md
    assert "<script" not in md and "<img" not in md
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in md


def test_html_escapes_hostile_text(tmp_path):
    p = _plant(tmp_path, HOSTILE)
    out = tmp_path / "t.html"
    export(open_reader(str(p)), "html", str(out))
    h = out.read_text()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in h
    assert "&lt;img src=x onerror=alert(2)&gt;" in h
    low = h.lower()
    assert "<script" not in low and "<img" not in low and "onerror=" not in low.replace("&lt;img src=x onerror=", "")
    assert "<link" not in low and "src=\"http" not in low        # self-contained
    assert "<style>" in h and "Content-Security-Policy" in h
    assert "Recovered." in h


@pytest.mark.parametrize("fmt", ["raw", "logical", "markdown", "html", "zip"])
def test_redaction_every_format(tmp_path, fmt):
    p = _plant(tmp_path, _secret_text())
    out = tmp_path / f"out.{fmt}"
    res = export(open_reader(str(p)), fmt, str(out), redact=True)
    if fmt == "zip":
        with zipfile.ZipFile(out) as z:
            body = b"".join(z.read(n) for n in z.namelist()).decode()
    else:
        body = out.read_text()
    report_path = Path(str(out) + ".redaction.json")
    report = report_path.read_text()
    for name, secret in SECRETS.items():
        assert secret not in body, (fmt, name)
        assert secret not in report, (fmt, name)
    sidecar = Path(str(out) + ".sha256")
    if sidecar.exists():
        assert all(s not in sidecar.read_text() for s in SECRETS.values())
    rep = json.loads(report)
    c = rep["counts"]
    assert c.get("api-key", 0) >= 3 and c.get("bearer-token", 0) >= 1
    assert c.get("secret-assignment", 0) >= 1 and c.get("email", 0) >= 1 and c.get("home-path", 0) >= 1
    assert rep["total"] == sum(c.values()) == res["redaction"]["total"]
    assert "[REDACTED:" in body
    if fmt == "raw":
        assert not res["byteIdentical"]
        assert [json.loads(x)["type"] for x in body.splitlines()][0] == "session"


def test_redactor_examples_are_masked():
    red = Redactor()
    out = red.text(_secret_text())
    assert "/home/[user]/secret/notes.txt" in out
    for ex in sum(red.report()["examples"].values(), []):
        assert ex.endswith("***") and len(ex) <= 5


def test_zip_bundle_subagent_multi(tmp_path):
    r = open_reader(str(MULTI / "session.jsonl"))
    res = export(r, "zip", str(tmp_path) + "/")
    sid = r.header.id
    assert Path(res["out"]).name == f"dsh-session-{sanitize_id(sid)}.zip"
    kids = []
    for f in ("session.1.jsonl", "session.2.jsonl"):
        h = json.loads((MULTI / f).read_text().splitlines()[0])
        kids.append((h["createdAt"], h["id"], f))
    kids.sort()
    with zipfile.ZipFile(res["out"]) as z:
        names = z.namelist()
        assert names == ["session.jsonl"] + [f"subagents/{sanitize_id(i)}/session.jsonl" for _, i, _ in kids]
        assert z.read("session.jsonl") == (MULTI / "session.jsonl").read_bytes()
        for _, i, f in kids:
            assert z.read(f"subagents/{sanitize_id(i)}/session.jsonl") == (MULTI / f).read_bytes()
        assert all(zi.compress_type == zipfile.ZIP_DEFLATED for zi in z.infolist())


def test_zip_bundle_media(tmp_path):
    png = b"\x89PNG\r\n\x1a\n" + b"fake-image-bytes"
    hexd = hashlib.sha256(png).hexdigest()
    home = tmp_path / "home"
    obj = home / "attachments" / "v1" / "objects" / hexd[:2]
    obj.mkdir(parents=True)
    (obj / hexd).write_bytes(png)
    aid = f"sha256:{hexd}"
    sess = home / "sessions" / "--p--" / "s1"
    sess.mkdir(parents=True)
    img = {"type": "image", "attachment": {"attachmentId": aid, "mediaType": "image/png", "bytes": len(png)}}
    rows = [{"type": "session", "version": 0, "id": "s1", "createdAt": 1},
            {"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1}},
            {"type": "user/message", "seq": 1, "time": 1, "data": {"role": "user", "content": [img, img]},
             "surfaceOp": "append"},
            {"type": "turn/end", "seq": 2, "time": 1, "data": {"turn": 1, "reason": {"kind": "completed"}}}]
    (sess / "session.jsonl").write_text("".join(json.dumps(x) + "\n" for x in rows))
    res = export(open_reader(str(sess / "session.jsonl")), "zip", str(tmp_path / "b.zip"))
    with zipfile.ZipFile(res["out"]) as z:
        assert z.namelist() == ["session.jsonl", f"media/{aid}.png"]
        assert z.read(f"media/{aid}.png") == png


def test_cli_export_formats(tmp_path, capsys):
    for fmt in ("raw", "logical", "markdown", "html"):
        out = tmp_path / f"c.{fmt}"
        assert cli(["export", str(RETRY), "--format", fmt, "--out", str(out), "--json"]) == 0
        assert out.exists()
    assert cli(["export", str(RETRY), "--raw", str(tmp_path / "legacy.jsonl"), "--json"]) == 0
    assert (tmp_path / "legacy.jsonl").read_bytes() == RETRY.read_bytes()
    # refuses to clobber without --force
    assert cli(["export", str(RETRY), "--format", "raw", "--out", str(tmp_path / "c.raw")]) == 2
    assert cli(["export", str(RETRY), "--format", "raw", "--out", str(tmp_path / "c.raw"), "--force"]) == 0
