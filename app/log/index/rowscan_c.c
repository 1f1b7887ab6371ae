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
        w += sprintf(w, "%lld,\"time\":%lld", seq + i, t);
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
        while (i < end && TLS[d[i]] == 0)
            i++;
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

/* any JSON value at d[i] nested at depth (the value's own brackets counted from depth + 1): end or -1 */
static Py_ssize_t tl_value(P d, Py_ssize_t i, Py_ssize_t end, int depth, int max_depth) {
    if (i >= end)
        return -1;
    unsigned c = d[i];
    if (c == '"')
        return tl_string(d, i, end, NULL);
    if (c == '{' || c == '[') {
        if (depth + 1 > max_depth)
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
    if (c == '-' || (c >= '0' && c <= '9'))
        return tl_number(d, i, end);
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
                while (i < nl && TLS[d[i]] == 0)
                    i++;
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
    if (out == NULL || stop < 0 || stop > view.len) {
        PyBuffer_Release(&view);
        if (out != NULL)
            PyErr_SetString(PyExc_ValueError, "stop is outside the buffer");
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
static Py_ssize_t tl_any(P d, Py_ssize_t i, Py_ssize_t n, int *esc) {
    if (i < n && d[i] == '"')
        return tl_string(d, i, n, esc);
    return tl_value(d, i, n, 3, 512);
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
static long long tl_elements(P d, Py_ssize_t a, Py_ssize_t b) {
    if (a < 0 || d[a] != '[')
        return -1;
    Py_ssize_t i = tl_ws(d, a + 1, b);
    if (i < b && d[i] == ']')
        return 0;
    long long n = 0;
    for (;;) {
        i = tl_value(d, i, b, 3, 512);
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

static PyObject *tl_range(TlRange r) {
    return Py_BuildValue("(nn)", r.a, r.b);
}

static PyObject *tl_stream(PyObject *self, PyObject *arg) {
    (void)self;
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    P d = (P)view.buf;
    Py_ssize_t n = view.len, i = tl_ws(d, 0, n);
    long long chunks = 0, t0 = 0, t1 = 0;
    int have = 0, fin = 0;                          /* fin: 0 none, 1 without a reason, 2 reason in fr */
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
                            ve = tl_value(d, v, n, 3, 512);
                            *m = ve < 0 ? -3 : tl_elements(d, v, ve);
                        }
                    } else
                        ve = tl_any(d, v, n, &vesc);
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
                            Py_ssize_t ve = tl_any(d, v, ch.b, &vesc);
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
    if (tl_ws(d, i, n) != n)
        goto none;
    PyBuffer_Release(&view);
    PyObject *f = fin == 0 ? Py_NewRef(Py_None) : fin == 1 ? PyTuple_New(0) : tl_range(fr);
    PyObject *u = (!use || us.a < 0) ? Py_NewRef(Py_None) : tl_range(us);
    if (f == NULL || u == NULL) {
        Py_XDECREF(f);
        Py_XDECREF(u);
        return NULL;
    }
    if (!have)
        return Py_BuildValue("(LOONN)", chunks, Py_None, Py_None, f, u);
    return Py_BuildValue("(LLLNN)", chunks, t0, t1, f, u);
none:
    PyBuffer_Release(&view);
    Py_RETURN_NONE;
}
/* ---- end timelinec ---- */

static PyMethodDef methods[] = {
    {"scan", scan, METH_VARARGS, "rowscan.scan, in C (see the module's source)."},
    {"not_legacy", py_not_legacy, METH_VARARGS, "rowscan.not_legacy, in C."},
    {"packed_lines", packed_lines, METH_VARARGS, "The logical export's lines of a packed row (see the source)."},
    {"tl_scan", tl_scan, METH_VARARGS, "The timeline's rows of a buffer (timelinec section)."},
    {"tl_count", tl_count, METH_O, "Elements of a JSON array (timelinec section)."},
    {"tl_stream", tl_stream, METH_O, "The timeline's summary of an embedded stream (timelinec section)."},
    {"tl_seqs", tl_seqs, METH_O, "Count and bounds of an increasing JSON array of integers (timelinec section)."},
    {"tl_dtsum", tl_dtsum, METH_VARARGS, "Sum of the first k integers of a JSON array (timelinec section)."},
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
