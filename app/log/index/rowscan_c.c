/* The seq index's per-row scan in C: app/log/index/rowscan.py's scan(), row for row (issue 15, item 2).
 *
 * rowscan.py is the definition of the scan (the interpreted fallback where this file cannot be built,
 * and for numbers past 64 bits); this is the same walk written for the C compiler, because the mypyc
 * build of rowscan.py (dropped since: decision 0021) checked the bounds of every byte it read and called
 * a function per literal, which left the 4 GB v0 index at 0.24-0.35x of a warm `cat`.
 * tests/test_rowscan.py holds the two equal (every fixture, generated logs, hypothesis over edits).
 * Build: packaging/build_native.py, or setup.py into a wheel (optional: without a compiler the
 * interpreted scanner runs).
 *
 * scan(data, start, stop, expected, types, kinds, max_members, legacy) -> None | tuple | NotImplemented
 *   data: any buffer (bytes, bytearray, memoryview, mmap); types: a list of bytes; kinds: their bits
 *   (rowscan.MARK, CHUNK, LEGACY, SHAPE).  NotImplemented where a number does not fit 64 bits (an
 *   expected seq or a seq of 19 digits or more): the caller asks rowscan.py, which has Python ints.
 */
#define _GNU_SOURCE                    /* (memmem) */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define HEAD 64
#define MARK 7
#define CHUNK 8
#define LEGACY 16
#define SHAPE 96
#define HAS_MESSAGE 32
#define TURN_START 64
#define TURN_END 96
#define MAX_TYPES 256

typedef const unsigned char *P;

/* the end of lit at d[i:] before lim, else -1 */
static inline Py_ssize_t lit(P d, Py_ssize_t i, Py_ssize_t lim, const char *s, Py_ssize_t n) {
    if (i < 0 || i + n > lim)
        return -1;
    return memcmp(d + i, s, (size_t)n) == 0 ? i + n : -1;
}
#define LIT(d, i, lim, s) lit(d, i, lim, s, (Py_ssize_t)(sizeof(s) - 1))

static inline Py_ssize_t digits(P d, Py_ssize_t i, Py_ssize_t lim) {
    while (i < lim && d[i] >= '0' && d[i] <= '9')
        i++;
    return i;
}

/* -?[0-9]+ (leading zeros allowed) or, with strict, -?(0|[1-9][0-9]*) (the longest); the end, else -1 */
static inline Py_ssize_t number_(P d, Py_ssize_t i, Py_ssize_t lim, int strict) {
    if (i < 0)
        return -1;
    if (i < lim && d[i] == '-')
        i++;
    Py_ssize_t e = digits(d, i, lim);
    return e > i && (!strict || e == i + 1 || d[i] != '0') ? e : -1;
}
#define number(d, i, lim) number_(d, i, lim, 0)     /* rowscan._number */
#define integer(d, i, lim) number_(d, i, lim, 1)    /* rowscan._integer */

static int has(P d, Py_ssize_t a, Py_ssize_t b, const char *s) {
    size_t n = strlen(s);
    if (b - a < (Py_ssize_t)n)
        return 0;
    return memmem(d + a, (size_t)(b - a), s, n) != NULL;
}

/* rowscan.not_legacy: the row from just after its seq (i) to its newline (nl) is in the shape */
static int not_legacy(P d, long shape, Py_ssize_t i, Py_ssize_t nl) {
    if (shape == 0)
        return 0;
    i = LIT(d, i, nl, ",\"time\":");
    i = shape == HAS_MESSAGE ? number(d, i, nl) : integer(d, i, nl);
    i = LIT(d, i, nl, ",\"data\":{\"turn\":");
    i = shape == HAS_MESSAGE ? number(d, i, nl) : integer(d, i, nl);
    if (i < 0)
        return 0;
    if (shape == HAS_MESSAGE) {
        i = number(d, LIT(d, i, nl, ",\"step\":"), nl);
        return i >= 0 && LIT(d, i, nl, ",\"message\":{") >= 0;
    }
    if (shape == TURN_START)
        return LIT(d, i, nl, "}}") == nl;
    i = LIT(d, i, nl, ",\"reason\":{\"kind\":\"");
    if (i < 0)
        return 0;
    Py_ssize_t k = i;
    while (k < nl && (d[k] == '-' || (d[k] >= 'a' && d[k] <= 'z')))
        k++;
    return k > i && LIT(d, k, nl, "\"}}}") == nl && !has(d, i, k, "aborted") && !has(d, i, k, "disposed")
        && !has(d, i, k, "error");
}

/* the bytes of a dt: 2 a digit or "-", 3 ",", 4 "]", 0 anything else */
static unsigned char DT[256];

/* rowscan._members: a packed row's member count from just after its seq0 digits, -1 when not */
static Py_ssize_t members(P d, Py_ssize_t i, Py_ssize_t nl, Py_ssize_t max_members) {
    i = LIT(d, i, nl, ",\"time0\":");
    i = number(d, i, nl);
    i = LIT(d, i, nl, ",\"data\":{\"turn\":");
    i = number(d, i, nl);
    i = LIT(d, i, nl, ",\"step\":");
    i = number(d, i, nl);
    i = LIT(d, i, nl, ",\"index\":");
    i = number(d, i, nl);
    i = LIT(d, i, nl, ",\"dt\":[");
    if (i < 0)
        return -1;
    Py_ssize_t j = i, commas = 0;
    unsigned ok = 2;
    for (; j < nl; j++) {
        unsigned k = DT[d[j]];
        if (k == 4)
            break;
        commas += k & 1;
        ok &= k;
    }
    if (j >= nl || !ok)
        return -1;
    Py_ssize_t extra = j > i ? commas + 1 : 0;
    if (extra >= max_members)
        return -1;
    return extra + 1;
}

static int append_ll(PyObject *list, long long v) {
    PyObject *o = PyLong_FromLongLong(v);
    if (o == NULL)
        return -1;
    int r = PyList_Append(list, o);
    Py_DECREF(o);
    return r;
}

#define FAIL_NONE 1
#define FAIL_WIDE 2

static PyObject *scan(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *data, *types, *kinds, *expected_o;
    Py_ssize_t start, stop, max_members;
    int legacy;
    if (!PyArg_ParseTuple(args, "OnnOO!O!np", &data, &start, &stop, &expected_o, &PyList_Type, &types,
                          &PyList_Type, &kinds, &max_members, &legacy))
        return NULL;
    int overflow = 0;
    long long expected = PyLong_AsLongLongAndOverflow(expected_o, &overflow);
    if (expected == -1 && PyErr_Occurred())
        return NULL;
    if (overflow)
        Py_RETURN_NOTIMPLEMENTED;
    Py_ssize_t n_types = PyList_GET_SIZE(types);
    if (n_types != PyList_GET_SIZE(kinds) || n_types > MAX_TYPES) {
        PyErr_SetString(PyExc_ValueError, "types and kinds differ in length, or too many types");
        return NULL;
    }
    /* the types by length: the first of each length, then the next of the same length */
    int by_len[HEAD + 1], same[MAX_TYPES];
    long kind_of[MAX_TYPES];
    const char *name[MAX_TYPES];
    for (int n = 0; n <= HEAD; n++)
        by_len[n] = -1;
    for (Py_ssize_t x = n_types - 1; x >= 0; x--) {
        PyObject *t = PyList_GET_ITEM(types, x);
        if (!PyBytes_Check(t)) {
            PyErr_SetString(PyExc_TypeError, "types must be bytes");
            return NULL;
        }
        kind_of[x] = PyLong_AsLong(PyList_GET_ITEM(kinds, x));
        if (kind_of[x] == -1 && PyErr_Occurred())
            return NULL;
        name[x] = PyBytes_AS_STRING(t);
        Py_ssize_t n = PyBytes_GET_SIZE(t);
        same[x] = -1;
        if (n <= HEAD) {
            same[x] = by_len[n];
            by_len[n] = (int)x;
        }
    }
    Py_buffer view;
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    PyObject *marks_s = PyList_New(0), *marks_c = PyList_New(0), *probes = PyList_New(0), *out = NULL;
    if (marks_s == NULL || marks_c == NULL || probes == NULL)
        goto done;
    P d = (P)view.buf;
    int fail = 0;
    long long first = -1, nxt = expected, rows = 0;
    if (start < 0 || start >= stop || stop > view.len || memchr(d + start, 0, (size_t)(stop - start)) != NULL) {
        fail = FAIL_NONE;                       /* (a NUL anywhere in the range: rowscan's windows see it) */
        goto tail;
    }
    Py_BEGIN_ALLOW_THREADS
    Py_ssize_t p = start;
    while (p < stop) {
        P hit = memchr(d + p, '\n', (size_t)(stop - p));
        Py_ssize_t nl = hit == NULL ? -1 : hit - d;
        if (nl <= p || d[nl - 1] != '}') {
            fail = FAIL_NONE;                   /* (no newline before stop, a blank line, not ending in "}") */
            break;
        }
        Py_ssize_t lim = p + HEAD < nl + 1 ? p + HEAD : nl + 1;
        if (p + 9 > lim || memcmp(d + p, "{\"type\":\"", 9) != 0) {
            fail = FAIL_NONE;
            break;
        }
        Py_ssize_t ts = p + 9, te = ts;
        while (te < lim && d[te] != '"' && d[te] != '\\' && d[te] != '\n')
            te++;
        if (te + 6 > lim || memcmp(d + te, "\",\"seq", 6) != 0) {
            fail = FAIL_NONE;
            break;
        }
        Py_ssize_t q = te + 6;
        int packed = q < lim && d[q] == '0';
        if (packed)
            q++;
        if (q + 2 > lim || d[q] != '"' || d[q + 1] != ':') {
            fail = FAIL_NONE;
            break;
        }
        q += 2;
        Py_ssize_t e = digits(d, q, lim);
        if (e == q || e >= lim || (e - q > 1 && d[q] == '0') || (d[e] != ',' && d[e] != '}')) {
            fail = FAIL_NONE;
            break;
        }
        if (e - q > 18) {
            fail = FAIL_WIDE;
            break;
        }
        long long seq = 0;
        for (Py_ssize_t k = q; k < e; k++)
            seq = seq * 10 + (d[k] - '0');
        if (rows == 0) {
            if (expected >= 0 && seq != expected) {
                fail = FAIL_NONE;
                break;
            }
            first = seq;
        } else if (seq != nxt) {
            fail = FAIL_NONE;
            break;
        }
        Py_ssize_t n = te - ts;
        long kind = 0;
        for (int x = n <= HEAD ? by_len[n] : -1; x >= 0; x = same[x])
            if (memcmp(d + ts, name[x], (size_t)n) == 0) {
                kind = kind_of[x];
                break;
            }
        Py_ssize_t m = 1;
        if (packed) {
            m = (kind & CHUNK) ? members(d, e, nl, max_members) : -1;
            if (m < 0) {
                fail = FAIL_NONE;
                break;
            }
        }
        nxt = seq + m;
        long code = kind & MARK;
        int probe = legacy && (kind & LEGACY) && !not_legacy(d, kind & SHAPE, e, nl);
        if (code || probe) {
            Py_BLOCK_THREADS               /* (rare rows: marks and probes, Python lists) */
            int bad = 0;
            if (code)
                bad = append_ll(marks_s, seq) < 0 || append_ll(marks_c, code - 1) < 0;
            if (!bad && probe)
                bad = append_ll(probes, p) < 0 || append_ll(probes, nl + 1) < 0;
            Py_UNBLOCK_THREADS
            if (bad) {
                fail = -1;
                break;
            }
        }
        rows++;
        p = nl + 1;
    }
    Py_END_ALLOW_THREADS
tail:
    if (fail < 0)
        goto done;
    if (fail == FAIL_WIDE) {
        out = Py_NewRef(Py_NotImplemented);
        goto done;
    }
    if (fail) {
        out = Py_NewRef(Py_None);
        goto done;
    }
    out = Py_BuildValue("LLLOOO", first, nxt - 1, rows, marks_s, marks_c, probes);
done:
    Py_XDECREF(marks_s);
    Py_XDECREF(marks_c);
    Py_XDECREF(probes);
    PyBuffer_Release(&view);
    return out;
}

/* not_legacy(data, text, shape, i, nl[, off]): rowscan.not_legacy (text and off are not needed here: tests call
 * every scanner's alike) */
static PyObject *py_not_legacy(PyObject *self, PyObject *args) {
    PyObject *data, *text;
    long shape;
    Py_ssize_t i, nl, off = 0;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOlnn|n", &data, &text, &shape, &i, &nl, &off))
        return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    int r = 0;
    if (i >= 0 && nl >= i && nl < view.len)
        r = not_legacy((P)view.buf, shape, i, nl);
    PyBuffer_Release(&view);
    return PyBool_FromLong(r);
}

/* packed_lines(head, mid, tail, seq0, time0, dt, strs) -> bytes | NotImplemented (issue 29: export speed)
 *   The logical export's lines of one packed chunk row, joined by b"\n": member i is
 *   head + seq0+i + b',"time":' + t_i + mid + the JSON string of strs[i] + tail, with t_0 = time0 and
 *   t_{i+1} = t_i + dt[i], for i below min(len(strs), len(dt) + 1) (app/store/export_rows.py's zip).  Strings
 *   are encoded as msgspec encodes them (only '"', '\\' and control characters escaped: \b \t \n \f \r, the
 *   others \u00xx; everything else as UTF-8).  NotImplemented when a number does not fit 64 bits or a string
 *   is no UTF-8 (a lone surrogate): the caller's Python path decides, as before. */
static const char HEX[] = "0123456789abcdef";

/* the decimal digits of v at w (as "%lld" writes them); -> past them */
static char *put_ll(char *w, long long v) {
    char buf[24];
    int k = 0;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do {
        buf[k++] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u);
    if (v < 0)
        *w++ = '-';
    while (k)
        *w++ = buf[--k];
    return w;
}

static PyObject *packed_lines(PyObject *self, PyObject *args) {
    const char *head, *mid, *tail;
    Py_ssize_t nh, nm, nt;
    PyObject *oseq, *otime, *dt, *strs;
    (void)self;
    if (!PyArg_ParseTuple(args, "y#y#y#OOO!O!", &head, &nh, &mid, &nm, &tail, &nt, &oseq, &otime,
                          &PyList_Type, &dt, &PyList_Type, &strs))
        return NULL;
    int over = 0;
    long long seq = PyLong_AsLongLongAndOverflow(oseq, &over);
    if (seq == -1 && PyErr_Occurred())
        return NULL;
    if (over)
        Py_RETURN_NOTIMPLEMENTED;
    long long t = PyLong_AsLongLongAndOverflow(otime, &over);
    if (t == -1 && PyErr_Occurred())
        return NULL;
    if (over)
        Py_RETURN_NOTIMPLEMENTED;
    Py_ssize_t n = PyList_GET_SIZE(strs);
    if (n > PyList_GET_SIZE(dt) + 1)
        n = PyList_GET_SIZE(dt) + 1;
    if (n > 0 && seq > LLONG_MAX - n)
        Py_RETURN_NOTIMPLEMENTED;
    /* sizes first: every string's UTF-8 (cached in the str) and its escapes */
    Py_ssize_t total = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = PyList_GET_ITEM(strs, i);
        if (!PyUnicode_Check(x))
            Py_RETURN_NOTIMPLEMENTED;
        Py_ssize_t len;
        const char *u = PyUnicode_AsUTF8AndSize(x, &len);
        if (u == NULL) {
            PyErr_Clear();
            Py_RETURN_NOTIMPLEMENTED;
        }
        Py_ssize_t extra = 0;
        for (Py_ssize_t k = 0; k < len; k++) {
            unsigned char c = (unsigned char)u[k];
            if (c < 0x20)
                extra += (c == '\b' || c == '\t' || c == '\n' || c == '\f' || c == '\r') ? 1 : 5;
            else if (c == '"' || c == '\\')
                extra += 1;
        }
        total += nh + nm + nt + len + extra + 2 + 8 + 2 * 21 + 1;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, total);
    if (out == NULL)
        return NULL;
    char *w = PyBytes_AS_STRING(out), *w0 = w;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (i > 0) {
            PyObject *d = PyList_GET_ITEM(dt, i - 1);
            long long v = PyLong_Check(d) ? PyLong_AsLongLongAndOverflow(d, &over) : (over = 1, 0);
            if (v == -1 && PyErr_Occurred()) {
                Py_DECREF(out);
                return NULL;
            }
            if (over || (v > 0 && t > LLONG_MAX - v) || (v < 0 && t < LLONG_MIN - v)) {
                Py_DECREF(out);
                Py_RETURN_NOTIMPLEMENTED;
            }
            t += v;
            *w++ = '\n';
        }
        memcpy(w, head, (size_t)nh);
        w += nh;
        w = put_ll(w, seq + i);                           /* (what sprintf's %lld writes, without its cost) */
        memcpy(w, ",\"time\":", 8);
        w = put_ll(w + 8, t);
        memcpy(w, mid, (size_t)nm);
        w += nm;
        Py_ssize_t len;
        const char *u = PyUnicode_AsUTF8AndSize(PyList_GET_ITEM(strs, i), &len);
        *w++ = '"';
        for (Py_ssize_t k = 0; k < len; k++) {
            unsigned char c = (unsigned char)u[k];
            if (c >= 0x20 && c != '"' && c != '\\') {
                *w++ = (char)c;
                continue;
            }
            *w++ = '\\';
            switch (c) {
            case '"': *w++ = '"'; break;
            case '\\': *w++ = '\\'; break;
            case '\b': *w++ = 'b'; break;
            case '\t': *w++ = 't'; break;
            case '\n': *w++ = 'n'; break;
            case '\f': *w++ = 'f'; break;
            case '\r': *w++ = 'r'; break;
            default:
                *w++ = 'u'; *w++ = '0'; *w++ = '0'; *w++ = HEX[c >> 4]; *w++ = HEX[c & 15];
            }
        }
        *w++ = '"';
        memcpy(w, tail, (size_t)nt);
        w += nt;
    }
    if (_PyBytes_Resize(&out, w - w0) < 0)
        return NULL;
    return out;
}

/* ---- timelinec: the timeline's rows (issue 31) ----
 * tl_scan(data, stop, skip, flags, max_depth, max_row, max_members) -> list
 *   The rows of data[:stop] (each ending in a newline) as the timeline's pass reads them
 *   (app/log/query/timeline_scan.py holds the interpreted definition, scan_py, and the rules):
 *   a row whose type (the bytes after {"type":" up to the next quote) is in skip: nothing;
 *   a packed chunk row (flags & 1) or a delta assistant/chunk row (flags & 2) in the writer's exact layout,
 *   valid JSON and UTF-8: merged with the run before it into one tuple (turn, step, seq0, n, t0, t1);
 *   a step/start, step/end or turn/start row in the writer's layout (flags & 4): (code, seq, time, turn, step|None);
 *   an assistant/message or assistant/attempt row that tl_settle takes (flags & 8; the tlc helper): its tuple
 *   (tl_settle_obj; timeline_lean.settlement, which reads it when the flag is off, is its definition);
 *   any other row: the int ((index << 32 | start) << 1 | refused), refused = over max_row bytes, nested
 *   deeper than max_depth (strings skipped), not UTF-8, or holding a number (outside strings) of more than 18
 *   digits in a row or with an exponent. */
#define TL_SAFE 9007199254740991LL
#define TL_BOUND (1LL << 62)
static unsigned char TLS[256];           /* in a string: 0 plain, 1 quote, 2 backslash, 3 control, 4 non-ASCII */

/* one strict UTF-8 sequence at d[i] (a byte >= 0x80): its end, else -1 */
static Py_ssize_t tl_utf8(P d, Py_ssize_t i, Py_ssize_t end) {
    unsigned c = d[i];
    Py_ssize_t n;
    unsigned lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) n = 1;
    else if (c == 0xE0) { n = 2; lo = 0xA0; }
    else if (c == 0xED) { n = 2; hi = 0x9F; }
    else if (c >= 0xE1 && c <= 0xEF) n = 2;
    else if (c == 0xF0) { n = 3; lo = 0x90; }
    else if (c == 0xF4) { n = 3; hi = 0x8F; }
    else if (c >= 0xF1 && c <= 0xF3) n = 3;
    else return -1;
    if (i + n >= end)
        return -1;
    if (d[i + 1] < lo || d[i + 1] > hi)
        return -1;
    for (Py_ssize_t k = 2; k <= n; k++)
        if ((d[i + k] & 0xC0) != 0x80)
            return -1;
    return i + n + 1;
}

/* (tlc) the first byte at or after d[i] (before end) that is not plain in a string (TLS 0), 8 bytes a step: a word
 * holding none of '"', '\\', a control byte or a byte >= 0x80 is skipped whole; in the first that holds one, the
 * lowest flagged byte is the first such byte */
#define TL_ONES 0x0101010101010101ULL
#define TL_HIGH 0x8080808080808080ULL
static inline Py_ssize_t tl_plain(P d, Py_ssize_t i, Py_ssize_t end) {
    while (i + 8 <= end) {
        uint64_t w, q, b;
        memcpy(&w, d + i, 8);
        q = w ^ (TL_ONES * '"');
        b = w ^ (TL_ONES * '\\');
        uint64_t m = (w | ((w - TL_ONES * 0x20) & ~w) | ((q - TL_ONES) & ~q) | ((b - TL_ONES) & ~b)) & TL_HIGH;
        if (m) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            return i + (__builtin_ctzll(m) >> 3);       /* (the lowest flag is a true one: borrows go up) */
#else
            break;
#endif
        }
        i += 8;
    }
    while (i < end && TLS[d[i]] == 0)
        i++;
    return i;
}

static int tl_hex(unsigned c) {
    return (c >= '0' && c <= '9') ? (int)(c - '0') : (c >= 'a' && c <= 'f') ? (int)(c - 'a' + 10)
        : (c >= 'A' && c <= 'F') ? (int)(c - 'A' + 10) : -1;
}

/* a JSON string at d[i] (a quote): its end, else -1 (also for a \u escape of a surrogate); *esc: it held an escape */
static Py_ssize_t tl_string(P d, Py_ssize_t i, Py_ssize_t end, int *esc) {
    if (i < 0 || i >= end || d[i] != '"')
        return -1;
    i++;
    for (;;) {
        i = tl_plain(d, i, end);
        if (i >= end)
            return -1;
        switch (TLS[d[i]]) {
        case 1:
            return i + 1;
        case 2:
            if (esc)
                *esc = 1;
            if (i + 1 >= end)
                return -1;
            switch (d[i + 1]) {
            case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
                i += 2;
                break;
            case 'u': {
                if (i + 6 > end)
                    return -1;
                int v = 0;
                for (int k = 2; k < 6; k++) {
                    int h = tl_hex(d[i + k]);
                    if (h < 0)
                        return -1;
                    v = v * 16 + h;
                }
                if (v >= 0xD800 && v <= 0xDFFF)
                    return -1;
                i += 6;
                break;
            }
            default:
                return -1;
            }
            break;
        case 4:
            i = tl_utf8(d, i, end);
            if (i < 0)
                return -1;
            break;
        default:
            return -1;
        }
    }
}

static inline Py_ssize_t tl_ws(P d, Py_ssize_t i, Py_ssize_t end) {
    while (i < end && (d[i] == ' ' || d[i] == '\t' || d[i] == '\r' || d[i] == '\n'))
        i++;
    return i;
}

/* -?(0|[1-9][0-9]{0,17})(\.[0-9]{1,30})? (no exponent: a number msgspec reads whatever its size); end or -1 */
static Py_ssize_t tl_number(P d, Py_ssize_t i, Py_ssize_t end) {
    if (i < end && d[i] == '-')
        i++;
    Py_ssize_t e = digits(d, i, end);
    if (e == i || e - i > 18 || (e - i > 1 && d[i] == '0'))
        return -1;
    if (e < end && d[e] == '.') {
        Py_ssize_t f = digits(d, e + 1, end);
        if (f == e + 1 || f - e - 1 > 30)
            return -1;
        e = f;
    }
    if (e < end && (d[e] == 'e' || d[e] == 'E' || d[e] == '.'))
        return -1;
    return e;
}

/* (tlc) max_depth | TL_STRICT: a number's fraction of 18 digits at most (no run of more than 18 digits: what
 * tl_refused refuses) */
#define TL_STRICT (1 << 24)

/* any JSON value at d[i] nested at depth (the value's own brackets counted from depth + 1): end or -1 */
static Py_ssize_t tl_value(P d, Py_ssize_t i, Py_ssize_t end, int depth, int max_depth) {
    if (i >= end)
        return -1;
    unsigned c = d[i];
    if (c == '"')
        return tl_string(d, i, end, NULL);
    if (c == '{' || c == '[') {
        if (depth + 1 > (max_depth & (TL_STRICT - 1)))
            return -1;
        unsigned close = c == '{' ? '}' : ']';
        i = tl_ws(d, i + 1, end);
        if (i < end && d[i] == close)
            return i + 1;
        for (;;) {
            if (c == '{') {
                i = tl_string(d, i, end, NULL);
                if (i < 0)
                    return -1;
                i = tl_ws(d, i, end);
                if (i >= end || d[i] != ':')
                    return -1;
                i = tl_ws(d, i + 1, end);
            }
            i = tl_value(d, i, end, depth + 1, max_depth);
            if (i < 0)
                return -1;
            i = tl_ws(d, i, end);
            if (i < end && d[i] == ',') {
                i = tl_ws(d, i + 1, end);
                continue;
            }
            return i < end && d[i] == close ? i + 1 : -1;
        }
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        Py_ssize_t e = tl_number(d, i, end);
        if (e > 0 && (max_depth & TL_STRICT)) {              /* (tlc) */
            Py_ssize_t dot = i;
            while (dot < e && d[dot] != '.')
                dot++;
            if (e - dot - 1 > 18)
                return -1;
        }
        return e;
    }
    if (c == 't')
        return LIT(d, i, end, "true");
    if (c == 'f')
        return LIT(d, i, end, "false");
    if (c == 'n')
        return LIT(d, i, end, "null");
    return -1;
}

/* -?(0|[1-9][0-9]{0,14}) followed by a byte that is not a digit, '.', 'e' or 'E': the end, the value in *v */
static Py_ssize_t tl_int(P d, Py_ssize_t i, Py_ssize_t end, long long *v) {
    if (i < 0)
        return -1;
    int neg = i < end && d[i] == '-';
    Py_ssize_t s = i + neg, e = digits(d, s, end);
    if (e == s || e - s > 15 || (e - s > 1 && d[s] == '0') || e >= end || d[e] == '.' || d[e] == 'e' || d[e] == 'E')
        return -1;
    long long x = 0;
    for (Py_ssize_t k = s; k < e; k++)
        x = x * 10 + (d[k] - '0');
    *v = neg ? -x : x;
    return e;
}

typedef struct { long long turn, step, seq0, n, t0, t1; } TlRun;

/* a packed row in the writer's layout, from the quote closing its type (tool: tool-call-chunks) */
static int tl_packed(P d, Py_ssize_t i, Py_ssize_t nl, int tool, Py_ssize_t max_members, TlRun *r) {
    long long idx, v;
    i = tl_int(d, LIT(d, i, nl, "\",\"seq0\":"), nl, &r->seq0);
    i = tl_int(d, LIT(d, i, nl, ",\"time0\":"), nl, &r->t0);
    i = tl_int(d, LIT(d, i, nl, ",\"data\":{\"turn\":"), nl, &r->turn);
    i = tl_int(d, LIT(d, i, nl, ",\"step\":"), nl, &r->step);
    i = tl_int(d, LIT(d, i, nl, ",\"index\":"), nl, &idx);
    i = LIT(d, i, nl, ",\"dt\":[");
    if (i < 0 || r->seq0 < 0)
        return 0;
    long long ndt = 0, t = r->t0;
    if (i < nl && d[i] == ']')
        i++;
    else
        for (;;) {
            i = tl_int(d, i, nl, &v);
            if (i < 0)
                return 0;
            ndt++;
            t += v;                                    /* (|v| < 10^15 < 2^50: no overflow below 2^62) */
            if (t > TL_BOUND || t < -TL_BOUND)
                return 0;
            if (d[i] == ']') {
                i++;
                break;
            }
            if (d[i] != ',')
                return 0;
            i++;
            if (ndt > max_members)
                return 0;
        }
    if (tool) {
        i = tl_string(d, LIT(d, i, nl, ",\"id\":"), nl, NULL);
        Py_ssize_t j = LIT(d, i, nl, ",\"name\":");
        if (j >= 0)
            i = tl_string(d, j, nl, NULL);
        i = LIT(d, i, nl, ",\"args\":[");
    } else
        i = LIT(d, i, nl, ",\"texts\":[");
    if (i < 0)
        return 0;
    long long n = 0;
    for (;;) {
        i = tl_string(d, i, nl, NULL);
        if (i < 0)
            return 0;
        n++;
        if (i < nl && d[i] == ',') {
            i++;
            continue;
        }
        break;
    }
    if (LIT(d, i, nl, "]}}") != nl || n > max_members || ndt != n - 1 || r->seq0 + n - 1 > TL_SAFE
        || t > TL_SAFE || t < -TL_SAFE)
        return 0;
    r->n = n;
    r->t1 = t;
    return 1;
}

/* an assistant/chunk row in the writer's layout whose chunk type is neither "finish" nor "usage" */
static int tl_chunk(P d, Py_ssize_t i, Py_ssize_t nl, int max_depth, TlRun *r) {
    i = tl_int(d, LIT(d, i, nl, "\",\"seq\":"), nl, &r->seq0);
    i = tl_int(d, LIT(d, i, nl, ",\"time\":"), nl, &r->t0);
    i = tl_int(d, LIT(d, i, nl, ",\"data\":{\"turn\":"), nl, &r->turn);
    i = tl_int(d, LIT(d, i, nl, ",\"step\":"), nl, &r->step);
    i = LIT(d, i, nl, ",\"chunk\":{\"type\":");
    if (i < 0 || r->seq0 < 0)
        return 0;
    int esc = 0;
    Py_ssize_t e = tl_string(d, i, nl, &esc);
    if (e < 0 || esc || (e - i == 8 && memcmp(d + i, "\"finish\"", 8) == 0)
        || (e - i == 7 && memcmp(d + i, "\"usage\"", 7) == 0))
        return 0;
    i = e;
    while (i < nl && d[i] == ',') {                 /* the chunk's other members: no second "type" */
        Py_ssize_t k = tl_ws(d, i + 1, nl);
        esc = 0;
        Py_ssize_t ke = tl_string(d, k, nl, &esc);
        if (ke < 0 || esc || (ke - k == 6 && memcmp(d + k, "\"type\"", 6) == 0))
            return 0;
        ke = tl_ws(d, ke, nl);
        if (ke >= nl || d[ke] != ':')
            return 0;
        i = tl_value(d, tl_ws(d, ke + 1, nl), nl, 3, max_depth);
        if (i < 0)
            return 0;
        i = tl_ws(d, i, nl);
    }
    if (LIT(d, i, nl, "}}}") != nl)
        return 0;
    r->n = 1;
    r->t1 = r->t0;
    return 1;
}

/* a step/start or step/end (code 0, 1: data exactly turn and step) or turn/start (code 2: data exactly turn) in the
 * writer's layout: 1 and the record in *r (seq0 = seq, t0 = time, n = code) */
static int tl_small(P d, Py_ssize_t i, Py_ssize_t nl, int code, TlRun *r) {
    i = tl_int(d, LIT(d, i, nl, "\",\"seq\":"), nl, &r->seq0);
    i = tl_int(d, LIT(d, i, nl, ",\"time\":"), nl, &r->t0);
    i = tl_int(d, LIT(d, i, nl, ",\"data\":{\"turn\":"), nl, &r->turn);
    if (code < 2)
        i = tl_int(d, LIT(d, i, nl, ",\"step\":"), nl, &r->step);
    if (i < 0 || r->seq0 < 0 || LIT(d, i, nl, "}}") != nl)
        return 0;
    r->n = code;
    return 1;
}

/* fastrows.refused_rows of one row: over max_row bytes, deeper than max_depth (outside strings), not UTF-8 */
static int tl_refused(P d, Py_ssize_t p, Py_ssize_t nl, Py_ssize_t max_row, int max_depth) {
    if (nl - p > max_row)
        return 1;
    long depth = 0, top = 0, run = 0;
    Py_ssize_t i = p;
    while (i < nl) {
        unsigned c = d[i];
        if (c == '"') {                                 /* a string: to its closing quote */
            run = 0;
            i++;
            for (;;) {
                i = tl_plain(d, i, nl);
                if (i >= nl)
                    return top > max_depth;
                c = d[i];
                if (c == '"') {
                    i++;
                    break;
                }
                if (c == '\\') {
                    i += (i + 1 < nl && (d[i + 1] == '"' || d[i + 1] == '\\')) ? 2 : 1;
                } else if (c >= 0x80) {
                    i = tl_utf8(d, i, nl);
                    if (i < 0)
                        return 1;
                } else
                    i++;
            }
            continue;
        }
        if (c >= 0x80) {
            i = tl_utf8(d, i, nl);
            if (i < 0)
                return 1;
            run = 0;
            continue;
        }
        if (c >= '0' && c <= '9') {                    /* (a number of more than 18 digits in a row, or one with an */
            if (++run > 18)                              /* exponent: msgspec may refuse it where a record skips it) */
                return 1;
            i++;
            continue;
        }
        if ((c == 'e' || c == 'E') && i > p && ((d[i - 1] >= '0' && d[i - 1] <= '9') || d[i - 1] == '.'))
            return 1;
        run = 0;
        if (c == '[' || c == '{') {
            if (++depth > top)
                top = depth;
        } else if (c == ']' || c == '}')
            depth--;
        i++;
    }
    return top > max_depth;
}

static int tl_flush(PyObject *out, TlRun *r) {
    PyObject *t = Py_BuildValue("(LLLLLL)", r->turn, r->step, r->seq0, r->n, r->t0, r->t1);
    if (t == NULL)
        return -1;
    int bad = PyList_Append(out, t);
    Py_DECREF(t);
    return bad;
}

/* (the tlc helper) a settlement row read by tl_settle: its tuple, None when not taken, NULL on an error */
static PyObject *tl_settle_row(P d, Py_ssize_t q, Py_ssize_t nl, int code, int max_depth);

static PyObject *tl_scan(PyObject *self, PyObject *args) {
    PyObject *data, *skip;
    Py_ssize_t stop, max_row, max_members;
    int flags, max_depth;
    (void)self;
    if (!PyArg_ParseTuple(args, "OnO!iinn", &data, &stop, &PyList_Type, &skip, &flags, &max_depth, &max_row,
                          &max_members))
        return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    PyObject *out = PyList_New(0);
    if (out == NULL || stop < 0 || stop > view.len || max_depth < 0 || max_depth >= TL_STRICT) {
        PyBuffer_Release(&view);
        if (out != NULL)
            PyErr_SetString(PyExc_ValueError, "stop is outside the buffer, or max_depth outside [0, 2**24)");
        Py_XDECREF(out);
        return NULL;
    }
    P d = (P)view.buf;
    Py_ssize_t n_skip = PyList_GET_SIZE(skip);
    TlRun run = {0, 0, 0, 0, 0, 0};
    int open = 0;
    long long index = 0;
    for (Py_ssize_t p = 0; p < stop; index++) {
        P hit = memchr(d + p, '\n', (size_t)(stop - p));
        if (hit == NULL)
            break;
        Py_ssize_t nl = hit - d, q = -1;
        if (nl - p >= 9 && memcmp(d + p, "{\"type\":\"", 9) == 0) {
            P qq = memchr(d + p + 9, '"', (size_t)(nl - p - 9));
            q = qq == NULL ? -1 : qq - d;
        }
        if (q >= 0) {
            Py_ssize_t tn = q - p - 9;
            int skipped = 0;
            for (Py_ssize_t x = 0; x < n_skip && !skipped; x++) {
                PyObject *t = PyList_GET_ITEM(skip, x);
                skipped = PyBytes_Check(t) && PyBytes_GET_SIZE(t) == tn && memcmp(PyBytes_AS_STRING(t), d + p + 9,
                                                                                   (size_t)tn) == 0;
            }
            if (skipped) {
                p = nl + 1;
                continue;
            }
            TlRun r;
            int ok = 0;
            if (nl - p <= max_row) {
                if ((flags & 1) && ((tn == 11 && memcmp(d + p + 9, "text-chunks", 11) == 0)
                                    || (tn == 16 && memcmp(d + p + 9, "reasoning-chunks", 16) == 0)))
                    ok = tl_packed(d, q, nl, 0, max_members, &r);
                else if ((flags & 1) && tn == 16 && memcmp(d + p + 9, "tool-call-chunks", 16) == 0)
                    ok = tl_packed(d, q, nl, 1, max_members, &r);
                else if ((flags & 2) && tn == 15 && memcmp(d + p + 9, "assistant/chunk", 15) == 0)
                    ok = tl_chunk(d, q, nl, max_depth, &r);
            }
            int small = 0;
            if (!ok && (flags & 4) && nl - p <= max_row) {
                int code = (tn == 10 && memcmp(d + p + 9, "step/start", 10) == 0) ? 0
                    : (tn == 8 && memcmp(d + p + 9, "step/end", 8) == 0) ? 1
                    : (tn == 10 && memcmp(d + p + 9, "turn/start", 10) == 0) ? 2 : -1;
                small = code >= 0 && tl_small(d, q, nl, code, &r);
            }
            if (small) {
                if (open && tl_flush(out, &run) < 0)
                    goto fail;
                open = 0;
                PyObject *t = r.n < 2 ? Py_BuildValue("(iLLLL)", (int)r.n, r.seq0, r.t0, r.turn, r.step)
                    : Py_BuildValue("(iLLLO)", (int)r.n, r.seq0, r.t0, r.turn, Py_None);
                if (t == NULL || PyList_Append(out, t) < 0) {
                    Py_XDECREF(t);
                    goto fail;
                }
                Py_DECREF(t);
                p = nl + 1;
                continue;
            }
            int scode = !ok && (flags & 8) && tn == 17 ? (memcmp(d + p + 9, "assistant/message", 17) == 0 ? 3
                : memcmp(d + p + 9, "assistant/attempt", 17) == 0 ? 4 : 0) : 0;
            if (scode && nl - p <= max_row && max_depth >= 8) {      /* (tlc) */
                PyObject *t = tl_settle_row(d, q, nl, scode, max_depth);
                if (t == NULL)
                    goto fail;
                if (t != Py_None) {
                    if (open && tl_flush(out, &run) < 0) {
                        Py_DECREF(t);
                        goto fail;
                    }
                    open = 0;
                    int bad = PyList_Append(out, t);
                    Py_DECREF(t);
                    if (bad < 0)
                        goto fail;
                    p = nl + 1;
                    continue;
                }
                Py_DECREF(t);
            }
            if (ok) {
                if (open && r.turn == run.turn && r.step == run.step && r.seq0 == run.seq0 + run.n
                    && !(run.t1 > 0 && r.t1 <= 0)) {
                    run.n += r.n;
                    run.t1 = r.t1;
                } else {
                    if (open && tl_flush(out, &run) < 0)
                        goto fail;
                    run = r;
                    open = 1;
                }
                p = nl + 1;
                continue;
            }
        }
        if (open && tl_flush(out, &run) < 0)
            goto fail;
        open = 0;
        PyObject *o = PyLong_FromLongLong((((index << 32) | (long long)p) << 1) | tl_refused(d, p, nl, max_row, max_depth));
        if (o == NULL || PyList_Append(out, o) < 0) {
            Py_XDECREF(o);
            goto fail;
        }
        Py_DECREF(o);
        p = nl + 1;
    }
    if (open && tl_flush(out, &run) < 0)
        goto fail;
    PyBuffer_Release(&view);
    return out;
fail:
    Py_DECREF(out);
    PyBuffer_Release(&view);
    return NULL;
}

/* tl_count(raw) -> int: the elements of the JSON array raw (valid JSON: msgspec has read it), -1 when raw is not an
 * array.  tl_dtsum(raw, k) -> int | None: 0 for null; for an array of integers (each -?[0-9]{1,18}) the sum of its
 * first k; None for anything else.  (timeline_lean.count_py / dtsum_py are the definitions.) */
static PyObject *tl_count(PyObject *self, PyObject *arg) {
    (void)self;
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    P d = (P)view.buf;
    Py_ssize_t n = view.len, i = tl_ws(d, 0, n);
    long long count = -1;
    if (i < n && d[i] == '[') {
        long depth = 0;
        int any = 0;
        count = 0;
        for (i = i + 1; i < n; i++) {
            unsigned c = d[i];
            if (c == '"') {
                for (i++; i < n && d[i] != '"'; i++)
                    if (d[i] == '\\')
                        i++;
                any = 1;
            } else if (c == '[' || c == '{') {
                depth++;
                any = 1;
            } else if (c == ']' || c == '}') {
                if (depth == 0)
                    break;
                depth--;
            } else if (c == ',' && depth == 0)
                count++;
            else if (c != ' ' && c != '\t' && c != '\r' && c != '\n')
                any = 1;
        }
        count += any;
    }
    PyBuffer_Release(&view);
    return PyLong_FromLongLong(count);
}

static PyObject *tl_dtsum(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer view;
    Py_ssize_t k;
    if (!PyArg_ParseTuple(args, "y*n", &view, &k))
        return NULL;
    P d = (P)view.buf;
    Py_ssize_t n = view.len, i = tl_ws(d, 0, n);
    PyObject *out = NULL;
    if (LIT(d, i, n, "null") >= 0 && tl_ws(d, i + 4, n) == n) {
        out = PyLong_FromLong(0);
        goto done;
    }
    if (i >= n || d[i] != '[')
        goto none;
    long long sum = 0, seen = 0;
    i = tl_ws(d, i + 1, n);
    if (i < n && d[i] == ']')
        i++;
    else
        for (;;) {
            int neg = i < n && d[i] == '-';
            Py_ssize_t s0 = i + neg, e = digits(d, s0, n);
            if (e == s0 || e - s0 > 18 || (e - s0 > 1 && d[s0] == '0') || (e < n && (d[e] == '.' || d[e] == 'e' || d[e] == 'E')))
                goto none;
            long long v = 0;
            for (Py_ssize_t x = s0; x < e; x++)
                v = v * 10 + (d[x] - '0');
            if (seen < k && !__builtin_add_overflow(sum, neg ? -v : v, &sum))
                ;
            else if (seen < k)
                goto none;
            seen++;
            i = tl_ws(d, e, n);
            if (i < n && d[i] == ',') {
                i = tl_ws(d, i + 1, n);
                continue;
            }
            if (i < n && d[i] == ']') {
                i++;
                break;
            }
            goto none;
        }
    if (tl_ws(d, i, n) != n)
        goto none;
    out = PyLong_FromLongLong(sum);
    goto done;
none:
    out = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&view);
    return out;
}

/* tl_seqs(raw) -> (n, lo, hi) | None: (-1, 0, 0) for null; for an array of n integers (each -?[0-9]{1,18}) in
 * strictly increasing order its first and last; None for anything else.  (timeline_lean.seqs_py) */
static PyObject *tl_seqs(PyObject *self, PyObject *arg) {
    (void)self;
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    P d = (P)view.buf;
    Py_ssize_t n = view.len, i = tl_ws(d, 0, n);
    long long count = 0, lo = 0, hi = 0;
    PyObject *out = NULL;
    if (LIT(d, i, n, "null") >= 0 && tl_ws(d, i + 4, n) == n) {
        out = Py_BuildValue("(LLL)", -1LL, 0LL, 0LL);
        goto done;
    }
    if (i >= n || d[i] != '[')
        goto none;
    i = tl_ws(d, i + 1, n);
    if (i < n && d[i] == ']')
        i++;
    else
        for (;;) {
            int neg = i < n && d[i] == '-';
            Py_ssize_t s0 = i + neg, e = digits(d, s0, n);
            if (e == s0 || e - s0 > 18 || (e - s0 > 1 && d[s0] == '0') || (e < n && (d[e] == '.' || d[e] == 'e' || d[e] == 'E')))
                goto none;
            long long v = 0;
            for (Py_ssize_t x = s0; x < e; x++)
                v = v * 10 + (d[x] - '0');
            if (neg)
                v = -v;
            if (count > 0 && v <= hi)
                goto none;
            if (count == 0)
                lo = v;
            hi = v;
            count++;
            i = tl_ws(d, e, n);
            if (i < n && d[i] == ',') {
                i = tl_ws(d, i + 1, n);
                continue;
            }
            if (i < n && d[i] == ']') {
                i++;
                break;
            }
            goto none;
        }
    if (tl_ws(d, i, n) != n)
        goto none;
    out = Py_BuildValue("(LLL)", count, lo, hi);
    goto done;
none:
    out = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&view);
    return out;
}

/* tl_stream(raw) -> None | (chunks, time0, time1, finish, usage): timeline_lean.stream_summary of the embedded
 * stream raw (a JSON array), for a stream whose every record is an object with a string ``type`` (no escape) or
 * null, integer or null ``time``/``time0`` (15 digits at most), an object or null ``chunk`` (its ``type`` a string
 * with no escape, or any other value), a ``dt`` of integers (18 digits at most) or null, no key of those repeated;
 * None for any other stream (the caller reads it the slower way, which decides).  time0/time1: None until a chunk or
 * a run; finish: None, () (a finish chunk without a reason) or the (start, end) of its reason in raw; usage: None or
 * the (start, end) of the last usage chunk's usage. */
typedef struct { Py_ssize_t a, b; } TlRange;

static int tl_key_is(P d, Py_ssize_t k, Py_ssize_t ke, const char *s) {
    Py_ssize_t n = (Py_ssize_t)strlen(s);
    return ke - k == n + 2 && memcmp(d + k + 1, s, (size_t)n) == 0;
}

/* a value at i: its range (end or -1), strings with an escape flagged in *esc */
static Py_ssize_t tl_any(P d, Py_ssize_t i, Py_ssize_t n, int *esc, int depth, int max_depth) {
    if (i < n && d[i] == '"')
        return tl_string(d, i, n, esc);
    return tl_value(d, i, n, depth, max_depth);
}

/* an array of integers (or null) at [a, b): 1 and the sum of the first k in *sum, 0 when not (or overflowing) */
static int tl_ints(P d, Py_ssize_t a, Py_ssize_t b, Py_ssize_t k, long long *sum) {
    *sum = 0;
    if (a < 0 || LIT(d, a, b, "null") == b)
        return 1;
    if (d[a] != '[')
        return 0;
    Py_ssize_t i = tl_ws(d, a + 1, b);
    if (i < b && d[i] == ']')
        return tl_ws(d, i + 1, b) == b;
    for (Py_ssize_t seen = 0;; seen++) {
        int neg = i < b && d[i] == '-';
        Py_ssize_t s0 = i + neg, e = digits(d, s0, b);
        if (e == s0 || e - s0 > 18 || (e - s0 > 1 && d[s0] == '0') || (e < b && (d[e] == '.' || d[e] == 'e' || d[e] == 'E')))
            return 0;
        long long v = 0;
        for (Py_ssize_t x = s0; x < e; x++)
            v = v * 10 + (d[x] - '0');
        if (seen < k && __builtin_add_overflow(*sum, neg ? -v : v, sum))
            return 0;
        i = tl_ws(d, e, b);
        if (i < b && d[i] == ',') {
            i = tl_ws(d, i + 1, b);
            continue;
        }
        return i < b && d[i] == ']' && tl_ws(d, i + 1, b) == b;
    }
}

/* the elements of the array at [a, b) (a valid JSON value), -1 when it is not an array */
static long long tl_elements(P d, Py_ssize_t a, Py_ssize_t b, int depth, int max_depth) {
    if (a < 0 || d[a] != '[')
        return -1;
    Py_ssize_t i = tl_ws(d, a + 1, b);
    if (i < b && d[i] == ']')
        return 0;
    long long n = 0;
    for (;;) {
        i = tl_value(d, i, b, depth, max_depth);
        if (i < 0)
            return -2;
        n++;
        i = tl_ws(d, i, b);
        if (i < b && d[i] == ',') {
            i = tl_ws(d, i + 1, b);
            continue;
        }
        return n;
    }
}

/* an array of strings at i: its elements (end in *end), -2 when an element is not a string, -3 when not JSON */
static long long tl_strarray(P d, Py_ssize_t i, Py_ssize_t n, Py_ssize_t *end) {
    i = tl_ws(d, i + 1, n);
    long long m = 0;
    if (i < n && d[i] == ']') {
        *end = i + 1;
        return 0;
    }
    for (;;) {
        if (i >= n || d[i] != '"')
            return -2;
        i = tl_string(d, i, n, NULL);
        if (i < 0)
            return -3;
        m++;
        i = tl_ws(d, i, n);
        if (i < n && d[i] == ',') {
            i = tl_ws(d, i + 1, n);
            continue;
        }
        if (i < n && d[i] == ']') {
            *end = i + 1;
            return m;
        }
        return -3;
    }
}

/* an array of integers (18 digits at most) at i: its end, its count and sum (*ovf: the sum left 64 bits), or -1 */
static Py_ssize_t tl_intarray(P d, Py_ssize_t i, Py_ssize_t n, long long *count, long long *sum, int *ovf) {
    *count = 0;
    *sum = 0;
    *ovf = 0;
    i = tl_ws(d, i + 1, n);
    if (i < n && d[i] == ']')
        return i + 1;
    for (;;) {
        int neg = i < n && d[i] == '-';
        Py_ssize_t s0 = i + neg, e = digits(d, s0, n);
        if (e == s0 || e - s0 > 18 || (e - s0 > 1 && d[s0] == '0') || (e < n && (d[e] == '.' || d[e] == 'e' || d[e] == 'E')))
            return -1;
        long long v = 0;
        for (Py_ssize_t x = s0; x < e; x++)
            v = v * 10 + (d[x] - '0');
        if (!*ovf && __builtin_add_overflow(*sum, neg ? -v : v, sum))
            *ovf = 1;
        (*count)++;
        i = tl_ws(d, e, n);
        if (i < n && d[i] == ',') {
            i = tl_ws(d, i + 1, n);
            continue;
        }
        return i < n && d[i] == ']' ? i + 1 : -1;
    }
}

/* the summary of an embedded stream (tl_stream's figures; fin: 0 none, 1 without a reason, 2 reason in fr) */
typedef struct { long long chunks, t0, t1; int have, fin, use; TlRange fr, us; } TlSumm;

/* the stream at d[a:] (before n; blanks before it allowed): its end and its summary in *s, -1 when tl_stream does not
 * take it */
static Py_ssize_t tl_stream_at(P d, Py_ssize_t a, Py_ssize_t n, TlSumm *s, int depth, int max_depth) {
    Py_ssize_t i = tl_ws(d, a, n);
    long long chunks = 0, t0 = 0, t1 = 0;
    int have = 0, fin = 0;
    TlRange fr = {-1, -1}, us = {-1, -1};
    int use = 0;
    if (i >= n || d[i] != '[')
        goto none;
    i = tl_ws(d, i + 1, n);
    if (i < n && d[i] == ']')
        i++;
    else
        for (;;) {
            if (i >= n || d[i] != '{')
                goto none;
            TlRange ty = {-1, -1}, tm = {-1, -1}, tm0 = {-1, -1}, ch = {-1, -1}, dt = {-1, -1}, tx = {-1, -1}, ar = {-1, -1};
            TlRange *slot[] = {&ty, &tm, &tm0, &ch, &dt, &tx, &ar};
            long long dt_n = -1, dt_sum = 0, tx_n = -1, ar_n = -1;
            int dt_ovf = 0;
            static const char *names[] = {"type", "time", "time0", "chunk", "dt", "texts", "args"};
            i = tl_ws(d, i + 1, n);
            if (i < n && d[i] == '}')
                i++;
            else
                for (;;) {
                    int esc = 0;
                    Py_ssize_t k = i, ke = tl_string(d, k, n, &esc);
                    if (ke < 0 || esc)
                        goto none;
                    Py_ssize_t v = tl_ws(d, ke, n);
                    if (v >= n || d[v] != ':')
                        goto none;
                    v = tl_ws(d, v + 1, n);
                    int x = 0, vesc = 0;
                    while (x < 7 && !tl_key_is(d, k, ke, names[x]))
                        x++;
                    Py_ssize_t ve;
                    if (x == 4 && v < n && d[v] == '[') {               /* dt: integers, counted and summed */
                        ve = tl_intarray(d, v, n, &dt_n, &dt_sum, &dt_ovf);
                    } else if ((x == 5 || x == 6) && v < n && d[v] == '[') {     /* texts, args: counted */
                        long long *m = x == 5 ? &tx_n : &ar_n;
                        *m = tl_strarray(d, v, n, &ve);
                        if (*m == -3)
                            goto none;
                        if (*m == -2) {
                            ve = tl_value(d, v, n, depth, max_depth);
                            *m = ve < 0 ? -3 : tl_elements(d, v, ve, depth, max_depth);
                        }
                    } else
                        ve = tl_any(d, v, n, &vesc, depth, max_depth);
                    if (ve < 0)
                        goto none;
                    if (x < 7) {
                        if (slot[x]->a >= 0 || (x == 0 && vesc))
                            goto none;                  /* (a key repeated; an escaped type) */
                        slot[x]->a = v;
                        slot[x]->b = ve;
                    }
                    i = tl_ws(d, ve, n);
                    if (i < n && d[i] == ',') {
                        i = tl_ws(d, i + 1, n);
                        continue;
                    }
                    if (i < n && d[i] == '}') {
                        i++;
                        break;
                    }
                    goto none;
                }
            /* the record's fields as the Struct types them */
            int is_null_ty = ty.a < 0 || LIT(d, ty.a, ty.b, "null") == ty.b;
            if (!is_null_ty && d[ty.a] != '"')
                goto none;
            long long tv = 0, t0v = 0, dsum;
            int has_t = 0, has_t0 = 0;
            if (tm.a >= 0 && LIT(d, tm.a, tm.b, "null") != tm.b) {
                if (tl_int(d, tm.a, tm.b + 1, &tv) != tm.b)
                    goto none;
                has_t = 1;
            }
            if (tm0.a >= 0 && LIT(d, tm0.a, tm0.b, "null") != tm0.b) {
                if (tl_int(d, tm0.a, tm0.b + 1, &t0v) != tm0.b)
                    goto none;
                has_t0 = 1;
            }
            int chunk_obj = ch.a >= 0 && d[ch.a] == '{';
            if (ch.a >= 0 && !chunk_obj && LIT(d, ch.a, ch.b, "null") != ch.b)
                goto none;
            if (dt.a >= 0 && dt_n < 0 && LIT(d, dt.a, dt.b, "null") != dt.b)
                goto none;                              /* (a dt neither integers nor null) */
            if (is_null_ty) {
            } else if (ty.b - ty.a == 7 && memcmp(d + ty.a, "\"chunk\"", 7) == 0) {
                if (chunk_obj) {
                    TlRange cty = {-1, -1}, crs = {-1, -1}, cus = {-1, -1};
                    Py_ssize_t j = tl_ws(d, ch.a + 1, ch.b);
                    if (j < ch.b && d[j] != '}')
                        for (;;) {
                            int esc = 0;
                            Py_ssize_t k = j, ke = tl_string(d, k, ch.b, &esc);
                            if (ke < 0 || esc)
                                goto none;
                            Py_ssize_t v = tl_ws(d, tl_ws(d, ke, ch.b) + 1, ch.b);
                            int vesc = 0;
                            Py_ssize_t ve = tl_any(d, v, ch.b, &vesc, depth, max_depth);
                            if (ve < 0)
                                goto none;
                            TlRange *c = tl_key_is(d, k, ke, "type") ? &cty : tl_key_is(d, k, ke, "reason") ? &crs
                                : tl_key_is(d, k, ke, "usage") ? &cus : NULL;
                            if (c != NULL) {
                                if (c->a >= 0 || (c == &cty && vesc))
                                    goto none;
                                c->a = v;
                                c->b = ve;
                            }
                            j = tl_ws(d, ve, ch.b);
                            if (j < ch.b && d[j] == ',') {
                                j = tl_ws(d, j + 1, ch.b);
                                continue;
                            }
                            break;
                        }
                    chunks++;
                    t1 = has_t ? tv : 0;
                    if (!have) {
                        t0 = t1;
                        have = 1;
                    }
                    if (cty.b - cty.a == 8 && memcmp(d + cty.a, "\"finish\"", 8) == 0) {
                        fin = crs.a >= 0 ? 2 : 1;
                        fr = crs;
                    } else if (cty.b - cty.a == 7 && memcmp(d + cty.a, "\"usage\"", 7) == 0) {
                        us = cus;
                        use = 1;
                    }
                }
            } else {
                TlRange pay = {-1, -1};
                Py_ssize_t tl = ty.b - ty.a;
                if ((tl == 13 && memcmp(d + ty.a, "\"text-chunks\"", 13) == 0)
                    || (tl == 18 && memcmp(d + ty.a, "\"reasoning-chunks\"", 18) == 0))
                    pay = tx;
                else if (tl == 18 && memcmp(d + ty.a, "\"tool-call-chunks\"", 18) == 0)
                    pay = ar;
                long long m = pay.a < 0 ? -1 : pay.a == tx.a ? tx_n : ar_n;
                if (m < -1)
                    goto none;
                if (m > 0) {
                    if (dt_n < 0)
                        dsum = 0;
                    else if (dt_n <= m - 1) {
                        if (dt_ovf)
                            goto none;
                        dsum = dt_sum;
                    } else if (!tl_ints(d, dt.a, dt.b, (Py_ssize_t)(m - 1), &dsum))
                        goto none;
                    long long t = has_t0 ? t0v : 0;
                    if (!have) {
                        t0 = t;
                        have = 1;
                    }
                    if (__builtin_add_overflow(t, dsum, &t1))
                        goto none;
                    chunks += m;
                }
            }
            i = tl_ws(d, i, n);
            if (i < n && d[i] == ',') {
                i = tl_ws(d, i + 1, n);
                continue;
            }
            if (i < n && d[i] == ']') {
                i++;
                break;
            }
            goto none;
        }
    s->chunks = chunks;
    s->t0 = t0;
    s->t1 = t1;
    s->have = have;
    s->fin = fin;
    s->use = use;
    s->fr = fr;
    s->us = us;
    return i;
none:
    return -1;
}

/* tl_stream's answer of a summary (its ranges shifted by -base) */
static PyObject *tl_summ_obj(const TlSumm *s, Py_ssize_t base) {
    PyObject *f = s->fin == 0 ? Py_NewRef(Py_None) : s->fin == 1 ? PyTuple_New(0)
        : Py_BuildValue("(nn)", s->fr.a - base, s->fr.b - base);
    PyObject *u = (!s->use || s->us.a < 0) ? Py_NewRef(Py_None) : Py_BuildValue("(nn)", s->us.a - base, s->us.b - base);
    if (f == NULL || u == NULL) {
        Py_XDECREF(f);
        Py_XDECREF(u);
        return NULL;
    }
    if (!s->have)
        return Py_BuildValue("(LOONN)", s->chunks, Py_None, Py_None, f, u);
    return Py_BuildValue("(LLLNN)", s->chunks, s->t0, s->t1, f, u);
}

/* tl_scan's settlement rows (flags & 8; the tlc helper): an assistant/message (code 3) or assistant/attempt (code 4)
 * row that tl_refused does not refuse, read in one pass as timeline_lean.settlement reads it when it takes it, else
 * 0 (the row goes to the caller as before).  Taken only when every field the lean record reads or checks is of the
 * type it needs, with no key of the envelope or data repeated and no key written with an escape: the envelope's
 * keys among type (first), seq (0 .. 2**53-1), time (an integer), data, surfaceOp ("append" for a message, null for
 * an attempt; a message needs it), sourceEventSeqs (a message: null or integers in increasing order, all below seq;
 * an attempt: null), ignorable (any value); data an object with integer turn and step, a message's message (any
 * value), interrupted (true, false, null), type ("assistant/message"), usage (null or an object; a message's as
 * fastrows.usage_ok accepts it: integer inputTokens / outputTokens, integer or null cache and reasoning counts), and a
 * stream that tl_stream takes (an attempt's: a list; a message's may be null or absent); any other data key holds
 * any JSON value.  Every value is valid JSON (tl_value). */
typedef struct {
    long long seq, time, turn, step, ses_n, ses_lo;
    int inter, has_stream;                          /* inter: -1 null or absent, 0 false, 1 true */
    TlRange usage, ign;                             /* a < 0: absent or null */
    TlSumm summ;
} TlSettle;


static int tl_intlike(P d, Py_ssize_t a, Py_ssize_t b) {
    if (a >= b || !(d[a] == '-' || (d[a] >= '0' && d[a] <= '9')))
        return 0;
    for (Py_ssize_t x = a; x < b; x++)
        if (d[x] == '.' || d[x] == 'e' || d[x] == 'E')
            return 0;
    return 1;
}

/* a message's usage object at [a, b) (valid JSON) as fastrows.usage_ok accepts it, its keys written plainly */
static int tl_usage_ok(P d, Py_ssize_t a, Py_ssize_t b) {
    Py_ssize_t i = tl_ws(d, a + 1, b);
    if (i < b && d[i] == '}')
        return 1;
    for (;;) {
        int esc = 0;
        Py_ssize_t k = i, ke = tl_string(d, k, b, &esc);
        if (ke < 0 || esc)
            return 0;
        Py_ssize_t v = tl_ws(d, tl_ws(d, ke, b) + 1, b);
        Py_ssize_t ve = tl_value(d, v, b, 2, TL_STRICT - 1);
        if (ve < 0)
            return 0;
        int must = tl_key_is(d, k, ke, "inputTokens") || tl_key_is(d, k, ke, "outputTokens");
        int may = tl_key_is(d, k, ke, "cacheReadTokens") || tl_key_is(d, k, ke, "cacheWriteTokens")
            || tl_key_is(d, k, ke, "reasoningTokens");
        if ((must || may) && !tl_intlike(d, v, ve) && !(may && LIT(d, v, ve, "null") == ve))
            return 0;
        i = tl_ws(d, ve, b);
        if (i < b && d[i] == ',') {
            i = tl_ws(d, i + 1, b);
            continue;
        }
        return 1;
    }
}

/* null (n = -1) or an array of integers (18 digits at most) in increasing order at i: its end, n, first and last */
static Py_ssize_t tl_seqarr(P d, Py_ssize_t i, Py_ssize_t end, long long *n, long long *lo, long long *hi) {
    Py_ssize_t e = LIT(d, i, end, "null");
    *n = -1;
    if (e >= 0)
        return e;
    if (i >= end || d[i] != '[')
        return -1;
    *n = 0;
    i = tl_ws(d, i + 1, end);
    if (i < end && d[i] == ']')
        return i + 1;
    for (;;) {
        int neg = i < end && d[i] == '-';
        Py_ssize_t s0 = i + neg, x = digits(d, s0, end);
        if (x == s0 || x - s0 > 18 || (x - s0 > 1 && d[s0] == '0') || (x < end && (d[x] == '.' || d[x] == 'e' || d[x] == 'E')))
            return -1;
        long long v = 0;
        for (Py_ssize_t y = s0; y < x; y++)
            v = v * 10 + (d[y] - '0');
        if (neg)
            v = -v;
        if (*n > 0 && v <= *hi)
            return -1;
        if (*n == 0)
            *lo = v;
        *hi = v;
        (*n)++;
        i = tl_ws(d, x, end);
        if (i < end && d[i] == ',') {
            i = tl_ws(d, i + 1, end);
            continue;
        }
        return i < end && d[i] == ']' ? i + 1 : -1;
    }
}

/* the data object at d[a] (a brace; before b): its end, else -1 */
static Py_ssize_t tl_settle_data(P d, Py_ssize_t a, Py_ssize_t b, int msg, TlSettle *r, int m) {
    int g_turn = 0, g_step = 0, g_msg = 0, g_int = 0, g_use = 0, g_str = 0, g_type = 0;
    Py_ssize_t i = tl_ws(d, a + 1, b);
    for (;;) {
        int esc = 0;
        Py_ssize_t k = i, ke = tl_string(d, k, b, &esc);
        if (ke < 0 || esc)
            return 0;
        Py_ssize_t v = tl_ws(d, ke, b);
        if (v >= b || d[v] != ':')
            return 0;
        v = tl_ws(d, v + 1, b);
        int is_stream = tl_key_is(d, k, ke, "stream");
        Py_ssize_t ve = !is_stream ? tl_value(d, v, b, 2, m) : LIT(d, v, b, "null") >= 0 ? v + 4
            : v < b && d[v] == '[' ? tl_stream_at(d, v, b, &r->summ, 5, m) : -1;
        if (ve < 0)
            return 0;
        if (is_stream) {
            if (g_str++)
                return 0;
            r->has_stream = d[v] == '[';
        } else if (tl_key_is(d, k, ke, "turn")) {
            if (g_turn++ || tl_int(d, v, b, &r->turn) != ve)
                return 0;
        } else if (tl_key_is(d, k, ke, "step")) {
            if (g_step++ || tl_int(d, v, b, &r->step) != ve)
                return 0;
        } else if (tl_key_is(d, k, ke, "usage")) {
            if (g_use++)
                return 0;
            if (d[v] == '{') {
                if (msg && !tl_usage_ok(d, v, ve))
                    return 0;
                r->usage.a = v;
                r->usage.b = ve;
            } else if (LIT(d, v, ve, "null") != ve)
                return 0;
        } else if (msg && tl_key_is(d, k, ke, "message")) {
            if (g_msg++)
                return 0;
        } else if (msg && tl_key_is(d, k, ke, "interrupted")) {
            if (g_int++)
                return 0;
            r->inter = LIT(d, v, ve, "true") == ve ? 1 : LIT(d, v, ve, "false") == ve ? 0
                : LIT(d, v, ve, "null") == ve ? -1 : -2;
            if (r->inter == -2)
                return 0;
        } else if (msg && tl_key_is(d, k, ke, "type")) {
            if (g_type++ || LIT(d, v, ve, "\"assistant/message\"") != ve)
                return 0;
        }
        i = tl_ws(d, ve, b);
        if (i < b && d[i] == ',') {
            i = tl_ws(d, i + 1, b);
            continue;
        }
        if (i < b && d[i] == '}')
            break;
        return 0;
    }
    if (!g_turn || !g_step || (msg && !g_msg) || (!msg && !r->has_stream))
        return 0;
    return i + 1;
}

static int tl_settle(P d, Py_ssize_t q, Py_ssize_t nl, int code, int max_depth, TlSettle *r) {
    int m = max_depth | TL_STRICT;
    int msg = code == 3, g_seq = 0, g_time = 0, g_data = 0, g_op = 0, g_ses = 0, g_ign = 0;
    long long hi = 0;
    r->time = 0;
    r->ses_n = -1;
    r->ses_lo = 0;
    r->inter = -1;
    r->has_stream = 0;
    r->usage.a = r->usage.b = r->ign.a = r->ign.b = -1;
    Py_ssize_t i = tl_ws(d, q + 1, nl);
    for (;;) {
        if (i < nl && d[i] == '}') {
            i = tl_ws(d, i + 1, nl);
            break;
        }
        if (i >= nl || d[i] != ',')
            return 0;
        i = tl_ws(d, i + 1, nl);
        int esc = 0;
        Py_ssize_t k = i, ke = tl_string(d, k, nl, &esc);
        if (ke < 0 || esc)
            return 0;
        Py_ssize_t v = tl_ws(d, ke, nl);
        if (v >= nl || d[v] != ':')
            return 0;
        v = tl_ws(d, v + 1, nl);
        Py_ssize_t ve;
        if (tl_key_is(d, k, ke, "seq")) {
            ve = tl_int(d, v, nl, &r->seq);
            if (g_seq++ || ve < 0 || r->seq < 0 || r->seq > TL_SAFE)
                return 0;
        } else if (tl_key_is(d, k, ke, "time")) {
            ve = tl_int(d, v, nl, &r->time);
            if (g_time++ || ve < 0)
                return 0;
        } else if (tl_key_is(d, k, ke, "data")) {
            ve = v < nl && d[v] == '{' ? tl_settle_data(d, v, nl, msg, r, m) : -1;
            if (g_data++ || ve < 0)
                return 0;
        } else if (tl_key_is(d, k, ke, "surfaceOp")) {
            ve = msg ? LIT(d, v, nl, "\"append\"") : LIT(d, v, nl, "null");
            if (g_op++ || ve < 0)
                return 0;
        } else if (tl_key_is(d, k, ke, "sourceEventSeqs")) {
            ve = msg ? tl_seqarr(d, v, nl, &r->ses_n, &r->ses_lo, &hi) : LIT(d, v, nl, "null");
            if (g_ses++ || ve < 0)
                return 0;
        } else if (tl_key_is(d, k, ke, "ignorable")) {
            ve = tl_value(d, v, nl, 1, m);
            if (g_ign++ || ve < 0)
                return 0;
            if (LIT(d, v, ve, "null") != ve) {
                r->ign.a = v;
                r->ign.b = ve;
            }
        } else
            return 0;
        i = tl_ws(d, ve, nl);
    }
    return i == nl && g_seq && g_data && (!msg || g_op) && !(r->ses_n > 0 && hi >= r->seq);
}

/* the tuple of a settlement tl_settle took: (code, seq, time, turn, step, interrupted, usage, cited, stream,
 * ignorable): interrupted None/True/False; usage and ignorable None or the (start, end) of their JSON in the buffer;
 * cited None, [] or [first seq]; stream None (no stream) or tl_stream's answer (ranges in the buffer) */
static PyObject *tl_settle_obj(int code, const TlSettle *r) {
    PyObject *inter = r->inter < 0 ? Py_NewRef(Py_None) : PyBool_FromLong(r->inter);
    PyObject *use = r->usage.a < 0 ? Py_NewRef(Py_None) : Py_BuildValue("(nn)", r->usage.a, r->usage.b);
    PyObject *ses = r->ses_n < 0 ? Py_NewRef(Py_None) : r->ses_n == 0 ? PyList_New(0) : Py_BuildValue("[L]", r->ses_lo);
    PyObject *st = r->has_stream ? tl_summ_obj(&r->summ, 0) : Py_NewRef(Py_None);
    PyObject *ign = r->ign.a < 0 ? Py_NewRef(Py_None) : Py_BuildValue("(nn)", r->ign.a, r->ign.b);
    if (inter == NULL || use == NULL || ses == NULL || st == NULL || ign == NULL) {
        Py_XDECREF(inter);
        Py_XDECREF(use);
        Py_XDECREF(ses);
        Py_XDECREF(st);
        Py_XDECREF(ign);
        return NULL;
    }
    return Py_BuildValue("(iLLLLNNNNN)", code, r->seq, r->time, r->turn, r->step, inter, use, ses, st, ign);
}

static PyObject *tl_settle_row(P d, Py_ssize_t q, Py_ssize_t nl, int code, int max_depth) {
    TlSettle r;
    if (!tl_settle(d, q, nl, code, max_depth, &r))
        Py_RETURN_NONE;
    return tl_settle_obj(code, &r);
}

static PyObject *tl_stream(PyObject *self, PyObject *arg) {
    (void)self;
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    TlSumm s;
    Py_ssize_t e = tl_stream_at((P)view.buf, 0, view.len, &s, 3, 512);
    int ok = e >= 0 && tl_ws((P)view.buf, e, view.len) == view.len;
    PyBuffer_Release(&view);
    if (!ok)
        Py_RETURN_NONE;
    return tl_summ_obj(&s, 0);
}
/* tl_columns(rows, keys) -> list: the columns of the dicts of the list ``rows``, each holding exactly ``keys`` in
 * that order, read row by row (each dict once): per key, its values as native 64-bit integers (null: -2**63) when
 * every one is an int (exactly: never a bool) of magnitude < 2**62 or null and one at least is an int, else the
 * list of the values; None when a row is not such a dict.  (timeline_table.columns_py, its definition.) */
static PyObject *tl_columns(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *rows, *keys;
    if (!PyArg_ParseTuple(args, "O!O!", &PyList_Type, &rows, &PyList_Type, &keys))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(rows), m = PyList_GET_SIZE(keys);
    PyObject *lists = PyList_New(m), *ints = PyList_New(m), *out = NULL;
    char *isint = PyMem_Calloc(m ? m : 1, 2);      /* per key: still integers; one integer seen */
    if (lists == NULL || ints == NULL || isint == NULL)
        goto fail;
    for (Py_ssize_t k = 0; k < m; k++) {
        PyObject *l = PyList_New(n), *b = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(long long));
        if (l == NULL || b == NULL) {
            Py_XDECREF(l);
            Py_XDECREF(b);
            goto fail;
        }
        for (Py_ssize_t i = 0; i < n; i++)
            PyList_SET_ITEM(l, i, Py_NewRef(Py_None));
        PyList_SET_ITEM(lists, k, l);
        PyList_SET_ITEM(ints, k, b);
        isint[2 * k] = 1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *row = PyList_GET_ITEM(rows, i), *key, *v;
        Py_ssize_t pos = 0, k = 0;
        if (!PyDict_CheckExact(row) || PyDict_GET_SIZE(row) != m)
            goto none;
        while (PyDict_Next(row, &pos, &key, &v)) {
            PyObject *want = PyList_GET_ITEM(keys, k);
            if (key != want) {
                int eq = PyObject_RichCompareBool(key, want, Py_EQ);
                if (eq < 0)
                    goto fail;
                if (!eq)
                    goto none;
            }
            if (PyList_SetItem(PyList_GET_ITEM(lists, k), i, Py_NewRef(v)) < 0)
                goto fail;
            if (isint[2 * k]) {
                long long *w = (long long *)PyBytes_AS_STRING(PyList_GET_ITEM(ints, k));
                if (v == Py_None)
                    w[i] = LLONG_MIN;
                else if (!PyLong_CheckExact(v))
                    isint[2 * k] = 0;
                else {
                    int over = 0;
                    long long x = PyLong_AsLongLongAndOverflow(v, &over);
                    if (over || x >= TL_BOUND || x <= -TL_BOUND)
                        isint[2 * k] = 0;
                    else {
                        w[i] = x;
                        isint[2 * k + 1] = 1;
                    }
                }
            }
            k++;
        }
    }
    out = PyList_New(m);
    if (out == NULL)
        goto fail;
    for (Py_ssize_t k = 0; k < m; k++) {
        PyObject *col = (isint[2 * k] && isint[2 * k + 1]) ? PyList_GET_ITEM(ints, k) : PyList_GET_ITEM(lists, k);
        PyList_SET_ITEM(out, k, Py_NewRef(col));
    }
    Py_DECREF(lists);
    Py_DECREF(ints);
    PyMem_Free(isint);
    return out;
none:
    Py_XDECREF(lists);
    Py_XDECREF(ints);
    PyMem_Free(isint);
    Py_RETURN_NONE;
fail:
    Py_XDECREF(lists);
    Py_XDECREF(ints);
    PyMem_Free(isint);
    return NULL;
}
/* ---- end timelinec ---- */

/* ---- ahead3: the logical export at disk speed (issue 29): depth_over, packed_raw ----
 * depth_over: a row nested over a limit (the plain rows)
 * depth_over(raw, limit) -> bool: app.log.format.limits.nesting_depth(raw, limit) > limit, its interpreted
 * definition: string literals ('"' to the next unescaped '"', a backslash escaping any one byte) are skipped,
 * every '[' '{' counts +1 and every ']' '}' -1, and the deepest running sum is compared with the limit.  A
 * string left open (no closing quote) is not skipped, and no string starts after it: every quote after it is
 * escaped in its own reading, and a reading started there runs in step with it.  One pass, stopping as soon
 * as the sum passes the limit. */
static PyObject *depth_over(PyObject *self, PyObject *args) {
    Py_buffer b;
    long limit;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*l", &b, &limit))
        return NULL;
    const unsigned char *p = (const unsigned char *)b.buf;
    Py_ssize_t n = b.len, i = 0;
    long d = 0;
    int over = 0, strings = 1;
    while (i < n) {
        unsigned char c = p[i];
        if (c == '"' && strings) {
            Py_ssize_t j = i + 1;
            while (j < n && p[j] != '"')
                j += p[j] == '\\' ? 2 : 1;
            if (j < n) {
                i = j + 1;
                continue;
            }
            strings = 0;                 /* left open: the rest is counted as it is */
        } else if (c == '[' || c == '{') {
            if (++d > limit) {
                over = 1;
                break;
            }
        } else if (c == ']' || c == '}') {
            d--;
        }
        i++;
    }
    PyBuffer_Release(&b);
    return PyBool_FromLong(over);
}
/* packed_raw(raw) -> (bytes, members) | None (issue 29: the logical export at disk speed)
 *   The logical export's lines of a packed chunk row written by dsh's writer, straight from its bytes: the
 *   same lines, joined by b"\n", as app/store/export_rows.py's packed_record + _packed_lines give (unredacted),
 *   for the one layout the writer uses:
 *     {"type":"text-chunks"|"reasoning-chunks","seq0":I,"time0":I,"data":{"turn":I,"step":I,"index":I,"dt":[I,..],"texts":[S,..]}}
 *     {"type":"tool-call-chunks","seq0":I,"time0":I,"data":{"turn":I,"step":I,"index":I,"dt":[I,..],"id":S[,"name":S],"args":[S,..]}}
 *   with no space, every integer I as Python prints it (no leading zero, no "-0", at most 18 digits) and every
 *   string S as msgspec writes it (escapes only '"', '\\' and the control characters: \b \t \n \f \r, others as
 *   \u00xx; valid UTF-8), so that each number and string is copied as it is.  The Python path's checks too: at
 *   least one and at most 65536 members, one dt fewer, seq0 >= 0, the last seq and (text rows) the last time
 *   within 2^53-1, no time past 64 bits on the way.  Anything else: None (the Python path then decides). */
#define AH_SAFE 9007199254740991LL

static const unsigned char *ah_lit(const unsigned char *p, const unsigned char *e, const char *lit) {
    size_t k = strlen(lit);
    if ((size_t)(e - p) < k || memcmp(p, lit, k) != 0)
        return NULL;
    return p + k;
}

static const unsigned char *ah_int(const unsigned char *p, const unsigned char *e, long long *v) {
    int neg = p < e && *p == '-';
    const unsigned char *q = p + neg, *d0 = q;
    unsigned long long u = 0;
    while (q < e && *q >= '0' && *q <= '9' && q - d0 < 19)
        u = u * 10 + (unsigned long long)(*q++ - '0');
    Py_ssize_t nd = q - d0;
    if (nd == 0 || nd > 18 || (q < e && *q >= '0' && *q <= '9') || (*d0 == '0' && (nd > 1 || neg)))
        return NULL;
    *v = neg ? -(long long)u : (long long)u;
    return q;
}

static int ah_hex(unsigned char c) {
    return (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
}

/* a string literal as msgspec writes it, from its opening quote; -> past its closing quote, or NULL */
static const unsigned char *ah_str(const unsigned char *p, const unsigned char *e) {
    if (p >= e || *p != '"')
        return NULL;
    p++;
    while (p < e) {
        unsigned char c = *p;
        if (c == '"')
            return p + 1;
        if (c < 0x20)
            return NULL;
        if (c == '\\') {
            if (e - p < 2)
                return NULL;
            unsigned char x = p[1];
            if (x == '"' || x == '\\' || x == 'b' || x == 't' || x == 'n' || x == 'f' || x == 'r') {
                p += 2;
                continue;
            }
            if (x != 'u' || e - p < 6 || p[2] != '0' || p[3] != '0')
                return NULL;
            int hi = ah_hex(p[4]), lo = ah_hex(p[5]);
            if (hi < 0 || lo < 0)
                return NULL;
            int v = hi * 16 + lo;
            if (v >= 0x20 || v == '\b' || v == '\t' || v == '\n' || v == '\f' || v == '\r')
                return NULL;
            p += 6;
            continue;
        }
        if (c < 0x80) {
            p++;
            continue;
        }
        /* well-formed UTF-8 only (RFC 3629: no overlong form, no surrogate, nothing past U+10FFFF) */
        Py_ssize_t k = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
        if (k == 0 || e - p < k)
            return NULL;
        unsigned char c1 = p[1];
        if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 > 0x9F) || (c == 0xF0 && c1 < 0x90) || (c == 0xF4 && c1 > 0x8F))
            return NULL;
        for (Py_ssize_t j = 1; j < k; j++)
            if ((p[j] & 0xC0) != 0x80)
                return NULL;
        p += k;
    }
    return NULL;
}

/* a list of n integers or n strings from its '['; -> past its ']', or NULL */
static const unsigned char *ah_list(const unsigned char *p, const unsigned char *e, int strs, Py_ssize_t *n) {
    long long v;
    *n = 0;
    if (p >= e || *p != '[')
        return NULL;
    p++;
    if (p < e && *p == ']')
        return p + 1;
    for (;;) {
        p = strs ? ah_str(p, e) : ah_int(p, e, &v);
        if (p == NULL || p >= e)
            return NULL;
        (*n)++;
        if (*p == ']')
            return p + 1;
        if (*p != ',')
            return NULL;
        p++;
    }
}

static char *ah_put(char *w, const void *src, Py_ssize_t k) {
    memcpy(w, src, (size_t)k);
    return w + k;
}

static PyObject *packed_raw(PyObject *self, PyObject *args) {
    Py_buffer b;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*", &b))
        return NULL;
    const unsigned char *p0 = (const unsigned char *)b.buf, *e = p0 + b.len, *p, *q;
    const unsigned char *turn, *step, *index, *dts, *strs, *id = NULL, *name = NULL;
    Py_ssize_t nturn, nstep, nindex, nid = 0, nname = 0, ndt, n;
    long long seq0, time0, v;
    const char *delta;
    int call = 0;
    PyObject *out = NULL;
    if ((p = ah_lit(p0, e, "{\"type\":\"text-chunks\"")) != NULL)
        delta = "text-delta";
    else if ((p = ah_lit(p0, e, "{\"type\":\"reasoning-chunks\"")) != NULL)
        delta = "reasoning-delta";
    else if ((p = ah_lit(p0, e, "{\"type\":\"tool-call-chunks\"")) != NULL) {
        delta = "tool-call-delta";
        call = 1;
    } else
        goto decline;
    if (!(p = ah_lit(p, e, ",\"seq0\":")) || !(p = ah_int(p, e, &seq0)) || !(p = ah_lit(p, e, ",\"time0\":"))
        || !(p = ah_int(p, e, &time0)) || !(p = ah_lit(p, e, ",\"data\":{\"turn\":")))
        goto decline;
    turn = p;
    if (!(p = ah_int(p, e, &v)))
        goto decline;
    nturn = p - turn;
    if (!(p = ah_lit(p, e, ",\"step\":")))
        goto decline;
    step = p;
    if (!(p = ah_int(p, e, &v)))
        goto decline;
    nstep = p - step;
    if (!(p = ah_lit(p, e, ",\"index\":")))
        goto decline;
    index = p;
    if (!(p = ah_int(p, e, &v)))
        goto decline;
    nindex = p - index;
    if (!(p = ah_lit(p, e, ",\"dt\":")))
        goto decline;
    dts = p;
    if (!(p = ah_list(p, e, 0, &ndt)))
        goto decline;
    if (call) {
        if (!(p = ah_lit(p, e, ",\"id\":")))
            goto decline;
        id = p;
        if (!(p = ah_str(p, e)))
            goto decline;
        nid = p - id;
        if ((q = ah_lit(p, e, ",\"name\":")) != NULL) {
            name = q;
            if (!(p = ah_str(q, e)))
                goto decline;
            nname = p - name;
        }
        if (!(p = ah_lit(p, e, ",\"args\":")))
            goto decline;
    } else if (!(p = ah_lit(p, e, ",\"texts\":")))
        goto decline;
    strs = p;
    if (!(p = ah_list(p, e, 1, &n)) || !(p = ah_lit(p, e, "}}")) || p != e)
        goto decline;
    if (n < 1 || n > 65536 || ndt != n - 1 || seq0 < 0 || seq0 + n - 1 > AH_SAFE)
        goto decline;
    /* the times: every running sum within 64 bits (each dt has at most 18 digits), the last one checked */
    long long t = time0;
    p = dts + 1;
    for (Py_ssize_t i = 0; i < ndt; i++) {
        p = ah_int(p, e, &v) + 1;
        if ((v > 0 && t > LLONG_MAX - v) || (v < 0 && t < LLONG_MIN - v))
            goto decline;
        t += v;
    }
    if (!call && (t > AH_SAFE || t < -AH_SAFE))
        goto decline;
    char mid[256];
    Py_ssize_t nmid = snprintf(mid, sizeof mid, ",\"data\":{\"turn\":%.*s,\"step\":%.*s,\"chunk\":{\"type\":\"%s\","
                               "\"index\":%.*s,", (int)nturn, (const char *)turn, (int)nstep, (const char *)step,
                               delta, (int)nindex, (const char *)index);
    if (nmid <= 0 || nmid >= (Py_ssize_t)sizeof mid)
        goto decline;
    static const char head[] = "{\"type\":\"assistant/chunk\",\"seq\":";
    Py_ssize_t nhead = (Py_ssize_t)sizeof head - 1;
    Py_ssize_t per = nhead + 20 + 8 + 20 + nmid + nid + nname + 32 + 3 + 1;
    out = PyBytes_FromStringAndSize(NULL, per * n + (e - strs));
    if (out == NULL) {
        PyBuffer_Release(&b);
        return NULL;
    }
    char *w = PyBytes_AS_STRING(out), *w0 = w;
    const unsigned char *dp = dts + 1, *sp = strs + 1;
    t = time0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (i > 0) {
            dp = ah_int(dp, e, &v) + 1;
            t += v;
            *w++ = '\n';
        }
        w = ah_put(w, head, nhead);
        w = put_ll(w, seq0 + i);
        w = ah_put(w, ",\"time\":", 8);
        w = put_ll(w, t);
        w = ah_put(w, mid, nmid);
        if (call) {
            w = ah_put(w, "\"id\":", 5);
            w = ah_put(w, id, nid);
            if (name != NULL) {
                w = ah_put(w, ",\"name\":", 8);
                w = ah_put(w, name, nname);
            }
            w = ah_put(w, ",\"argumentsDelta\":", 18);
        } else {
            w = ah_put(w, "\"text\":", 7);
        }
        q = ah_str(sp, e);
        w = ah_put(w, sp, q - sp);
        sp = q + 1;
        w = ah_put(w, "}}}", 3);
    }
    PyBuffer_Release(&b);
    if (_PyBytes_Resize(&out, w - w0) < 0)
        return NULL;
    return Py_BuildValue("(Nn)", out, n);
decline:
    PyBuffer_Release(&b);
    Py_RETURN_NONE;
}
/* ---- end ahead3 ---- */
/* ---- ftsc: a row's searchable text straight from its bytes (issue 32 item 3; owner: the ftsc helper) ----
 *
 * text_row(raw[, legacy]) -> None | tuple: what app.log.query.extract.RowText makes of one stored row, for the
 * rows written the plain dsh way, without decoding them into Python objects (``legacy``: a v0/v1 session, whose
 * assistant messages and tool results may have the shapes of spec §1.7, read as the codec converts them).  Its definition is the interpreted
 * app/log/query/textrow.py (text_row_py), written with the one text function
 * (app.log.query.textview.shown_fields); tests/test_textrow.py holds C == Python on every fixture, hostile
 * logs and edited rows.  None (the caller decodes the row the exact way) for anything unusual: a row that is
 * not strict JSON with valid UTF-8, a key written with an escape or given twice where keys are read,
 * integers past 18 digits, floats whose text would be shown, nesting past FT_DEPTH, a shape or type not
 * read here.
 *
 *   (0,)                                         the row shows no text
 *   (1, seq, time, turn)                         turn/start
 *   (2, seq, time, turn, [(kind, text)], blocks) user and assistant messages, generic rows; blocks: None or
 *                                                [(call id | None, tool | None, text)] of an assistant message
 *   (3, seq, time, turn, call id | None, name, text)    tool/call
 *   (4, seq, time, turn, answered call id | None, text) tool/result
 *   (5, seq, time, turn, title)                  session/title (as written: the caller plains it)
 * texts are textview.plain()'d (control characters and line breaks as spaces); turn None where the row names
 * none; time 0 where it is not an integer.
 *
 * The row is read once into a tape (one token per value, key and container, a container's token pointing
 * past its last child), which the extraction walks; only the strings shown are read again. */

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <math.h>

#define FT_DEPTH 64
#define FT_MAX_KEYS 256

typedef struct {
    char *p;
    Py_ssize_t len, cap;
} FtBuf;

typedef struct {
    Py_ssize_t a, b;          /* a string's content, a number's text, a container's opening byte (a) */
    Py_ssize_t next;          /* the token after this value (a container: after its last child) */
    unsigned char kind;       /* '{' '[' '"' '0' (a number) 't' 'f' 'n' */
    unsigned char esc;        /* a string holding an escape */
} FtTok;

typedef struct {
    FtTok *t;
    Py_ssize_t n, cap;
} FtTape;

static FtTape FT_TAPE, FT_INNER;              /* reused between calls (the GIL is held throughout) */
static FtBuf FT_OUT, FT_TMP, FT_BLK, FT_ARGS;   /* texts; a block's text; arguments' JSON */

static int ft_grow(FtBuf *b, Py_ssize_t extra) {
    if (b->len + extra <= b->cap)
        return 0;
    Py_ssize_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + extra)
        cap *= 2;
    char *p = PyMem_Realloc(b->p, (size_t)cap);
    if (p == NULL)
        return -1;
    b->p = p;
    b->cap = cap;
    return 0;
}

static inline int ft_put(FtBuf *b, const char *s, Py_ssize_t k) {
    if (ft_grow(b, k) < 0)
        return -1;
    memcpy(b->p + b->len, s, (size_t)k);
    b->len += k;
    return 0;
}

static inline void ft_ws(P d, Py_ssize_t n, Py_ssize_t *i) {
    while (*i < n && (d[*i] == ' ' || d[*i] == '\t' || d[*i] == '\n' || d[*i] == '\r'))
        (*i)++;
}

static inline int ft_hex(P d, Py_ssize_t i) {
    int v = 0;
    for (int k = 0; k < 4; k++) {
        unsigned char c = d[i + k];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= c - '0';
        else if (c >= 'a' && c <= 'f')
            v |= c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            v |= c - 'A' + 10;
        else
            return -1;
    }
    return v;
}

/* the length of the valid UTF-8 sequence (RFC 3629: no overlong forms, no surrogates, <= U+10FFFF) at d[i]
 * (a byte >= 0x80), else 0 */
static inline int ft_utf8(P d, Py_ssize_t i, Py_ssize_t n) {
    unsigned char c = d[i];
#define CONT(k) (i + (k) < n && (d[i + (k)] & 0xC0) == 0x80)
    if (c >= 0xC2 && c <= 0xDF)
        return CONT(1) ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        if (!CONT(1) || !CONT(2))
            return 0;
        if ((c == 0xE0 && d[i + 1] < 0xA0) || (c == 0xED && d[i + 1] > 0x9F))
            return 0;
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (!CONT(1) || !CONT(2) || !CONT(3))
            return 0;
        if ((c == 0xF0 && d[i + 1] < 0x90) || (c == 0xF4 && d[i + 1] > 0x8F))
            return 0;
        return 4;
    }
#undef CONT
    return 0;
}

/* the first byte at or after d[k] (before n) that a string scan stops at: < 0x20, '"', '\\', 0x7F or >= 0x80
 * (16 bytes at a time where SSE2 is there: every x86-64) */
static unsigned char FT_STOP[256];

static inline Py_ssize_t ft_span(P d, Py_ssize_t k, Py_ssize_t n) {
#if defined(__SSE2__)
    const __m128i q = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\'), sp = _mm_set1_epi8(0x20),
                  del = _mm_set1_epi8(0x7F);
    while (k + 16 <= n) {
        __m128i x = _mm_loadu_si128((const __m128i *)(d + k));
        __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, q), _mm_cmpeq_epi8(x, bs)),
                                 _mm_or_si128(_mm_cmplt_epi8(x, sp), _mm_cmpeq_epi8(x, del)));
        int mask = _mm_movemask_epi8(m);
        if (mask)
            return k + __builtin_ctz((unsigned)mask);
        k += 16;
    }
#endif
    while (k < n && !FT_STOP[d[k]])
        k++;
    return k;
}

/* the JSON string at d[*i] == '"': its content is d[*a:*b], *esc whether it holds an escape; *i after it.
 * -1: not a valid string (a control character, a bad escape, a lone surrogate, invalid UTF-8) */
static int ft_str(P d, Py_ssize_t n, Py_ssize_t *i, Py_ssize_t *a, Py_ssize_t *b, int *esc) {
    Py_ssize_t k = *i + 1;
    *a = k;
    *esc = 0;
    while (k < n) {
        k = ft_span(d, k, n);
        if (k >= n)
            break;
        unsigned char c = d[k];
        if (c == '"') {
            *b = k;
            *i = k + 1;
            return 0;
        }
        if (c < 0x20)
            return -1;
        if (c == '\\') {
            *esc = 1;
            if (k + 1 >= n)
                return -1;
            unsigned char e = d[k + 1];
            if (e == 'u') {
                if (k + 6 > n)
                    return -1;
                int u = ft_hex(d, k + 2);
                if (u < 0 || (u >= 0xDC00 && u <= 0xDFFF))
                    return -1;
                k += 6;
                if (u >= 0xD800 && u <= 0xDBFF) {          /* a high surrogate: its low half must follow */
                    if (k + 6 > n || d[k] != '\\' || d[k + 1] != 'u')
                        return -1;
                    int l = ft_hex(d, k + 2);
                    if (l < 0xDC00 || l > 0xDFFF)
                        return -1;
                    k += 6;
                }
                continue;
            }
            if (e != '"' && e != '\\' && e != '/' && e != 'b' && e != 'f' && e != 'n' && e != 'r' && e != 't')
                return -1;
            k += 2;
            continue;
        }
        if (c >= 0x80) {
            int m = ft_utf8(d, k, n);
            if (m == 0)
                return -1;
            k += m;
            continue;
        }
        k++;
    }
    return -1;
}

static inline int ft_plain_cp(unsigned cp) {
    return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0x2028 || cp == 0x2029;
}

/* the text of a valid string's content d[a:b] (escapes decoded) added to o; plain: textview.plain's
 * characters (control characters, line breaks) as spaces */
static int ft_text(FtBuf *o, P d, Py_ssize_t a, Py_ssize_t b, int plain) {
    if (ft_grow(o, b - a) < 0)                   /* (the text is never longer than its JSON) */
        return -1;
    char *w = o->p + o->len;
    Py_ssize_t k = a;
    while (k < b) {
        Py_ssize_t run = ft_span(d, k, b);
        memcpy(w, d + k, (size_t)(run - k));
        w += run - k;
        k = run;
        if (k >= b)
            break;
        unsigned char c = d[k];
        if (c < 0x80 && c != '\\') {
            *w++ = (char)(plain && c == 0x7F ? ' ' : c);
            k++;
            continue;
        }
        if (c >= 0x80) {
            if (plain && c == 0xC2 && d[k + 1] <= 0x9F) {               /* U+0080..U+009F */
                *w++ = ' ';
                k += 2;
                continue;
            }
            if (plain && c == 0xE2 && d[k + 1] == 0x80 && (d[k + 2] == 0xA8 || d[k + 2] == 0xA9)) {
                *w++ = ' ';                                             /* U+2028, U+2029 */
                k += 3;
                continue;
            }
            *w++ = (char)c;
            k++;
            continue;
        }
        unsigned char e = d[k + 1];
        unsigned cp;
        if (e == 'u') {
            cp = (unsigned)ft_hex(d, k + 2);
            k += 6;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + ((unsigned)ft_hex(d, k + 2) - 0xDC00);
                k += 6;
            }
        } else {
            cp = e == 'b' ? 8 : e == 'f' ? 12 : e == 'n' ? 10 : e == 'r' ? 13 : e == 't' ? 9 : e;
            k += 2;
        }
        if (plain && ft_plain_cp(cp)) {
            *w++ = ' ';
        } else if (cp < 0x80) {
            *w++ = (char)cp;
        } else if (cp < 0x800) {
            *w++ = (char)(0xC0 | (cp >> 6));
            *w++ = (char)(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            *w++ = (char)(0xE0 | (cp >> 12));
            *w++ = (char)(0x80 | ((cp >> 6) & 0x3F));
            *w++ = (char)(0x80 | (cp & 0x3F));
        } else {
            *w++ = (char)(0xF0 | (cp >> 18));
            *w++ = (char)(0x80 | ((cp >> 12) & 0x3F));
            *w++ = (char)(0x80 | ((cp >> 6) & 0x3F));
            *w++ = (char)(0x80 | (cp & 0x3F));
        }
    }
    o->len = w - o->p;
    return 0;
}

/* the JSON number d[a:b] (checked): *kind 1 an integer of at most 18 digits (*v its value), 2 a longer
 * integer, 3 not an integer */
static void ft_numval(P d, Py_ssize_t a, Py_ssize_t b, int *kind, long long *v) {
    int neg = d[a] == '-';
    Py_ssize_t s = a + neg, e = digits(d, s, b);
    if (e < b) {
        *kind = 3;
        return;
    }
    *kind = e - s <= 18 ? 1 : 2;
    long long x = 0;
    if (*kind == 1)
        for (Py_ssize_t j = s; j < e; j++)
            x = x * 10 + (d[j] - '0');
    *v = neg ? -x : x;
}

/* the end of the JSON number at d[i], else -1 */
static Py_ssize_t ft_num(P d, Py_ssize_t n, Py_ssize_t k) {
    if (k < n && d[k] == '-')
        k++;
    if (k >= n || d[k] < '0' || d[k] > '9')
        return -1;
    k = d[k] == '0' ? k + 1 : digits(d, k, n);
    if (k < n && d[k] == '.') {
        Py_ssize_t e = digits(d, k + 1, n);
        if (e == k + 1)
            return -1;
        k = e;
    }
    if (k < n && (d[k] == 'e' || d[k] == 'E')) {
        k++;
        if (k < n && (d[k] == '+' || d[k] == '-'))
            k++;
        Py_ssize_t e = digits(d, k, n);
        if (e == k)
            return -1;
        k = e;
    }
    return k;
}

/* the JSON number d[a:b] (checked) is one msgspec reads (else its row is left to the exact decoder): a
 * float whose magnitude stays under about 1e300 (msgspec refuses one that overflows a double), an
 * integer of at most 300 digits (msgspec refuses very long ones) */
static int ft_num_ok(P d, Py_ssize_t a, Py_ssize_t b) {
    Py_ssize_t k = a + (d[a] == '-'), ia = k;
    while (k < b && d[k] >= '0' && d[k] <= '9')
        k++;
    Py_ssize_t ie = k;
    if (k == b)
        return ie - ia <= 300;
    while (ia < ie && d[ia] == '0')
        ia++;
    long mag = (long)(ie - ia);                        /* significant digits before the point */
    int zero = ia == ie;
    if (k < b && d[k] == '.') {
        k++;
        Py_ssize_t fa = k;
        while (k < b && d[k] >= '0' && d[k] <= '9')
            k++;
        if (zero) {                                    /* 0.000ddd: the first significant digit's place */
            Py_ssize_t z = fa;
            while (z < k && d[z] == '0')
                z++;
            zero = z == k;
            mag = -(long)(z - fa);
        }
    }
    long ex = 0;
    if (k < b && (d[k] == 'e' || d[k] == 'E')) {
        k++;
        int neg = 0;
        if (d[k] == '+' || d[k] == '-')
            neg = d[k++] == '-';
        for (; k < b; k++)
            if (ex < 100000)
                ex = ex * 10 + (d[k] - '0');
        ex = neg ? -ex : ex;
    }
    return zero || mag + ex <= 300;
}

static inline FtTok *ft_tok(FtTape *tp) {
    if (tp->n == tp->cap) {
        Py_ssize_t cap = tp->cap ? tp->cap * 2 : 1024;
        FtTok *t = PyMem_Realloc(tp->t, (size_t)cap * sizeof(FtTok));
        if (t == NULL)
            return NULL;
        tp->t = t;
        tp->cap = cap;
    }
    return &tp->t[tp->n++];
}

/* the JSON value at d[*i] (after white space) onto the tape; -1 when not valid, deeper than FT_DEPTH, or
 * out of memory (the row is then decoded the exact way) */
static int ft_value(P d, Py_ssize_t n, Py_ssize_t *i, FtTape *tp, int depth) {
    ft_ws(d, n, i);
    if (*i >= n || depth > FT_DEPTH)
        return -1;
    Py_ssize_t me = tp->n;
    FtTok *t = ft_tok(tp);
    if (t == NULL)
        return -1;
    unsigned char c = d[*i];
    int esc = 0;
    t->kind = c;
    t->esc = 0;
    t->a = *i;
    if (c == '"') {
        Py_ssize_t a, b;
        if (ft_str(d, n, i, &a, &b, &esc) < 0)
            return -1;
        t->a = a;
        t->b = b;
        t->esc = (unsigned char)esc;
    } else if (c == '{' || c == '[') {
        unsigned char close = c == '{' ? '}' : ']';
        (*i)++;
        ft_ws(d, n, i);
        if (*i < n && d[*i] == close) {
            (*i)++;
        } else {
            for (;;) {
                if (c == '{') {
                    ft_ws(d, n, i);
                    if (*i >= n || d[*i] != '"' || ft_value(d, n, i, tp, depth + 1) < 0)
                        return -1;
                    ft_ws(d, n, i);
                    if (*i >= n || d[*i] != ':')
                        return -1;
                    (*i)++;
                }
                if (ft_value(d, n, i, tp, depth + 1) < 0)
                    return -1;
                ft_ws(d, n, i);
                if (*i >= n)
                    return -1;
                if (d[*i] == ',') {
                    (*i)++;
                    continue;
                }
                if (d[*i] != close)
                    return -1;
                (*i)++;
                break;
            }
        }
        tp->t[me].b = *i;
    } else if (c == 't' || c == 'f' || c == 'n') {
        Py_ssize_t e = c == 't' ? LIT(d, *i, n, "true") : c == 'f' ? LIT(d, *i, n, "false") : LIT(d, *i, n, "null");
        if (e < 0)
            return -1;
        *i = e;
    } else {
        Py_ssize_t e = ft_num(d, n, *i);
        if (e < 0 || !ft_num_ok(d, *i, e))
            return -1;
        t->kind = '0';
        *i = e;
        t->b = e;
    }
    tp->t[me].next = tp->n;
    return 0;
}

/* the object token o's keys are readable: none written with an escape, none twice, at most FT_MAX_KEYS */
static int ft_keys_ok(P d, const FtTape *tp, Py_ssize_t o) {
    const FtTok *t = tp->t;
    Py_ssize_t seen[FT_MAX_KEYS];
    int k = 0;
    for (Py_ssize_t c = o + 1; c < t[o].next; c = t[c + 1].next) {
        if (t[c].esc || k >= FT_MAX_KEYS)
            return 0;
        Py_ssize_t len = t[c].b - t[c].a;
        for (int j = 0; j < k; j++) {
            const FtTok *s = &t[seen[j]];
            if (s->b - s->a == len && memcmp(d + s->a, d + t[c].a, (size_t)len) == 0)
                return 0;
        }
        seen[k++] = c;
    }
    return 1;
}

/* the value token of key s in object o (keys checked by ft_keys_ok), -1 when absent */
static Py_ssize_t ft_get(P d, const FtTape *tp, Py_ssize_t o, const char *s) {
    const FtTok *t = tp->t;
    size_t len = strlen(s);
    for (Py_ssize_t c = o + 1; c < t[o].next; c = t[c + 1].next)
        if ((size_t)(t[c].b - t[c].a) == len && memcmp(d + t[c].a, s, len) == 0)
            return c + 1;
    return -1;
}

/* the object at token v, keys readable: 1; -1 otherwise */
static int ft_obj(P d, const FtTape *tp, Py_ssize_t v) {
    return v >= 0 && tp->t[v].kind == '{' && ft_keys_ok(d, tp, v) ? 1 : -1;
}

/* token v as a string: 1 a string (no escape needed), 0 null or absent, -1 anything else */
static inline int ft_strv(const FtTape *tp, Py_ssize_t v) {
    if (v < 0 || tp->t[v].kind == 'n')
        return 0;
    return tp->t[v].kind == '"' ? 1 : -1;
}

/* the string token v equals s (an escaped string never does here: the caller falls back on it) */
static int ft_is(P d, const FtTape *tp, Py_ssize_t v, const char *s) {
    const FtTok *t = &tp->t[v];
    size_t len = strlen(s);
    return t->kind == '"' && !t->esc && (size_t)(t->b - t->a) == len && memcmp(d + t->a, s, len) == 0;
}

static inline int ft_part(FtBuf *o, P d, const FtTok *t, int *parts) {
    if (t->b == t->a)
        return 0;
    if ((*parts)++ && ft_put(o, " ", 1) < 0)
        return -1;
    return ft_text(o, d, t->a, t->b, 1);
}

/* textview.content_text of the content at token v (v < 0: absent) with its default parameters, plained,
 * added to o (parts joined by spaces, *parts counts them); -1: a shape left to the exact decoder (an image,
 * a block shown as JSON, a number) */
static int ft_content(FtBuf *o, P d, const FtTape *tp, Py_ssize_t v, int depth, int *parts) {
    const FtTok *t = tp->t;
    if (v < 0 || t[v].kind == 'n')
        return 0;
    if (t[v].kind == '"')
        return ft_part(o, d, &t[v], parts);
    if (t[v].kind != '[' || depth > 8)
        return -1;
    for (Py_ssize_t c = v + 1; c < t[v].next; c = t[c].next) {
        unsigned char k = t[c].kind;
        if (k == '"') {                                /* a bare string: itself */
            if (ft_part(o, d, &t[c], parts) < 0)
                return -1;
            continue;
        }
        if (k == 'n')
            continue;
        if (ft_obj(d, tp, c) < 0)
            return -1;
        Py_ssize_t tv = ft_get(d, tp, c, "type");
        int kind = 0;                                  /* 1 text, 2 tool-result, 0 another block */
        if (tv >= 0 && t[tv].kind == '"') {
            if (t[tv].esc || ft_is(d, tp, tv, "image"))
                return -1;
            kind = ft_is(d, tp, tv, "text") || ft_is(d, tp, tv, "reasoning") ? 1
                 : ft_is(d, tp, tv, "tool-result") ? 2 : 0;
        }
        if (kind == 2) {
            if (ft_content(o, d, tp, ft_get(d, tp, c, "content"), depth + 1, parts) < 0)
                return -1;
            continue;
        }
        Py_ssize_t xv = ft_get(d, tp, c, "text");
        int s = ft_strv(tp, xv);
        if (s < 0 || (s == 0 && kind == 0))            /* (another block without a string text: its JSON) */
            return -1;
        if (s > 0 && ft_part(o, d, &t[xv], parts) < 0)
            return -1;
    }
    return 0;
}

/* the text Python gives a JSON number d[a:b] (checked by ft_num_ok): an integer's digits (str(int)), a float's
 * repr (PyOS_double_to_string 'r', as float.__repr__), added to o; -1 left to the exact decoder */
static int ft_number(FtBuf *o, P d, Py_ssize_t a, Py_ssize_t b) {
    int kind;
    long long x;
    ft_numval(d, a, b, &kind, &x);
    if (kind == 1) {
        char num[32];
        int k = snprintf(num, sizeof num, "%lld", x);
        return ft_put(o, num, k);
    }
    if (kind == 2)                                     /* (a long integer: its digits are str(int)) */
        return ft_put(o, (const char *)d + a, b - a);
    char text[400];
    if (b - a >= (Py_ssize_t)sizeof text)
        return -1;
    memcpy(text, d + a, (size_t)(b - a));
    text[b - a] = 0;
    char *end = NULL;
    double v = PyOS_string_to_double(text, &end, NULL);
    if (v == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        return -1;
    }
    if (end != text + (b - a) || !isfinite(v))
        return -1;
    char *r = PyOS_double_to_string(v, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
    if (r == NULL) {
        PyErr_Clear();
        return -1;
    }
    int got = ft_put(o, r, (Py_ssize_t)strlen(r));
    PyMem_Free(r);
    return got;
}

static FtBuf FT_ESC;                                   /* a string of arguments' JSON, decoded, to escape again */

/* json.dumps of the JSON string d[a:b] (ensure_ascii=False: '"', '\\' and the control characters escaped, the
 * rest as is), plained (what json.dumps leaves of DEL, U+0080..U+009F, U+2028/9 as spaces), added to o */
static int ft_dump_str(FtBuf *o, P d, Py_ssize_t a, Py_ssize_t b) {
    FT_ESC.len = 0;
    if (ft_text(&FT_ESC, d, a, b, 0) < 0 || ft_grow(o, 6 * FT_ESC.len + 2) < 0)
        return -1;
    static const char hex[] = "0123456789abcdef";
    P s = (P)FT_ESC.p;
    char *w = o->p + o->len;
    *w++ = '"';
    for (Py_ssize_t k = 0; k < FT_ESC.len; k++) {
        unsigned char c = s[k];
        const char *e = c == '"' ? "\\\"" : c == '\\' ? "\\\\" : c == '\n' ? "\\n" : c == '\r' ? "\\r"
                      : c == '\t' ? "\\t" : c == '\b' ? "\\b" : c == '\f' ? "\\f" : NULL;
        if (e != NULL) {
            *w++ = e[0];
            *w++ = e[1];
        } else if (c < 0x20) {
            memcpy(w, "\\u00", 4);
            w[4] = hex[c >> 4];
            w[5] = hex[c & 15];
            w += 6;
        } else if (c == 0x7F) {
            *w++ = ' ';
        } else if (c == 0xC2 && s[k + 1] <= 0x9F) {
            *w++ = ' ';
            k++;
        } else if (c == 0xE2 && s[k + 1] == 0x80 && (s[k + 2] == 0xA8 || s[k + 2] == 0xA9)) {
            *w++ = ' ';
            k += 2;
        } else {
            *w++ = (char)c;
        }
    }
    *w++ = '"';
    o->len = w - o->p;
    return 0;
}

/* json.dumps(value, ensure_ascii=False) of token v, plained, added to o (", " and ": " between items, as
 * textview.value_text shows a list or an object of tool arguments); -1 left to the exact decoder */
static int ft_dump(FtBuf *o, P d, const FtTape *tp, Py_ssize_t v, int depth) {
    const FtTok *t = tp->t;
    switch (t[v].kind) {
    case '"':
        return ft_dump_str(o, d, t[v].a, t[v].b);
    case 't':
        return ft_put(o, "true", 4);
    case 'f':
        return ft_put(o, "false", 5);
    case 'n':
        return ft_put(o, "null", 4);
    case '{':
    case '[': {
        int obj = t[v].kind == '{';
        if (depth > 16 || (obj && ft_obj(d, tp, v) < 0) || ft_put(o, obj ? "{" : "[", 1) < 0)
            return -1;
        for (Py_ssize_t c = v + 1; c < t[v].next; c = obj ? t[c + 1].next : t[c].next) {
            if (c > v + 1 && ft_put(o, ", ", 2) < 0)
                return -1;
            if (obj && (ft_dump_str(o, d, t[c].a, t[c].b) < 0 || ft_put(o, ": ", 2) < 0))
                return -1;
            if (ft_dump(o, d, tp, obj ? c + 1 : c, depth + 1) < 0)
                return -1;
        }
        return ft_put(o, obj ? "}" : "]", 1);
    }
    default:
        return ft_number(o, d, t[v].a, t[v].b);
    }
}

/* a scalar of a generic row's payload or of tool arguments at token v, added to o as textview shows it
 * (payload: null as "null", lists and objects not shown; arguments: null as "", lists and objects as their
 * JSON): 1 added, 0 not shown, -1 left to the exact decoder */
static int ft_scalar(FtBuf *o, P d, const FtTape *tp, Py_ssize_t v, int args) {
    const FtTok *t = &tp->t[v];
    switch (t->kind) {
    case '"':
        return ft_text(o, d, t->a, t->b, 1) < 0 ? -1 : 1;
    case 't':
        return ft_put(o, "true", 4) < 0 ? -1 : 1;
    case 'f':
        return ft_put(o, "false", 5) < 0 ? -1 : 1;
    case 'n':
        return args ? 1 : (ft_put(o, "null", 4) < 0 ? -1 : 1);
    case '{':
    case '[':
        return args ? (ft_dump(o, d, tp, v, 0) < 0 ? -1 : 1) : 0;
    default:
        return ft_number(o, d, t->a, t->b) < 0 ? -1 : 1;
    }
}

/* textview.payload_text of a generic row's payload (the object token v), plained, added to o */
static int ft_payload(FtBuf *o, P d, const FtTape *tp, Py_ssize_t v) {
    const FtTok *t = tp->t;
    int lines = 0;
    if (ft_obj(d, tp, v) < 0)
        return -1;
    for (Py_ssize_t c = v + 1; c < t[v].next; c = t[c + 1].next) {
        if (memchr(d + t[c].a, '.', (size_t)(t[c].b - t[c].a)) != NULL)
            return -1;                                 /* (a dotted key: textview names it by its last part) */
        Py_ssize_t val = c + 1, from = c, to = c + 2;  /* the members shown: this one, or a nested object's */
        if (t[val].kind == '{') {
            if (ft_obj(d, tp, val) < 0)
                return -1;
            from = val + 1;
            to = t[val].next;
        }
        for (Py_ssize_t k = from; k < to; k = t[k + 1].next) {
            const FtTok *vt = &t[k + 1];
            if (from != c && memchr(d + t[k].a, '.', (size_t)(t[k].b - t[k].a)) != NULL)
                return -1;
            if (vt->kind == '{' || vt->kind == '[' || (vt->kind == '"' && vt->a == vt->b))
                continue;                              /* (lists, deeper objects, empty strings: no line) */
            if ((lines++ && ft_put(o, " ", 1) < 0) || ft_text(o, d, t[k].a, t[k].b, 1) < 0 || ft_put(o, " ", 1) < 0
                || ft_scalar(o, d, tp, k + 1, 0) < 0)
                return -1;
        }
    }
    return 0;
}

/* textview.arguments_text of the tool arguments at token v (v < 0: absent), plained, added to o: a JSON
 * object (or a string holding one) as ``key: value`` lines; -1 for any other shape */
static int ft_arguments(FtBuf *o, P d, const FtTape *tp, Py_ssize_t v) {
    if (v < 0 || tp->t[v].kind == 'n')
        return 0;
    P src = d;
    const FtTape *at = tp;
    if (tp->t[v].kind == '"') {                        /* a string: its JSON (json.loads) */
        const FtTok *s = &tp->t[v];
        if (s->a == s->b)
            return 0;                                  /* "": not JSON, shown as is (nothing) */
        FT_ARGS.len = 0;
        FT_INNER.n = 0;
        Py_ssize_t i = 0;
        if (ft_text(&FT_ARGS, d, s->a, s->b, 0) < 0)
            return -1;
        src = (P)FT_ARGS.p;
        if (ft_value(src, FT_ARGS.len, &i, &FT_INNER, 1) < 0)
            return -1;
        ft_ws(src, FT_ARGS.len, &i);
        if (i != FT_ARGS.len)
            return -1;                                 /* (text after the value: json.loads says no) */
        at = &FT_INNER;
        v = 0;
    }
    const FtTok *t = at->t;
    if (ft_obj(src, at, v) < 0)
        return -1;
    int lines = 0;
    for (Py_ssize_t c = v + 1; c < t[v].next; c = t[c + 1].next)
        if ((lines++ && ft_put(o, " ", 1) < 0) || ft_text(o, src, t[c].a, t[c].b, 1) < 0 || ft_put(o, ": ", 2) < 0
            || ft_scalar(o, src, at, c + 1, 1) != 1)
            return -1;
    return 0;
}

static PyObject *FT_KINDS[4];                          /* user, reasoning, assistant, event */
static PyObject *FT_SPECIAL;                           /* a tuple of bytes: the types not read as generic rows */

static PyObject *ft_pystr(const FtBuf *o) {
    return PyUnicode_DecodeUTF8(o->p ? o->p : "", o->len, "strict");
}

/* string token v as a Python str (unplained), None when s <= 0 */
static PyObject *ft_opt(P d, const FtTape *tp, Py_ssize_t v, int s) {
    if (s <= 0)
        Py_RETURN_NONE;
    FT_ARGS.len = 0;
    if (ft_text(&FT_ARGS, d, tp->t[v].a, tp->t[v].b, 0) < 0)
        return PyErr_NoMemory();
    return ft_pystr(&FT_ARGS);
}

/* "name args" (plained; the name alone without arguments) into o: 0, or -1 */
static int ft_call_text(FtBuf *o, P d, const FtTape *tp, Py_ssize_t nv, int s, Py_ssize_t av) {
    o->len = 0;
    if (s > 0 && ft_text(o, d, tp->t[nv].a, tp->t[nv].b, 1) < 0)
        return -1;
    Py_ssize_t at = o->len;
    if (ft_put(o, " ", 1) < 0 || ft_arguments(o, d, tp, av) < 0)
        return -1;
    if (o->len == at + 1)
        o->len = at;
    return 0;
}

/* an assistant message's fields and tool-call blocks (its content at token cv, -1: none): 0 (fields and
 * *blocks filled), -1 fall back, -2 a Python error */
static int ft_assistant(P d, const FtTape *tp, Py_ssize_t cv, PyObject *fields, PyObject **blocks) {
    const FtTok *t = tp->t;
    if (cv < 0 || t[cv].kind == 'n')
        return 0;
    if (t[cv].kind != '[')
        return -1;
    int counts[2] = {0, 0}, any[2] = {0, 0};
    FtBuf *bufs[2] = {&FT_OUT, &FT_TMP};                  /* reasoning, text */
    FT_OUT.len = FT_TMP.len = 0;
    for (Py_ssize_t c = cv + 1; c < t[cv].next; c = t[c].next) {
        if (t[c].kind != '{')
            continue;                                  /* (not a block) */
        if (ft_obj(d, tp, c) < 0)
            return -1;
        Py_ssize_t tv = ft_get(d, tp, c, "type");
        if (tv < 0 || t[tv].kind != '"')
            continue;
        if (t[tv].esc)
            return -1;
        int which = ft_is(d, tp, tv, "reasoning") ? 0 : ft_is(d, tp, tv, "text") ? 1 : -1;
        if (which >= 0) {
            Py_ssize_t xv = ft_get(d, tp, c, "text");
            int s = ft_strv(tp, xv);
            if (s < 0 || (counts[which]++ && ft_put(bufs[which], " ", 1) < 0))
                return -1;
            if (s > 0 && t[xv].b > t[xv].a) {
                if (ft_text(bufs[which], d, t[xv].a, t[xv].b, 1) < 0)
                    return -1;
                any[which] = 1;
            }
        } else if (ft_is(d, tp, tv, "tool-call")) {
            Py_ssize_t nv = ft_get(d, tp, c, "name"), iv = ft_get(d, tp, c, "id");
            int s = ft_strv(tp, nv);
            if (s < 0 || ft_call_text(&FT_BLK, d, tp, nv, s, ft_get(d, tp, c, "arguments")) < 0)
                return -1;
            int named = s > 0 && t[nv].b > t[nv].a;
            PyObject *text = ft_pystr(&FT_BLK);
            PyObject *name = text ? ft_opt(d, tp, nv, named) : NULL;
            PyObject *cid = name ? ft_opt(d, tp, iv, iv >= 0 && t[iv].kind == '"') : NULL;
            PyObject *b = cid ? PyTuple_Pack(3, cid, name, text) : NULL;
            Py_XDECREF(text);
            Py_XDECREF(name);
            Py_XDECREF(cid);
            int bad = b == NULL || (*blocks == NULL && (*blocks = PyList_New(0)) == NULL) || PyList_Append(*blocks, b) < 0;
            Py_XDECREF(b);
            if (bad)
                return -2;
        }
    }
    for (int k = 0; k < 2; k++) {
        if (!any[k])
            continue;
        PyObject *text = ft_pystr(bufs[k]);
        PyObject *f = text ? PyTuple_Pack(2, FT_KINDS[k ? 2 : 1], text) : NULL;
        Py_XDECREF(text);
        int bad = f == NULL || PyList_Append(fields, f) < 0;
        Py_XDECREF(f);
        if (bad)
            return -2;
    }
    return 0;
}

/* tool/result: the call its message (token m) answers (source.callId, else toolCallId, else its first
 * tool-result block's): the string's token, -1 none, -2 fall back */
static Py_ssize_t ft_answered(P d, const FtTape *tp, Py_ssize_t m) {
    const FtTok *t = tp->t;
    Py_ssize_t sv = ft_get(d, tp, m, "source"), v = -1;
    int s = 0;
    if (sv >= 0 && t[sv].kind == '{') {
        if (ft_obj(d, tp, sv) < 0)
            return -2;
        v = ft_get(d, tp, sv, "callId");
        s = ft_strv(tp, v);
    }
    if (s == 0) {
        v = ft_get(d, tp, m, "toolCallId");
        s = ft_strv(tp, v);
    }
    Py_ssize_t cv = ft_get(d, tp, m, "content");
    if (s == 0 && cv >= 0 && t[cv].kind == '[') {
        for (Py_ssize_t c = cv + 1; c < t[cv].next; c = t[c].next) {
            if (t[c].kind != '{')
                continue;
            if (ft_obj(d, tp, c) < 0)
                return -2;
            Py_ssize_t tv = ft_get(d, tp, c, "type");
            if (tv >= 0 && t[tv].kind == '"' && t[tv].esc)
                return -2;
            if (tv >= 0 && ft_is(d, tp, tv, "tool-result")) {
                v = ft_get(d, tp, c, "toolCallId");
                s = ft_strv(tp, v);
                break;
            }
        }
    }
    return s < 0 ? -2 : s == 0 ? -1 : v;
}

#define FT_FALLBACK(cond) do { if (cond) { res = Py_None; Py_INCREF(res); goto out; } } while (0)
#define FT_TYPE(s) ft_is(d, &FT_TAPE, 0 + tv, s)

/* text_row of the row d[:n] (a new reference; None: decode it the exact way), NULL on a Python error */
static PyObject *ft_row(P d, Py_ssize_t n, int legacy) {
    Py_ssize_t i = 0;
    PyObject *res = NULL, *fields = NULL, *blocks = NULL, *turn = NULL, *x = NULL, *y = NULL, *z = NULL;
    const FtTape *tp = &FT_TAPE;
    int kind;
    long long seq, tm = 0, v;
    FT_TAPE.n = 0;
    FT_OUT.len = 0;
    FT_FALLBACK(FT_SPECIAL == NULL || n == 0 || d[0] != '{' || ft_value(d, n, &i, &FT_TAPE, 0) < 0);
    ft_ws(d, n, &i);
    FT_FALLBACK(i != n || ft_obj(d, tp, 0) < 0);
    const FtTok *t = FT_TAPE.t;
    Py_ssize_t tv = ft_get(d, tp, 0, "type"), sv = ft_get(d, tp, 0, "seq");
    Py_ssize_t mv = ft_get(d, tp, 0, "time"), dv = ft_get(d, tp, 0, "data");
    FT_FALLBACK(tv < 0 || t[tv].kind != '"' || t[tv].esc || sv < 0 || t[sv].kind != '0' || ft_obj(d, tp, dv) < 0);
    ft_numval(d, t[sv].a, t[sv].b, &kind, &seq);
    FT_FALLBACK(kind != 1 || seq < 0 || seq > 9007199254740991LL);
    int strict_time = 1;                               /* (a legacy shape is read only with an integer time) */
    if (mv >= 0 && t[mv].kind == '0') {
        ft_numval(d, t[mv].a, t[mv].b, &kind, &tm);
        FT_FALLBACK(kind == 2);
        strict_time = kind != 1;
        if (kind != 1)
            tm = 0;
    }
    Py_ssize_t uv = ft_get(d, tp, dv, "turn");
    if (uv >= 0 && t[uv].kind == '0') {
        ft_numval(d, t[uv].a, t[uv].b, &kind, &v);
        FT_FALLBACK(kind == 2);
        turn = kind == 1 ? PyLong_FromLongLong(v) : (Py_INCREF(Py_None), Py_None);
    } else {
        turn = Py_None;
        Py_INCREF(turn);
    }
    if (turn == NULL)
        goto out;
    if (FT_TYPE("turn/start")) {
        res = Py_BuildValue("(iLLO)", 1, seq, tm, turn);
    } else if (FT_TYPE("user/message")) {
        int parts = 0;
        FT_FALLBACK(ft_content(&FT_OUT, d, tp, ft_get(d, tp, dv, "content"), 0, &parts) < 0);
        if (parts == 0)
            res = Py_BuildValue("(i)", 0);
        else if ((x = ft_pystr(&FT_OUT)) != NULL)
            res = Py_BuildValue("(iLLO[(OO)]O)", 2, seq, tm, turn, FT_KINDS[0], x, Py_None);
    } else if (FT_TYPE("assistant/message")) {
        Py_ssize_t msg = ft_get(d, tp, dv, "message"), cv = -1;
        if (msg >= 0) {
            FT_FALLBACK(ft_obj(d, tp, msg) < 0);
            cv = ft_get(d, tp, msg, "content");
        } else {                                       /* v0/v1: the codec makes the content the message's */
            cv = ft_get(d, tp, dv, "content");
            FT_FALLBACK(!legacy || cv < 0 || strict_time);
        }
        if ((fields = PyList_New(0)) == NULL)
            goto out;
        int r = ft_assistant(d, tp, cv, fields, &blocks);
        if (r == -2)
            goto out;
        FT_FALLBACK(r < 0);
        if (PyList_GET_SIZE(fields) == 0 && blocks == NULL)
            res = Py_BuildValue("(i)", 0);
        else
            res = Py_BuildValue("(iLLOOO)", 2, seq, tm, turn, fields, blocks ? blocks : Py_None);
    } else if (FT_TYPE("tool/call")) {
        Py_ssize_t nv = ft_get(d, tp, dv, "name"), cv = ft_get(d, tp, dv, "callId");
        int s = ft_strv(tp, nv), c = ft_strv(tp, cv);
        FT_FALLBACK(s < 0 || c < 0 || ft_call_text(&FT_OUT, d, tp, nv, s, ft_get(d, tp, dv, "arguments")) < 0);
        if ((z = ft_pystr(&FT_OUT)) != NULL && (x = ft_opt(d, tp, cv, c)) != NULL
            && (y = s > 0 ? ft_opt(d, tp, nv, s) : PyUnicode_FromString("")) != NULL)
            res = Py_BuildValue("(iLLOOOO)", 3, seq, tm, turn, x, y, z);
    } else if (FT_TYPE("tool/result")) {
        Py_ssize_t ev = ft_get(d, tp, dv, "error"), msg = ft_get(d, tp, dv, "message"), c, cv;
        int parts = 0;
        FT_FALLBACK(ev >= 0 && t[ev].kind != 'n');
        if (msg < 0 && legacy && (c = ft_get(d, tp, dv, "callId")) >= 0) {
            /* v0/v1: the codec makes one tool-result block of the row's callId and content */
            cv = ft_get(d, tp, dv, "content");
            FT_FALLBACK(strict_time || ft_strv(tp, c) < 0 || (cv >= 0 && t[cv].kind != '[' && t[cv].kind != 'n'));
            if (t[c].kind != '"')
                c = -1;
        } else {
            FT_FALLBACK(ft_obj(d, tp, msg) < 0);
            c = ft_answered(d, tp, msg);
            cv = ft_get(d, tp, msg, "content");
        }
        FT_FALLBACK(c == -2 || ft_content(&FT_OUT, d, tp, cv, 2, &parts) < 0);
        if (parts == 0)
            res = Py_BuildValue("(i)", 0);
        else if ((y = ft_pystr(&FT_OUT)) != NULL && (x = ft_opt(d, tp, c, c >= 0)) != NULL)
            res = Py_BuildValue("(iLLOOO)", 4, seq, tm, turn, x, y);
    } else if (FT_TYPE("session/title")) {
        Py_ssize_t xv = ft_get(d, tp, dv, "title");
        int s = ft_strv(tp, xv);
        FT_FALLBACK(s < 0);
        if (s == 0 || t[xv].a == t[xv].b)
            res = Py_BuildValue("(i)", 0);
        else if ((x = ft_opt(d, tp, xv, 1)) != NULL)
            res = Py_BuildValue("(iLLOO)", 5, seq, tm, turn, x);
    } else {
        Py_ssize_t k, nt = PyTuple_GET_SIZE(FT_SPECIAL), len = t[tv].b - t[tv].a;
        for (k = 0; k < nt; k++) {
            PyObject *s = PyTuple_GET_ITEM(FT_SPECIAL, k);
            if (PyBytes_GET_SIZE(s) == len && memcmp(PyBytes_AS_STRING(s), d + t[tv].a, (size_t)len) == 0)
                break;
        }
        FT_FALLBACK(k < nt);                           /* (a text type not read here, todo/write …) */
        FT_FALLBACK(ft_payload(&FT_OUT, d, tp, dv) < 0);
        if (FT_OUT.len == 0)
            res = Py_BuildValue("(i)", 0);
        else if ((x = ft_pystr(&FT_OUT)) != NULL)
            res = Py_BuildValue("(iLLO[(OO)]O)", 2, seq, tm, turn, FT_KINDS[3], x, Py_None);
    }
out:
    Py_XDECREF(turn);
    Py_XDECREF(fields);
    Py_XDECREF(blocks);
    Py_XDECREF(x);
    Py_XDECREF(y);
    Py_XDECREF(z);
    return res;
}
#undef FT_FALLBACK
#undef FT_TYPE

static PyObject *text_row(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer view;
    int legacy = 0;
    if (!PyArg_ParseTuple(args, "y*|p", &view, &legacy))
        return NULL;
    PyObject *res = ft_row((P)view.buf, view.len, legacy);
    PyBuffer_Release(&view);
    return res;
}

static PyObject *FT_SKIP, *FT_ERR_ONLY;                /* tuples of bytes: types whose rows show no text, or
                                                        * only when they hold "error" (extract.NO_TEXT_B …) */

static int ft_in(PyObject *types, P s, Py_ssize_t len) {
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(types); k++) {
        PyObject *t = PyTuple_GET_ITEM(types, k);
        if (PyBytes_GET_SIZE(t) == len && memcmp(PyBytes_AS_STRING(t), s, (size_t)len) == 0)
            return 1;
    }
    return 0;
}

/* text_rows(data, start, end, most, max_row[, legacy]) -> (items, next, newlines): the rows of data[start:end] (start
 * at a row, end just after a newline) that may show text, as extract.candidate_rows picks them (a row written
 * the dsh way whose type shows no text, a blank row: skipped), each read by text_row: its answer, or
 * (-1, offset, raw) where the row is to be decoded the exact way (and every row over max_row bytes).  Stops
 * after ``most`` such rows: next is the offset to go on from, newlines those passed. */
static PyObject *text_rows(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer view;
    Py_ssize_t start, end, most, max_row;
    int legacy = 0;
    if (!PyArg_ParseTuple(args, "y*nnnn|p", &view, &start, &end, &most, &max_row, &legacy))
        return NULL;
    P d = (P)view.buf;
    PyObject *items = PyList_New(0), *res = NULL;
    Py_ssize_t at = start < 0 ? 0 : start, lines = 0, got = 0;
    if (end > view.len)
        end = view.len;
    if (items == NULL || FT_SKIP == NULL)
        goto out;
    while (at < end && got < most) {
        P nl = memchr(d + at, '\n', (size_t)(end - at));
        if (nl == NULL)
            break;                                     /* (a torn row: left for later) */
        Py_ssize_t e = nl - d, len = e - at;
        P r = d + at;
        Py_ssize_t row_at = at;
        at = e + 1;
        lines++;
        if (len >= 10 && memcmp(r, "{\"type\":\"", 9) == 0) {
            P q = memchr(r + 9, '"', (size_t)(len - 9));
            if (q != NULL && q > r + 9) {
                Py_ssize_t tl = q - (r + 9);
                if (ft_in(FT_SKIP, r + 9, tl))
                    continue;
                if (ft_in(FT_ERR_ONLY, r + 9, tl) && memmem(r, (size_t)len, "\"error\"", 7) == NULL)
                    continue;
            }
        } else {
            Py_ssize_t k = 0;
            while (k < len && (r[k] == ' ' || (r[k] >= '\t' && r[k] <= '\r')))
                k++;
            if (k == len)
                continue;                              /* (blank) */
        }
        got++;
        PyObject *it = len <= max_row ? ft_row(r, len, legacy) : (Py_INCREF(Py_None), Py_None);
        if (it == Py_None) {
            Py_DECREF(it);
            it = Py_BuildValue("(iny#)", -1, row_at, (const char *)r, len);
        }
        if (it == NULL || PyList_Append(items, it) < 0) {
            Py_XDECREF(it);
            goto out;
        }
        Py_DECREF(it);
    }
    res = Py_BuildValue("(Onn)", items, at, lines);
out:
    Py_XDECREF(items);
    PyBuffer_Release(&view);
    return res;
}

/* text_setup(special, skip, err_only): the types text_row leaves to the exact decoder rather than read as
 * generic rows (textview's text types, the types that show no payload, todo/write); the types text_rows skips,
 * and those it skips unless the row holds "error" (tuples of bytes) */
static PyObject *text_setup(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *special, *skip, *err_only;
    if (!PyArg_ParseTuple(args, "O!O!O!", &PyTuple_Type, &special, &PyTuple_Type, &skip, &PyTuple_Type, &err_only))
        return NULL;
    PyObject *all[3] = {special, skip, err_only};
    for (int j = 0; j < 3; j++)
        for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(all[j]); k++)
            if (!PyBytes_Check(PyTuple_GET_ITEM(all[j], k))) {
                PyErr_SetString(PyExc_TypeError, "text_setup: tuples of bytes");
                return NULL;
            }
    for (int c = 0; c < 256; c++)
        FT_STOP[c] = c < 0x20 || c == '"' || c == '\\' || c >= 0x7F;
    if (FT_KINDS[0] == NULL) {
        const char *names[4] = {"user", "reasoning", "assistant", "event"};
        for (int k = 0; k < 4; k++)
            if ((FT_KINDS[k] = PyUnicode_InternFromString(names[k])) == NULL)
                return NULL;
    }
    Py_INCREF(special);
    Py_XSETREF(FT_SPECIAL, special);
    Py_INCREF(skip);
    Py_XSETREF(FT_SKIP, skip);
    Py_INCREF(err_only);
    Py_XSETREF(FT_ERR_ONLY, err_only);
    Py_RETURN_NONE;
}
/* ---- end of ftsc ---- */

/* ---- big29: find_folded, the whole-log find's byte search (issue 29) ----
 * find_folded(data, start, end, needle, table, k, rows) -> list of offsets
 *   Every place i of ``needle`` in ``data.translate(table)[start:end]``, left to right, not overlapping (the next
 *   search starts at i + len(needle)); ``rows``: only the first in each row (the next search starts after the
 *   first b"\n" from i + len(needle); none: the end).  Exactly app/log/query/find_prefilter.find_folded_py, without
 *   the translated copy: the places of needle[k] are found by memchr of the bytes the table maps onto it (one
 *   or two; more: a byte loop), each place checked byte by byte through the table.  ``table`` is 256 bytes
 *   mapping b"\n" onto itself and no other byte onto it (the caller checks). */
/* The two byte searches' shared parts (find_folded here, find_ascii in the find section). */
static PyObject *ff_open(PyObject *data, Py_buffer *view, Py_ssize_t *start, Py_ssize_t *end) {
    /* The result list, with ``view`` held on data and [start, end) clamped to it; NULL (nothing held): an error. */
    if (PyObject_GetBuffer(data, view, PyBUF_SIMPLE) < 0)
        return NULL;
    if (*start < 0)
        *start = 0;
    if (*end > view->len)
        *end = view->len;
    PyObject *out = PyList_New(0);
    if (out == NULL)
        PyBuffer_Release(view);
    return out;
}

static int ff_take(PyObject *out, const unsigned char *d, Py_ssize_t i, Py_ssize_t nn, Py_ssize_t end, int rows,
                   Py_ssize_t *pos) {
    /* Place i found: appended, and *pos moved past it (``rows``: past the end of its row).  -> 0 go on, 1 stop
     * (no next row), -1 an error (raised). */
    PyObject *v = PyLong_FromSsize_t(i);
    if (v == NULL || PyList_Append(out, v) < 0) {
        Py_XDECREF(v);
        return -1;
    }
    Py_DECREF(v);
    *pos = i + nn;
    if (rows) {
        const unsigned char *e = *pos < end ? memchr(d + *pos, '\n', (size_t)(end - *pos)) : NULL;
        if (e == NULL)
            return 1;
        *pos = (e - d) + 1;
    }
    return 0;
}

static PyObject *find_folded(PyObject *self, PyObject *args) {
    PyObject *data;
    const unsigned char *nd, *tb;
    Py_ssize_t start, end, nn, ntb, k;
    int rows;
    (void)self;
    if (!PyArg_ParseTuple(args, "Onny#y#np", &data, &start, &end, &nd, &nn, &tb, &ntb, &k, &rows))
        return NULL;
    if (ntb != 256 || nn <= 0 || k < 0 || k >= nn) {
        PyErr_SetString(PyExc_ValueError, "find_folded: a 256-byte table, a needle, 0 <= k < len(needle)");
        return NULL;
    }
    Py_buffer view;
    PyObject *out = ff_open(data, &view, &start, &end);
    if (out == NULL)
        return NULL;
    const unsigned char *d = (const unsigned char *)view.buf;
    unsigned char pre[256], want[256];
    int npre = 0;
    memset(want, 0, sizeof want);
    for (int c = 0; c < 256; c++)
        if (tb[c] == nd[k]) {
            pre[npre++] = (unsigned char)c;
            want[c] = 1;
        }
    Py_ssize_t pos = start;                 /* the next place may start here */
    const unsigned char *n1 = NULL, *n2 = NULL;   /* cached next places of pre[0], pre[1] */
    Py_ssize_t from1 = -1, from2 = -1;
    while (npre > 0 && end - pos >= nn) {
        Py_ssize_t lo = pos + k, hi = end - nn + k + 1;    /* where needle[k] may be */
        const unsigned char *p = NULL;
        if (npre <= 2) {
            if (n1 == NULL || from1 > lo || (n1 != d + hi && n1 < d + lo)) {
                n1 = memchr(d + lo, pre[0], (size_t)(hi - lo));
                n1 = n1 ? n1 : d + hi;
                from1 = lo;
            }
            p = n1;
            if (npre == 2) {
                if (n2 == NULL || from2 > lo || (n2 != d + hi && n2 < d + lo)) {
                    n2 = memchr(d + lo, pre[1], (size_t)(hi - lo));
                    n2 = n2 ? n2 : d + hi;
                    from2 = lo;
                }
                if (n2 < p)
                    p = n2;
            }
        } else {
            Py_ssize_t q = lo;
            while (q < hi && !want[d[q]])
                q++;
            p = d + q;
        }
        if (p >= d + hi)
            break;
        Py_ssize_t i = (p - d) - k, j = 0;
        while (j < nn && tb[d[i + j]] == nd[j])
            j++;
        if (j < nn) {
            pos = i + 1;
            continue;
        }
        int r = ff_take(out, d, i, nn, end, rows, &pos);
        if (r < 0) {
            Py_DECREF(out);
            PyBuffer_Release(&view);
            return NULL;
        }
        if (r > 0)
            break;
    }
    PyBuffer_Release(&view);
    return out;
}

/* ---- numbers: the fast paths' row screen (issue 27; owner: the numbers helper) ----
 * screen_row(raw, max_row, max_depth) -> bool: tl_refused of one row (the timeline's rule; the interpreted
 *   definition is app/log/format/rowscreen.py refused_py): over max_row bytes, nested deeper than max_depth
 *   outside strings, not UTF-8, or holding outside strings a number of more than 18 digits in a row or with an
 *   exponent (msgspec's lean records skip such a number where the exact decoder may refuse it).
 * screen_rows(rows, max_row, max_depth) -> list: the indexes of the rows (a list of bytes) screen_row refuses. */
static PyObject *screen_row(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t max_row;
    int max_depth;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*ni", &view, &max_row, &max_depth))
        return NULL;
    int r = tl_refused((P)view.buf, 0, view.len, max_row, max_depth);
    PyBuffer_Release(&view);
    return PyBool_FromLong(r);
}

static PyObject *screen_rows(PyObject *self, PyObject *args) {
    PyObject *rows;
    Py_ssize_t max_row;
    int max_depth;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!ni", &PyList_Type, &rows, &max_row, &max_depth))
        return NULL;
    PyObject *out = PyList_New(0);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(rows); i++) {
        PyObject *r = PyList_GET_ITEM(rows, i);
        if (!PyBytes_Check(r)) {
            Py_DECREF(out);
            PyErr_SetString(PyExc_TypeError, "screen_rows: rows must be bytes");
            return NULL;
        }
        if (!tl_refused((P)PyBytes_AS_STRING(r), 0, PyBytes_GET_SIZE(r), max_row, max_depth))
            continue;
        PyObject *k = PyLong_FromSsize_t(i);
        if (k == NULL || PyList_Append(out, k) < 0) {
            Py_XDECREF(k);
            Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(k);
    }
    return out;
}
/* ---- end numbers ---- */

/* ---- search: the home index's manifest check (issue 32; owner: the search helper) ----
 * manifest_same(blob) -> 1 | 0 | -1 | -2: app/store/ftsfresh.py's check of a manifest (its Python
 * definition: ftsfresh._same_py), the stats made with the GIL let go.  1: every folder and file of
 * the manifest has the device, inode, size and mtime recorded; 0: one differs or cannot be stat-ed;
 * -1: not a manifest (cut short, counts that do not add up, a name too long); -2: not on this
 * platform (no fstatat).  Layout: "SLM2", u64 n (entries), u64 ng (folders they are grouped
 * under), u64 count[ng], u64 dev[n], u64 ino[n], u64 size[n], i64 mtime_ns[n] (native order), then
 * the names joined by NUL: the digest, the ng folders, the n entries (relative to their folder).
 * tests/test_fulltext_fresh.py holds the two equal. */
#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#define MF_PATH 4096

static uint64_t mf_u64(const unsigned char *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static int mf_name(const unsigned char **at, const unsigned char *end, int last, char *out) {
    /* the NUL-ended name at *at into out (the last name ends the buffer instead); -1: malformed */
    const unsigned char *z = memchr(*at, 0, (size_t)(end - *at));
    if ((z == NULL) != (last != 0))
        return -1;
    size_t len = (size_t)((z ? z : end) - *at);
    if (len >= MF_PATH)
        return -1;
    memcpy(out, *at, len);
    out[len] = 0;
    *at = z ? z + 1 : end;
    return 0;
}

static long mf_check(const unsigned char *p, size_t len) {
    if (len < 20 || memcmp(p, "SLM2", 4) != 0)
        return -1;
    uint64_t n = mf_u64(p + 4), ng = mf_u64(p + 12);
    if (ng > len / 8 || n > len / 32 || 20 + 8 * (ng + 4 * n) > len)
        return -1;
    const unsigned char *nums = p + 20, *end = p + len, *base = nums + 8 * (ng + 4 * n), *rel;
    char path[MF_PATH];
    uint64_t sum = 0;
    for (uint64_t g = 0; g < ng; g++) {                        /* the counts add up to the entries */
        uint64_t k = mf_u64(nums + 8 * g);
        if (k > n - sum)
            return -1;
        sum += k;
    }
    if (sum != n)
        return -1;
    if (mf_name(&base, end, n == 0 && ng == 0, path) < 0)     /* the digest */
        return -1;
    rel = base;
    for (uint64_t g = 0; g < ng; g++)                          /* past the folders: the first entry */
        if (mf_name(&rel, end, n == 0 && g == ng - 1, path) < 0)
            return -1;
    uint64_t done = 0;
    for (uint64_t g = 0; g < ng; g++) {
        uint64_t k = mf_u64(nums + 8 * g);
        if (k > n - done || mf_name(&base, end, n == 0 && g == ng - 1, path) < 0)
            return -1;
        int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        long same = fd >= 0;
        for (uint64_t j = 0; j < k && same == 1; j++, done++) {
            struct stat st;
            int64_t mt;
            if (mf_name(&rel, end, done == n - 1, path) < 0) {
                same = -1;
                break;
            }
            if (fstatat(fd, path, &st, 0) != 0) {
                same = 0;
                break;
            }
#ifdef __APPLE__
            mt = (int64_t)st.st_mtimespec.tv_sec * 1000000000 + st.st_mtimespec.tv_nsec;
#else
            mt = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
#endif
            if ((int64_t)mf_u64(nums + 8 * (ng + 3 * n + done)) != mt
                || mf_u64(nums + 8 * (ng + 2 * n + done)) != (uint64_t)st.st_size
                || mf_u64(nums + 8 * (ng + n + done)) != (uint64_t)st.st_ino
                || mf_u64(nums + 8 * (ng + done)) != (uint64_t)st.st_dev)
                same = 0;
        }
        if (fd >= 0)
            close(fd);
        if (same != 1)
            return same;
    }
    return done == n && rel == end ? 1 : -1;
}
#endif

static PyObject *manifest_same(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer b;
    if (!PyArg_ParseTuple(args, "y*", &b))
        return NULL;
    long got = -2;
#if defined(__unix__) || defined(__APPLE__)
    Py_BEGIN_ALLOW_THREADS
    got = mf_check((const unsigned char *)b.buf, (size_t)b.len);
    Py_END_ALLOW_THREADS
#endif
    PyBuffer_Release(&b);
    return PyLong_FromLong(got);
}
/* ---- end search ---- */

/* ---- export: the redaction walk of the exports (issue 29; owner: the export helper) ----
 * redact_gate(s) -> int: app/store/redact.py gate_bits(s), its definition: bit i set when the gate of
 *   Redactor's rule i passes on s (0 "-----BEGIN"; 1 "bearer" or "basic" in any case; 2 an API-key prefix;
 *   3 "key", "token", "secret", "passw" or "auth" in any case, its run of name characters followed by "=" or
 *   ":" with only backslashes, quotes, whitespace or non-ASCII characters between; 4 "@"; 5 "/home/" or
 *   "Users"), all six when s holds one of the four letters IGNORECASE takes for an ASCII letter (U+0130,
 *   U+0131, U+017F, U+212A).  0: Redactor.text(s) is s and counts nothing.
 * redact_walk(o, text, maxdepth) -> object | NotImplemented: Redactor.obj(o) (strings redacted, dict keys
 *   and other values as they are) calling text(s, redact_gate(s)) only on the strings whose gates are not 0,
 *   in the order of the Python walk; a container none of whose strings changed is returned as it is (o
 *   itself when no string passes).  NotImplemented, before text is ever called, when o holds a container
 *   nested deeper than maxdepth or a subclass of str, list or dict: the Python walk decides. */
#define RD_LOWER(c) ((c) >= 'A' && (c) <= 'Z' ? (c) + 32 : (c))

static int rd_ci(P d, Py_ssize_t i, Py_ssize_t n, const char *w, Py_ssize_t k) {      /* w lower case */
    if (i + k > n)
        return 0;
    for (Py_ssize_t j = 0; j < k; j++)
        if (RD_LOWER(d[i + j]) != (unsigned char)w[j])
            return 0;
    return 1;
}

#define RD_AT(s) (lit(d, i, n, s, (Py_ssize_t)sizeof(s) - 1) >= 0)
#define RD_CI(s) rd_ci(d, i, n, s, (Py_ssize_t)sizeof(s) - 1)

/* bit (a << 8 | b) set: a gate's word may hold the bytes a b at its offset 0 or 1 (rd_init fills it, with the
 * GIL held) */
static unsigned char rd_bi[8192];
static unsigned char rq_plain[256];     /* a byte a JSON string holds as it is: ASCII, not '"', '\\' or a control */
static int rd_bi_ready;

static void rd_bi_set(unsigned char a, unsigned char b) {
    unsigned w = (unsigned)a << 8 | b;
    rd_bi[w >> 3] |= (unsigned char)(1u << (w & 7));
}

static void rd_init(void) {
    /* the first three bytes of every word of rd_gate_bytes' but '@' (each three bytes or more) */
    static const char *const exact[] = {"---", "/ho", "Use", "sk-", "ghp", "gho", "ghu", "ghs", "ghr", "git", "glp",
                                        "AKI", "ASI", "AIz", "xox"};
    static const char *const caseless[] = {"bea", "bas", "key", "tok", "sec", "pas", "aut"};
    if (rd_bi_ready)
        return;
    for (size_t k = 0; k < sizeof(exact) / sizeof(*exact); k++)
        for (int o = 0; o < 2; o++)
            rd_bi_set((unsigned char)exact[k][o], (unsigned char)exact[k][o + 1]);
    for (size_t k = 0; k < sizeof(caseless) / sizeof(*caseless); k++)
        for (int o = 0; o < 2; o++) {
            unsigned char a = (unsigned char)caseless[k][o], b = (unsigned char)caseless[k][o + 1];
            rd_bi_set(a, b);
            rd_bi_set(a - 32, b);
            rd_bi_set(a, b - 32);
            rd_bi_set(a - 32, b - 32);
        }
    for (int c = 0x20; c < 0x80; c++)
        rq_plain[c] = c != '"' && c != '\\';
    rd_bi_ready = 1;
}

#define RD_NAME(c) (((c) >= 'a' && (c) <= 'z') || ((c) >= 'A' && (c) <= 'Z') || ((c) >= '0' && (c) <= '9') \
                    || (c) == '_' || (c) == '.' || (c) == '-')

/* the assignment gate at a keyword found at d[i] (redact.py _gate_assignment): after the run of name characters
 * holding it, any of backslash, quote, apostrophe, whitespace or non-ASCII characters, then '=' or ':'.  esc: d
 * is a JSON string's bytes, escapes not decoded: an escape (one character: a backslash, a quote or a control
 * character) is skipped as one of these, a non-ASCII byte as well (the decoded string passes only if its bytes
 * do). */
static int rd_assign_at(P d, Py_ssize_t i, Py_ssize_t n, int esc) {
    while (i < n && RD_NAME(d[i]))
        i++;
    while (i < n) {
        unsigned char c = d[i];
        if (c == '=' || c == ':')
            return 1;
        if (esc && c == '\\')
            i += i + 1 < n && d[i + 1] == 'u' ? 6 : 2;
        else if (c == '\\' || c == '"' || c == '\'' || c == ' ' || (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x1f)
                 || c >= 0x80)
            i++;
        else
            return 0;
    }
    return 0;
}

/* the gates on n bytes (a non-ASCII character given as 0x80; esc: a JSON string's bytes, see rd_assign_at):
 * redact_gate's bits.  Every word of a gate but '@' (found with memchr) is three bytes or more, so it holds the
 * two bytes at an even place q at its offset 0 or 1: only q and q - 1 are tried, where the bytes at q stand in
 * rd_bi, one even place in two. */
static int rd_gate_bytes(P d, Py_ssize_t n, int esc) {
    int bits = 0, key = 0;
    if (n <= 0)
        return 0;
    if (memchr(d, '@', (size_t)n))
        bits |= 16;
    for (Py_ssize_t q = 0; q + 1 < n; q += 2) {
        unsigned w = (unsigned)d[q] << 8 | d[q + 1];
        if (!(rd_bi[w >> 3] >> (w & 7) & 1))
            continue;
        for (Py_ssize_t i = q > 0 ? q - 1 : 0; i <= q; i++) {
            switch (d[i]) {
            case '-':
                if (RD_AT("-----BEGIN"))
                    bits |= 1;
                break;
            case '/':
                if (RD_AT("/home/"))
                    bits |= 32;
                break;
            case 'U':
                if (RD_AT("Users"))
                    bits |= 32;
                break;
            case 's':
                if (RD_AT("sk-"))
                    bits |= 4;
                break;
            case 'g':
                if (RD_AT("ghp_") || RD_AT("gho_") || RD_AT("ghu_") || RD_AT("ghs_") || RD_AT("ghr_")
                    || RD_AT("github_pat_") || RD_AT("glpat-"))
                    bits |= 4;
                break;
            case 'A':
                if (RD_AT("AKIA") || RD_AT("ASIA") || RD_AT("AIza"))
                    bits |= 4;
                break;
            case 'x':
                if (RD_AT("xox"))
                    bits |= 4;
                break;
            default:
                break;
            }
            switch (RD_LOWER(d[i])) {
            case 'b':
                if (RD_CI("bearer") || RD_CI("basic"))
                    bits |= 2;
                break;
            case 'k':
                key = key || (RD_CI("key") && rd_assign_at(d, i, n, esc));
                break;
            case 't':
                key = key || (RD_CI("token") && rd_assign_at(d, i, n, esc));
                break;
            case 's':
                key = key || (RD_CI("secret") && rd_assign_at(d, i, n, esc));
                break;
            case 'p':
                key = key || (RD_CI("passw") && rd_assign_at(d, i, n, esc));
                break;
            case 'a':
                key = key || (RD_CI("auth") && rd_assign_at(d, i, n, esc));
                break;
            default:
                break;
            }
        }
    }
    return bits | (key ? 8 : 0);
}

/* redact_gate of a str: its bits, or -1 (an error set) */
static int rd_gate(PyObject *s) {
    Py_ssize_t n = PyUnicode_GET_LENGTH(s);
    int kind = PyUnicode_KIND(s);
    const void *data = PyUnicode_DATA(s);
    if (kind == PyUnicode_1BYTE_KIND)
        return rd_gate_bytes((P)data, n, 0);
    unsigned char small[512];
    unsigned char *b = n <= (Py_ssize_t)sizeof(small) ? small : PyMem_Malloc((size_t)n);
    if (b == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    int fold = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c == 0x130 || c == 0x131 || c == 0x17f || c == 0x212a) {
            fold = 1;
            break;
        }
        b[i] = c < 0x80 ? (unsigned char)c : 0x80;
    }
    int r = fold ? 63 : rd_gate_bytes(b, n, 0);
    if (b != small)
        PyMem_Free(b);
    return r;
}

static PyObject *redact_gate(PyObject *self, PyObject *s) {
    (void)self;
    rd_init();
    if (!PyUnicode_Check(s)) {
        PyErr_SetString(PyExc_TypeError, "redact_gate: a str is needed");
        return NULL;
    }
    int r = rd_gate(s);
    return r < 0 ? NULL : PyLong_FromLong(r);
}

/* 1: a string passes the gate, 0: none does, -1: an error, -2: deeper than maxdepth or a subclass */
static int rd_scan(PyObject *o, int depth, int maxdepth) {
    int hit = 0, r;
    if (PyUnicode_CheckExact(o)) {
        int g = rd_gate(o);
        return g < 0 ? -1 : g != 0;
    }
    if (PyDict_CheckExact(o)) {
        if (depth > maxdepth)
            return -2;
        Py_ssize_t pos = 0;
        PyObject *k, *v;
        while (PyDict_Next(o, &pos, &k, &v)) {
            if ((r = rd_scan(v, depth + 1, maxdepth)) < 0)
                return r;
            hit |= r != 0;
        }
        return hit;
    }
    if (PyList_CheckExact(o)) {
        if (depth > maxdepth)
            return -2;
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(o); i++) {
            if ((r = rd_scan(PyList_GET_ITEM(o, i), depth + 1, maxdepth)) < 0)
                return r;
            hit |= r != 0;
        }
        return hit;
    }
    return PyUnicode_Check(o) || PyList_Check(o) || PyDict_Check(o) ? -2 : 0;
}

/* o redacted (rd_scan said it may be walked): a new reference, NULL on an error */
static PyObject *rd_build(PyObject *o, PyObject *text) {
    if (PyUnicode_CheckExact(o)) {
        int g = rd_gate(o);
        if (g < 0)
            return NULL;
        if (!g) {
            Py_INCREF(o);
            return o;
        }
        return PyObject_CallFunction(text, "Oi", o, g);
    }
    if (PyList_CheckExact(o)) {
        Py_ssize_t n = PyList_GET_SIZE(o);
        PyObject *out = PyList_New(n);
        int same = 1;
        if (out == NULL)
            return NULL;
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *v = PyList_GET_ITEM(o, i);
            PyObject *w = rd_build(v, text);
            if (w == NULL) {
                Py_DECREF(out);
                return NULL;
            }
            same = same && w == v;
            PyList_SET_ITEM(out, i, w);
        }
        if (same && PyList_GET_SIZE(o) == n) {
            Py_DECREF(out);
            Py_INCREF(o);
            return o;
        }
        return out;
    }
    if (PyDict_CheckExact(o)) {
        PyObject *out = PyDict_New(), *k, *v;
        Py_ssize_t pos = 0;
        int same = 1;
        if (out == NULL)
            return NULL;
        while (PyDict_Next(o, &pos, &k, &v)) {
            PyObject *w = rd_build(v, text);
            if (w == NULL || PyDict_SetItem(out, k, w) < 0) {
                Py_XDECREF(w);
                Py_DECREF(out);
                return NULL;
            }
            same = same && w == v;
            Py_DECREF(w);
        }
        if (same) {
            Py_DECREF(out);
            Py_INCREF(o);
            return o;
        }
        return out;
    }
    Py_INCREF(o);
    return o;
}

static PyObject *redact_walk(PyObject *self, PyObject *args) {
    PyObject *o, *text;
    int maxdepth;
    (void)self;
    rd_init();
    if (!PyArg_ParseTuple(args, "OOi", &o, &text, &maxdepth))
        return NULL;
    int r = rd_scan(o, 0, maxdepth);
    if (r == -1)
        return NULL;
    if (r == -2)
        Py_RETURN_NOTIMPLEMENTED;
    if (r == 0) {
        Py_INCREF(o);
        return o;
    }
    return rd_build(o, text);
}
/* redact_quiet(raw, canon, maxdepth) -> bool (issue 29: redacted exports at disk speed)
 *   True only when raw is one JSON text nested at most maxdepth deep (maxdepth at most RQ_MAXD; numbers not
 *   checked against msgspec's range: canon takes no float and no long integer; without canon the caller
 *   decodes the row anyway, and a row that does not decode takes the exact way) whose string values (dict keys left out, as Redactor.obj leaves them) all have redact_gate 0, each string
 *   strictly valid UTF-8, with no control byte and no escape but the ones msgspec's encoder writes ('\"',
 *   '\\', '\b', '\t', '\n', '\f', '\r', and '\u00xx' for another control character, lower-case hex): each
 *   stands for '"', '\' or a control character, in no gate's word, so a gate's word in a decoded string is
 *   one in its bytes.  Then Redactor.obj of the decoded value is that value and counts nothing.  canon:
 *   besides, raw is exactly what msgspec's encoder writes for its decoded value (no whitespace outside
 *   strings, integers of at most 18 digits and no "-0", no float, no key twice in an object, at most RQ_KEYS
 *   keys in the objects open at once), so Redactor.row(raw) is raw.  False says nothing: the caller takes the
 *   exact way.
 * redact_spans(raw, maxdepth) -> list | None: None unless raw is canonical as above (whatever its strings'
 *   gates); else [start0, end0, gate0, start1, end1, gate1, ...]: the places (the quotes included) of its
 *   string values whose bytes pass a gate, in the order of the text, and the gates their bytes pass (those
 *   of the decoded string and maybe more: a word may span an escape's letters, never fewer): Redactor.row(raw)
 *   is raw with each of these strings replaced by its redacted text, encoded (the strings left out are ones
 *   Redactor.text leaves as they are). */
#define RQ_MAXD 256
#define RQ_KEYS 512

typedef struct {
    Py_ssize_t *v, len, cap;
} rq_spans;

static int rq_hex(unsigned char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/* the end of the string whose opening quote is at d[i], its gate (value strings) in *gate, or -1 */
static Py_ssize_t rq_string(P d, Py_ssize_t i, Py_ssize_t n, int value, int *gate) {
    Py_ssize_t s = ++i;
    int fold = 0;
    while (i < n) {
        while (i < n && rq_plain[d[i]])
            i++;
        if (i >= n)
            break;
        unsigned char c = d[i];
        if (c == '"')
            break;
        if (c < 0x20)
            return -1;
        if (c == '\\') {
            if (i + 1 >= n)
                return -1;
            switch (d[i + 1]) {
            case '"': case '\\': case 'b': case 'f': case 'n': case 'r': case 't':
                i += 2;
                continue;
            case 'u':            /* \u00xx: a control character msgspec writes so (not \b \t \n \f \r) */
                if (i + 5 >= n || d[i + 2] != '0' || d[i + 3] != '0' || (d[i + 4] != '0' && d[i + 4] != '1')
                    || !rq_hex(d[i + 5]))
                    return -1;
                if (d[i + 4] == '0' && (d[i + 5] == '8' || d[i + 5] == '9' || d[i + 5] == 'a' || d[i + 5] == 'c'
                                        || d[i + 5] == 'd'))
                    return -1;
                i += 6;
                continue;
            default:
                return -1;
            }
        }
        if (c < 0x80) {
            i++;
            continue;
        }
        /* strict UTF-8: no overlong form, no surrogate, nothing past U+10FFFF */
        unsigned char c1 = i + 1 < n ? d[i + 1] : 0;
        if (c >= 0xC2 && c <= 0xDF) {
            if ((c1 & 0xC0) != 0x80)
                return -1;
            fold |= c == 0xC4 && (c1 == 0xB0 || c1 == 0xB1);
            fold |= c == 0xC5 && c1 == 0xBF;
            i += 2;
            continue;
        }
        unsigned char c2 = i + 2 < n ? d[i + 2] : 0;
        if (c >= 0xE0 && c <= 0xEF) {
            unsigned char lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
            if (c1 < lo || c1 > hi || (c2 & 0xC0) != 0x80)
                return -1;
            fold |= c == 0xE2 && c1 == 0x84 && c2 == 0xAA;
            i += 3;
            continue;
        }
        unsigned char c3 = i + 3 < n ? d[i + 3] : 0;
        if (c >= 0xF0 && c <= 0xF4) {
            unsigned char lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
            if (c1 < lo || c1 > hi || (c2 & 0xC0) != 0x80 || (c3 & 0xC0) != 0x80)
                return -1;
            i += 4;
            continue;
        }
        return -1;
    }
    if (i >= n)
        return -1;
    if (value)
        *gate = fold ? 63 : rd_gate_bytes(d + s, i - s, 1);
    return i + 1;
}

/* the end of the number at d[i], or -1 (canon: an integer of 1 to 18 digits, no "-0") */
static Py_ssize_t rq_number(P d, Py_ssize_t i, Py_ssize_t n, int canon) {
    Py_ssize_t s = i;
    if (d[i] == '-')
        i++;
    Py_ssize_t m = i;
    if (i < n && d[i] == '0')
        i++;
    else if (i < n && d[i] >= '1' && d[i] <= '9')
        i = digits(d, i, n);
    else
        return -1;
    if (canon && (i - m > 18 || (d[s] == '-' && d[m] == '0')))
        return -1;
    if (i < n && d[i] == '.') {
        if (canon || i + 1 >= n || d[i + 1] < '0' || d[i + 1] > '9')
            return -1;
        i = digits(d, i + 1, n);
    }
    if (i < n && (d[i] == 'e' || d[i] == 'E')) {
        if (canon)
            return -1;
        i++;
        if (i < n && (d[i] == '+' || d[i] == '-'))
            i++;
        if (i >= n || d[i] < '0' || d[i] > '9')
            return -1;
        i = digits(d, i, n);
    }
    return i;
}

#define RQ_WS(i) do { if (!canon) while ((i) < n && (d[i] == ' ' || d[i] == '\t' || d[i] == '\n' || d[i] == '\r')) (i)++; } while (0)

/* 1: raw is as redact_quiet (sp NULL) or redact_spans (sp: the spans added to it) says; 0: it is not; -1: out of
 * memory (sp) */
static int rq_scan(P d, Py_ssize_t n, int canon, int maxdepth, rq_spans *sp) {
    unsigned char stk[RQ_MAXD + 1];
    int kbase[RQ_MAXD + 1];
    Py_ssize_t koff[RQ_KEYS], klen[RQ_KEYS];
    int depth = 0, nk = 0, gate = 0;
    Py_ssize_t i = 0, e;
    if (maxdepth > RQ_MAXD)
        maxdepth = RQ_MAXD;
value:
    RQ_WS(i);
    if (i >= n)
        return 0;
    switch (d[i]) {
    case '{':
        if (depth >= maxdepth)
            return 0;
        stk[depth] = '{';
        kbase[depth++] = nk;
        i++;
        RQ_WS(i);
        if (i < n && d[i] == '}') {
            i++;
            nk = kbase[--depth];
            goto after;
        }
        goto key;
    case '[':
        if (depth >= maxdepth)
            return 0;
        stk[depth++] = '[';
        i++;
        RQ_WS(i);
        if (i < n && d[i] == ']') {
            i++;
            depth--;
            goto after;
        }
        goto value;
    case '"':
        if ((e = rq_string(d, i, n, 1, &gate)) < 0)
            return 0;
        if (gate) {
            if (sp == NULL)
                return 0;
            if (sp->len + 3 > sp->cap) {
                Py_ssize_t cap = sp->cap ? 2 * sp->cap : 64;
                Py_ssize_t *v = PyMem_RawRealloc(sp->v, (size_t)cap * sizeof(Py_ssize_t));
                if (v == NULL)
                    return -1;
                sp->v = v;
                sp->cap = cap;
            }
            sp->v[sp->len++] = i;
            sp->v[sp->len++] = e;
            sp->v[sp->len++] = gate;
        }
        i = e;
        goto after;
    case 't':
        if ((i = LIT(d, i, n, "true")) < 0)
            return 0;
        goto after;
    case 'f':
        if ((i = LIT(d, i, n, "false")) < 0)
            return 0;
        goto after;
    case 'n':
        if ((i = LIT(d, i, n, "null")) < 0)
            return 0;
        goto after;
    default:
        if ((d[i] != '-' && (d[i] < '0' || d[i] > '9')) || (i = rq_number(d, i, n, canon)) < 0)
            return 0;
        goto after;
    }
key:
    RQ_WS(i);
    if (i >= n || d[i] != '"' || (e = rq_string(d, i, n, 0, &gate)) < 0)
        return 0;
    if (canon) {
        Py_ssize_t ko = i + 1, kl = e - 1 - ko;
        for (int k = kbase[depth - 1]; k < nk; k++)
            if (klen[k] == kl && memcmp(d + koff[k], d + ko, (size_t)kl) == 0)
                return 0;
        if (nk >= RQ_KEYS)
            return 0;
        koff[nk] = ko;
        klen[nk++] = kl;
    }
    i = e;
    RQ_WS(i);
    if (i >= n || d[i] != ':')
        return 0;
    i++;
    goto value;
after:
    RQ_WS(i);
    if (depth == 0)
        return i == n;
    if (i >= n)
        return 0;
    if (d[i] == ',') {
        i++;
        if (stk[depth - 1] == '{')
            goto key;
        goto value;
    }
    if (d[i] == (stk[depth - 1] == '{' ? '}' : ']')) {
        i++;
        if (stk[--depth] == '{')
            nk = kbase[depth];
        goto after;
    }
    return 0;
}
#undef RQ_WS

static int rq_run(Py_buffer *b, int canon, int maxdepth, rq_spans *sp) {
    int r;
    if (b->len > (1 << 16)) {
        Py_BEGIN_ALLOW_THREADS
        r = rq_scan((P)b->buf, b->len, canon, maxdepth, sp);
        Py_END_ALLOW_THREADS
    } else {
        r = rq_scan((P)b->buf, b->len, canon, maxdepth, sp);
    }
    return r;
}

static PyObject *redact_quiet(PyObject *self, PyObject *args) {
    Py_buffer b;
    int canon, maxdepth;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*pi", &b, &canon, &maxdepth))
        return NULL;
    rd_init();
    int r = rq_run(&b, canon, maxdepth, NULL);
    PyBuffer_Release(&b);
    return PyBool_FromLong(r == 1);
}

static PyObject *redact_spans(PyObject *self, PyObject *args) {
    Py_buffer b;
    int maxdepth;
    rq_spans sp = {NULL, 0, 0};
    PyObject *out = NULL;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*i", &b, &maxdepth))
        return NULL;
    rd_init();
    int r = rq_run(&b, 1, maxdepth, &sp);
    PyBuffer_Release(&b);
    if (r < 0) {
        PyErr_NoMemory();
    } else if (r == 0) {
        out = Py_None;
        Py_INCREF(out);
    } else if ((out = PyList_New(sp.len)) != NULL) {
        for (Py_ssize_t k = 0; k < sp.len; k++) {
            PyObject *x = PyLong_FromSsize_t(sp.v[k]);
            if (x == NULL) {
                Py_CLEAR(out);
                break;
            }
            PyList_SET_ITEM(out, k, x);
        }
    }
    PyMem_RawFree(sp.v);
    return out;
}
#undef RD_AT
#undef RD_CI
/* ---- end export ---- */

/* ---- find: a caseless ASCII literal's first match and count in a field's text (issue 29; owner: the find helper) ----
 * fold_count(text, needle) -> None | (first, count): FoldMatcher.first_and_count's (start of the first match, number
 * of matches) of ``needle`` (ASCII, already folded: no capital letter) in ``text``, not whole words: -1 and 0 when
 * none.  None when ``text`` holds a character some of whose case forms hold ASCII letters (FC_Q: ß, the Turkish
 * i's, ŉ, ǰ, ẖ..ẚ, ẞ, the Kelvin sign, the ligatures ﬀ..ﬆ): the caller takes the Python way.  Every other character
 * folds to characters none of which is ASCII, so a match of an ASCII needle in fold_case(text) is a run of ASCII
 * characters of ``text``, each lowercased: the same places as in ``text`` with its ASCII capitals lowered, found
 * left to right, not overlapping.  The interpreted definition is app/log/query/find_match.fold_count_py
 * (FoldMatcher's own way); tests/test_find_fold_count.py holds both equal. */
static inline int fc_q(Py_UCS4 c) {
    return c == 0xDF || c == 0x130 || c == 0x131 || c == 0x149 || c == 0x17F || c == 0x1F0
        || (c >= 0x1E96 && c <= 0x1E9A) || c == 0x1E9E || c == 0x212A || (c >= 0xFB00 && c <= 0xFB06);
}

#define FC_SCAN(T)                                                                                     \
    {                                                                                                  \
        const T *d = (const T *)data;                                                                  \
        if (!ascii)                                                                                    \
            for (Py_ssize_t i = 0; i < n; i++)                                                         \
                if (d[i] >= 0xDF && fc_q(d[i]))                                                        \
                    return -2;                                                                         \
        Py_ssize_t i = 0;                                                                              \
        while (i + m <= n) {                                                                           \
            Py_UCS4 c = d[i];                                                                          \
            if ((c >= 'A' && c <= 'Z' ? c + 32 : c) != nd[0]) {                                       \
                i++;                                                                                   \
                continue;                                                                              \
            }                                                                                          \
            Py_ssize_t k = 1;                                                                          \
            for (; k < m; k++) {                                                                       \
                Py_UCS4 e = d[i + k];                                                                  \
                if ((e >= 'A' && e <= 'Z' ? e + 32 : e) != nd[k])                                      \
                    break;                                                                             \
            }                                                                                          \
            if (k == m) {                                                                              \
                if (*first < 0)                                                                        \
                    *first = i;                                                                        \
                (*count)++;                                                                            \
                i += m;                                                                                \
            } else                                                                                     \
                i++;                                                                                   \
        }                                                                                              \
    }

/* FC_SCAN of a 1-byte text, 16 places a step where SSE2 is there: a place is looked at only where its first and
 * last characters, with bit 0x20 set, are the needle's (a superset of the places whose lowered characters are) */
static void fc_ucs1(const Py_UCS1 *d, Py_ssize_t n, const unsigned char *nd, Py_ssize_t m, Py_ssize_t *first,
                    Py_ssize_t *count) {
    Py_ssize_t pos = 0;
    while (pos + m <= n) {
        Py_ssize_t at = -1;
#if defined(__SSE2__)
        if (pos + 16 + m - 1 <= n) {
            const __m128i F = _mm_set1_epi8((char)(nd[0] | 0x20)), L = _mm_set1_epi8((char)(nd[m - 1] | 0x20)),
                          O = _mm_set1_epi8(0x20);
            __m128i a = _mm_or_si128(_mm_loadu_si128((const __m128i *)(d + pos)), O);
            __m128i b = _mm_or_si128(_mm_loadu_si128((const __m128i *)(d + pos + m - 1)), O);
            unsigned msk = (unsigned)_mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(a, F), _mm_cmpeq_epi8(b, L)));
            while (msk) {
                Py_ssize_t i = pos + __builtin_ctz(msk), k = 0;
                for (; k < m; k++) {
                    Py_UCS4 e = d[i + k];
                    if ((e >= 'A' && e <= 'Z' ? e + 32 : e) != nd[k])
                        break;
                }
                if (k == m) {
                    at = i;
                    break;
                }
                msk &= msk - 1;
            }
            if (at < 0) {
                pos += 16;
                continue;
            }
        } else
#endif
        {
            Py_ssize_t k = 0;
            for (; k < m; k++) {
                Py_UCS4 e = d[pos + k];
                if ((e >= 'A' && e <= 'Z' ? e + 32 : e) != nd[k])
                    break;
            }
            if (k < m) {
                pos++;
                continue;
            }
            at = pos;
        }
        if (*first < 0)
            *first = at;
        (*count)++;
        pos = at + m;
    }
}

/* 0, or -2 (a character of FC_Q in the text) */
static int fc_run(int kind, const void *data, Py_ssize_t n, int ascii, const unsigned char *nd, Py_ssize_t m,
                  Py_ssize_t *first, Py_ssize_t *count) {
    *first = -1;
    *count = 0;
    if (kind == PyUnicode_1BYTE_KIND) {
        const Py_UCS1 *d = (const Py_UCS1 *)data;
        if (!ascii)
            for (Py_ssize_t i = 0; i < n; i++)
                if (d[i] == 0xDF)                                  /* (the one character of FC_Q below U+0100) */
                    return -2;
        fc_ucs1(d, n, nd, m, first, count);
    } else if (kind == PyUnicode_2BYTE_KIND)
        FC_SCAN(Py_UCS2)
    else
        FC_SCAN(Py_UCS4)
    return 0;
}

static PyObject *fold_count(PyObject *self, PyObject *args) {
    PyObject *text, *needle;
    (void)self;
    if (!PyArg_ParseTuple(args, "UU", &text, &needle))
        return NULL;
    Py_ssize_t m = PyUnicode_GET_LENGTH(needle);
    if (!PyUnicode_IS_ASCII(needle) || m == 0) {
        PyErr_SetString(PyExc_ValueError, "fold_count: an ASCII needle, not empty");
        return NULL;
    }
    const unsigned char *nd = PyUnicode_1BYTE_DATA(needle);
    for (Py_ssize_t k = 0; k < m; k++)
        if (nd[k] >= 'A' && nd[k] <= 'Z') {
            PyErr_SetString(PyExc_ValueError, "fold_count: a folded needle (no capital letter)");
            return NULL;
        }
    Py_ssize_t first, count;
    if (fc_run(PyUnicode_KIND(text), PyUnicode_DATA(text), PyUnicode_GET_LENGTH(text), PyUnicode_IS_ASCII(text),
               nd, m, &first, &count) < 0)
        Py_RETURN_NONE;
    return Py_BuildValue("(nn)", first, count);
}
/* brackets(raw) -> int: raw.count(b"[") + raw.count(b"{") in one pass (find_light.light_event's screen of a row
 * nested past the codec's limit; the interpreted definition is those two counts, tests/test_find_fold_count.py). */
static PyObject *brackets(PyObject *self, PyObject *arg) {
    Py_buffer view;
    (void)self;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    const unsigned char *d = (const unsigned char *)view.buf;
    Py_ssize_t n = view.len, i = 0, count = 0;
#if defined(__SSE2__)
    const __m128i a = _mm_set1_epi8('['), b = _mm_set1_epi8('{');
    while (i + 16 <= n) {
        __m128i x = _mm_loadu_si128((const __m128i *)(d + i));
        int m = _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(x, a), _mm_cmpeq_epi8(x, b)));
        count += __builtin_popcount((unsigned)m);
        i += 16;
    }
#endif
    for (; i < n; i++)
        count += d[i] == '[' || d[i] == '{';
    PyBuffer_Release(&view);
    return PyLong_FromSsize_t(count);
}
/* find_ascii(data, start, end, needle, table, rows) -> None | list of offsets: find_folded's answer (k not asked) for
 * an ASCII needle of at least 2 bytes, found 16 places a step: a place is looked at only where its first and last
 * bytes, with bit 0x20 set, are the needle's (every byte the table maps onto those two needle bytes must be such a
 * byte, as FOLD's preimages of an ASCII byte are: itself and, for a small letter, its capital; else None: the
 * caller takes find_folded), each such place then checked through the table as find_folded checks it.  Same
 * places, same order (tests/test_find_fold_count.py holds it to find_folded_py). */
static int fa_filter_ok(const unsigned char *tb, unsigned char b) {
    for (int c = 0; c < 256; c++)
        if (tb[c] == b && (c | 0x20) != (b | 0x20))
            return 0;
    return 1;
}

static PyObject *find_ascii(PyObject *self, PyObject *args) {
    PyObject *data;
    const unsigned char *nd, *tb;
    Py_ssize_t start, end, nn, ntb;
    int rows;
    (void)self;
    if (!PyArg_ParseTuple(args, "Onny#y#p", &data, &start, &end, &nd, &nn, &tb, &ntb, &rows))
        return NULL;
    if (ntb != 256 || nn < 2) {
        PyErr_SetString(PyExc_ValueError, "find_ascii: a 256-byte table, a needle of 2 bytes or more");
        return NULL;
    }
    for (Py_ssize_t j = 0; j < nn; j++)
        if (nd[j] >= 0x80)
            Py_RETURN_NONE;
    if (!fa_filter_ok(tb, nd[0]) || !fa_filter_ok(tb, nd[nn - 1]))
        Py_RETURN_NONE;
    Py_buffer view;
    PyObject *out = ff_open(data, &view, &start, &end);
    if (out == NULL)
        return NULL;
    const unsigned char *d = (const unsigned char *)view.buf;
    const unsigned char f = nd[0] | 0x20, l = nd[nn - 1] | 0x20;
    Py_ssize_t pos = start;
    while (pos + nn <= end) {
        Py_ssize_t cand = -1;
#if defined(__SSE2__)
        if (pos + 16 + nn - 1 <= end) {
            const __m128i F = _mm_set1_epi8((char)f), L = _mm_set1_epi8((char)l), O = _mm_set1_epi8(0x20);
            __m128i a = _mm_or_si128(_mm_loadu_si128((const __m128i *)(d + pos)), O);
            __m128i b = _mm_or_si128(_mm_loadu_si128((const __m128i *)(d + pos + nn - 1)), O);
            unsigned m = (unsigned)_mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(a, F), _mm_cmpeq_epi8(b, L)));
            while (m) {
                Py_ssize_t i = pos + __builtin_ctz(m), j = 0;
                while (j < nn && tb[d[i + j]] == nd[j])
                    j++;
                if (j == nn) {
                    cand = i;
                    break;
                }
                m &= m - 1;
            }
            if (cand < 0) {
                pos += 16;
                continue;
            }
        } else
#endif
        {
            Py_ssize_t i = pos, j = 0;
            if ((d[i] | 0x20) == f && (d[i + nn - 1] | 0x20) == l)
                while (j < nn && tb[d[i + j]] == nd[j])
                    j++;
            if (j < nn) {
                pos++;
                continue;
            }
            cand = i;
        }
        int r = ff_take(out, d, cand, nn, end, rows, &pos);
        if (r < 0) {
            Py_DECREF(out);
            PyBuffer_Release(&view);
            return NULL;
        }
        if (r > 0)
            break;
    }
    PyBuffer_Release(&view);
    return out;
}
/* ---- end find ---- */

/* ---- findc: whole-log find's text hits of a window's candidate rows (issue 29; owner: the findc helper) ----
 * text_hits(data, starts, lim, torn, max_row, types, needle, mode, kinds) -> (items, read)
 *
 * For each candidate row starting at an offset of ``starts`` (a list of ints, ascending) in data[:lim]: the row
 * is data[s:e], e its newline (or lim; a row reaching lim is skipped when ``torn``).  A row of a type of ``types``
 * (a tuple of bytes; the row written {"type":"...) of at most ``max_row`` bytes is read by the ftsc section's
 * ft_row (text_row) and its plained fields matched in C: ``mode`` 0 a folded ASCII ``needle`` (fold_count's
 * matches: fc_run), 1 the needle's own places (str.find, str.count).  ``items`` in row order: an int, a row left to
 * the caller (another type, a row ft_row does not read, a turn/start, a title, a field holding a character of
 * FC_Q); else one tuple per hit: (row start, row length, seq, turn | None, kind, tool | None, call | None, block,
 * start, end, matches, k) (k: the hit's place among its row's hits).  ``read``: the rows read here (hits or
 * not).  ``kinds``: (the tool-call kind, the tool-output kind) as the caller spells them.  The interpreted
 * definition is app/log/query/find_fast.text_hits_py (text_row and text_shown, matched by match_fields);
 * tests/test_find_text_c.py holds both equal, and tests/test_find_text_fast.py the hits to the exact way's. */
static int tx_match(PyObject *text, PyObject *needle, int mode, Py_ssize_t *first, Py_ssize_t *count) {
    if (mode == 0)
        return fc_run(PyUnicode_KIND(text), PyUnicode_DATA(text), PyUnicode_GET_LENGTH(text), PyUnicode_IS_ASCII(text),
                      PyUnicode_1BYTE_DATA(needle), PyUnicode_GET_LENGTH(needle), first, count);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    *first = PyUnicode_Find(text, needle, 0, n, 1);
    if (*first == -2)
        return -1;
    *count = *first < 0 ? 0 : PyUnicode_Count(text, needle, *first, n);
    return *count < 0 ? -1 : 0;
}

/* the hits of one field onto ``hits``: 0, 1 (FC_Q: the row is the caller's), -1 a Python error */
static int tx_field(PyObject *hits, PyObject *head, PyObject *kind, PyObject *tool, PyObject *call, int block,
                    PyObject *text, PyObject *needle, int mode) {
    Py_ssize_t first, count;
    if (!PyUnicode_Check(text))
        return 1;
    int r = tx_match(text, needle, mode, &first, &count);
    if (r == -2)
        return 1;
    if (r < 0)
        return -1;
    if (count == 0)
        return 0;
    PyObject *h = Py_BuildValue("(OOOOOnnnn)", head, kind, tool, call, block ? Py_True : Py_False, first,
                                first + PyUnicode_GET_LENGTH(needle), count, PyList_GET_SIZE(hits));
    if (h == NULL)
        return -1;
    r = PyList_Append(hits, h);
    Py_DECREF(h);
    return r;
}

/* the hits of a row read by ft_row (``r``: op 2, 3 or 4) onto ``hits``: 0, 1 (the row is the caller's), -1 */
static int tx_row(PyObject *hits, PyObject *r, PyObject *head, PyObject *needle, int mode, PyObject *kinds) {
    long op = PyLong_AsLong(PyTuple_GET_ITEM(r, 0));
    PyObject *tc = PyTuple_GET_ITEM(kinds, 0), *to = PyTuple_GET_ITEM(kinds, 1);
    int x = 0;
    if (op == 2) {
        PyObject *fields = PyTuple_GET_ITEM(r, 4), *blocks = PyTuple_GET_ITEM(r, 5);
        for (Py_ssize_t k = 0; x == 0 && k < PyList_GET_SIZE(fields); k++) {
            PyObject *f = PyList_GET_ITEM(fields, k);
            x = tx_field(hits, head, PyTuple_GET_ITEM(f, 0), Py_None, Py_None, 0, PyTuple_GET_ITEM(f, 1), needle, mode);
        }
        if (blocks != Py_None)
            for (Py_ssize_t k = 0; x == 0 && k < PyList_GET_SIZE(blocks); k++) {
                PyObject *b = PyList_GET_ITEM(blocks, k);
                x = tx_field(hits, head, tc, PyTuple_GET_ITEM(b, 1), PyTuple_GET_ITEM(b, 0), 1, PyTuple_GET_ITEM(b, 2),
                             needle, mode);
            }
        return x;
    }
    if (op == 3) {
        PyObject *name = PyTuple_GET_ITEM(r, 5);
        int named = PyUnicode_Check(name) && PyUnicode_GET_LENGTH(name) > 0;
        return tx_field(hits, head, tc, named ? name : Py_None, PyTuple_GET_ITEM(r, 4), 0, PyTuple_GET_ITEM(r, 6),
                        needle, mode);
    }
    if (op == 4)
        return tx_field(hits, head, to, Py_None, Py_None, 0, PyTuple_GET_ITEM(r, 5), needle, mode);
    return 1;
}

static PyObject *text_hits(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer view;
    PyObject *starts, *types, *needle, *kinds;
    Py_ssize_t lim, max_row;
    int torn, mode;
    if (!PyArg_ParseTuple(args, "y*O!npnO!UiO!", &view, &PyList_Type, &starts, &lim, &torn, &max_row, &PyTuple_Type,
                          &types, &needle, &mode, &PyTuple_Type, &kinds))
        return NULL;
    PyObject *items = NULL, *row = NULL, *res = NULL;
    P d = (P)view.buf;
    Py_ssize_t read = 0;
    if (lim > view.len)
        lim = view.len;
    if (PyTuple_GET_SIZE(kinds) != 2 || PyUnicode_GET_LENGTH(needle) == 0
        || (mode == 0 && !PyUnicode_IS_ASCII(needle))) {
        PyErr_SetString(PyExc_ValueError, "text_hits: two kinds, a needle (ASCII in mode 0)");
        goto out;
    }
    if ((items = PyList_New(0)) == NULL || (row = PyList_New(0)) == NULL)
        goto out;
    for (Py_ssize_t j = 0; j < PyList_GET_SIZE(starts); j++) {
        Py_ssize_t s = PyLong_AsSsize_t(PyList_GET_ITEM(starts, j));
        if (s == -1 && PyErr_Occurred())
            goto out;
        if (s < 0 || s >= lim)
            continue;
        P nl = memchr(d + s, '\n', (size_t)(lim - s));
        Py_ssize_t e = nl ? nl - d : lim, len = e - s;
        if (e >= lim && torn)
            continue;                                  /* (a torn last row: not an event yet) */
        P r = d + s;
        int ours = 0;
        if (len >= 10 && len <= max_row && memcmp(r, "{\"type\":\"", 9) == 0) {
            P q = memchr(r + 9, '"', (size_t)(len - 9));
            ours = q != NULL && ft_in(types, r + 9, q - (r + 9));
        }
        PyObject *t = ours ? ft_row(r, len, 0) : NULL;
        if (ours && t == NULL)
            goto out;
        long op = t == NULL || t == Py_None ? -1 : PyLong_AsLong(PyTuple_GET_ITEM(t, 0));
        int x = 1;
        if (op == 0)
            x = 0;
        else if (op >= 2 && op <= 4) {
            PyObject *turn = PyTuple_GET_ITEM(t, 3);
            PyObject *head = Py_BuildValue("(nnOO)", s, len, PyTuple_GET_ITEM(t, 1), turn);
            if (head == NULL) {
                Py_DECREF(t);
                goto out;
            }
            x = tx_row(row, t, head, needle, mode, kinds);
            Py_DECREF(head);
        }
        Py_XDECREF(t);
        if (x < 0)
            goto out;
        if (x == 0) {
            read++;
            for (Py_ssize_t k = 0; k < PyList_GET_SIZE(row); k++) {
                /* (head, kind, tool, call, block, start, end, matches, k) -> one flat tuple */
                PyObject *h = PyList_GET_ITEM(row, k), *hd = PyTuple_GET_ITEM(h, 0);
                PyObject *flat = PyTuple_Pack(12, PyTuple_GET_ITEM(hd, 0), PyTuple_GET_ITEM(hd, 1),
                                              PyTuple_GET_ITEM(hd, 2), PyTuple_GET_ITEM(hd, 3), PyTuple_GET_ITEM(h, 1),
                                              PyTuple_GET_ITEM(h, 2), PyTuple_GET_ITEM(h, 3), PyTuple_GET_ITEM(h, 4),
                                              PyTuple_GET_ITEM(h, 5), PyTuple_GET_ITEM(h, 6), PyTuple_GET_ITEM(h, 7),
                                              PyTuple_GET_ITEM(h, 8));
                if (flat == NULL || PyList_Append(items, flat) < 0) {
                    Py_XDECREF(flat);
                    goto out;
                }
                Py_DECREF(flat);
            }
        } else {
            PyObject *at = PyLong_FromSsize_t(s);
            if (at == NULL || PyList_Append(items, at) < 0) {
                Py_XDECREF(at);
                goto out;
            }
            Py_DECREF(at);
        }
        if (PyList_SetSlice(row, 0, PyList_GET_SIZE(row), NULL) < 0)
            goto out;
    }
    res = Py_BuildValue("(On)", items, read);
out:
    Py_XDECREF(items);
    Py_XDECREF(row);
    PyBuffer_Release(&view);
    return res;
}
/* ---- end findc ---- */

/* ---- findc2: whole-log find's hits of a window's candidate rows, made in C (issue 29; owner: the findc2 helper) ----
 * find_hits(data, starts, lim, torn, max_row, types, needle, mode, kinds, make[, places]) -> (items, read, flags)
 *
 * ``places``: ``starts`` holds places in rows (ascending, none negative), the prefilter's; each row holding one is
 * taken once, as find_rows.row_starts takes them.
 * What findc's text_hits does for the rows of ``types`` (user and assistant messages, tool calls and results,
 * titles), with the same answers (app/log/query/find_c2.find_hits_py is its definition: text_hits_py's tuples made
 * into hits), faster; and a generic row (its type not in ftsc's FT_SPECIAL) whose payload's text (ft_payload) holds
 * no match is read here with no hit (FastRows._may_hit's gate), the others left to the caller:
 *   - the row is read onto a tape as ft_row reads it, but the values ft_row never looks into (a top-level key other
 *     than "data"; in an assistant message's data, every key but "message", "content" and "turn": its stream,
 *     usage…; a list in a generic row's payload) are checked (f2_skim: what ft_value accepts, nothing stored) and
 *     kept as one token;
 *   - the fields are made as ft_row makes them, as UTF-8 in C buffers, never Python strings, and matched there:
 *     ``needle`` (bytes, UTF-8): mode 0 a folded ASCII literal (fc_ucs1 over the bytes: an ASCII needle never
 *     matches a byte of a non-ASCII character; a field holding a character of FC_Q leaves the row to the caller,
 *     as fold_count does), mode 1 the needle's own places (memmem: on valid UTF-8 the places and the
 *     non-overlapping count of str.find / str.count); a byte offset becomes a character offset by counting the
 *     bytes that do not continue a character;
 *   - each hit is made here as the LazyHit find_fast.FastRows.lazy_hit makes of text_hits' tuple: ``make`` =
 *     (cls, fast rows, source, base): an instance of cls whose __dict__ holds seq, turn, kind, start, end, matches,
 *     tool, line (None), offset (base + row start), member (None), call, block and _source (fast rows, source,
 *     base + row start, row length, k).
 * items in row order: an int (the row's start: the caller's row, as text_hits says) or a hit.  read: the rows read
 * here.  flags: 1 an int among items, 2 a hit whose row names no turn (turn None: the caller's tracker gives it),
 * 4 a hit of a tool-call block (find's echo filter looks at them).  The GIL is held: the tape and buffers are
 * reused (as ftsc's are) and hits are Python objects.  tests/test_find_c2.py holds it equal to its definition and
 * find's hits to the exact way's on fixtures, generated logs and hostile mutants. */
static FtTape F2_TAPE;
static FtBuf F2_BUF[3];                                /* reasoning, text; a field's text (one at a time) */

/* ft_value's acceptance of the value at d[*i] (depth as ft_value's), nothing stored: 0, -1 */
static int f2_skim(P d, Py_ssize_t n, Py_ssize_t *i, int depth) {
    ft_ws(d, n, i);
    if (*i >= n || depth > FT_DEPTH)
        return -1;
    unsigned char c = d[*i];
    Py_ssize_t a, b;
    int esc;
    if (c == '"')
        return ft_str(d, n, i, &a, &b, &esc);
    if (c == '{' || c == '[') {
        unsigned char close = c == '{' ? '}' : ']';
        (*i)++;
        ft_ws(d, n, i);
        if (*i < n && d[*i] == close) {
            (*i)++;
            return 0;
        }
        for (;;) {
            if (c == '{') {
                ft_ws(d, n, i);
                if (*i >= n || d[*i] != '"' || depth + 1 > FT_DEPTH || ft_str(d, n, i, &a, &b, &esc) < 0)
                    return -1;
                ft_ws(d, n, i);
                if (*i >= n || d[*i] != ':')
                    return -1;
                (*i)++;
            }
            if (*i < n && d[*i] == '"' && depth + 1 <= FT_DEPTH) {
                if (ft_str(d, n, i, &a, &b, &esc) < 0)         /* (a string: the other commonest item) */
                    return -1;
            } else if (*i < n && d[*i] >= '1' && d[*i] <= '9' && depth + 1 <= FT_DEPTH) {
                Py_ssize_t e = digits(d, *i, n);               /* (a plain integer: the commonest item) */
                if (e < n && d[e] != '.' && d[e] != 'e' && d[e] != 'E' && e - *i <= 300)
                    *i = e;
                else if (f2_skim(d, n, i, depth + 1) < 0)
                    return -1;
            } else if (f2_skim(d, n, i, depth + 1) < 0)
                return -1;
            ft_ws(d, n, i);
            if (*i >= n)
                return -1;
            if (d[*i] == ',') {
                (*i)++;
                continue;
            }
            if (d[*i] != close)
                return -1;
            (*i)++;
            return 0;
        }
    }
    if (c == 't' || c == 'f' || c == 'n') {
        Py_ssize_t e = c == 't' ? LIT(d, *i, n, "true") : c == 'f' ? LIT(d, *i, n, "false") : LIT(d, *i, n, "null");
        if (e < 0)
            return -1;
        *i = e;
        return 0;
    }
    Py_ssize_t e = ft_num(d, n, *i);
    if (e < 0 || !ft_num_ok(d, *i, e))
        return -1;
    *i = e;
    return 0;
}

/* the value of key token k (its first byte c) at this depth of a row read the ``way`` f2_object says is read
 * (stored on the tape), else skimmed */
static int f2_read(P d, const FtTok *k, int depth, int way, unsigned char c) {
    Py_ssize_t len = k->b - k->a;
#define F2_IS(s) (len == (Py_ssize_t)sizeof(s) - 1 && memcmp(d + k->a, s, sizeof(s) - 1) == 0)
    if (k->esc || (c != '{' && c != '['))
        return 1;
    if (depth == 0)                                    /* the row: ft_row reads type, seq, time, data */
        return F2_IS("data") || F2_IS("type") || F2_IS("seq") || F2_IS("time");
    if (way == 1)                                      /* an assistant message's data */
        return F2_IS("message") || F2_IS("content") || F2_IS("turn");
    return c != '[';                                   /* a generic row's payload: no list is shown */
#undef F2_IS
}

/* ft_value of the row object at d[*i] (depth 0), the values f2_read leaves out skimmed (one token each, no
 * children); ``way``: 1 an assistant message, 2 a generic row (their data's values read as f2_read says), 0 another */
static int f2_object(P d, Py_ssize_t n, Py_ssize_t *i, FtTape *tp, int depth, int way) {
    Py_ssize_t me = tp->n;
    FtTok *t = ft_tok(tp);
    if (t == NULL || *i >= n || d[*i] != '{' || depth > FT_DEPTH)
        return -1;
    t->kind = '{';
    t->esc = 0;
    t->a = *i;
    (*i)++;
    ft_ws(d, n, i);
    if (*i < n && d[*i] == '}')
        (*i)++;
    else
        for (;;) {
            ft_ws(d, n, i);
            Py_ssize_t key = tp->n;
            if (*i >= n || d[*i] != '"' || ft_value(d, n, i, tp, depth + 1) < 0)
                return -1;
            ft_ws(d, n, i);
            if (*i >= n || d[*i] != ':')
                return -1;
            (*i)++;
            ft_ws(d, n, i);
            const FtTok *k = &tp->t[key];
            if (*i < n && !f2_read(d, k, depth, way, d[*i])) {
                Py_ssize_t v = tp->n, at = *i;
                FtTok *sk = ft_tok(tp);
                if (sk == NULL || f2_skim(d, n, i, depth + 1) < 0)
                    return -1;
                sk->kind = d[at];
                sk->esc = 0;
                sk->a = at;
                sk->b = *i;
                sk->next = v + 1;
            } else if (depth == 0 && way && *i < n && d[*i] == '{' && !k->esc && k->b - k->a == 4
                       && memcmp(d + k->a, "data", 4) == 0) {
                if (f2_object(d, n, i, tp, depth + 1, way) < 0)
                    return -1;
            } else if (ft_value(d, n, i, tp, depth + 1) < 0)
                return -1;
            ft_ws(d, n, i);
            if (*i >= n)
                return -1;
            if (d[*i] == ',') {
                (*i)++;
                continue;
            }
            if (d[*i] != '}')
                return -1;
            (*i)++;
            break;
        }
    tp->t[me].b = *i;
    tp->t[me].next = tp->n;
    return 0;
}

typedef struct {
    Py_ssize_t first, count;   /* the first match (a character offset), matches */
    int kind;                  /* 0..3 FT_KINDS[kind], 4 the tool-call kind, 5 the tool-output kind */
    Py_ssize_t tool, call;     /* string tokens (decoded unplained), -1 None */
    int block;
} F2Hit;

#define F2_MAX_HITS 4096

typedef struct {
    P needle;
    Py_ssize_t m, mchars;
    int mode;
    F2Hit hits[F2_MAX_HITS], blocks[F2_MAX_HITS];   /* a row's hits; its blocks' (set aside) */
    int nh;
} F2Find;

static F2Find F2;

/* the character at s[k] (a byte >= 0xC3) is one of FC_Q */
static inline int f2_q(P s, Py_ssize_t n, Py_ssize_t k) {
    unsigned char c = s[k], x = k + 1 < n ? s[k + 1] : 0, y = k + 2 < n ? s[k + 2] : 0;
    return (c == 0xC3 && x == 0x9F) || (c == 0xC4 && (x == 0xB0 || x == 0xB1)) || (c == 0xC5 && (x == 0x89 || x == 0xBF))
        || (c == 0xC7 && x == 0xB0) || (c == 0xE1 && x == 0xBA && ((y >= 0x96 && y <= 0x9A) || y == 0x9E))
        || (c == 0xE2 && x == 0x84 && y == 0xAA) || (c == 0xEF && x == 0xAC && y >= 0x80 && y <= 0x86);
}

/* a character of FC_Q in the UTF-8 text s[:n] (see fc_q): its first byte is >= 0xC3 (16 bytes a step where SSE2
 * is there) */
static int f2_fcq(P s, Py_ssize_t n) {
    Py_ssize_t k = 0;
#if defined(__SSE2__)
    const __m128i lo = _mm_set1_epi8((char)0xC2), z = _mm_setzero_si128();
    for (; k + 16 <= n; k += 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(s + k));
        unsigned m = (unsigned)_mm_movemask_epi8(_mm_and_si128(_mm_cmpgt_epi8(x, lo), _mm_cmplt_epi8(x, z)));
        while (m) {
            if (f2_q(s, n, k + __builtin_ctz(m)))
                return 1;
            m &= m - 1;
        }
    }
#endif
    for (; k < n; k++) {
        if (s[k] >= 0xC3 && f2_q(s, n, k))
            return 1;
    }
    return 0;
}

/* the characters of the UTF-8 text s[:n] */
static Py_ssize_t f2_chars(P s, Py_ssize_t n) {
    Py_ssize_t c = 0;
    for (Py_ssize_t k = 0; k < n; k++)
        c += (s[k] & 0xC0) != 0x80;
    return c;
}

/* a field's text (UTF-8, s[:n]) matched: onto F2.hits when it matches; 0, 1 the row is the caller's (FC_Q, too
 * many hits) */
static int f2_field(P s, Py_ssize_t n, int kind, Py_ssize_t tool, Py_ssize_t call, int block) {
    Py_ssize_t first = -1, count = 0;
    if (F2.mode == 0) {
        if (f2_fcq(s, n))
            return 1;
        fc_ucs1(s, n, F2.needle, F2.m, &first, &count);
    } else {
        Py_ssize_t pos = 0;
        while (pos + F2.m <= n) {
            P at = memmem(s + pos, (size_t)(n - pos), F2.needle, (size_t)F2.m);
            if (at == NULL)
                break;
            if (first < 0)
                first = at - s;
            count++;
            pos = (at - s) + F2.m;
        }
    }
    if (count == 0)
        return 0;
    if (F2.nh >= F2_MAX_HITS)
        return 1;
    F2Hit *h = &F2.hits[F2.nh++];
    h->first = f2_chars(s, first);
    h->count = count;
    h->kind = kind;
    h->tool = tool;
    h->call = call;
    h->block = block;
    return 0;
}

static inline int f2_buf(FtBuf *b, int kind) {
    return f2_field((P)(b->p ? b->p : ""), b->len, kind, -1, -1, 0);
}

/* ft_assistant's fields and blocks of the content at token cv, matched: 0, 1 the caller's, -1 a fallback (the
 * caller's too), -2 out of memory */
static int f2_assistant(P d, const FtTape *tp, Py_ssize_t cv) {
    const FtTok *t = tp->t;
    if (cv < 0 || t[cv].kind == 'n')
        return 0;
    if (t[cv].kind != '[')
        return -1;
    int counts[2] = {0, 0}, any[2] = {0, 0};
    F2_BUF[0].len = F2_BUF[1].len = 0;
    int nb = 0;
    for (Py_ssize_t c = cv + 1; c < t[cv].next; c = t[c].next) {
        if (t[c].kind != '{')
            continue;
        if (ft_obj(d, tp, c) < 0)
            return -1;
        Py_ssize_t tv = ft_get(d, tp, c, "type");
        if (tv < 0 || t[tv].kind != '"')
            continue;
        if (t[tv].esc)
            return -1;
        int which = ft_is(d, tp, tv, "reasoning") ? 0 : ft_is(d, tp, tv, "text") ? 1 : -1;
        if (which >= 0) {
            Py_ssize_t xv = ft_get(d, tp, c, "text");
            int s = ft_strv(tp, xv);
            if (s < 0 || (counts[which]++ && ft_put(&F2_BUF[which], " ", 1) < 0))
                return -1;
            if (s > 0 && t[xv].b > t[xv].a) {
                if (ft_text(&F2_BUF[which], d, t[xv].a, t[xv].b, 1) < 0)
                    return -1;
                any[which] = 1;
            }
        } else if (ft_is(d, tp, tv, "tool-call")) {
            Py_ssize_t nv = ft_get(d, tp, c, "name"), iv = ft_get(d, tp, c, "id");
            int s = ft_strv(tp, nv);
            if (s < 0 || ft_call_text(&F2_BUF[2], d, tp, nv, s, ft_get(d, tp, c, "arguments")) < 0)
                return -1;
            int named = s > 0 && t[nv].b > t[nv].a, before = F2.nh;
            if (f2_field((P)(F2_BUF[2].p ? F2_BUF[2].p : ""), F2_BUF[2].len, 4, named ? nv : -1,
                         iv >= 0 && t[iv].kind == '"' ? iv : -1, 1))
                return 1;
            if (F2.nh > before) {                      /* (a block's hit goes after the fields': set aside) */
                if (nb >= F2_MAX_HITS)
                    return 1;
                F2.blocks[nb++] = F2.hits[--F2.nh];
            }
        }
    }
    for (int k = 0; k < 2; k++)
        if (any[k] && f2_buf(&F2_BUF[k], k ? 2 : 1))
            return 1;
    for (int k = 0; k < nb; k++) {
        if (F2.nh >= F2_MAX_HITS)
            return 1;
        F2.hits[F2.nh++] = F2.blocks[k];
    }
    return 0;
}

/* the hits of the row d[:n] of a type text_hits reads (its name d[9:9+tl]) onto F2.hits: 0 read (F2.hits, maybe
 * none), 1 the caller's row, -1 out of memory; *seq, *turn and *named (the row names its turn) of a row read */
static int f2_row(P d, Py_ssize_t n, Py_ssize_t tl, int generic, long long *seq, long long *turn, int *named) {
    Py_ssize_t i = 0;
    FtTape *tp = &F2_TAPE;
    int kind;
    long long tm, v;
    F2.nh = 0;
    tp->n = 0;
    if (FT_SPECIAL == NULL)
        return 1;
    int way = tl == 17 && memcmp(d + 9, "assistant/message", 17) == 0 ? 1 : generic ? 2 : 0;
    if (f2_object(d, n, &i, tp, 0, way) < 0)
        return 1;
    ft_ws(d, n, &i);
    if (i != n || ft_obj(d, tp, 0) < 0)
        return 1;
    const FtTok *t = tp->t;
    Py_ssize_t tv = ft_get(d, tp, 0, "type"), sv = ft_get(d, tp, 0, "seq");
    Py_ssize_t mv = ft_get(d, tp, 0, "time"), dv = ft_get(d, tp, 0, "data");
    if (tv < 0 || t[tv].kind != '"' || t[tv].esc || sv < 0 || t[sv].kind != '0' || ft_obj(d, tp, dv) < 0)
        return 1;
    ft_numval(d, t[sv].a, t[sv].b, &kind, seq);
    if (kind != 1 || *seq < 0 || *seq > 9007199254740991LL)
        return 1;
    if (mv >= 0 && t[mv].kind == '0') {
        ft_numval(d, t[mv].a, t[mv].b, &kind, &tm);
        if (kind == 2)
            return 1;
    }
    *named = 0;
    Py_ssize_t uv = ft_get(d, tp, dv, "turn");
    if (uv >= 0 && t[uv].kind == '0') {
        ft_numval(d, t[uv].a, t[uv].b, &kind, &v);
        if (kind == 2)
            return 1;
        *named = kind == 1;
        *turn = v;
    }
    if (generic) {
        /* a generic row: no hit where the text ft_payload makes of it holds no match (FastRows._may_hit's gate: the
         * exact way's text holds no more; a row holding one is the caller's, its hits made the exact way) */
        F2_BUF[2].len = 0;
        if (ft_payload(&F2_BUF[2], d, tp, dv) < 0)
            return 1;
        if (F2_BUF[2].len == 0)
            return 0;
        if (f2_field((P)F2_BUF[2].p, F2_BUF[2].len, 3, -1, -1, 0) || F2.nh) {
            F2.nh = 0;
            return 1;
        }
        return 0;
    }
    if (ft_is(d, tp, tv, "user/message")) {
        int parts = 0;
        F2_BUF[2].len = 0;
        if (ft_content(&F2_BUF[2], d, tp, ft_get(d, tp, dv, "content"), 0, &parts) < 0)
            return 1;
        return parts ? f2_buf(&F2_BUF[2], 0) : 0;
    }
    if (ft_is(d, tp, tv, "assistant/message")) {
        Py_ssize_t msg = ft_get(d, tp, dv, "message");
        if (msg < 0 || ft_obj(d, tp, msg) < 0)
            return 1;                                  /* (no message: a v0/v1 shape, not read here) */
        int r = f2_assistant(d, tp, ft_get(d, tp, msg, "content"));
        return r == -2 ? -1 : r != 0;
    }
    if (ft_is(d, tp, tv, "tool/call")) {
        Py_ssize_t nv = ft_get(d, tp, dv, "name"), cv = ft_get(d, tp, dv, "callId");
        int s = ft_strv(tp, nv), c = ft_strv(tp, cv);
        if (s < 0 || c < 0 || ft_call_text(&F2_BUF[2], d, tp, nv, s, ft_get(d, tp, dv, "arguments")) < 0)
            return 1;
        return f2_field((P)(F2_BUF[2].p ? F2_BUF[2].p : ""), F2_BUF[2].len, 4, s > 0 && t[nv].b > t[nv].a ? nv : -1,
                        c > 0 ? cv : -1, 0);
    }
    if (ft_is(d, tp, tv, "tool/result")) {
        Py_ssize_t ev = ft_get(d, tp, dv, "error"), msg = ft_get(d, tp, dv, "message");
        int parts = 0;
        if ((ev >= 0 && t[ev].kind != 'n') || ft_obj(d, tp, msg) < 0 || ft_answered(d, tp, msg) == -2)
            return 1;
        F2_BUF[2].len = 0;
        if (ft_content(&F2_BUF[2], d, tp, ft_get(d, tp, msg, "content"), 2, &parts) < 0)
            return 1;
        return parts ? f2_buf(&F2_BUF[2], 5) : 0;
    }
    if (ft_is(d, tp, tv, "session/title")) {
        Py_ssize_t xv = ft_get(d, tp, dv, "title");
        int s = ft_strv(tp, xv);
        return s < 0 || (s > 0 && t[xv].a < t[xv].b);  /* (a title shown: the caller's; none: no hit) */
    }
    return 1;
}

static PyObject *F2_KEYS[13], *F2_EMPTY;
enum { K_SEQ, K_TURN, K_KIND, K_START, K_END, K_MATCHES, K_TOOL, K_LINE, K_OFFSET, K_MEMBER, K_CALL, K_BLOCK, K_SOURCE };

static int f2_setup(void) {
    if (F2_EMPTY != NULL)
        return 0;
    const char *names[13] = {"seq", "turn", "kind", "start", "end", "matches", "tool", "line", "offset", "member", "call",
                             "block", "_source"};
    for (int k = 0; k < 13; k++)
        if ((F2_KEYS[k] = PyUnicode_InternFromString(names[k])) == NULL)
            return -1;
    return (F2_EMPTY = PyTuple_New(0)) == NULL ? -1 : 0;
}

/* a string token as find's hit names it: decoded unplained (ft_opt), None for -1 */
static PyObject *f2_opt(P d, Py_ssize_t v) {
    return ft_opt(d, &F2_TAPE, v, v >= 0);
}

/* the hit h (the k-th of its row) as a ``cls`` whose __dict__ is LazyHit's; row: seq, turn, offset, length */
static PyObject *f2_hit(PyObject *make, PyObject *kinds, P d, const F2Hit *h, int k, PyObject *seq, PyObject *turn,
                        PyObject *pos, PyObject *len) {
    PyObject *cls = PyTuple_GET_ITEM(make, 0);
    PyObject *v[13] = {NULL};
    PyObject *o = NULL, *dict = NULL;
    v[K_SEQ] = seq;
    v[K_TURN] = turn;
    v[K_KIND] = h->kind < 4 ? FT_KINDS[h->kind] : PyTuple_GET_ITEM(kinds, h->kind - 4);
    v[K_LINE] = v[K_MEMBER] = Py_None;
    v[K_OFFSET] = pos;
    v[K_BLOCK] = h->block ? Py_True : Py_False;
    int made[13] = {0};
    made[K_START] = made[K_END] = made[K_MATCHES] = made[K_TOOL] = made[K_CALL] = made[K_SOURCE] = 1;
    if ((v[K_START] = PyLong_FromSsize_t(h->first)) == NULL || (v[K_END] = PyLong_FromSsize_t(h->first + F2.mchars)) == NULL
        || (v[K_MATCHES] = PyLong_FromSsize_t(h->count)) == NULL || (v[K_TOOL] = f2_opt(d, h->tool)) == NULL
        || (v[K_CALL] = f2_opt(d, h->call)) == NULL
        || (v[K_SOURCE] = Py_BuildValue("(OOOOi)", PyTuple_GET_ITEM(make, 1), PyTuple_GET_ITEM(make, 2), pos, len, k)) == NULL
        || (dict = PyDict_New()) == NULL)
        goto out;
    for (int j = 0; j < 13; j++)
        if (PyDict_SetItem(dict, F2_KEYS[j], v[j]) < 0)
            goto out;
    if ((o = PyBaseObject_Type.tp_new((PyTypeObject *)cls, F2_EMPTY, NULL)) == NULL)
        goto out;
    if (PyObject_GenericSetDict(o, dict, NULL) < 0)
        Py_CLEAR(o);
out:
    for (int j = 0; j < 13; j++)
        if (made[j])
            Py_XDECREF(v[j]);
    Py_XDECREF(dict);
    return o;
}

/* the hits of the row read at data[s:s+len] (F2.hits) onto items; flags as find_hits says */
static int f2_row_hits(PyObject *items, PyObject *make, PyObject *kinds, P r, Py_ssize_t base, Py_ssize_t s,
                       Py_ssize_t len, long long seq, long long turn, int named, int *flags) {
    if (F2.nh == 0)
        return 0;
    int bad = 0;
    PyObject *so = PyLong_FromLongLong(seq), *to = named ? PyLong_FromLongLong(turn) : (Py_INCREF(Py_None), Py_None);
    PyObject *po = PyLong_FromSsize_t(base + s), *lo = PyLong_FromSsize_t(len);
    if (so == NULL || to == NULL || po == NULL || lo == NULL)
        bad = 1;
    for (int k = 0; !bad && k < F2.nh; k++) {
        PyObject *h = f2_hit(make, kinds, r, &F2.hits[k], k, so, to, po, lo);
        bad = h == NULL || PyList_Append(items, h) < 0;
        Py_XDECREF(h);
        *flags |= (named ? 0 : 2) | (F2.hits[k].block ? 4 : 0);
    }
    Py_XDECREF(so);
    Py_XDECREF(to);
    Py_XDECREF(po);
    Py_XDECREF(lo);
    return bad ? -1 : 0;
}

static PyObject *find_hits(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer view, nd;
    PyObject *starts, *types, *kinds, *make;
    Py_ssize_t lim, max_row, base;
    int torn, mode, places = 0;
    if (!PyArg_ParseTuple(args, "y*O!npnO!y*iO!O!|p", &view, &PyList_Type, &starts, &lim, &torn, &max_row, &PyTuple_Type,
                          &types, &nd, &mode, &PyTuple_Type, &kinds, &PyTuple_Type, &make, &places))
        return NULL;
    PyObject *items = NULL, *res = NULL;
    P d = (P)view.buf;
    Py_ssize_t read = 0;
    int flags = 0;
    if (lim > view.len)
        lim = view.len;
    if (PyTuple_GET_SIZE(kinds) != 2 || PyTuple_GET_SIZE(make) != 4 || !PyType_Check(PyTuple_GET_ITEM(make, 0))
        || ((PyTypeObject *)PyTuple_GET_ITEM(make, 0))->tp_new != PyBaseObject_Type.tp_new
        || nd.len == 0 || (mode != 0 && mode != 1) || f2_setup() < 0) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "find_hits: two kinds, (cls: a class made by object.__new__, fast rows, "
                            "source, base), a needle, mode 0 or 1");
        goto out;
    }
    base = PyLong_AsSsize_t(PyTuple_GET_ITEM(make, 3));
    if (base == -1 && PyErr_Occurred())
        goto out;
    F2.needle = (P)nd.buf;
    F2.m = nd.len;
    F2.mode = mode;
    F2.mchars = f2_chars(F2.needle, F2.m);
    if (mode == 0)
        for (Py_ssize_t k = 0; k < nd.len; k++)
            if (F2.needle[k] >= 0x80 || (F2.needle[k] >= 'A' && F2.needle[k] <= 'Z')) {
                PyErr_SetString(PyExc_ValueError, "find_hits: mode 0 takes a folded ASCII needle");
                goto out;
            }
    if ((items = PyList_New(0)) == NULL)
        goto out;
    Py_ssize_t last_end = -1;
    for (Py_ssize_t j = 0; j < PyList_GET_SIZE(starts); j++) {
        Py_ssize_t s = PyLong_AsSsize_t(PyList_GET_ITEM(starts, j));
        if (s == -1 && PyErr_Occurred())
            goto out;
        if (places) {                                  /* (find_rows.row_starts: the row of each place, once) */
            if (s < 0 || s < last_end)
                continue;
            if (s >= lim)
                break;
            Py_ssize_t c = s;
            P q = c > 0 ? memrchr(d, '\n', (size_t)c) : NULL;
            s = q ? q - d + 1 : 0;
            P nl = memchr(d + c, '\n', (size_t)(lim - c));
            last_end = nl ? nl - d : lim;
        }
        if (s < 0 || s >= lim)
            continue;
        P nl = memchr(d + s, '\n', (size_t)(lim - s));
        Py_ssize_t e = nl ? nl - d : lim, len = e - s;
        if (e >= lim && torn)
            continue;                                  /* (a torn last row: not an event yet) */
        P r = d + s;
        int x = 1, named = 0;
        long long seq = 0, turn = 0;
        if (len >= 10 && len <= max_row && memcmp(r, "{\"type\":\"", 9) == 0) {
            P q = memchr(r + 9, '"', (size_t)(len - 9));
            Py_ssize_t tl = q == NULL ? 0 : q - (r + 9);
            if (q != NULL && FT_SPECIAL != NULL && (ft_in(types, r + 9, tl) || !ft_in(FT_SPECIAL, r + 9, tl)))
                x = f2_row(r, len, tl, !ft_in(types, r + 9, tl), &seq, &turn, &named);
        }
        if (x < 0) {
            PyErr_NoMemory();
            goto out;
        }
        if (x == 0) {
            read++;
            if (f2_row_hits(items, make, kinds, r, base, s, len, seq, turn, named, &flags) < 0)
                goto out;
            continue;
        }
        flags |= 1;
        PyObject *at = PyLong_FromSsize_t(s);
        if (at == NULL || PyList_Append(items, at) < 0) {
            Py_XDECREF(at);
            goto out;
        }
        Py_DECREF(at);
    }
    res = Py_BuildValue("(Oni)", items, read, flags);
out:
    Py_XDECREF(items);
    PyBuffer_Release(&view);
    PyBuffer_Release(&nd);
    return res;
}
/* ---- end findc2 ---- */

static PyMethodDef methods[] = {
    {"scan", scan, METH_VARARGS, "rowscan.scan, in C (see the module's source)."},
    {"not_legacy", py_not_legacy, METH_VARARGS, "rowscan.not_legacy, in C."},
    {"packed_lines", packed_lines, METH_VARARGS, "The logical export's lines of a packed row (see the source)."},
    {"depth_over", depth_over, METH_VARARGS, "limits.nesting_depth(raw, limit) > limit, in C (ahead3 section)."},
    {"packed_raw", packed_raw, METH_VARARGS, "The logical export's lines of a writer's packed row (ahead3 section)."},
    {"tl_scan", tl_scan, METH_VARARGS, "The timeline's rows of a buffer (timelinec section)."},
    {"tl_count", tl_count, METH_O, "Elements of a JSON array (timelinec section)."},
    {"tl_stream", tl_stream, METH_O, "The timeline's summary of an embedded stream (timelinec section)."},
    {"tl_seqs", tl_seqs, METH_O, "Count and bounds of an increasing JSON array of integers (timelinec section)."},
    {"tl_columns", tl_columns, METH_VARARGS, "The columns of a list of dicts of one shape (timelinec section)."},
    {"tl_dtsum", tl_dtsum, METH_VARARGS, "Sum of the first k integers of a JSON array (timelinec section)."},
    {"text_row", text_row, METH_VARARGS, "A row's searchable text from its bytes (ftsc section)."},
    {"text_rows", text_rows, METH_VARARGS, "text_row of a block of rows (ftsc section)."},
    {"text_setup", text_setup, METH_VARARGS, "The types text_row leaves to the exact decoder (ftsc section)."},
    {"find_folded", find_folded, METH_VARARGS, "The places of a needle in a window folded by a table (big29)."},
    {"screen_row", screen_row, METH_VARARGS, "The fast paths' row screen of one row (numbers section)."},
    {"screen_rows", screen_rows, METH_VARARGS, "The rows of a list the row screen refuses (numbers section)."},
    {"manifest_same", manifest_same, METH_VARARGS, "The home index's manifest check (search section)."},
    {"redact_gate", redact_gate, METH_O, "redact.gate_bits: the rules whose gates pass on a string (export section)."},
    {"redact_walk", redact_walk, METH_VARARGS, "Redactor.obj, text called on gated strings only (export section)."},
    {"redact_quiet", redact_quiet, METH_VARARGS, "A row whose redaction changes nothing (export section)."},
    {"redact_spans", redact_spans, METH_VARARGS, "The strings of a row redaction may change (export section)."},
    {"fold_count", fold_count, METH_VARARGS, "A caseless ASCII literal's first match and count in a text (find section)."},
    {"brackets", brackets, METH_O, "raw.count(b'[') + raw.count(b'{') in one pass (find section)."},
    {"find_ascii", find_ascii, METH_VARARGS, "find_folded of an ASCII needle, 16 places a step (find section)."},
    {"text_hits", text_hits, METH_VARARGS, "Whole-log find's text hits of a window's candidate rows (findc section)."},
    {"find_hits", find_hits, METH_VARARGS, "Whole-log find's hits of a window's candidate rows, made in C (findc2 section)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "rowscan_c", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_rowscan_c(void) {
    for (int c = 0; c < 256; c++)                                       /* (timelinec) */
        TLS[c] = c == '"' ? 1 : c == '\\' ? 2 : c < 0x20 ? 3 : c >= 0x80 ? 4 : 0;
    for (int c = 0; c < 256; c++)
        DT[c] = (c == '-' || (c >= '0' && c <= '9')) ? 2 : c == ',' ? 3 : c == ']' ? 4 : 0;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddIntConstant(m, "HEAD", HEAD) < 0 || PyModule_AddIntConstant(m, "MARK", MARK) < 0
        || PyModule_AddIntConstant(m, "CHUNK", CHUNK) < 0 || PyModule_AddIntConstant(m, "LEGACY", LEGACY) < 0
        || PyModule_AddIntConstant(m, "SHAPE", SHAPE) < 0 || PyModule_AddIntConstant(m, "HAS_MESSAGE", HAS_MESSAGE) < 0
        || PyModule_AddIntConstant(m, "TURN_START", TURN_START) < 0
        || PyModule_AddIntConstant(m, "TURN_END", TURN_END) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
