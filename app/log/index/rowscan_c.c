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
 * tl_scan(data, stop, skip, flags, max_depth, max_row, max_members[, start, index]) -> list
 *   The rows of data[start:stop] (each ending in a newline; start a row's start, index its row's index) as the
 *   timeline's pass reads them
 *   (app/log/query/timeline_scan.py holds the interpreted definition, scan_py, and the rules):
 *   a row whose type (the bytes after {"type":" up to the next quote) is in skip: nothing;
 *   a packed chunk row (flags & 1) or a delta assistant/chunk row (flags & 2) in the writer's exact layout,
 *   valid JSON and UTF-8: merged with the run before it into one tuple (turn, step, seq0, n, t0, t1);
 *   a step/start, step/end or turn/start row in the writer's layout (flags & 4): (code, seq, time, turn, step|None);
 *   an assistant/message or assistant/attempt row that tl_settle takes (flags & 8; the tlc helper): its tuple
 *   (tl_settle_obj; timeline_lean.settlement, which reads it when the flag is off, is its definition);
 *   a whole turn from a turn/start row (flags & 16, flags & 32: the log has times; the tlc2 section's tl_turn) when
 *   tl_turn takes it: its item (the rows of the turn are then not given one by one);
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
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#define TL_ONES 0x0101010101010101ULL
#define TL_HIGH 0x8080808080808080ULL
static inline Py_ssize_t tl_plain(P d, Py_ssize_t i, Py_ssize_t end) {
#if defined(__SSE2__)
    /* (tlc2) 16 bytes a step first: a quote, a backslash, a byte <= 0x1f (max(v, 0x1f) == 0x1f) or >= 0x80 (its
     * sign bit) flagged; the lowest flag is the first such byte */
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'), ctl = _mm_set1_epi8(0x1f);
    while (i + 16 <= end) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(d + i));
        __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)),
                                   _mm_cmpeq_epi8(_mm_max_epu8(v, ctl), ctl));
        int mask = _mm_movemask_epi8(hit) | _mm_movemask_epi8(v);
        if (mask)
            return i + __builtin_ctz((unsigned)mask);
        i += 16;
    }
#endif
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
/* (the tlc2 section) a whole turn from its turn/start row (flags & 16; flags & 32: the log has times) */
#define T2_TURN 16
#define T2_TIMED 32
static PyObject *tl_turn(P d, Py_ssize_t p, Py_ssize_t stop, const TlRun *ts, PyObject *skip, int flags,
                         int max_depth, Py_ssize_t max_row, long long index, Py_ssize_t *end, long long *rows);

static PyObject *tl_scan(PyObject *self, PyObject *args) {
    PyObject *data, *skip;
    Py_ssize_t stop, max_row, max_members, start = 0;
    long long index = 0;
    int flags, max_depth;
    (void)self;
    if (!PyArg_ParseTuple(args, "OnO!iinn|nL", &data, &stop, &PyList_Type, &skip, &flags, &max_depth, &max_row,
                          &max_members, &start, &index))
        return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    PyObject *out = PyList_New(0);
    if (out == NULL || stop < 0 || stop > view.len || start < 0 || start > stop || index < 0 || max_depth < 0
        || max_depth >= TL_STRICT) {
        PyBuffer_Release(&view);
        if (out != NULL)
            PyErr_SetString(PyExc_ValueError, "start or stop is outside the buffer, or max_depth outside [0, 2**24)");
        Py_XDECREF(out);
        return NULL;
    }
    P d = (P)view.buf;
    Py_ssize_t n_skip = PyList_GET_SIZE(skip);
    TlRun run = {0, 0, 0, 0, 0, 0};
    int open = 0;
    for (Py_ssize_t p = start; p < stop; index++) {
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
                if (r.n == 2 && (flags & T2_TURN)) {         /* (tlc2) the whole turn, read in C when it can be */
                    Py_ssize_t end = p;
                    long long rows = 0;
                    PyObject *t = tl_turn(d, p, stop, &r, skip, flags, max_depth, max_row, index, &end, &rows);
                    if (t == NULL)
                        goto fail;
                    if (t != Py_None) {
                        int bad = PyList_Append(out, t);
                        Py_DECREF(t);
                        if (bad < 0)
                            goto fail;
                        p = end;
                        index += rows - 1;
                        continue;
                    }
                    Py_DECREF(t);
                }
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
#if defined(__SSE2__)
/* (tl4) prefix XOR of the bits of x: bit k the parity of bits 0..k */
static inline uint64_t tl_pxor(uint64_t x) {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    return x;
}

/* (tl4) an array of strings in the writer's layout ("a","b",...] : no blank, no escape, ASCII with no control
 * byte) from d[i] (an element's opening quote), 64 bytes a step by masks (a string's bytes told by the parity of
 * the quotes before them): the array's end (past ']'), *m its elements; else -1 and *resume an element's opening
 * quote up to which all is read and valid, *m the elements before it, *upto_at the end of the 64 bytes not taken (the
 * caller reads on from *resume one by one, past *upto_at, then tries this again) */
static Py_ssize_t tl_strarray_fast(P d, Py_ssize_t i, Py_ssize_t n, long long *m, Py_ssize_t *resume,
                                   Py_ssize_t *upto_at) {
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'), ctl = _mm_set1_epi8(0x1f),
        comma = _mm_set1_epi8(','), close = _mm_set1_epi8(']');
    uint64_t inside = 0, after_close = 0, after_comma = 0;
    long long count = 0;
    *resume = i;
    *m = 0;
    *upto_at = n;
    while (i + 64 <= n) {
        uint64_t Q = 0, B = 0, S = 0, C = 0, R = 0;
        for (int k = 0; k < 4; k++) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(d + i + 16 * k));
            int sh = 16 * k;
            Q |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, quote)) << sh;
            B |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, bslash)) << sh;
            S |= (uint64_t)(unsigned)(_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_max_epu8(v, ctl), ctl))
                                      | _mm_movemask_epi8(v)) << sh;
            C |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, comma)) << sh;
            R |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, close)) << sh;
        }
        uint64_t par = tl_pxor(Q) ^ inside;            /* 1 from an opening quote to just before its closing one */
        uint64_t open = Q & par, shut = Q & ~par, out = ~par & ~Q;
        uint64_t endm = R & out, last = endm ? endm & (0 - endm) : 0;
        uint64_t upto = last ? (last << 1) - 1 : ~0ULL;          /* the bytes up to the array's ']' */
        uint64_t before = last ? last - 1 : ~0ULL;
        uint64_t commas = C & out & before;
        if (((B | S) & upto) || (out & before & ~C)
            || (((shut << 1) | after_close) & upto & ~(commas | last))     /* after a string: ',' or the ']' */
            || (((commas << 1) | after_comma) & upto & ~open)) {           /* after a ',': a string */
            *upto_at = i + 64;
            return -1;
        }
        if (last) {
            *m = count + __builtin_popcountll(open & before);
            return i + __builtin_ctzll(last) + 1;
        }
        count += __builtin_popcountll(open);
        if (open) {                                    /* (read on from the block's last string at worst) */
            *resume = i + 63 - __builtin_clzll(open);
            *m = count - 1;
        }
        inside = (par >> 63) ? ~0ULL : 0;
        after_close = shut >> 63;
        after_comma = commas >> 63;
        i += 64;
    }
    return -1;
}
#endif

static long long tl_strarray(P d, Py_ssize_t i, Py_ssize_t n, Py_ssize_t *end) {
    i = tl_ws(d, i + 1, n);
    long long m = 0;
    if (i < n && d[i] == ']') {
        *end = i + 1;
        return 0;
    }
    Py_ssize_t fast_from = i;                          /* (tl4) where to try the writer's layout, 64 bytes a step */
    for (;;) {
#if defined(__SSE2__)
        if (i >= fast_from && i < n && d[i] == '"') {
            Py_ssize_t at, past;
            long long k;
            Py_ssize_t e = tl_strarray_fast(d, i, n, &k, &at, &past);
            m += k;
            if (e >= 0) {
                *end = e;
                return m;
            }
            i = at;                                    /* (one by one from there, past the bytes it did not take) */
            fast_from = past;
        }
#endif
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
            int listed = !isint[2 * k];
            if (isint[2 * k]) {       /* (tl4) an integer column so far: its value not listed (no reference taken) */
                long long *w = (long long *)PyBytes_AS_STRING(PyList_GET_ITEM(ints, k));
                int flip = 0;
                if (v == Py_None)
                    w[i] = LLONG_MIN;                  /* (the list holds None there already) */
                else if (!PyLong_CheckExact(v))
                    flip = 1;
                else {
                    int over = 0;
                    long long x = PyLong_AsLongLongAndOverflow(v, &over);
                    if (over || x >= TL_BOUND || x <= -TL_BOUND)
                        flip = 1;
                    else {
                        w[i] = x;
                        isint[2 * k + 1] = 1;
                    }
                }
                if (flip) {                            /* not integers after all: the rows before listed now */
                    isint[2 * k] = 0;
                    listed = 1;
                    PyObject *l = PyList_GET_ITEM(lists, k);
                    for (Py_ssize_t j = 0; j < i; j++) {
                        PyObject *u = PyDict_GetItemWithError(PyList_GET_ITEM(rows, j), key);
                        if (u == NULL) {
                            if (!PyErr_Occurred())
                                PyErr_SetString(PyExc_RuntimeError, "tl_columns: a row changed while read");
                            goto fail;
                        }
                        if (PyList_SetItem(l, j, Py_NewRef(u)) < 0)
                            goto fail;
                    }
                }
            }
            if (listed && PyList_SetItem(PyList_GET_ITEM(lists, k), i, Py_NewRef(v)) < 0)
                goto fail;
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
/* (tl4) tl_lines(buf) -> int: buf.count(b"\n") (app/log/source/sources.py: newlines, a segment's line count),
 * 16 bytes a step */
static PyObject *tl_lines(PyObject *self, PyObject *arg) {
    (void)self;
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    P d = (P)view.buf;
    Py_ssize_t n = view.len, i = 0;
    long long count = 0;
    Py_BEGIN_ALLOW_THREADS
#if defined(__SSE2__)
    const __m128i nl = _mm_set1_epi8('\n');
    while (i + 64 <= n) {
        __m128i a = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)(d + i)), nl);
        __m128i b = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)(d + i + 16)), nl);
        __m128i c = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)(d + i + 32)), nl);
        __m128i e = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)(d + i + 48)), nl);
        uint64_t m = (uint64_t)(unsigned)_mm_movemask_epi8(a) | (uint64_t)(unsigned)_mm_movemask_epi8(b) << 16
            | (uint64_t)(unsigned)_mm_movemask_epi8(c) << 32 | (uint64_t)(unsigned)_mm_movemask_epi8(e) << 48;
        count += __builtin_popcountll(m);
        i += 64;
    }
#endif
    for (; i < n; i++)
        count += d[i] == '\n';
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    return PyLong_FromLongLong(count);
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

/* a packed row read by ah_parse: the places of its parts in the row's bytes */
typedef struct {
    const unsigned char *e, *turn, *step, *index, *dts, *strs, *id, *name;
    Py_ssize_t nturn, nstep, nindex, nid, nname, n;
    long long seq0, time0;
    const char *delta;
    int call;
} ah_row;

/* 1: p0[0:len] is a packed row in the writer's layout that packed_raw writes (all its checks passed), its parts
 * in *r; 0: it is not */
static int ah_parse(const unsigned char *p0, Py_ssize_t len, ah_row *r) {
    const unsigned char *e = p0 + len, *p, *q;
    Py_ssize_t ndt, n;
    long long v;
    memset(r, 0, sizeof *r);
    r->e = e;
    if ((p = ah_lit(p0, e, "{\"type\":\"text-chunks\"")) != NULL)
        r->delta = "text-delta";
    else if ((p = ah_lit(p0, e, "{\"type\":\"reasoning-chunks\"")) != NULL)
        r->delta = "reasoning-delta";
    else if ((p = ah_lit(p0, e, "{\"type\":\"tool-call-chunks\"")) != NULL) {
        r->delta = "tool-call-delta";
        r->call = 1;
    } else
        return 0;
    if (!(p = ah_lit(p, e, ",\"seq0\":")) || !(p = ah_int(p, e, &r->seq0)) || !(p = ah_lit(p, e, ",\"time0\":"))
        || !(p = ah_int(p, e, &r->time0)) || !(p = ah_lit(p, e, ",\"data\":{\"turn\":")))
        return 0;
    r->turn = p;
    if (!(p = ah_int(p, e, &v)))
        return 0;
    r->nturn = p - r->turn;
    if (!(p = ah_lit(p, e, ",\"step\":")))
        return 0;
    r->step = p;
    if (!(p = ah_int(p, e, &v)))
        return 0;
    r->nstep = p - r->step;
    if (!(p = ah_lit(p, e, ",\"index\":")))
        return 0;
    r->index = p;
    if (!(p = ah_int(p, e, &v)))
        return 0;
    r->nindex = p - r->index;
    if (!(p = ah_lit(p, e, ",\"dt\":")))
        return 0;
    r->dts = p;
    if (!(p = ah_list(p, e, 0, &ndt)))
        return 0;
    if (r->call) {
        if (!(p = ah_lit(p, e, ",\"id\":")))
            return 0;
        r->id = p;
        if (!(p = ah_str(p, e)))
            return 0;
        r->nid = p - r->id;
        if ((q = ah_lit(p, e, ",\"name\":")) != NULL) {
            r->name = q;
            if (!(p = ah_str(q, e)))
                return 0;
            r->nname = p - r->name;
        }
        if (!(p = ah_lit(p, e, ",\"args\":")))
            return 0;
    } else if (!(p = ah_lit(p, e, ",\"texts\":")))
        return 0;
    r->strs = p;
    if (!(p = ah_list(p, e, 1, &n)) || !(p = ah_lit(p, e, "}}")) || p != e)
        return 0;
    if (n < 1 || n > 65536 || ndt != n - 1 || r->seq0 < 0 || r->seq0 + n - 1 > AH_SAFE)
        return 0;
    r->n = n;
    /* the times: every running sum within 64 bits (each dt has at most 18 digits), the last one checked */
    long long t = r->time0;
    p = r->dts + 1;
    for (Py_ssize_t i = 0; i < ndt; i++) {
        p = ah_int(p, e, &v) + 1;
        if ((v > 0 && t > LLONG_MAX - v) || (v < 0 && t < LLONG_MIN - v))
            return 0;
        t += v;
    }
    if (!r->call && (t > AH_SAFE || t < -AH_SAFE))
        return 0;
    return 1;
}

static const char ah_head[] = "{\"type\":\"assistant/chunk\",\"seq\":";

/* the decimal digits of v at w, as put_ll writes them, two at a time; -> past them */
static char *ah_ll(char *w, long long v) {
    static const char pairs[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                "8081828384858687888990919293949596979899";
    char buf[24];
    int k = 24;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    while (u >= 100) {
        unsigned r = (unsigned)(u % 100);
        u /= 100;
        buf[--k] = pairs[2 * r + 1];
        buf[--k] = pairs[2 * r];
    }
    if (u >= 10) {
        buf[--k] = pairs[2 * u + 1];
        buf[--k] = pairs[2 * u];
    } else {
        buf[--k] = (char)('0' + u);
    }
    if (v < 0)
        *w++ = '-';
    memcpy(w, buf + k, (size_t)(24 - k));
    return w + (24 - k);
}

/* the bytes ah_write writes at most */
static Py_ssize_t ah_bound(const ah_row *r) {
    Py_ssize_t per = (Py_ssize_t)sizeof ah_head - 1 + 20 + 8 + 20 + 256 + r->nid + r->nname + 32 + 3 + 1;
    return per * r->n + (r->e - r->strs);
}

/* the end of a string literal ah_str accepted, from its opening quote */
static const unsigned char *ah_str_end(const unsigned char *p) {
    p++;
    while (*p != '"')
        p += *p == '\\' ? 2 : 1;
    return p + 1;
}

/* the lines of r, joined by '\n', at w (room for ah_bound(r) bytes); -> past them, or NULL (the middle part too
 * long) */
static char *ah_write(const ah_row *r, char *w) {
    char mid[256];
    Py_ssize_t nmid = snprintf(mid, sizeof mid, ",\"data\":{\"turn\":%.*s,\"step\":%.*s,\"chunk\":{\"type\":\"%s\","
                               "\"index\":%.*s,", (int)r->nturn, (const char *)r->turn, (int)r->nstep,
                               (const char *)r->step, r->delta, (int)r->nindex, (const char *)r->index);
    if (nmid <= 0 || nmid >= (Py_ssize_t)sizeof mid)
        return NULL;
    Py_ssize_t nhead = (Py_ssize_t)sizeof ah_head - 1;
    const unsigned char *dp = r->dts + 1, *sp = r->strs + 1, *q;
    long long t = r->time0, v;
    for (Py_ssize_t i = 0; i < r->n; i++) {
        if (i > 0) {
            dp = ah_int(dp, r->e, &v) + 1;
            t += v;
            *w++ = '\n';
        }
        w = ah_put(w, ah_head, nhead);
        w = ah_ll(w, r->seq0 + i);
        w = ah_put(w, ",\"time\":", 8);
        w = ah_ll(w, t);
        w = ah_put(w, mid, nmid);
        if (r->call) {
            w = ah_put(w, "\"id\":", 5);
            w = ah_put(w, r->id, r->nid);
            if (r->name != NULL) {
                w = ah_put(w, ",\"name\":", 8);
                w = ah_put(w, r->name, r->nname);
            }
            w = ah_put(w, ",\"argumentsDelta\":", 18);
        } else {
            w = ah_put(w, "\"text\":", 7);
        }
        q = ah_str_end(sp);
        w = ah_put(w, sp, q - sp);
        sp = q + 1;
        w = ah_put(w, "}}}", 3);
    }
    return w;
}

static PyObject *packed_raw(PyObject *self, PyObject *args) {
    Py_buffer b;
    ah_row r;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*", &b))
        return NULL;
    if (!ah_parse((const unsigned char *)b.buf, b.len, &r)) {
        PyBuffer_Release(&b);
        Py_RETURN_NONE;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, ah_bound(&r));
    if (out == NULL) {
        PyBuffer_Release(&b);
        return NULL;
    }
    char *w0 = PyBytes_AS_STRING(out), *w = ah_write(&r, w0);
    PyBuffer_Release(&b);
    if (w == NULL) {
        Py_DECREF(out);
        Py_RETURN_NONE;
    }
    if (_PyBytes_Resize(&out, w - w0) < 0)
        return NULL;
    return Py_BuildValue("(Nn)", out, r.n);
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
        /* eight plain bytes at a time (ASCII, no control byte, no '"' nor '\\'), then one at a time */
        while (i + 8 <= n) {
            uint64_t w;
            memcpy(&w, d + i, 8);
            const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
            uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
            if (((w | ((q - ones) & ~q) | ((b - ones) & ~b) | ((w - ones * 0x20) & ~w)) & high) != 0)
                break;
            i += 8;
        }
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
/* the top level of a canonical row (plain_spans): its keys and the places of their values, the keys of "data" the
 * v0/v1 conversions look at, whether a top-level array holds an array */
#define RP_KEYS 8
typedef struct {
    int n, data, over;                   /* keys seen; the index of "data" (-1); more than RP_KEYS keys */
    Py_ssize_t ks[RP_KEYS], kl[RP_KEYS], vs[RP_KEYS], ve[RP_KEYS];
    int nested[RP_KEYS];
    int dkeys;                           /* bits: data holds id 1, message 2, content 4, callId 8, trigger 16 */
    int nogate;                          /* value strings' gates not computed (read as 0) */
} rp_top;

static int rp_is(P d, Py_ssize_t s, Py_ssize_t l, const char *w) {
    return (size_t)l == strlen(w) && memcmp(d + s, w, (size_t)l) == 0;
}

static int rq_scan(P d, Py_ssize_t n, int canon, int maxdepth, rq_spans *sp, rp_top *top) {
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
        if (top != NULL && depth == 2 && stk[0] == '{' && stk[1] == '[' && top->n > 0)
            top->nested[top->n - 1] = 1;
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
        if ((e = rq_string(d, i, n, top == NULL || !top->nogate, &gate)) < 0)
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
    if (top != NULL && depth == 1) {
        if (top->n >= RP_KEYS)
            return 0;
        top->ks[top->n] = i + 1;
        top->kl[top->n] = e - 1 - (i + 1);
        top->vs[top->n] = e + 1;             /* (canonical: the ':' right after the key, checked below) */
        top->nested[top->n] = 0;
        if (rp_is(d, i + 1, e - 1 - (i + 1), "data"))
            top->data = top->n;
        top->n++;
    } else if (top != NULL && depth == 2 && stk[0] == '{' && top->data >= 0 && top->data == top->n - 1
               && stk[1] == '{') {
        Py_ssize_t ko = i + 1, kl = e - 1 - ko;
        top->dkeys |= rp_is(d, ko, kl, "id") ? 1 : rp_is(d, ko, kl, "message") ? 2 : rp_is(d, ko, kl, "content") ? 4
                      : rp_is(d, ko, kl, "callId") ? 8 : rp_is(d, ko, kl, "trigger") ? 16 : 0;
    }
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
    if (top != NULL && depth == 1 && stk[0] == '{' && top->n > 0)
        top->ve[top->n - 1] = i;
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
        r = rq_scan((P)b->buf, b->len, canon, maxdepth, sp, NULL);
        Py_END_ALLOW_THREADS
    } else {
        r = rq_scan((P)b->buf, b->len, canon, maxdepth, sp, NULL);
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
/* plain_spans(raw, maxdepth, version) -> (spans, check) | None (issue 29: the logical export at disk speed)
 *   app/store/export_rows.py plain_row(reader, raw) for a row redact_spans reads (its Python definition:
 *   redact_spans(raw) is not None and plain_row), the data check left to the caller: None unless raw is
 *   canonical (redact_spans) and a JSON object whose keys are "type", "seq", "time", "data" and then some of
 *   "sourceEventSeqs", "surfaceOp", "ignorable" in that order, "type" a string that is no packed tag, "seq" an
 *   integer from 0 to 2^53-1, "time" an integer, "sourceEventSeqs" an array (version >= 1: holding no array),
 *   "surfaceOp" a string, "ignorable" true, and with version < 2 no steering/message or turn/end row and no
 *   v0/v1 shape the codec converts (user/message without "id", assistant/message and tool/result without
 *   "message" with "content" and "callId", turn/start with "trigger", in an object "data").  Else
 *   (redact_spans(raw), check): check, "data" is a non-empty object (plain_row then asks _data_check of the
 *   row; the caller must). */
static int rp_plain(P d, rp_top *t, int version) {
    static const char *const extra[] = {"sourceEventSeqs", "surfaceOp", "ignorable"};
    static const char *const first[] = {"type", "seq", "time", "data"};
    int next = 0;
    if (t->n < 4)
        return 0;
    for (int k = 0; k < 4; k++)
        if (!rp_is(d, t->ks[k], t->kl[k], first[k]))
            return 0;
    for (int k = 4; k < t->n; k++) {
        while (next < 3 && !rp_is(d, t->ks[k], t->kl[k], extra[next]))
            next++;
        if (next >= 3)
            return 0;
        P v = d + t->vs[k];
        Py_ssize_t vl = t->ve[k] - t->vs[k];
        if (next == 0 && (*v != '[' || (version >= 1 && t->nested[k])))
            return 0;
        if (next == 1 && *v != '"')
            return 0;
        if (next == 2 && !(vl == 4 && memcmp(v, "true", 4) == 0))
            return 0;
        next++;
    }
    /* type: a string (its bytes are its text: a canonical string spells a name of plain ASCII as it is) */
    Py_ssize_t ts = t->vs[0] + 1, tl = t->ve[0] - t->vs[0] - 2;
    if (d[t->vs[0]] != '"')
        return 0;
    if (rp_is(d, ts, tl, "text-chunks") || rp_is(d, ts, tl, "reasoning-chunks") || rp_is(d, ts, tl, "tool-call-chunks"))
        return 0;
    /* seq: 0 to 2^53-1 (a canonical number: an integer of at most 18 digits, no '-0') */
    P v = d + t->vs[1];
    Py_ssize_t vl = t->ve[1] - t->vs[1];
    if (vl < 1 || *v < '0' || *v > '9')
        return 0;
    long long seq = 0;
    for (Py_ssize_t j = 0; j < vl; j++)
        seq = seq * 10 + (v[j] - '0');
    if (seq > AH_SAFE)
        return 0;
    v = d + t->vs[2];
    if (*v != '-' && (*v < '0' || *v > '9'))
        return 0;
    if (version < 2) {
        int obj = d[t->vs[3]] == '{', k = t->dkeys;
        if (rp_is(d, ts, tl, "steering/message") || rp_is(d, ts, tl, "turn/end"))
            return 0;
        if (obj && ((rp_is(d, ts, tl, "user/message") && !(k & 1))
                    || ((rp_is(d, ts, tl, "assistant/message") && !(k & 2) && (k & 4)))
                    || ((rp_is(d, ts, tl, "tool/result") && !(k & 2) && (k & 8)))
                    || (rp_is(d, ts, tl, "turn/start") && (k & 16))))
            return 0;
    }
    return 1;
}

static PyObject *plain_spans(PyObject *self, PyObject *args) {
    Py_buffer b;
    int maxdepth, version;
    rq_spans sp = {NULL, 0, 0};
    rp_top top;
    PyObject *out = NULL, *list;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*ii", &b, &maxdepth, &version))
        return NULL;
    rd_init();
    memset(&top, 0, sizeof top);
    top.data = -1;
    P d = (P)b.buf;
    int r = b.len > 0 && d[0] == '{' ? rq_scan(d, b.len, 1, maxdepth, &sp, &top) : 0;
    if (r == 1 && !rp_plain(d, &top, version))
        r = 0;
    int check = r == 1 && d[top.vs[3]] == '{' && d[top.vs[3] + 1] != '}';
    PyBuffer_Release(&b);
    if (r < 0) {
        PyErr_NoMemory();
    } else if (r == 0) {
        out = Py_None;
        Py_INCREF(out);
    } else if ((list = PyList_New(sp.len)) != NULL) {
        for (Py_ssize_t k = 0; k < sp.len; k++) {
            PyObject *x = PyLong_FromSsize_t(sp.v[k]);
            if (x == NULL) {
                Py_CLEAR(list);
                break;
            }
            PyList_SET_ITEM(list, k, x);
        }
        if (list != NULL)
            out = Py_BuildValue("(NO)", list, check ? Py_True : Py_False);
    }
    PyMem_RawFree(sp.v);
    return out;
}
/* logical_block(buf, used, data, at, stop, nrows, version, flags, maxdepth, maxrow)
 *   -> (used, end, rows, events, checks, stopped)
 *   The logical export's lines of the rows of a segment's bytes (app/store/export_rows.py logical_jsonl, its
 *   Python definition: the loop there, row by row), written into the bytearray buf from offset used on (buf
 *   grown as needed, by doubling and to LB_MIN_CAP at least, never shrunk: its bytes after the new used are
 *   room, not text), each ended by '\n', for rows
 *   from offset at on, while a row starts before stop, is ended by '\n' (complete), is at most maxrow bytes, is
 *   one of these, and until nrows rows are written:
 *   - a packed chunk row packed_raw writes (flags & 1: the log's packed rows may be read so), redacting (flags &
 *     2) only when redact_quiet(row, False, maxdepth) (its redaction changes nothing): packed_raw's lines;
 *   - (flags & 4) a row plain_spans(row, maxdepth, version) accepts, redacting only with no span (no string a gate
 *     passes on): the row itself.
 *   It stops before any other row (the caller's Python way then takes it).  end: the offset after the last row
 *   written (its '\n'); rows: how many; events: the lines written; checks: [start0, end0, ...] the rows written
 *   whose data the caller must check (plain_spans' check): if one fails, the lines from the first row on are
 *   wrong and the caller takes those rows its own way.  stopped: when it stopped, redacting, at a row
 *   plain_spans accepts that has spans, (plain_spans of that row), else None. */
typedef struct {
    PyObject *ba;
    Py_ssize_t len, cap;
} lb_out;

#define LB_MIN_CAP ((Py_ssize_t)5 << 18)       /* a chunk's room at least (the caller hands one on at 1 MiB) */

static char *lb_room(lb_out *o, Py_ssize_t need) {
    if (o->len + need > o->cap) {
        Py_ssize_t cap = o->cap * 2 > o->len + need ? o->cap * 2 : o->len + need + (1 << 16);
        if (cap < LB_MIN_CAP)
            cap = LB_MIN_CAP;
        if (PyByteArray_Resize(o->ba, cap) < 0)
            return NULL;
        o->cap = cap;
    }
    return PyByteArray_AS_STRING(o->ba) + o->len;
}

/* the gate of a string literal's bytes (escapes not decoded, strictly valid UTF-8, as rq_string reads a value
 * string): 63 with a letter IGNORECASE folds (in valid UTF-8 the lead bytes C4, C5, E2 start characters only) */
static int lb_gate(P d, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i + 1 < n; i++)
        if ((d[i] == 0xC4 && (d[i + 1] == 0xB0 || d[i + 1] == 0xB1)) || (d[i] == 0xC5 && d[i + 1] == 0xBF)
            || (d[i] == 0xE2 && i + 2 < n && d[i + 1] == 0x84 && d[i + 2] == 0xAA))
            return 63;
    return rd_gate_bytes(d, n, 1);
}

/* redact_quiet(row, False) of a row ah_parse read: no string value passes a gate (the type's value never does:
 * the three tags hold no gate's word, tests/test_logical_block.py) */
static int lb_packed_quiet(const ah_row *r) {
    const unsigned char *p, *q;
    if (r->call && (lb_gate(r->id + 1, r->nid - 2) || (r->name != NULL && lb_gate(r->name + 1, r->nname - 2))))
        return 0;
    for (p = r->strs + 1; *p == '"'; p = q + 1) {
        q = ah_str_end(p);
        if (lb_gate(p + 1, q - p - 2))
            return 0;
    }
    return 1;
}

static int lb_packed(P d, Py_ssize_t n) {
    return (n >= 21 && memcmp(d, "{\"type\":\"text-chunks\"", 21) == 0)
           || (n >= 26 && memcmp(d, "{\"type\":\"reasoning-chunks\"", 26) == 0)
           || (n >= 26 && memcmp(d, "{\"type\":\"tool-call-chunks\"", 26) == 0);
}

static PyObject *logical_block(PyObject *self, PyObject *args) {
    PyObject *ba, *checks = NULL, *res = NULL, *stopped = NULL;
    Py_buffer b;
    Py_ssize_t at, stop, nrows, maxrow, rows = 0, events = 0;
    int version, flags, maxdepth, err = 0;
    rq_spans sp = {NULL, 0, 0};
    (void)self;
    Py_ssize_t used;
    if (!PyArg_ParseTuple(args, "Ony*nnniiin", &ba, &used, &b, &at, &stop, &nrows, &version, &flags, &maxdepth,
                          &maxrow))
        return NULL;
    if (!PyByteArray_CheckExact(ba) || at < 0 || used < 0 || used > PyByteArray_GET_SIZE(ba)) {
        PyBuffer_Release(&b);
        PyErr_SetString(PyExc_TypeError, "logical_block: a bytearray and an offset are needed");
        return NULL;
    }
    rd_init();
    lb_out o = {ba, used, PyByteArray_GET_SIZE(ba)};
    P d0 = (P)b.buf;
    Py_ssize_t n = b.len;
    if (stop > n)
        stop = n;
    if ((checks = PyList_New(0)) == NULL)
        goto done;
    while (rows < nrows && at < stop) {
        P d = d0 + at;
        const unsigned char *nl = memchr(d, '\n', (size_t)(n - at));
        if (nl == NULL)
            break;
        Py_ssize_t len = nl - d;
        if (len > maxrow)
            break;
        if (lb_packed(d, len)) {
            ah_row r;
            if (!(flags & 1) || !ah_parse(d, len, &r) || ((flags & 2) && !lb_packed_quiet(&r)))
                break;
            char *w0 = lb_room(&o, ah_bound(&r) + 1), *w;
            if (w0 == NULL) {
                err = 1;
                break;
            }
            if ((w = ah_write(&r, w0)) == NULL)
                break;
            *w++ = '\n';
            o.len += w - w0;
            events += r.n;
        } else {
            rp_top top;
            if (!(flags & 4))
                break;
            memset(&top, 0, sizeof top);
            top.data = -1;
            top.nogate = !(flags & 2);
            sp.len = 0;
            int got = len > 0 && d[0] == '{' ? rq_scan(d, len, 1, maxdepth, top.nogate ? NULL : &sp, &top) : 0;
            if (got < 0) {
                PyErr_NoMemory();
                err = 1;
                break;
            }
            if (got != 1 || !rp_plain(d, &top, version))
                break;
            if (sp.len > 0) {                /* (redacting: its spans handed back, as plain_spans gives them) */
                PyObject *list = PyList_New(sp.len);
                if (list == NULL) {
                    err = 1;
                    break;
                }
                for (Py_ssize_t k = 0; k < sp.len; k++) {
                    PyObject *x = PyLong_FromSsize_t(sp.v[k]);
                    if (x == NULL) {
                        Py_DECREF(list);
                        list = NULL;
                        break;
                    }
                    PyList_SET_ITEM(list, k, x);
                }
                int check = d[top.vs[3]] == '{' && d[top.vs[3] + 1] != '}';
                if (list == NULL || (stopped = Py_BuildValue("(NO)", list, check ? Py_True : Py_False)) == NULL)
                    err = 1;
                break;
            }
            if (d[top.vs[3]] == '{' && d[top.vs[3] + 1] != '}') {
                PyObject *x = Py_BuildValue("nn", at, at + len);
                if (x == NULL || PyList_Append(checks, x) < 0) {
                    Py_XDECREF(x);
                    err = 1;
                    break;
                }
                Py_DECREF(x);
            }
            char *w = lb_room(&o, len + 1);
            if (w == NULL) {
                err = 1;
                break;
            }
            memcpy(w, d, (size_t)len);
            w[len] = '\n';
            o.len += len + 1;
            events++;
        }
        at += len + 1;
        rows++;
    }
    if (!err)
        res = Py_BuildValue("(nnnnOO)", o.len, at, rows, events, checks, stopped != NULL ? stopped : Py_None);
done:
    Py_XDECREF(stopped);
    Py_XDECREF(checks);
    PyMem_RawFree(sp.v);
    PyBuffer_Release(&b);
    return res;
}
/* redact_common(s, bits) -> (text, found) | None (issue 29: the common rules of the redacted exports in C)
 *   app/store/redact.py Redactor._text(s, bits) (its Python definition) for a str s holding none of the four
 *   letters IGNORECASE folds (U+0130, U+0131, U+017F, U+212A) and whose gates (redact_gate) are among
 *   secret-assignment (8) and home-path (32): the pattern secret-assignment applied, then home-path when its gate
 *   passes on the text as secret-assignment left it (as re.sub applies them: leftmost matches, none overlapping).
 *   text: s with the matches replaced (s itself when none); found: [rule, secret, ...] per replacement in the
 *   order made (rule 3 or 5; secret: the part Redactor._replacer masks for the report: group 3 of
 *   secret-assignment, group 2 of home-path).  A secret-assignment match holding "[REDACTED:" is left as it is
 *   and not listed.  None: another gate passes, or s holds a folded letter (the Python rules decide).
 *
 *   secret-assignment, (?i)\b(N*KEY N*)(\\?["']?\s*[=:]\s*\\?["']?)([^\s"'\\&,;}\]]{4,}) with N the name class
 *   [A-Za-z0-9_.-] and KEY its keywords, matches where a run of name characters has its first word boundary
 *   (\b: Unicode word characters) at p, holds a keyword from p on, and is followed by the separator and four
 *   characters of the value class or more (group 1 always ends where its run does: the separator never starts
 *   with a name character; the separator's optional parts and the value are taken greedily: giving one back
 *   starts the value with a character it refuses).  home-path, (/home/|/Users/|[A-Za-z]:\\\\?Users\\\\?)
 *   (?!\[user\])([^/\\\s"'<>:*?|]+), the same way: each optional backslash taken when there. */
typedef struct {
    Py_ssize_t a, b;        /* the part replaced */
    int rule;
} rc_rep;

typedef struct {
    rc_rep *v;
    Py_ssize_t len, cap;
} rc_reps;

static int rc_add(rc_reps *r, Py_ssize_t a, Py_ssize_t b, int rule) {
    if (r->len >= r->cap) {
        Py_ssize_t cap = r->cap ? 2 * r->cap : 16;
        rc_rep *v = PyMem_Realloc(r->v, (size_t)cap * sizeof *v);
        if (v == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        r->v = v;
        r->cap = cap;
    }
    r->v[r->len].a = a;
    r->v[r->len].b = b;
    r->v[r->len++].rule = rule;
    return 0;
}

#define RC(i) PyUnicode_READ(kind, data, (i))
#define RC_NAME(c) ((c) < 128 && RD_NAME(c))
#define RC_WORD(c) (Py_UNICODE_ISALNUM(c) || (c) == '_')

static int rc_ci(int kind, const void *data, Py_ssize_t i, Py_ssize_t n, const char *w) {
    for (; *w; w++, i++) {
        if (i >= n)
            return 0;
        Py_UCS4 c = RC(i);
        if (c >= 128 || RD_LOWER(c) != (Py_UCS4)(unsigned char)*w)
            return 0;
    }
    return 1;
}

static int rc_at(int kind, const void *data, Py_ssize_t i, Py_ssize_t n, const char *w) {
    for (; *w; w++, i++)
        if (i >= n || RC(i) != (Py_UCS4)(unsigned char)*w)
            return 0;
    return 1;
}

/* a keyword of secret-assignment in [p, r) (all its characters are name characters) */
static int rc_keyword(int kind, const void *data, Py_ssize_t p, Py_ssize_t r) {
    for (Py_ssize_t q = p; q < r; q++) {
        switch (RD_LOWER(RC(q))) {
        case 't':
            if (rc_ci(kind, data, q, r, "token"))
                return 1;
            break;
        case 's':
            if (rc_ci(kind, data, q, r, "secret"))
                return 1;
            break;
        case 'p':
            if (rc_ci(kind, data, q, r, "passwd") || rc_ci(kind, data, q, r, "password"))
                return 1;
            break;
        case 'a': {
            if (rc_ci(kind, data, q, r, "auth"))
                return 1;
            Py_ssize_t k = rc_ci(kind, data, q, r, "api") ? q + 3 : rc_ci(kind, data, q, r, "access") ? q + 6 : -1;
            if (k < 0)
                break;
            if (k < r && (RC(k) == '_' || RC(k) == '-'))
                k++;
            if (rc_ci(kind, data, k, r, "key"))
                return 1;
            break;
        }
        default:
            break;
        }
    }
    return 0;
}

/* the first place from i on holding c1 or c2 (n: none); the loop made once per kind */
static Py_ssize_t rc_find2(int kind, const void *data, Py_ssize_t i, Py_ssize_t n, Py_UCS4 c1, Py_UCS4 c2) {
    if (kind == PyUnicode_1BYTE_KIND) {
        const Py_UCS1 *d = data;
        while (i < n && d[i] != c1 && d[i] != c2)
            i++;
    } else if (kind == PyUnicode_2BYTE_KIND) {
        const Py_UCS2 *d = data;
        while (i < n && d[i] != c1 && d[i] != c2)
            i++;
    } else {
        const Py_UCS4 *d = data;
        while (i < n && d[i] != c1 && d[i] != c2)
            i++;
    }
    return i;
}

/* secret-assignment's matches in s[0:n]: their values (group 3) added to reps.  Every match's separator holds an
 * '=' or a ':' (the first after its run): each one found, left to right, is walked back over the separator's
 * spaces, quote and backslash to the end r of the run before it (the forward reading of the separator from r
 * decides; a run is tried once). */
static int rc_assign(int kind, const void *data, Py_ssize_t n, rc_reps *reps) {
    Py_ssize_t last = 0, tried = -1;
    for (Py_ssize_t x = rc_find2(kind, data, 0, n, '=', ':'); x < n; x = rc_find2(kind, data, x + 1, n, '=', ':')) {
        Py_ssize_t k = x;
        while (k > 0 && Py_UNICODE_ISSPACE(RC(k - 1)))
            k--;
        if (k > 0 && (RC(k - 1) == '"' || RC(k - 1) == '\''))
            k--;
        if (k > 0 && RC(k - 1) == '\\')
            k--;
        Py_ssize_t r = k, a = k, p = -1;
        while (a > 0 && RC_NAME(RC(a - 1)))
            a--;
        if (a == r || a < last || r == tried)
            continue;
        tried = r;
        for (Py_ssize_t q = a; q < r && p < 0; q++) {
            int before = q > 0 && RC_WORD(RC(q - 1)), here = RC_WORD(RC(q));
            if (before != here)
                p = q;
        }
        if (p < 0 || !rc_keyword(kind, data, p, r))
            continue;
        Py_ssize_t j = r;
        if (j < n && RC(j) == '\\')
            j++;
        if (j < n && (RC(j) == '"' || RC(j) == '\''))
            j++;
        while (j < n && Py_UNICODE_ISSPACE(RC(j)))
            j++;
        if (j >= n || (RC(j) != '=' && RC(j) != ':'))
            continue;
        j++;
        while (j < n && Py_UNICODE_ISSPACE(RC(j)))
            j++;
        if (j < n && RC(j) == '\\')
            j++;
        if (j < n && (RC(j) == '"' || RC(j) == '\''))
            j++;
        Py_ssize_t g = j;
        while (j < n) {
            Py_UCS4 v = RC(j);
            if (Py_UNICODE_ISSPACE(v) || v == '"' || v == '\'' || v == '\\' || v == '&' || v == ',' || v == ';'
                || v == '}' || v == ']')
                break;
            j++;
        }
        if (j - g < 4)
            continue;
        int marked = 0;             /* "[REDACTED:" in the match: left as it is */
        for (Py_ssize_t q = p; q + 10 <= j && !marked; q++)
            marked = RC(q) == '[' && rc_at(kind, data, q, j, "[REDACTED:");
        if (!marked && rc_add(reps, g, j, 3) < 0)
            return -1;
        last = j;
        if (x < j)
            x = j - 1;
    }
    return 0;
}

static int rc_home_excl(Py_UCS4 v) {
    return v == '/' || v == '\\' || Py_UNICODE_ISSPACE(v) || v == '"' || v == '\'' || v == '<' || v == '>' || v == ':'
           || v == '*' || v == '?' || v == '|';
}

/* home-path's matches in s[0:n]: their user names (group 2) added to reps.  A match starts at a '/' or at the
 * letter before a ':', so only those places are tried, left to right. */
static int rc_home(int kind, const void *data, Py_ssize_t n, rc_reps *reps) {
    Py_ssize_t last = 0;
    for (Py_ssize_t x = rc_find2(kind, data, 0, n, '/', ':'); x < n; x = rc_find2(kind, data, x + 1, n, '/', ':')) {
        Py_ssize_t i = RC(x) == '/' ? x : x - 1, j = -1;
        if (i < last)
            continue;
        if (i == x) {
            if (rc_at(kind, data, i, n, "/home/"))
                j = i + 6;
            else if (rc_at(kind, data, i, n, "/Users/"))
                j = i + 7;
        } else {
            Py_UCS4 c = RC(i);
            if (c < 128 && (c | 32) >= 'a' && (c | 32) <= 'z' && rc_at(kind, data, x, n, ":\\")) {
                Py_ssize_t k = x + 2;
                if (k < n && RC(k) == '\\')
                    k++;
                if (rc_at(kind, data, k, n, "Users\\")) {
                    k += 6;
                    if (k < n && RC(k) == '\\')
                        k++;
                    j = k;
                }
            }
        }
        if (j < 0 || rc_at(kind, data, j, n, "[user]"))
            continue;
        Py_ssize_t e = j;
        while (e < n && !rc_home_excl(RC(e)))
            e++;
        if (e > j) {
            if (rc_add(reps, j, e, 5) < 0)
                return -1;
            last = e;
            x = e - 1;
        }
    }
    return 0;
}

/* s with reps[from:] replaced (3: "[REDACTED:secret]", 5: "[user]"); found gets [rule, secret, ...] */
static PyObject *rc_apply(PyObject *s, rc_reps *reps, Py_ssize_t from, PyObject *found) {
    PyObject *parts = PyList_New(0), *out = NULL, *sep = NULL;
    Py_ssize_t last = 0, n = PyUnicode_GET_LENGTH(s);
    if (parts == NULL)
        return NULL;
    for (Py_ssize_t k = from; k < reps->len; k++) {
        rc_rep *r = &reps->v[k];
        PyObject *pre = PyUnicode_Substring(s, last, r->a), *sec = PyUnicode_Substring(s, r->a, r->b);
        PyObject *mark = PyUnicode_FromString(r->rule == 3 ? "[REDACTED:secret]" : "[user]");
        PyObject *rule = PyLong_FromLong(r->rule);
        int bad = pre == NULL || sec == NULL || mark == NULL || rule == NULL || PyList_Append(parts, pre) < 0
                  || PyList_Append(parts, mark) < 0 || PyList_Append(found, rule) < 0 || PyList_Append(found, sec) < 0;
        Py_XDECREF(pre);
        Py_XDECREF(sec);
        Py_XDECREF(mark);
        Py_XDECREF(rule);
        if (bad)
            goto done;
        last = r->b;
    }
    PyObject *tail = PyUnicode_Substring(s, last, n);
    if (tail == NULL || PyList_Append(parts, tail) < 0) {
        Py_XDECREF(tail);
        goto done;
    }
    Py_DECREF(tail);
    if ((sep = PyUnicode_FromStringAndSize("", 0)) != NULL)
        out = PyUnicode_Join(sep, parts);
done:
    Py_XDECREF(sep);
    Py_DECREF(parts);
    return out;
}

static PyObject *redact_common(PyObject *self, PyObject *args) {
    PyObject *s, *t = NULL, *found = NULL, *res = NULL;
    int bits;
    rc_reps reps = {NULL, 0, 0};
    (void)self;
    if (!PyArg_ParseTuple(args, "Ui", &s, &bits))
        return NULL;
    if (bits & ~40)
        Py_RETURN_NONE;
    int kind = PyUnicode_KIND(s);
    const void *data = PyUnicode_DATA(s);
    Py_ssize_t n = PyUnicode_GET_LENGTH(s);
    if (kind != PyUnicode_1BYTE_KIND)
        for (Py_ssize_t i = 0; i < n; i++) {
            Py_UCS4 c = RC(i);
            if (c == 0x130 || c == 0x131 || c == 0x17f || c == 0x212a)
                Py_RETURN_NONE;
        }
    if ((found = PyList_New(0)) == NULL)
        return NULL;
    t = s;
    Py_INCREF(t);
    if ((bits & 8) && rc_assign(kind, data, n, &reps) < 0)
        goto done;
    if (reps.len) {
        Py_DECREF(t);
        if ((t = rc_apply(s, &reps, 0, found)) == NULL)
            goto done;
        PyObject *h1 = PyUnicode_FromString("/home/"), *h2 = PyUnicode_FromString("Users");
        int home = h1 != NULL && h2 != NULL && (PyUnicode_Find(t, h1, 0, PY_SSIZE_T_MAX, 1) >= 0
                                                 || PyUnicode_Find(t, h2, 0, PY_SSIZE_T_MAX, 1) >= 0);
        Py_XDECREF(h1);
        Py_XDECREF(h2);
        if (PyErr_Occurred())
            goto done;
        bits = home ? 32 : 0;
    }
    if (bits & 32) {
        Py_ssize_t from = reps.len;
        kind = PyUnicode_KIND(t);
        data = PyUnicode_DATA(t);
        if (rc_home(kind, data, PyUnicode_GET_LENGTH(t), &reps) < 0)
            goto done;
        if (reps.len > from) {
            PyObject *u = rc_apply(t, &reps, from, found);
            if (u == NULL)
                goto done;
            Py_DECREF(t);
            t = u;
        }
    }
    res = Py_BuildValue("(OO)", t, found);
done:
    Py_XDECREF(t);
    Py_XDECREF(found);
    PyMem_Free(reps.v);
    return res;
}
#undef RC
#undef RC_NAME
#undef RC_WORD
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

/* ---- passc: the background pass's rows of a segment in one call (issue 29; owner: the passc helper) ----
 * ahead_rows(data, types, max_row, max_depth) -> bytes: the complete rows of data (each ended by a newline; the
 *   bytes after the last newline are not read) as int64 records of AH_W fields, native order:
 *   start, end (the row is data[start:end], its newline at end), info, seq, turn, step.
 *   info: bits 0-7 the index in types (a tuple of bytes) of the row's type when the row starts with {"type":" and
 *   the bytes up to the next quote are that type (255: none); AH_REFUSED the row screen (tl_refused: screen_row)
 *   refuses a typed row; AH_NEEDLE a typed row holds one of the surface index's needles ("surfaceOp"
 *   "sourceEventSeqs" "compaction/ "step/ "image/offload"; only typed rows are screened and searched); bits 12-14 a canonical row's shape
 *   (AH_STEP_START, AH_STEP_END, AH_TURN_START, AH_TURN_END: its type in types, exactly
 *   {"type":"T","seq":S,"time":M,"data":{"turn":A[,"step":B]}} or, a turn/end,
 *   {"type":"turn/end","seq":S,"time":M,"data":{"turn":A,"reason":{"kind":"completed"}}}, no blank, S A B M
 *   plain integers of at most 15 digits, no leading zero), with seq, turn, step read (else -1).
 *   The interpreted definition: app/log/query/ahead_scan.py ahead_rows_py; tests/test_ahead_scan.py holds the two
 *   equal.  The bytes are read with the GIL let go. */
#define AH_W 6
#define AH_NONE 255
#define AH_REFUSED 256
#define AH_NEEDLE 512
#define AH_SHIFT 12
#define AH_MAX_TYPES 64

static const char *const AH_SHAPES[] = {"step/start", "step/end", "turn/start", "turn/end"};

static int ah_needle(P d, Py_ssize_t a, Py_ssize_t b) {
    /* (pass4: a surface row as dsh writes it ends with its "surfaceOp": looked for in its last bytes first, the
     * answer the same, without a memchr per quote of a long row) */
    Py_ssize_t w = b - a < 48 ? b - a : 48;
    if (w >= 11 && memmem(d + b - w, (size_t)w, "\"surfaceOp\"", 11) != NULL)
        return 1;
    while (a < b) {
        const unsigned char *q = memchr(d + a, '"', (size_t)(b - a));
        if (q == NULL)
            return 0;
        a = q - d + 1;
        switch (a < b ? d[a] : 0) {          /* (the byte after the quote picks the needles to compare) */
        case 's':
            if ((b - a >= 10 && memcmp(d + a, "surfaceOp\"", 10) == 0)
                || (b - a >= 16 && memcmp(d + a, "sourceEventSeqs\"", 16) == 0)
                || (b - a >= 5 && memcmp(d + a, "step/", 5) == 0))
                return 1;
            break;
        case 'c':
            if (b - a >= 11 && memcmp(d + a, "compaction/", 11) == 0)
                return 1;
            break;
        case 'i':
            if (b - a >= 14 && memcmp(d + a, "image/offload\"", 14) == 0)
                return 1;
            break;
        default:
            break;
        }
    }
    return 0;
}


/* a plain integer of 1-15 digits at d[*i] (before e), no leading zero: its value, *i past it; else -1 */
static long long ah_uint(P d, Py_ssize_t *i, Py_ssize_t e) {
    Py_ssize_t k = *i;
    long long v = 0;
    while (k < e && d[k] >= '0' && d[k] <= '9' && k - *i < 16)
        v = v * 10 + (d[k++] - '0');
    Py_ssize_t n = k - *i;
    if (n == 0 || n > 15 || (n > 1 && d[*i] == '0') || (k < e && d[k] >= '0' && d[k] <= '9'))
        return -1;
    *i = k;
    return v;
}

static int ah_lit2(P d, Py_ssize_t *i, Py_ssize_t e, const char *s) {
    Py_ssize_t n = (Py_ssize_t)strlen(s);
    if (e - *i < n || memcmp(d + *i, s, (size_t)n) != 0)
        return 0;
    *i += n;
    return 1;
}

/* the canonical shape (1-4) of the row d[i:e] whose type ends at i (its closing quote), reading seq/turn/step */
static int ah_canon(P d, Py_ssize_t i, Py_ssize_t e, int shape, long long *out) {
    long long seq, turn, step = -1;
    if (!ah_lit2(d, &i, e, "\",\"seq\":") || (seq = ah_uint(d, &i, e)) < 0 || !ah_lit2(d, &i, e, ",\"time\":")
        || ah_uint(d, &i, e) < 0 || !ah_lit2(d, &i, e, ",\"data\":{\"turn\":") || (turn = ah_uint(d, &i, e)) < 0)
        return 0;
    if (shape <= 2) {
        if (!ah_lit2(d, &i, e, ",\"step\":") || (step = ah_uint(d, &i, e)) < 0 || !ah_lit2(d, &i, e, "}}"))
            return 0;
    } else if (shape == 3) {
        if (!ah_lit2(d, &i, e, "}}"))
            return 0;
    } else if (!ah_lit2(d, &i, e, ",\"reason\":{\"kind\":\"completed\"}}}"))
        return 0;
    if (i != e)
        return 0;
    out[0] = seq;
    out[1] = turn;
    out[2] = step;
    return 1;
}

static PyObject *ahead_rows(PyObject *self, PyObject *args) {
    Py_buffer view;
    PyObject *types;
    Py_ssize_t max_row;
    int max_depth;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*O!ni", &view, &PyTuple_Type, &types, &max_row, &max_depth))
        return NULL;
    Py_ssize_t nt = PyTuple_GET_SIZE(types);
    const char *tp[AH_MAX_TYPES];
    Py_ssize_t tn[AH_MAX_TYPES];
    int tshape[AH_MAX_TYPES];
    if (nt > AH_MAX_TYPES) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "ahead_rows: too many types");
        return NULL;
    }
    for (Py_ssize_t k = 0; k < nt; k++) {
        PyObject *t = PyTuple_GET_ITEM(types, k);
        if (!PyBytes_Check(t)) {
            PyBuffer_Release(&view);
            PyErr_SetString(PyExc_TypeError, "ahead_rows: types must be bytes");
            return NULL;
        }
        tp[k] = PyBytes_AS_STRING(t);
        tn[k] = PyBytes_GET_SIZE(t);
        tshape[k] = 0;
        for (int s = 0; s < 4; s++)
            if (tn[k] == (Py_ssize_t)strlen(AH_SHAPES[s]) && memcmp(tp[k], AH_SHAPES[s], (size_t)tn[k]) == 0)
                tshape[k] = s + 1;
    }
    P d = (P)view.buf;
    Py_ssize_t n = view.len, rows = 0;
    for (const unsigned char *q = d; (q = memchr(q, '\n', (size_t)(d + n - q))) != NULL; q++)
        rows++;
    PyObject *out = PyBytes_FromStringAndSize(NULL, rows * AH_W * (Py_ssize_t)sizeof(long long));
    if (out == NULL) {
        PyBuffer_Release(&view);
        return NULL;
    }
    long long *w = (long long *)PyBytes_AS_STRING(out);
    Py_BEGIN_ALLOW_THREADS
    Py_ssize_t a = 0;
    for (Py_ssize_t r = 0; r < rows; r++, w += AH_W) {
        const unsigned char *q = memchr(d + a, '\n', (size_t)(n - a));
        Py_ssize_t e = q - d;                  /* (rows counted above: there is one) */
        long long info = AH_NONE, f[3] = {-1, -1, -1};
        if (e - a > 9 && memcmp(d + a, "{\"type\":\"", 9) == 0) {
            const unsigned char *z = memchr(d + a + 9, '"', (size_t)(e - a - 9));
            if (z != NULL) {
                Py_ssize_t tl = z - d - a - 9;
                for (Py_ssize_t k = 0; k < nt; k++)
                    if (tn[k] == tl && memcmp(tp[k], d + a + 9, (size_t)tl) == 0) {
                        info = k;
                        if (tl_refused(d, a, e, max_row, max_depth))
                            info |= AH_REFUSED;
                        else if (tshape[k] && ah_canon(d, z - d, e, tshape[k], f))
                            info |= (long long)tshape[k] << AH_SHIFT;
                        if (ah_needle(d, a, e))
                            info |= AH_NEEDLE;
                        break;
                    }
            }
        }
        w[0] = a;
        w[1] = e;
        w[2] = info;
        w[3] = f[0];
        w[4] = f[1];
        w[5] = f[2];
        a = e + 1;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    return out;
}
/* ---- end passc ---- */

/* ---- tlc2: a whole turn's spans built in C (issue 31; owner: the tlc2 helper) ----
 * tl_turn (called by tl_scan, flags & 16, at a turn/start row in the writer's layout): the rows from it to its turn/end
 * read and their spans built here, when every row between is one of: a row of a skipped type (not read, as tl_scan);
 * step/start, step/end (tl_small's layout); an assistant/message that tl_settle takes, with a stream; a tool/call in
 * the writer's exact layout; a tool/result whose every field the timeline's lean record reads or checks is of a type
 * taken here (t2_result); a turn/end in the writer's layout with a reason {"kind": a string, ...} (t5_turn_end, the
 * tl5 section: its other members as Builder reads them); all of that turn, seqs
 * increasing, each at most max_row bytes, and the turn ending clean (no step, call or tool span left open).  Else
 * None: tl_scan goes on with the turn/start row as before.  What it gives (t2_item) is what app.log.query.timeline's
 * Builder gives for those rows from a clean state (Builder.turn_c checks that state and applies the rest; the Builder
 * is the definition: tests/test_timeline_tlc2.py holds the two equal), with the attempts' model and contextWindow left
 * to the Builder (the state of the pass). */
#define T2_MAX 64                      /* open steps, held tool groups and open calls at once, at most */
#define T2_HOURS6 (6LL * 3600 * 1000)

enum { K_kind, K_seq, K_endSeq, K_start, K_end, K_durationMs, K_label, K_turn, K_step, K_note, K_name, K_callId,
       K_status, K_error, K_overlaps, K_childSession, K_reason, K_dispatchSeq, K_dispatchType, K_firstChunkSeq,
       K_ttftMs, K_decodeMs, K_tokens, K_tps, K_finish, K_messageSeq, K_model, K_contextWindow, K_input, K_output,
       K_cacheRead, K_cacheWrite, K_reasoning,
       V_turn, V_step, V_attempt, V_tool, V_subagent, V_committed, V_interrupted, V_ok, V_error, V_notstarted,
       V_stepstart, V_notimes, V_missing, V_none, V_q, V_retrywait, V_retrystarted, K_retry, K_delayMs, K_failure,
       V_reqheader, V_compaction, K_shadowedTokens, K_summaryTokens, K_tokensBefore, K_tokensAfter, T2_NS };
static const char *T2_S[] = {"kind", "seq", "endSeq", "start", "end", "durationMs", "label", "turn", "step", "note",
    "name", "callId", "status", "error", "overlaps", "childSession", "reason", "dispatchSeq", "dispatchType",
    "firstChunkSeq", "ttftMs", "decodeMs", "tokens", "tps", "finish", "messageSeq", "model", "contextWindow", "input",
    "output", "cacheRead", "cacheWrite", "reasoning",
    "turn", "step", "attempt", "tool", "subagent", "committed", "interrupted", "ok", "error", "not-started",
    "step/start", "no times: an envelope-free snapshot (every time is 0)", "time missing (0)", "None", "?",
    "retry-wait", "llm/retry-started", "retry", "delayMs", "failure", "request/header", "compaction", "shadowedTokens", "summaryTokens", "tokensBefore", "tokensAfter"};
static PyObject *T2[T2_NS];
#define T2_DISP(c) T2[(c)->disp_retry == 2 ? V_reqheader : (c)->disp_retry ? V_retrystarted : V_stepstart]

static int t2_init(void) {
    if (T2[0] != NULL)
        return 0;
    for (int k = 0; k < T2_NS; k++)
        if ((T2[k] = PyUnicode_InternFromString(T2_S[k])) == NULL)
            return -1;
    return 0;
}

typedef struct { long long s, seq, time; } T2Step;
typedef struct { Py_ssize_t ca, cb, na, nb; long long seq, time, step; } T2Call;
typedef struct { long long s; PyObject *list; } T2Held;
/* (tlc3) an open compaction: its id's bytes, its start row, its summary's figures once read (new references) */
typedef struct { Py_ssize_t ca, cb; long long seq, time; int summ; PyObject *shadow, *out; } T2Comp;
/* an open llm/retry: its key (the retryId's bytes, or id_a < 0 and the step), its row's figures */
typedef struct {
    Py_ssize_t id_a, id_b, code_a, code_b;
    long long step, seq, time, retry, delay;
    int has_retry, has_delay, has_code;
} T2Retry;
typedef struct {
    P d;
    int timed, max_depth;
    long long turn, last_time, prev_seq;
    int have_disp, disp_retry;               /* disp_retry: the last dispatch an llm/retry-started (1), a request/header
                                                (2, tlc3), else a step/start (0) */
    long long disp_seq, disp_time;
    T2Retry retries[T2_MAX];
    int nretries;
    int have_prompt;
    long long first_prompt, last_prompt;
    int end_err;                             /* (tl5) the turn/end's error (t5_turn_end): 0 none, 1 a string, 2 None */
    Py_ssize_t end_err_a, end_err_b;
    T2Step steps[T2_MAX];
    int nsteps;
    T2Call calls[T2_MAX];
    int ncalls;
    T2Held held[T2_MAX];
    int nheld;
    PyObject *out, *atts, *seqs, *ops;       /* ops: the tracker's steps, when a row besides messages made any */
    /* (tlc3) the model and context window a request/header or request/context of the turn set (has_*), and how many
     * attempt spans were made before the first of each set (they get the pass's: Builder.turn_c) */
    int has_model, has_window;
    Py_ssize_t model_a, model_b, km, kw;
    long long window;
    /* (tlc3) the open compactions; compaction spans made before any prompt of the turn (tokensBefore: the pass's
     * last input) and those still waiting for the next prompt (tokensAfter) at the end (lists made at the first) */
    T2Comp comps[T2_MAX];
    int ncomps;
    PyObject *before, *wait;
} T2Ctx;

/* d[a:b] (a JSON string's bytes with no escape, its quotes excluded) as str */
static PyObject *t2_str(P d, Py_ssize_t a, Py_ssize_t b) {
    return PyUnicode_DecodeUTF8((const char *)d + a, b - a, "strict");
}

static int t2_set(PyObject *sp, PyObject *key, PyObject *v) {          /* (v: stolen) */
    if (v == NULL)
        return -1;
    int bad = PyDict_SetItem(sp, key, v);
    Py_DECREF(v);
    return bad;
}

static PyObject *t2_time(int has, long long t) {
    return has && t > 0 ? PyLong_FromLongLong(t) : Py_NewRef(Py_None);
}

/* timeline's span_ms: 1 and *ms, or 0 and *note (a new reference, NULL on an error) */
static int t2_ms(int hs, long long s, int he, long long e, long long *ms, PyObject **note) {
    *note = NULL;
    if (hs && he && s > 0 && e > 0) {
        long long dt = e - s;
        if (dt > T2_HOURS6) {
            *note = PyUnicode_FromFormat("implausible (%lld ms): times come from different clocks", dt);
            return 0;
        }
        if (dt >= 0) {
            *ms = dt;
            return 1;
        }
        *note = PyUnicode_FromFormat("negative (%lld ms): times are not monotonic", dt);
        return 0;
    }
    *note = Py_NewRef(T2[V_missing]);
    return 0;
}

/* Builder.measure of a span whose end is a logged row */
static int t2_measure(T2Ctx *c, PyObject *sp, int hs, long long s, long long e) {
    if (!c->timed)
        return t2_set(sp, T2[K_note], Py_NewRef(T2[V_notimes]));
    long long ms;
    PyObject *note;
    if (t2_ms(hs, s, 1, e, &ms, &note))
        return t2_set(sp, T2[K_durationMs], PyLong_FromLongLong(ms));
    return t2_set(sp, T2[K_note], note);
}

/* {kind, seq, endSeq, start, end, durationMs: None, label} (label: stolen) */
static PyObject *t2_span(int kind, long long seq, long long end_seq, int hs, long long st, long long en,
                         PyObject *label) {
    PyObject *sp = label == NULL ? NULL : PyDict_New();
    if (sp == NULL || PyDict_SetItem(sp, T2[K_kind], T2[kind]) < 0 || t2_set(sp, T2[K_seq], PyLong_FromLongLong(seq)) < 0
        || t2_set(sp, T2[K_endSeq], PyLong_FromLongLong(end_seq)) < 0 || t2_set(sp, T2[K_start], t2_time(hs, st)) < 0
        || t2_set(sp, T2[K_end], t2_time(1, en)) < 0 || PyDict_SetItem(sp, T2[K_durationMs], Py_None) < 0
        || PyDict_SetItem(sp, T2[K_label], label) < 0) {
        Py_XDECREF(label);
        Py_XDECREF(sp);
        return NULL;
    }
    Py_DECREF(label);
    return sp;
}

static int t2_append(PyObject *list, PyObject *v) {          /* (v: stolen) */
    if (v == NULL)
        return -1;
    int bad = PyList_Append(list, v);
    Py_DECREF(v);
    return bad;
}

/* a key at d[i] (no escape) and the start of its value: the value's start, *k and *ke the key's quotes; -1 when not */
static Py_ssize_t t2_key(P d, Py_ssize_t i, Py_ssize_t n, Py_ssize_t *k, Py_ssize_t *ke) {
    int esc = 0;
    *k = i;
    *ke = tl_string(d, i, n, &esc);
    if (*ke < 0 || esc)
        return -1;
    Py_ssize_t v = tl_ws(d, *ke, n);
    if (v >= n || d[v] != ':')
        return -1;
    return tl_ws(d, v + 1, n);
}

/* after a member: the next key's start (1), the object's end (0, *i past the brace), or -1 */
static int t2_next(P d, Py_ssize_t *i, Py_ssize_t n) {
    Py_ssize_t j = tl_ws(d, *i, n);
    if (j < n && d[j] == ',') {
        *i = tl_ws(d, j + 1, n);
        return 1;
    }
    if (j < n && d[j] == '}') {
        *i = j + 1;
        return 0;
    }
    return -1;
}

/* a string with no escape at v (its end, its bytes' range in *a and *b), a null (*a = -1), else -1 */
static Py_ssize_t t2_plain_or_null(P d, Py_ssize_t v, Py_ssize_t n, Py_ssize_t *a, Py_ssize_t *b) {
    Py_ssize_t e = LIT(d, v, n, "null");
    *a = *b = -1;
    if (e >= 0)
        return e;
    int esc = 0;
    e = tl_string(d, v, n, &esc);
    if (e < 0 || esc)
        return -1;
    *a = v + 1;
    *b = e - 1;
    return e;
}

static int t2_is(P d, Py_ssize_t a, Py_ssize_t b, const char *s) {
    size_t n = strlen(s);
    return a >= 0 && (size_t)(b - a) == n && memcmp(d + a, s, n) == 0;
}

/* a tool/result row read as the timeline reads it (Builder._on_result's inputs), from the quote closing its type */
typedef struct {
    long long seq, time;
    Py_ssize_t cid_a, cid_b;            /* the call id it answers (a < 0: none) */
    Py_ssize_t code_a, code_b;          /* error.code (a < 0: none) */
    Py_ssize_t why_a, why_b;            /* the outcome's text after "error:" (a < 0 and err: "ERROR") */
    int err, failed;                    /* an error object; the outcome is not "ok" */
} T2Result;

static Py_ssize_t t2_block(P d, Py_ssize_t i, Py_ssize_t n, int m, int *tool_error) {
    /* a content block (an object) at i: type null or a plain string, id/toolCallId scalars, isError null/true/false */
    if (i >= n || d[i] != '{')
        return -1;
    int g_type = 0, g_err = 0, is_tr = 0, err_true = 0;
    Py_ssize_t k, ke;
    i = tl_ws(d, i + 1, n);
    if (i < n && d[i] == '}')
        return i + 1;
    for (;;) {
        Py_ssize_t v = t2_key(d, i, n, &k, &ke), ve, a, b;
        if (v < 0)
            return -1;
        if (tl_key_is(d, k, ke, "type")) {
            ve = t2_plain_or_null(d, v, n, &a, &b);
            if (g_type++ || ve < 0)
                return -1;
            is_tr = t2_is(d, a, b, "tool-result");
        } else if (tl_key_is(d, k, ke, "isError")) {
            ve = LIT(d, v, n, "true");
            err_true = ve >= 0;
            if (ve < 0)
                ve = LIT(d, v, n, "false");
            if (ve < 0)
                ve = LIT(d, v, n, "null");
            if (g_err++ || ve < 0)
                return -1;
        } else if (tl_key_is(d, k, ke, "id") || tl_key_is(d, k, ke, "toolCallId")) {
            if (v >= n || d[v] == '{' || d[v] == '[')
                return -1;
            ve = tl_value(d, v, n, 5, m);
        } else
            ve = tl_value(d, v, n, 5, m);
        if (ve < 0)
            return -1;
        i = ve;
        int more = t2_next(d, &i, n);
        if (more < 0)
            return -1;
        if (!more)
            break;
    }
    if (is_tr && err_true)
        *tool_error = 1;
    return i;
}

/* the message object of a tool/result at i */
static Py_ssize_t t2_message(P d, Py_ssize_t i, Py_ssize_t n, int m, T2Result *r, int *v4_error) {
    int g_role = 0, g_src = 0, g_tci = 0, g_content = 0, g_err = 0, g_id = 0, role_tool = 0, is_err = 0;
    int block_error = 0;
    Py_ssize_t src_a = -1, src_b = -1, tci_a = -1, tci_b = -1, k, ke;
    if (i >= n || d[i] != '{')
        return -1;
    i = tl_ws(d, i + 1, n);
    if (i < n && d[i] == '}')
        return -1;                                  /* (no role, no content) */
    for (;;) {
        Py_ssize_t v = t2_key(d, i, n, &k, &ke), ve, a, b;
        if (v < 0)
            return -1;
        if (tl_key_is(d, k, ke, "role")) {
            int esc = 0;
            ve = tl_string(d, v, n, &esc);
            if (g_role++ || ve < 0 || esc)
                return -1;
            role_tool = t2_is(d, v + 1, ve - 1, "tool");
        } else if (tl_key_is(d, k, ke, "source")) {
            if (g_src++)
                return -1;
            ve = LIT(d, v, n, "null");
            if (ve < 0) {                           /* an object: callId null or a plain string, the rest any JSON */
                if (v >= n || d[v] != '{')
                    return -1;
                int g_cid = 0;
                Py_ssize_t j = tl_ws(d, v + 1, n);
                if (j < n && d[j] == '}')
                    ve = j + 1;
                else
                    for (;;) {
                        Py_ssize_t w = t2_key(d, j, n, &k, &ke), we;
                        if (w < 0)
                            return -1;
                        if (tl_key_is(d, k, ke, "callId")) {
                            we = t2_plain_or_null(d, w, n, &src_a, &src_b);
                            if (g_cid++)
                                return -1;
                        } else
                            we = tl_value(d, w, n, 4, m);
                        if (we < 0)
                            return -1;
                        j = we;
                        int more = t2_next(d, &j, n);
                        if (more < 0)
                            return -1;
                        if (!more) {
                            ve = j;
                            break;
                        }
                    }
            }
        } else if (tl_key_is(d, k, ke, "toolCallId")) {
            ve = t2_plain_or_null(d, v, n, &tci_a, &tci_b);
            if (g_tci++)
                return -1;
        } else if (tl_key_is(d, k, ke, "content")) {
            if (g_content++ || v >= n || d[v] != '[')
                return -1;
            Py_ssize_t j = tl_ws(d, v + 1, n);
            if (j < n && d[j] == ']')
                ve = j + 1;
            else
                for (;;) {
                    j = t2_block(d, j, n, m, &block_error);
                    if (j < 0)
                        return -1;
                    j = tl_ws(d, j, n);
                    if (j < n && d[j] == ',') {
                        j = tl_ws(d, j + 1, n);
                        continue;
                    }
                    if (j < n && d[j] == ']') {
                        ve = j + 1;
                        break;
                    }
                    return -1;
                }
        } else if (tl_key_is(d, k, ke, "isError")) {
            ve = LIT(d, v, n, "true");
            is_err = ve >= 0;
            if (ve < 0)
                ve = LIT(d, v, n, "false");
            if (ve < 0)
                ve = LIT(d, v, n, "null");
            if (g_err++)
                return -1;
        } else if (tl_key_is(d, k, ke, "id")) {
            ve = t2_plain_or_null(d, v, n, &a, &b);
            if (g_id++)
                return -1;
        } else
            ve = tl_value(d, v, n, 3, m);
        if (ve < 0)
            return -1;
        i = ve;
        int more = t2_next(d, &i, n);
        if (more < 0)
            return -1;
        if (!more)
            break;
    }
    if (!g_role || !g_content)
        return -1;
    if (src_a >= 0) {
        r->cid_a = src_a;
        r->cid_b = src_b;
    } else {
        r->cid_a = tci_a;
        r->cid_b = tci_b;
    }
    *v4_error = (role_tool && is_err) || block_error;
    return i;
}

/* the error object of a tool/result at i: code and kind null or plain strings (the rest any JSON) */
static Py_ssize_t t2_error(P d, Py_ssize_t i, Py_ssize_t n, int m, T2Result *r) {
    int g_code = 0, g_kind = 0;
    Py_ssize_t kind_a = -1, kind_b = -1, k, ke;
    r->err = 1;
    i = tl_ws(d, i + 1, n);
    if (i < n && d[i] == '}')
        i++;
    else
        for (;;) {
            Py_ssize_t v = t2_key(d, i, n, &k, &ke), ve;
            if (v < 0)
                return -1;
            if (tl_key_is(d, k, ke, "code")) {
                ve = t2_plain_or_null(d, v, n, &r->code_a, &r->code_b);
                if (g_code++)
                    return -1;
            } else if (tl_key_is(d, k, ke, "kind")) {
                ve = t2_plain_or_null(d, v, n, &kind_a, &kind_b);
                if (g_kind++)
                    return -1;
            } else
                ve = tl_value(d, v, n, 3, m);
            if (ve < 0)
                return -1;
            i = ve;
            int more = t2_next(d, &i, n);
            if (more < 0)
                return -1;
            if (!more)
                break;
        }
    /* tool_outcome: "error:" + (code or kind or "ERROR") */
    if (r->code_a >= 0 && r->code_b > r->code_a) {
        r->why_a = r->code_a;
        r->why_b = r->code_b;
    } else if (kind_a >= 0 && kind_b > kind_a) {
        r->why_a = kind_a;
        r->why_b = kind_b;
    }
    return i;
}

static int t2_result(P d, Py_ssize_t q, Py_ssize_t nl, int max_depth, T2Result *r) {
    int m = max_depth | TL_STRICT;
    int g_seq = 0, g_time = 0, g_data = 0, g_op = 0, g_ses = 0, g_ign = 0, v4_error = 0;
    long long ses_n = -1, lo = 0, hi = 0;
    Py_ssize_t k, ke;
    memset(r, 0, sizeof(*r));
    r->cid_a = r->code_a = r->why_a = -1;
    Py_ssize_t i = tl_ws(d, q + 1, nl);
    for (;;) {
        if (i < nl && d[i] == '}') {
            i = tl_ws(d, i + 1, nl);
            break;
        }
        if (i >= nl || d[i] != ',')
            return 0;
        Py_ssize_t v = t2_key(d, tl_ws(d, i + 1, nl), nl, &k, &ke), ve;
        if (v < 0)
            return 0;
        if (tl_key_is(d, k, ke, "seq")) {
            ve = tl_int(d, v, nl, &r->seq);
            if (g_seq++ || ve < 0 || r->seq < 0 || r->seq > TL_SAFE)
                return 0;
        } else if (tl_key_is(d, k, ke, "time")) {
            ve = tl_int(d, v, nl, &r->time);
            if (g_time++ || ve < 0)
                return 0;
        } else if (tl_key_is(d, k, ke, "surfaceOp")) {
            ve = LIT(d, v, nl, "\"append\"");
            if (g_op++ || ve < 0)
                return 0;
        } else if (tl_key_is(d, k, ke, "sourceEventSeqs")) {
            ve = tl_seqarr(d, v, nl, &ses_n, &lo, &hi);
            if (g_ses++ || ve < 0)
                return 0;
        } else if (tl_key_is(d, k, ke, "ignorable")) {
            ve = tl_value(d, v, nl, 1, m);
            if (g_ign++ || ve < 0)
                return 0;
        } else if (tl_key_is(d, k, ke, "data")) {
            if (g_data++ || v >= nl || d[v] != '{')
                return 0;
            int g_turn = 0, g_step = 0, g_msg = 0, g_err = 0, g_type = 0;
            long long turn, step;
            Py_ssize_t j = tl_ws(d, v + 1, nl);
            for (;;) {
                Py_ssize_t w = t2_key(d, j, nl, &k, &ke), we;
                if (w < 0)
                    return 0;
                if (tl_key_is(d, k, ke, "turn")) {
                    we = tl_int(d, w, nl, &turn);
                    if (g_turn++)
                        return 0;
                } else if (tl_key_is(d, k, ke, "step")) {
                    we = tl_int(d, w, nl, &step);
                    if (g_step++)
                        return 0;
                } else if (tl_key_is(d, k, ke, "message")) {
                    we = t2_message(d, w, nl, m, r, &v4_error);
                    if (g_msg++)
                        return 0;
                } else if (tl_key_is(d, k, ke, "error")) {
                    we = LIT(d, w, nl, "null");
                    if (we < 0 && w < nl && d[w] == '{')
                        we = t2_error(d, w, nl, m, r);
                    if (g_err++)
                        return 0;
                } else if (tl_key_is(d, k, ke, "type")) {
                    we = LIT(d, w, nl, "\"tool/result\"");
                    if (g_type++)
                        return 0;
                } else if (tl_key_is(d, k, ke, "meta"))
                    we = tl_value(d, w, nl, 2, m);
                else
                    return 0;
                if (we < 0)
                    return 0;
                j = we;
                int more = t2_next(d, &j, nl);
                if (more < 0)
                    return 0;
                if (!more)
                    break;
            }
            if (!g_turn || !g_step || !g_msg)
                return 0;
            ve = j;
        } else
            return 0;
        i = tl_ws(d, ve, nl);
    }
    if (i != nl || !g_seq || !g_data || !g_op || (ses_n > 0 && hi >= r->seq))
        return 0;
    r->failed = r->err || v4_error;
    return 1;
}

/* a tool/call in the writer's exact layout (callId and name plain strings) */
static int t2_call(P d, Py_ssize_t q, Py_ssize_t nl, long long *turn, T2Call *c) {
    int esc = 0;
    Py_ssize_t i = tl_int(d, LIT(d, q, nl, "\",\"seq\":"), nl, &c->seq);
    i = tl_int(d, LIT(d, i, nl, ",\"time\":"), nl, &c->time);
    i = tl_int(d, LIT(d, i, nl, ",\"data\":{\"turn\":"), nl, turn);
    i = tl_int(d, LIT(d, i, nl, ",\"step\":"), nl, &c->step);
    i = LIT(d, i, nl, ",\"callId\":");
    c->ca = i;
    i = tl_string(d, i, nl, &esc);
    c->cb = i;
    i = LIT(d, i, nl, ",\"name\":");
    c->na = i;
    i = tl_string(d, i, nl, &esc);
    c->nb = i;
    if (esc)
        return 0;
    i = tl_string(d, LIT(d, i, nl, ",\"arguments\":"), nl, NULL);
    if (i < 0 || c->seq < 0 || LIT(d, i, nl, "}}") != nl)
        return 0;
    c->ca++;                                /* (the bytes inside the quotes) */
    c->cb--;
    c->na++;
    c->nb--;
    return 1;
}

/* (tl5) a turn/end row: its seq, time, turn, reason kind and error (the tl5 section) */
static int t5_turn_end(P d, Py_ssize_t q, Py_ssize_t nl, int max_depth, long long *seq, long long *time,
                       long long *turn, Py_ssize_t *a, Py_ssize_t *b, int *err, Py_ssize_t *ea, Py_ssize_t *eb);

/* usage at [a, b) (a valid JSON value; a < 0: absent): 1 and its token counts (*is_null: null or absent), or 0 when
 * not taken here (not an object or null, a count key repeated or written with an escape, a count not an integer of
 * 15 digits at most while a number) */
static int t2_usage(P d, Py_ssize_t a, Py_ssize_t b, long long tok[5], int *is_null) {
    static const char *src[] = {"inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens", "reasoningTokens"};
    int seen[5] = {0, 0, 0, 0, 0};
    Py_ssize_t k, ke;
    for (int x = 0; x < 5; x++)
        tok[x] = 0;
    *is_null = a < 0 || LIT(d, a, b, "null") == b;
    if (*is_null)
        return 1;
    if (d[a] != '{')
        return 0;
    Py_ssize_t i = tl_ws(d, a + 1, b);
    if (i < b && d[i] == '}')
        return 1;
    for (;;) {
        Py_ssize_t v = t2_key(d, i, b, &k, &ke);
        if (v < 0)
            return 0;
        Py_ssize_t ve = tl_value(d, v, b, 2, TL_STRICT - 1);
        if (ve < 0)
            return 0;
        for (int x = 0; x < 5; x++)
            if (tl_key_is(d, k, ke, src[x])) {
                if (seen[x]++)
                    return 0;
                if (d[v] == '-' || (d[v] >= '0' && d[v] <= '9')) {
                    long long val;
                    if (tl_int(d, v, b, &val) != ve)
                        return 0;
                    tok[x] = val;
                }
            }
        i = ve;
        int more = t2_next(d, &i, b);
        if (more < 0)
            return 0;
        if (!more)
            return 1;
    }
}

/* the finish kind of a stream's finish (s->fin, s->fr): *kind a new reference (None, or a str) or NULL when not
 * taken here; -1 on an error */
static int t2_finish(P d, const TlSumm *s, PyObject **kind) {
    *kind = NULL;
    if (s->fin == 0) {
        *kind = Py_NewRef(Py_None);
        return 0;
    }
    if (s->fin == 1) {
        *kind = Py_NewRef(T2[V_none]);
        return 0;
    }
    Py_ssize_t a = s->fr.a, b = s->fr.b, k, ke, sa, sb;
    if (a < 0 || a >= b)
        return 0;
    if (LIT(d, a, b, "null") == b) {
        *kind = Py_NewRef(T2[V_none]);
        return 0;
    }
    if (d[a] == '"')
        return t2_plain_or_null(d, a, b, &sa, &sb) == b && sa >= 0 ? ((*kind = t2_str(d, sa, sb)) == NULL ? -1 : 0) : 0;
    if (d[a] != '{')
        return 0;
    int g_kind = 0;
    PyObject *got = Py_NewRef(Py_None);
    Py_ssize_t i = tl_ws(d, a + 1, b);
    if (i < b && d[i] == '}') {
        *kind = got;
        return 0;
    }
    for (;;) {
        Py_ssize_t v = t2_key(d, i, b, &k, &ke), ve;
        if (v < 0)
            break;
        ve = tl_value(d, v, b, 2, TL_STRICT - 1);
        if (ve < 0)
            break;
        if (tl_key_is(d, k, ke, "kind")) {
            if (g_kind++)
                break;
            if (d[v] == '"') {
                if (t2_plain_or_null(d, v, b, &sa, &sb) != ve)
                    break;
                Py_SETREF(got, t2_str(d, sa, sb));
                if (got == NULL)
                    return -1;
            }
        }
        i = ve;
        int more = t2_next(d, &i, b);
        if (more < 0)
            break;
        if (!more) {
            *kind = got;
            return 0;
        }
    }
    Py_DECREF(got);
    return 0;
}

/* the attempt span of a settled message (Builder.settled_c, _message_of, emit_attempt): 1 taken, 0 not, -1 error */
static int t2_attempt(T2Ctx *c, const TlSettle *r) {
    P d = c->d;
    const TlSumm *s = &r->summ;
    long long tok[5];
    int is_null;
    Py_ssize_t ua = r->usage.a, ub = r->usage.b;
    if (s->use && s->us.a >= 0 && LIT(d, s->us.a, s->us.b, "null") != s->us.b) {
        ua = s->us.a;                                   /* (the stream's usage, when not null) */
        ub = s->us.b;
    }
    if (!t2_usage(d, ua, ub, tok, &is_null))
        return 0;
    for (int x = 0; x < 5; x++)
        if (tok[x] > (1LL << 40) || tok[x] < -(1LL << 40))
            return 0;
    PyObject *kind;
    if (t2_finish(d, s, &kind) < 0)
        return -1;
    if (kind == NULL)
        return 0;
    int tm = s->chunks != 0, disp = tm && c->have_disp;
    int hf = tm && s->have, hl = hf;
    long long first_t = s->t0, last_t = s->t1, dt = c->disp_time;
    PyObject *sp = t2_span(V_attempt, r->seq, r->seq, disp ? 1 : hf, disp ? dt : first_t, hl ? last_t : 0,
                           PyUnicode_FromFormat("attempt %lld.%lld", c->turn, r->step));
    PyObject *tokens = PyDict_New();
    if (sp == NULL || tokens == NULL)
        goto fail;
    for (int x = 0; x < 5; x++)
        if (t2_set(tokens, T2[K_input + x], PyLong_FromLongLong(tok[x])) < 0)
            goto fail;
    if (t2_set(sp, T2[K_turn], PyLong_FromLongLong(c->turn)) < 0 || t2_set(sp, T2[K_step], PyLong_FromLongLong(r->step)) < 0
        || t2_set(sp, T2[K_dispatchSeq], disp ? PyLong_FromLongLong(c->disp_seq) : Py_NewRef(Py_None)) < 0
        || PyDict_SetItem(sp, T2[K_dispatchType], disp ? T2_DISP(c) : Py_None) < 0
        || t2_set(sp, T2[K_firstChunkSeq], tm ? PyLong_FromLongLong(r->seq) : Py_NewRef(Py_None)) < 0
        || PyDict_SetItem(sp, T2[K_ttftMs], Py_None) < 0 || PyDict_SetItem(sp, T2[K_decodeMs], Py_None) < 0
        || PyDict_SetItem(sp, T2[K_tokens], tokens) < 0 || PyDict_SetItem(sp, T2[K_tps], Py_None) < 0
        || PyDict_SetItem(sp, T2[K_finish], kind) < 0
        || PyDict_SetItem(sp, T2[K_status], r->inter == 1 ? T2[V_interrupted] : T2[V_committed]) < 0
        || t2_set(sp, T2[K_messageSeq], PyLong_FromLongLong(r->seq)) < 0
        || t2_set(sp, T2[K_model], c->has_model ? t2_str(d, c->model_a, c->model_b) : Py_NewRef(Py_None)) < 0
        || t2_set(sp, T2[K_contextWindow], c->has_window ? PyLong_FromLongLong(c->window) : Py_NewRef(Py_None)) < 0)
        goto fail;
    if (!c->timed) {
        if (PyDict_SetItem(sp, T2[K_note], T2[V_notimes]) < 0)
            goto fail;
    } else {
        long long ttft = 0, dec = 0, dur = 0;
        PyObject *n1, *n2, *n3;
        int o1 = t2_ms(disp, dt, hf, first_t, &ttft, &n1);
        int o2 = t2_ms(hf, first_t, hl, last_t, &dec, &n2);
        int o3 = t2_ms(disp, dt, hl, last_t, &dur, &n3);
        PyObject *note = o3 ? (o1 ? n2 : n1) : n3;
        int bad = (!o1 && n1 == NULL) || (!o2 && n2 == NULL) || (!o3 && n3 == NULL)
            || t2_set(sp, T2[K_ttftMs], o1 ? PyLong_FromLongLong(ttft) : Py_NewRef(Py_None)) < 0
            || t2_set(sp, T2[K_decodeMs], o2 ? PyLong_FromLongLong(dec) : Py_NewRef(Py_None)) < 0
            || t2_set(sp, T2[K_durationMs], o3 ? PyLong_FromLongLong(dur) : o2 ? PyLong_FromLongLong(dec)
                      : Py_NewRef(Py_None)) < 0
            || (note != NULL && !o1 && PyDict_SetItem(sp, T2[K_note], note) < 0);
        Py_XDECREF(n1);
        Py_XDECREF(n2);
        Py_XDECREF(n3);
        if (bad)
            goto fail;
        if (o2 && dec != 0 && tok[1] != 0) {
            PyObject *f = PyFloat_FromDouble((double)(tok[1] * 1000) / (double)dec);
            PyObject *rounded = f == NULL ? NULL : PyObject_CallMethod(f, "__round__", "i", 1);
            Py_XDECREF(f);
            if (t2_set(sp, T2[K_tps], rounded) < 0)
                goto fail;
        }
    }
    if (!is_null) {
        long long prompt = tok[0] + tok[2] + tok[3];
        if (prompt != 0) {
            if (c->wait != NULL && PyList_GET_SIZE(c->wait) > 0) {         /* (tlc3) Builder.emit_attempt */
                for (Py_ssize_t x = 0; x < PyList_GET_SIZE(c->wait); x++)
                    if (t2_set(PyList_GET_ITEM(c->wait, x), T2[K_tokensAfter], PyLong_FromLongLong(prompt)) < 0)
                        goto fail;
                if (PyList_SetSlice(c->wait, 0, PyList_GET_SIZE(c->wait), NULL) < 0)
                    goto fail;
            }
            if (!c->have_prompt)
                c->first_prompt = prompt;
            c->have_prompt = 1;
            c->last_prompt = prompt;
        }
    }
    Py_DECREF(kind);
    Py_DECREF(tokens);
    if (PyList_Append(c->out, sp) < 0 || PyList_Append(c->atts, sp) < 0 || t2_append(c->seqs, PyLong_FromLongLong(r->seq)) < 0) {
        Py_DECREF(sp);
        return -1;
    }
    Py_DECREF(sp);
    return 1;
fail:
    Py_XDECREF(kind);
    Py_XDECREF(tokens);
    Py_XDECREF(sp);
    return -1;
}

/* a tool/result (Builder._on_result, _tool): 1, or -1 on an error */
static int t2_tool(T2Ctx *c, const T2Result *r) {
    P d = c->d;
    int k = -1;
    if (r->cid_a >= 0)
        for (int x = 0; x < c->ncalls; x++)
            if (c->calls[x].cb - c->calls[x].ca == r->cid_b - r->cid_a
                && memcmp(d + c->calls[x].ca, d + r->cid_a, (size_t)(r->cid_b - r->cid_a)) == 0) {
                k = x;
                break;
            }
    if (k < 0)
        return 1;
    T2Call call = c->calls[k];
    c->calls[k] = c->calls[--c->ncalls];
    int h = -1;
    for (int x = 0; x < c->nheld; x++)
        if (c->held[x].s == call.step)
            h = x;
    if (h < 0) {
        if (c->nheld >= T2_MAX)
            return 0;
        h = c->nheld;
        if ((c->held[h].list = PyList_New(0)) == NULL)
            return -1;
        c->held[h].s = call.step;
        c->nheld++;
    }
    PyObject *held = c->held[h].list;
    PyObject *name = call.nb > call.na ? t2_str(d, call.na, call.nb) : Py_NewRef(T2[V_q]);
    PyObject *cid = t2_str(d, call.ca, call.cb), *status, *error = NULL;
    if (name == NULL || cid == NULL)
        goto fail;
    int code = r->code_a >= 0;
    P cs = d + r->code_a;
    Py_ssize_t cn = r->code_b - r->code_a;
#define T2_CODE(s) (code && cn == (Py_ssize_t)strlen(s) && memcmp(cs, s, (size_t)cn) == 0)
    status = (T2_CODE("ABORTED_BEFORE_DISPATCH") || T2_CODE("NOT_STARTED")) ? T2[V_notstarted]
        : (T2_CODE("ABORTED") || T2_CODE("TOOL_OUTCOME_UNKNOWN") || T2_CODE("INTERRUPTED") || T2_CODE("CANCELLED"))
        ? T2[V_interrupted] : r->failed ? T2[V_error] : T2[V_ok];
#undef T2_CODE
    if (code)
        error = t2_str(d, r->code_a, r->code_b);
    else if (r->err) {
        PyObject *why = r->why_a >= 0 ? t2_str(d, r->why_a, r->why_b) : PyUnicode_FromString("ERROR");
        error = why == NULL ? NULL : PyUnicode_FromFormat("error:%U", why);
        Py_XDECREF(why);
    } else if (!code && r->failed)
        error = Py_NewRef(T2[V_error]);
    if ((code || r->failed) && error == NULL)
        goto fail;
    PyObject *sp = t2_span(V_tool, call.seq, r->seq, 1, call.time, r->time, Py_NewRef(name));
    if (sp == NULL)
        goto fail;
    if (t2_set(sp, T2[K_turn], PyLong_FromLongLong(c->turn)) < 0 || t2_set(sp, T2[K_step], PyLong_FromLongLong(call.step)) < 0
        || PyDict_SetItem(sp, T2[K_name], name) < 0 || PyDict_SetItem(sp, T2[K_callId], cid) < 0
        || PyDict_SetItem(sp, T2[K_status], status) < 0 || (error != NULL && PyDict_SetItem(sp, T2[K_error], error) < 0)
        || t2_measure(c, sp, 1, call.time, r->time) < 0 || PyList_Append(held, sp) < 0) {
        Py_DECREF(sp);
        goto fail;
    }
    Py_DECREF(sp);
    if (call.nb - call.na >= 8 && memcmp(d + call.na, "subagent", 8) == 0) {
        sp = t2_span(V_subagent, call.seq, r->seq, 1, call.time, r->time, PyUnicode_FromFormat("subagent via %U", name));
        if (sp == NULL)
            goto fail;
        if (t2_set(sp, T2[K_turn], PyLong_FromLongLong(c->turn)) < 0
            || t2_set(sp, T2[K_step], PyLong_FromLongLong(call.step)) < 0 || PyDict_SetItem(sp, T2[K_callId], cid) < 0
            || PyDict_SetItem(sp, T2[K_childSession], Py_None) < 0 || PyDict_SetItem(sp, T2[K_status], status) < 0
            || t2_measure(c, sp, 1, call.time, r->time) < 0 || PyList_Append(held, sp) < 0) {
            Py_DECREF(sp);
            goto fail;
        }
        Py_DECREF(sp);
    }
    Py_DECREF(name);
    Py_DECREF(cid);
    Py_XDECREF(error);
    return 1;
fail:
    Py_XDECREF(name);
    Py_XDECREF(cid);
    Py_XDECREF(error);
    return -1;
}

static long long t2_int_of(PyObject *sp, int key, int *has) {
    PyObject *v = PyDict_GetItem(sp, T2[key]);
    *has = v != NULL && PyLong_Check(v);
    return *has ? PyLong_AsLongLong(v) : 0;
}

/* a step's held tool spans given out (Builder.release: overlaps of its tool spans) */
static int t2_release(T2Ctx *c, int h) {
    PyObject *tools = c->held[h].list;
    Py_ssize_t n = PyList_GET_SIZE(tools);
    for (Py_ssize_t x = 0; x < n; x++) {
        PyObject *s = PyList_GET_ITEM(tools, x);
        if (PyDict_GetItem(s, T2[K_kind]) != T2[V_tool])
            continue;
        int hs, he;
        long long st = t2_int_of(s, K_start, &hs), en = t2_int_of(s, K_end, &he);
        PyObject *ov = PyList_New(0);
        if (ov == NULL)
            return -1;
        for (Py_ssize_t y = 0; y < n && hs && he; y++) {
            PyObject *o = PyList_GET_ITEM(tools, y);
            int os, oe;
            if (o == s || PyDict_GetItem(o, T2[K_kind]) != T2[V_tool])
                continue;
            long long ost = t2_int_of(o, K_start, &os), oen = t2_int_of(o, K_end, &oe);
            if (os && oe && ost < en && st < oen && PyList_Append(ov, PyDict_GetItem(o, T2[K_seq])) < 0) {
                Py_DECREF(ov);
                return -1;
            }
        }
        if (t2_set(s, T2[K_overlaps], ov) < 0)
            return -1;
    }
    for (Py_ssize_t x = 0; x < n; x++)
        if (PyList_Append(c->out, PyList_GET_ITEM(tools, x)) < 0)
            return -1;
    Py_DECREF(tools);
    c->held[h] = c->held[--c->nheld];
    return 0;
}

/* a step/end (Builder.small, code 1) */
static int t2_step_end(T2Ctx *c, long long seq, long long time, long long step) {
    int k = -1;
    for (int x = 0; x < c->nsteps; x++)
        if (c->steps[x].s == step)
            k = x;
    int hs = k >= 0;
    long long t0 = hs ? c->steps[k].time : 0, s_seq = hs ? c->steps[k].seq : seq;
    if (hs)
        c->steps[k] = c->steps[--c->nsteps];
    PyObject *sp = t2_span(V_step, s_seq, seq, hs, t0, time, PyUnicode_FromFormat("step %lld.%lld", c->turn, step));
    if (sp == NULL)
        return -1;
    if (t2_set(sp, T2[K_turn], PyLong_FromLongLong(c->turn)) < 0 || t2_set(sp, T2[K_step], PyLong_FromLongLong(step)) < 0
        || t2_measure(c, sp, hs, t0, time) < 0) {
        Py_DECREF(sp);
        return -1;
    }
    if (t2_append(c->out, sp) < 0)
        return -1;
    for (int x = 0; x < c->nheld; x++)
        if (c->held[x].s == step)
            return t2_release(c, x);
    return 0;
}

static void t2_clear(T2Ctx *c) {
    for (int x = 0; x < c->nheld; x++)
        Py_XDECREF(c->held[x].list);
    c->nheld = 0;
    Py_CLEAR(c->out);
    Py_CLEAR(c->atts);
    Py_CLEAR(c->seqs);
    Py_CLEAR(c->ops);
    for (int x = 0; x < c->ncomps; x++) {
        Py_CLEAR(c->comps[x].shadow);
        Py_CLEAR(c->comps[x].out);
    }
    c->ncomps = 0;
    Py_CLEAR(c->before);
    Py_CLEAR(c->wait);
}

static int t2_is_skipped(P d, Py_ssize_t p, Py_ssize_t tn, PyObject *skip) {
    Py_ssize_t n_skip = PyList_GET_SIZE(skip);
    for (Py_ssize_t x = 0; x < n_skip; x++) {
        PyObject *t = PyList_GET_ITEM(skip, x);
        if (PyBytes_Check(t) && PyBytes_GET_SIZE(t) == tn && memcmp(PyBytes_AS_STRING(t), d + p + 9, (size_t)tn) == 0)
            return 1;
    }
    return 0;
}

/* one step of the attempt tracker for Builder.turn_c to replay (v: stolen; the list made at the first that is not a
 * message's settlement, and then every step is kept; before it, only messages: their keys are in the attempts) */
static int t2_op(T2Ctx *c, PyObject *v) {
    if (v == NULL)
        return -1;
    if (c->ops == NULL) {
        Py_DECREF(v);
        return 0;
    }
    return t2_append(c->ops, v);
}

/* (ops from here on: the messages settled before as their steps) */
static int t2_ops_start(T2Ctx *c) {
    if (c->ops != NULL)
        return 0;
    if ((c->ops = PyList_New(0)) == NULL)
        return -1;
    Py_ssize_t n = PyList_GET_SIZE(c->atts);
    for (Py_ssize_t x = 0; x < n; x++) {
        PyObject *sp = PyList_GET_ITEM(c->atts, x);
        int hs;
        long long seq = t2_int_of(sp, K_seq, &hs), step = t2_int_of(sp, K_step, &hs);
        if (t2_append(c->ops, Py_BuildValue("(iLL)", 0, seq, step)) < 0)
            return -1;
    }
    return 0;
}

static PyObject *t2_range(int has, Py_ssize_t a, Py_ssize_t b) {
    return has && a >= 0 ? Py_BuildValue("(nn)", a, b) : Py_NewRef(Py_None);
}

/* an assistant/attempt's settlement (a log-only attempt: failed, given out at the turn's end by the Builder): the
 * tracker's step (1, seq, step, chunks, finish (None, () or its range), usage range (the stream's when not null,
 * else the data's) | None, (time0, time1) | None, dispatch | None) */
static int t2_failed(T2Ctx *c, const TlSettle *r) {
    if (t2_ops_start(c) < 0)
        return -1;
    const TlSumm *s = &r->summ;
    P d = c->d;
    int stream_use = s->use && s->us.a >= 0 && LIT(d, s->us.a, s->us.b, "null") != s->us.b;
    PyObject *fin = s->fin == 0 ? Py_NewRef(Py_None) : s->fin == 1 ? PyTuple_New(0) : Py_BuildValue("(nn)", s->fr.a, s->fr.b);
    PyObject *use = stream_use ? Py_BuildValue("(nn)", s->us.a, s->us.b) : t2_range(1, r->usage.a, r->usage.b);
    PyObject *times = s->have ? Py_BuildValue("(LL)", s->t0, s->t1) : Py_NewRef(Py_None);
    PyObject *disp = c->have_disp ? Py_BuildValue("(LLO)", c->disp_seq, c->disp_time,
                                                  T2_DISP(c)) : Py_NewRef(Py_None);
    PyObject *op = fin == NULL || use == NULL || times == NULL || disp == NULL ? NULL
        : Py_BuildValue("(iLLLOOOO)", 1, r->seq, r->step, s->chunks, fin, use, times, disp);
    Py_XDECREF(fin);
    Py_XDECREF(use);
    Py_XDECREF(times);
    Py_XDECREF(disp);
    if (op == NULL || t2_append(c->ops, op) < 0)
        return -1;
    return 1;
}

/* the data of an llm/retry (started: llm/retry-started) in the lean record's terms: turn and step integers, retryId a
 * plain string or null, retry an integer or null, delayMs any value (an integer kept), failure null or an object whose
 * code and message are plain strings or null; besides those, type ("llm/retry..."), provider, mode, policyKey and
 * maxRetries (any value); anything else: not taken */
static int t2_retry(T2Ctx *c, Py_ssize_t q, Py_ssize_t nl, int started) {
    P d = c->d;
    int m = c->max_depth | TL_STRICT;
    T2Retry r;
    memset(&r, 0, sizeof(r));
    r.id_a = r.code_a = -1;
    long long turn = 0;
    int g_turn = 0, g_step = 0, g_id = 0, g_retry = 0, g_delay = 0, g_fail = 0, g_type = 0, g_other[4] = {0, 0, 0, 0};
    Py_ssize_t msg_a = -1, msg_b = -1, k, ke;
    Py_ssize_t i = tl_int(d, LIT(d, q, nl, "\",\"seq\":"), nl, &r.seq);
    i = tl_int(d, LIT(d, i, nl, ",\"time\":"), nl, &r.time);
    i = LIT(d, i, nl, ",\"data\":{");
    if (i < 0 || r.seq < 0 || r.seq <= c->prev_seq)
        return 0;
    for (;;) {
        Py_ssize_t v = t2_key(d, i, nl, &k, &ke), ve;
        if (v < 0)
            return 0;
        if (tl_key_is(d, k, ke, "turn")) {
            ve = tl_int(d, v, nl, &turn);
            if (g_turn++)
                return 0;
        } else if (tl_key_is(d, k, ke, "step")) {
            ve = tl_int(d, v, nl, &r.step);
            if (g_step++)
                return 0;
        } else if (tl_key_is(d, k, ke, "retryId")) {
            Py_ssize_t b;
            ve = t2_plain_or_null(d, v, nl, &r.id_a, &b);
            r.id_b = b;
            if (g_id++ || (r.id_a >= 0 && b == r.id_a))
                return 0;                        /* ("": falsy, the step's key; not taken) */
        } else if (tl_key_is(d, k, ke, "retry")) {
            ve = LIT(d, v, nl, "null");
            if (ve < 0) {
                ve = tl_int(d, v, nl, &r.retry);
                r.has_retry = 1;
            }
            if (g_retry++)
                return 0;
        } else if (tl_key_is(d, k, ke, "delayMs")) {
            ve = tl_value(d, v, nl, 2, m);
            if (g_delay++ || ve < 0)
                return 0;
            if (d[v] == '-' || (d[v] >= '0' && d[v] <= '9')) {
                if (tl_int(d, v, nl, &r.delay) != ve)
                    return 0;
                r.has_delay = 1;
            }
        } else if (tl_key_is(d, k, ke, "failure")) {
            if (g_fail++)
                return 0;
            ve = LIT(d, v, nl, "null");
            if (ve < 0 && v < nl && d[v] == '{') {
                int g_code = 0, g_msg = 0;
                Py_ssize_t j = tl_ws(d, v + 1, nl);
                if (j < nl && d[j] == '}')
                    ve = j + 1;
                else
                    for (;;) {
                        Py_ssize_t w = t2_key(d, j, nl, &k, &ke), we;
                        if (w < 0)
                            return 0;
                        if (tl_key_is(d, k, ke, "code")) {
                            Py_ssize_t b;
                            we = t2_plain_or_null(d, w, nl, &r.code_a, &b);
                            r.code_b = b;
                            if (g_code++)
                                return 0;
                        } else if (tl_key_is(d, k, ke, "message")) {
                            we = t2_plain_or_null(d, w, nl, &msg_a, &msg_b);
                            if (g_msg++)
                                return 0;
                        } else
                            we = tl_value(d, w, nl, 3, m);
                        if (we < 0)
                            return 0;
                        j = we;
                        int more = t2_next(d, &j, nl);
                        if (more < 0)
                            return 0;
                        if (!more) {
                            ve = j;
                            break;
                        }
                    }
                /* _retry_fields: the code when not empty, else the message (None, "" or its text) */
                if (!(r.code_a >= 0 && r.code_b > r.code_a)) {
                    r.code_a = msg_a;
                    r.code_b = msg_b;
                }
                r.has_code = r.code_a >= 0;
            }
        } else if (tl_key_is(d, k, ke, "type")) {
            ve = started ? LIT(d, v, nl, "\"llm/retry-started\"") : LIT(d, v, nl, "\"llm/retry\"");
            if (g_type++)
                return 0;
        } else {
            static const char *free_keys[] = {"provider", "mode", "policyKey", "maxRetries"};
            int x = 0;
            while (x < 4 && !tl_key_is(d, k, ke, free_keys[x]))
                x++;
            if (x == 4 || g_other[x]++)
                return 0;
            ve = tl_value(d, v, nl, 2, m);
        }
        if (ve < 0)
            return 0;
        i = ve;
        int more = t2_next(d, &i, nl);
        if (more < 0)
            return 0;
        if (!more)
            break;
    }
    if (!g_turn || !g_step || turn != c->turn || LIT(d, i, nl, "}") != nl)
        return 0;
    /* the open retry of the same key */
    int k2 = -1;
    for (int x = 0; x < c->nretries; x++) {
        T2Retry *o = &c->retries[x];
        if (r.id_a >= 0 ? (o->id_a >= 0 && o->id_b - o->id_a == r.id_b - r.id_a
                           && memcmp(d + o->id_a, d + r.id_a, (size_t)(r.id_b - r.id_a)) == 0)
                        : (o->id_a < 0 && o->step == r.step))
            k2 = x;
    }
    if (t2_ops_start(c) < 0
        || t2_op(c, r.has_retry ? Py_BuildValue("(iLLL)", started ? 3 : 2, r.seq, r.step, r.retry)
                                : Py_BuildValue("(iLLO)", started ? 3 : 2, r.seq, r.step, Py_None)) < 0)
        return -1;
    c->prev_seq = r.seq;
    if (r.time > 0)
        c->last_time = r.time;
    if (!started) {                                   /* Builder: open[("retry", key)] = ev */
        if (k2 < 0) {
            if (c->nretries >= T2_MAX)
                return 0;
            k2 = c->nretries++;
        }
        c->retries[k2] = r;
        return 1;
    }
    c->have_disp = 1;                                 /* (_on_dispatch) */
    c->disp_retry = 1;
    c->disp_seq = r.seq;
    c->disp_time = r.time;
    if (k2 < 0)
        return 1;
    T2Retry o = c->retries[k2];
    c->retries[k2] = c->retries[--c->nretries];
    PyObject *label = r.has_retry ? PyUnicode_FromFormat("retry %lld", r.retry) : PyUnicode_FromString("retry None");
    PyObject *sp = t2_span(V_retrywait, o.seq, r.seq, 1, o.time, r.time, label);
    if (sp == NULL)
        return -1;
    if (t2_set(sp, T2[K_turn], PyLong_FromLongLong(c->turn)) < 0 || t2_set(sp, T2[K_step], PyLong_FromLongLong(o.step)) < 0
        || t2_set(sp, T2[K_retry], o.has_retry ? PyLong_FromLongLong(o.retry) : Py_NewRef(Py_None)) < 0
        || t2_set(sp, T2[K_delayMs], o.has_delay ? PyLong_FromLongLong(o.delay) : Py_NewRef(Py_None)) < 0
        || t2_set(sp, T2[K_failure], o.has_code ? t2_str(d, o.code_a, o.code_b) : Py_NewRef(Py_None)) < 0
        || t2_measure(c, sp, 1, o.time, r.time) < 0) {
        Py_DECREF(sp);
        return -1;
    }
    return t2_append(c->out, sp) < 0 ? -1 : 1;
}

#define T2_TAG(s) (tn == (Py_ssize_t)sizeof(s) - 1 && memcmp(d + p + 9, s, sizeof(s) - 1) == 0)

/* (tlc3) an object at i whose brackets are at depth (every member valid JSON within max depth m, no key with an
 * escape): its end, or -1; the value ranges of the nk keys (NULL: none) in va[], vb[] (-1: absent; a key found
 * twice: -1) */
static Py_ssize_t t2_findn(P d, Py_ssize_t i, Py_ssize_t n, int depth, int m, int nk, const char *const *keys,
                           Py_ssize_t *va, Py_ssize_t *vb) {
    for (int x = 0; x < nk; x++)
        va[x] = vb[x] = -1;
    if (i < 0 || i >= n || d[i] != '{' || depth > (m & (TL_STRICT - 1)))
        return -1;
    i = tl_ws(d, i + 1, n);
    if (i < n && d[i] == '}')
        return i + 1;
    for (;;) {
        Py_ssize_t k, ke, v = t2_key(d, i, n, &k, &ke);
        if (v < 0)
            return -1;
        Py_ssize_t e = tl_value(d, v, n, depth, m);
        if (e < 0)
            return -1;
        for (int x = 0; x < nk; x++) {
            const char *key = keys[x];
            if (key != NULL && tl_key_is(d, k, ke, key)) {
                if (va[x] >= 0)
                    return -1;
                va[x] = v;
                vb[x] = e;
            }
        }
        i = e;
        int r = t2_next(d, &i, n);
        if (r <= 0)
            return r < 0 ? -1 : i;
    }
}

static Py_ssize_t t2_find(P d, Py_ssize_t i, Py_ssize_t n, int depth, int m, const char *key0, const char *key1,
                          Py_ssize_t va[2], Py_ssize_t vb[2]) {
    const char *keys[2] = {key0, key1};
    return t2_findn(d, i, n, depth, m, 2, keys, va, vb);
}

/* (tlc3) a model value at [a, b) (Builder: taken when a str): 1 set in c, 0 not a string (ignored), -1 refused (an
 * escape) */
static int t2_model(T2Ctx *c, Py_ssize_t a, Py_ssize_t b) {
    if (a < 0 || c->d[a] != '"')
        return 0;
    int esc = 0;
    if (tl_string(c->d, a, b, &esc) != b || esc)
        return -1;
    if (!c->has_model)
        c->km = PyList_GET_SIZE(c->atts);
    c->has_model = 1;
    c->model_a = a + 1;
    c->model_b = b - 1;
    return 1;
}

/* (tlc3) a request/header (Builder._on_dispatch: header.config.model when a string; the turn's dispatch) or a
 * request/context (Builder._on_context: model when a string, contextWindow when an int > 0), the row in the writer's
 * layout up to its data (any object: every member checked): 1 read, 0 not taken */
static int t2_request(T2Ctx *c, Py_ssize_t q, Py_ssize_t nl, int header) {
    P d = c->d;
    long long seq, time;
    Py_ssize_t i = tl_int(d, LIT(d, q, nl, "\",\"seq\":"), nl, &seq);
    i = tl_int(d, LIT(d, i, nl, ",\"time\":"), nl, &time);
    i = LIT(d, i, nl, ",\"data\":");
    Py_ssize_t va[2], vb[2], e;
    int m = c->max_depth | TL_STRICT;           /* (numbers as tl_refused takes them: see tl_settle) */
    e = t2_find(d, i, nl, 2, m, header ? "header" : "model", header ? NULL : "contextWindow", va, vb);
    if (e < 0 || LIT(d, e, nl, "}") != nl || seq <= c->prev_seq)
        return 0;
    if (header) {
        Py_ssize_t ca[2], cb[2], ma[2], mb[2];
        if (va[0] < 0 || t2_find(d, va[0], vb[0], 3, m, "config", NULL, ca, cb) != vb[0] || ca[0] < 0
            || t2_find(d, ca[0], cb[0], 4, m, "model", NULL, ma, mb) != cb[0])
            return 0;                               /* (a header or config that is not an object: the exact way) */
        if (t2_model(c, ma[0], mb[0]) < 0)
            return 0;
        c->have_disp = 1;
        c->disp_retry = 2;
        c->disp_seq = seq;
        c->disp_time = time;
    } else {
        long long w = 0;
        if (va[1] >= 0 && (d[va[1]] == '-' || (d[va[1]] >= '0' && d[va[1]] <= '9'))
            && tl_int(d, va[1], nl, &w) != vb[1])
            return 0;                               /* (a float, or an int of more than 15 digits: the exact way) */
        if (t2_model(c, va[0], vb[0]) < 0)
            return 0;
        if (w > 0) {
            if (!c->has_window)
                c->kw = PyList_GET_SIZE(c->atts);
            c->has_window = 1;
            c->window = w;
        }
    }
    c->prev_seq = seq;
    if (time > 0)
        c->last_time = time;
    return 1;
}

/* (tlc3) a compaction row's envelope in the writer's layout and its data (any object: every member checked) with
 * compactionId (keys[0]) a plain string: 1 (its seq and time, the members' ranges), else 0 */
static int t2_comp_row(T2Ctx *c, Py_ssize_t q, Py_ssize_t nl, int nk, const char *const *keys, long long *seq,
                       long long *time, Py_ssize_t *va, Py_ssize_t *vb) {
    P d = c->d;
    Py_ssize_t i = tl_int(d, LIT(d, q, nl, "\",\"seq\":"), nl, seq);
    i = tl_int(d, LIT(d, i, nl, ",\"time\":"), nl, time);
    i = LIT(d, i, nl, ",\"data\":");
    Py_ssize_t e = t2_findn(d, i, nl, 2, c->max_depth | TL_STRICT, nk, keys, va, vb);
    int esc = 0;
    if (e < 0 || LIT(d, e, nl, "}") != nl || *seq <= c->prev_seq || va[0] < 0 || d[va[0]] != '"'
        || tl_string(d, va[0], vb[0], &esc) != vb[0] || esc)
        return 0;
    va[0]++;                                    /* (the id's bytes) */
    vb[0]--;
    return 1;
}

/* (tlc3) the open compaction of id d[a:b], or -1 */
static int t2_comp_of(T2Ctx *c, Py_ssize_t a, Py_ssize_t b) {
    for (int x = 0; x < c->ncomps; x++)
        if (c->comps[x].cb - c->comps[x].ca == b - a && memcmp(c->d + a, c->d + c->comps[x].ca, (size_t)(b - a)) == 0)
            return x;
    return -1;
}

/* (tlc3) an int (at most 15 digits) or null or absent at [a, b): 1 and *v (a new reference), 0 another value, -1 */
static int t2_int_or_none(T2Ctx *c, Py_ssize_t a, Py_ssize_t b, Py_ssize_t nl, PyObject **v) {
    long long x;
    *v = NULL;
    if (a < 0 || LIT(c->d, a, b, "null") == b)
        *v = Py_NewRef(Py_None);
    else if (tl_int(c->d, a, nl, &x) == b)
        *v = PyLong_FromLongLong(x);
    else
        return 0;
    return *v == NULL ? -1 : 1;
}

/* (tlc3) compaction/start, /summary, /end (Builder._on_compaction) in the order start, summary, end of one id: 1 read,
 * 0 not taken, -1 error */
static int t2_compaction(T2Ctx *c, Py_ssize_t q, Py_ssize_t nl, int what) {
    static const char *const k_start[1] = {"compactionId"};
    static const char *const k_summ[3] = {"compactionId", "shadowedTokenCount", "usage"};
    static const char *const k_end[3] = {"compactionId", "turn", "error"};
    static const char *const k_use[1] = {"outputTokens"};
    P d = c->d;
    long long seq, time;
    Py_ssize_t va[3], vb[3];
    if (!t2_comp_row(c, q, nl, what == 0 ? 1 : 3, what == 0 ? k_start : what == 1 ? k_summ : k_end, &seq, &time, va,
                     vb))
        return 0;
    int k = t2_comp_of(c, va[0], vb[0]);
    if (what == 0) {
        if (k >= 0 || c->ncomps >= T2_MAX)
            return 0;
        T2Comp *x = &c->comps[c->ncomps++];
        x->ca = va[0];
        x->cb = vb[0];
        x->seq = seq;
        x->time = time;
        x->summ = 0;
        x->shadow = x->out = NULL;
    } else if (what == 1) {
        if (k < 0 || c->comps[k].summ)
            return 0;
        PyObject *shadow, *out = NULL;
        int got = t2_int_or_none(c, va[1], vb[1], nl, &shadow);
        if (got <= 0)
            return got;
        if (va[2] >= 0 && LIT(d, va[2], vb[2], "null") != vb[2]) {
            Py_ssize_t ua[1], ub[1];
            if (d[va[2]] != '{' || t2_findn(d, va[2], vb[2], 3, c->max_depth | TL_STRICT, 1, k_use, ua, ub) != vb[2])
                got = 0;                            /* (a usage that is not an object: the exact way) */
            else
                got = t2_int_or_none(c, ua[0], ub[0], nl, &out);
        } else
            got = (out = Py_NewRef(Py_None)) != NULL;
        if (got <= 0) {
            Py_DECREF(shadow);
            return got;
        }
        c->comps[k].summ = 1;
        c->comps[k].shadow = shadow;
        c->comps[k].out = out;
    } else {
        if (k < 0 || !c->comps[k].summ || (va[2] >= 0 && LIT(d, va[2], vb[2], "null") != vb[2]))
            return 0;                               /* (an error logged: the exact way) */
        PyObject *turn;
        int got = va[1] >= 0 && LIT(d, va[1], vb[1], "null") != vb[1] ? t2_int_or_none(c, va[1], vb[1], nl, &turn)
            : (turn = PyLong_FromLongLong(c->turn)) != NULL ? 1 : -1;
        if (got <= 0)
            return got;
        T2Comp *x = &c->comps[k];
        PyObject *sp = t2_span(V_compaction, x->seq, seq, 1, x->time, time, Py_NewRef(T2[V_compaction]));
        int before = !c->have_prompt;
        if (sp == NULL || t2_set(sp, T2[K_turn], turn) < 0 || PyDict_SetItem(sp, T2[K_shadowedTokens], x->shadow) < 0
            || PyDict_SetItem(sp, T2[K_summaryTokens], x->out) < 0
            || t2_set(sp, T2[K_tokensBefore], before ? Py_NewRef(Py_None) : PyLong_FromLongLong(c->last_prompt)) < 0
            || PyDict_SetItem(sp, T2[K_tokensAfter], Py_None) < 0 || t2_measure(c, sp, 1, x->time, time) < 0
            || (c->wait == NULL && (c->wait = PyList_New(0)) == NULL)
            || (before && c->before == NULL && (c->before = PyList_New(0)) == NULL)
            || PyList_Append(c->out, sp) < 0 || PyList_Append(c->wait, sp) < 0
            || (before && PyList_Append(c->before, sp) < 0)) {
            Py_XDECREF(sp);
            return -1;
        }
        Py_DECREF(sp);
        Py_CLEAR(x->shadow);
        Py_CLEAR(x->out);
        c->comps[k] = c->comps[--c->ncomps];
    }
    c->prev_seq = seq;
    if (time > 0)
        c->last_time = time;
    return 1;
}

/* one row of the turn at [p, nl) (q: the quote closing its type): 1 read, 2 the turn's end, 0 not taken, -1 error */
static int t2_row(T2Ctx *c, Py_ssize_t p, Py_ssize_t q, Py_ssize_t nl, Py_ssize_t max_row, PyObject *skip,
                  Py_ssize_t *kind_a, Py_ssize_t *kind_b, long long *end_seq, long long *end_time) {
    P d = c->d;
    Py_ssize_t tn = q - p - 9;
    if (t2_is_skipped(d, p, tn, skip))
        return 1;
    if (nl - p > max_row)
        return 0;
    long long seq, time, turn, step;
    if (T2_TAG("step/start") || T2_TAG("step/end")) {
        TlRun r;
        int code = T2_TAG("step/end");
        if (!tl_small(d, q, nl, code, &r) || r.turn != c->turn || r.seq0 <= c->prev_seq)
            return 0;
        c->prev_seq = r.seq0;
        if (r.t0 > 0)
            c->last_time = r.t0;
        if (code)
            return t2_step_end(c, r.seq0, r.t0, r.step) < 0 ? -1 : 1;
        int k = c->nsteps;
        for (int x = 0; x < c->nsteps; x++)
            if (c->steps[x].s == r.step)
                k = x;
        if (k >= T2_MAX)
            return 0;
        c->steps[k].s = r.step;
        c->steps[k].seq = r.seq0;
        c->steps[k].time = r.t0;
        if (k == c->nsteps)
            c->nsteps++;
        c->have_disp = 1;
        c->disp_retry = 0;
        c->disp_seq = r.seq0;
        c->disp_time = r.t0;
        return 1;
    }
    if (T2_TAG("assistant/message")) {
        TlSettle r;
        if (c->max_depth < 8 || !tl_settle(d, q, nl, 3, c->max_depth, &r) || !r.has_stream || r.turn != c->turn
            || r.seq <= c->prev_seq)
            return 0;
        int got = t2_attempt(c, &r);
        if (got <= 0)
            return got;
        if (t2_op(c, Py_BuildValue("(iLL)", 0, r.seq, r.step)) < 0)
            return -1;
        c->prev_seq = r.seq;
        if (r.time > 0)
            c->last_time = r.time;
        return 1;
    }
    if (T2_TAG("assistant/attempt")) {
        TlSettle r;
        if (c->max_depth < 8 || !tl_settle(d, q, nl, 4, c->max_depth, &r) || !r.has_stream || r.turn != c->turn
            || r.seq <= c->prev_seq)
            return 0;
        c->prev_seq = r.seq;
        if (r.time > 0)
            c->last_time = r.time;
        return t2_failed(c, &r);
    }
    if (T2_TAG("llm/retry") || T2_TAG("llm/retry-started"))
        return t2_retry(c, q, nl, T2_TAG("llm/retry-started"));
    if (T2_TAG("request/header") || T2_TAG("request/context"))
        return t2_request(c, q, nl, T2_TAG("request/header"));
    if (T2_TAG("compaction/start") || T2_TAG("compaction/summary") || T2_TAG("compaction/end"))
        return t2_compaction(c, q, nl, T2_TAG("compaction/start") ? 0 : T2_TAG("compaction/summary") ? 1 : 2);
    if (T2_TAG("tool/call")) {
        T2Call call;
        if (!t2_call(d, q, nl, &turn, &call) || turn != c->turn || call.seq <= c->prev_seq)
            return 0;
        c->prev_seq = call.seq;
        if (call.time > 0)
            c->last_time = call.time;
        int k = c->ncalls;
        for (int x = 0; x < c->ncalls; x++)
            if (c->calls[x].cb - c->calls[x].ca == call.cb - call.ca
                && memcmp(d + c->calls[x].ca, d + call.ca, (size_t)(call.cb - call.ca)) == 0)
                k = x;
        if (k >= T2_MAX)
            return 0;
        c->calls[k] = call;
        if (k == c->ncalls)
            c->ncalls++;
        return 1;
    }
    if (T2_TAG("tool/result")) {
        T2Result r;
        if (!t2_result(d, q, nl, c->max_depth, &r) || r.seq <= c->prev_seq)
            return 0;
        c->prev_seq = r.seq;
        if (r.time > 0)
            c->last_time = r.time;
        return t2_tool(c, &r);
    }
    if (T2_TAG("turn/end")) {
        if (!t5_turn_end(d, q, nl, c->max_depth, &seq, &time, &turn, kind_a, kind_b, &c->end_err, &c->end_err_a,
                         &c->end_err_b) || turn != c->turn || seq <= c->prev_seq)
            return 0;
        c->prev_seq = seq;
        if (time > 0)
            c->last_time = time;
        *end_seq = seq;
        *end_time = time;
        return 2;
    }
    (void)step;
    return 0;
}
#undef T2_TAG

/* the turn from the turn/start row at p (ts: its record; index: its row's) to stop: the item (spans, attempts,
 * (start, end, seq, index),
 * turn, last time, dispatch, attempt seqs, (first prompt, last prompt) | None), None when not taken, NULL on an
 * error; *end: where the rows after it start */
static PyObject *tl_turn(P d, Py_ssize_t p, Py_ssize_t stop, const TlRun *ts, PyObject *skip, int flags,
                         int max_depth, Py_ssize_t max_row, long long index, Py_ssize_t *end, long long *rows) {
    if (t2_init() < 0)
        return NULL;
    T2Ctx c;
    memset(&c, 0, sizeof(c));
    c.d = d;
    c.timed = (flags & T2_TIMED) != 0;
    c.max_depth = max_depth;
    c.turn = ts->turn;
    c.prev_seq = ts->seq0;
    c.last_time = ts->t0 > 0 ? ts->t0 : 0;
    c.out = PyList_New(0);
    c.atts = PyList_New(0);
    c.seqs = PyList_New(0);
    if (c.out == NULL || c.atts == NULL || c.seqs == NULL) {
        t2_clear(&c);
        return NULL;
    }
    Py_ssize_t kind_a = -1, kind_b = -1;
    long long end_seq = 0, end_time = 0;
    P hit = memchr(d + p, '\n', (size_t)(stop - p));
    Py_ssize_t at = hit == NULL ? stop : hit - d + 1;
    int got = 0;
    long long c_rows = 1;
    while (at < stop) {
        hit = memchr(d + at, '\n', (size_t)(stop - at));
        if (hit == NULL)
            break;
        Py_ssize_t nl = hit - d, q = -1;
        if (nl - at >= 9 && memcmp(d + at, "{\"type\":\"", 9) == 0) {
            P qq = memchr(d + at + 9, '"', (size_t)(nl - at - 9));
            q = qq == NULL ? -1 : qq - d;
        }
        if (q < 0)
            break;
        got = t2_row(&c, at, q, nl, max_row, skip, &kind_a, &kind_b, &end_seq, &end_time);
        at = nl + 1;
        c_rows++;
        if (got != 1)
            break;
    }
    if (got < 0) {
        t2_clear(&c);
        return NULL;
    }
    if (got != 2 || c.nsteps || c.ncalls || c.nheld || c.nretries || c.ncomps) {
        t2_clear(&c);
        Py_RETURN_NONE;
    }
    PyObject *sp = t2_span(V_turn, ts->seq0, end_seq, 1, ts->t0, end_time, PyUnicode_FromFormat("turn %lld", c.turn));
    int bad = sp == NULL;
    if (!bad && (t2_set(sp, T2[K_turn], PyLong_FromLongLong(c.turn)) < 0
                 || t2_set(sp, T2[K_reason], t2_str(d, kind_a, kind_b)) < 0
                 || (c.end_err && t2_set(sp, T2[K_error], c.end_err == 1 ? t2_str(d, c.end_err_a, c.end_err_b)
                                                                         : Py_NewRef(Py_None)) < 0)
                 || t2_measure(&c, sp, 1, ts->t0, end_time) < 0)) {
        Py_DECREF(sp);
        bad = 1;
    }
    if (bad || t2_append(c.out, sp) < 0) {
        t2_clear(&c);
        return NULL;
    }
    PyObject *disp = c.have_disp ? Py_BuildValue("(LLO)", c.disp_seq, c.disp_time, T2_DISP(&c)) : Py_NewRef(Py_None);
    PyObject *prompts = c.have_prompt ? Py_BuildValue("(LL)", c.first_prompt, c.last_prompt) : Py_NewRef(Py_None);
    Py_ssize_t natts = PyList_GET_SIZE(c.atts);
    PyObject *cfg = !c.has_model && !c.has_window && c.wait == NULL ? Py_NewRef(Py_None)            /* (tlc3) */
        : Py_BuildValue("(nNnNOO)", c.has_model ? c.km : natts, c.has_model ? t2_str(d, c.model_a, c.model_b)
                        : Py_NewRef(Py_None), c.has_window ? c.kw : natts,
                        c.has_window ? PyLong_FromLongLong(c.window) : Py_NewRef(Py_None),
                        c.before != NULL ? c.before : Py_None, c.wait != NULL ? c.wait : Py_None);
    PyObject *item = disp == NULL || prompts == NULL || cfg == NULL ? NULL
        : Py_BuildValue("(OO(nnLLO)LLOOOO)", c.out, c.atts, p, at, ts->seq0, index, cfg, c.turn, c.last_time, disp,
                        c.seqs, prompts, c.ops != NULL ? c.ops : Py_None);
    Py_XDECREF(disp);
    Py_XDECREF(prompts);
    Py_XDECREF(cfg);
    t2_clear(&c);
    *end = at;
    *rows = c_rows;
    return item;
}
/* tl_shapes(spans) -> (order, [(keys, rows), ...]) | None: the spans (a list of dicts) grouped by their keys in
 * order (timeline_table.shapes_py, the definition): order[i] the shape of spans[i], the shapes in order of first
 * use, each with its spans in log order; None when a span is not a dict or there are more than 256 shapes. */
static int t2_same_keys(PyObject *d, PyObject *keys) {
    if (PyDict_GET_SIZE(d) != PyTuple_GET_SIZE(keys))
        return 0;
    Py_ssize_t pos = 0, j = 0;
    PyObject *k, *v;
    while (PyDict_Next(d, &pos, &k, &v)) {
        PyObject *t = PyTuple_GET_ITEM(keys, j++);
        if (k != t) {
            int same = PyObject_RichCompareBool(k, t, Py_EQ);
            if (same <= 0)
                return same;
        }
    }
    return 1;
}

static PyObject *tl_shapes(PyObject *self, PyObject *spans) {
    (void)self;
    if (!PyList_Check(spans)) {
        PyErr_SetString(PyExc_TypeError, "tl_shapes: a list of dicts");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(spans);
    PyObject *keys[256], *rows[256], *out = NULL, *shapes = NULL;
    int ns = 0, last = -1;
    PyObject *order = PyBytes_FromStringAndSize(NULL, n);
    if (order == NULL)
        return NULL;
    char *o = PyBytes_AS_STRING(order);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *d = PyList_GET_ITEM(spans, i);
        if (!PyDict_Check(d))
            goto none;
        int k = -1, same = last >= 0 ? t2_same_keys(d, keys[last]) : 0;
        if (same < 0)
            goto fail;
        if (same)
            k = last;
        for (int s = 0; s < ns && k < 0; s++) {
            same = s == last ? 0 : t2_same_keys(d, keys[s]);
            if (same < 0)
                goto fail;
            if (same)
                k = s;
        }
        if (k < 0) {
            if (ns == 256)
                goto none;
            keys[ns] = PySequence_Tuple(d);
            if (keys[ns] == NULL)
                goto fail;
            rows[ns] = PyList_New(0);
            if (rows[ns] == NULL) {
                Py_DECREF(keys[ns]);
                goto fail;
            }
            k = ns++;
        }
        o[i] = (char)k;
        if (PyList_Append(rows[k], d) < 0)
            goto fail;
        last = k;
    }
    shapes = PyList_New(ns);
    if (shapes == NULL)
        goto fail;
    for (int s = 0; s < ns; s++) {
        PyObject *t = PyTuple_Pack(2, keys[s], rows[s]);
        if (t == NULL)
            goto fail;
        PyList_SET_ITEM(shapes, s, t);
    }
    out = PyTuple_Pack(2, order, shapes);
    goto done;
none:
    out = Py_NewRef(Py_None);
    goto done;
fail:
    out = NULL;
done:
    for (int s = 0; s < ns; s++) {
        Py_DECREF(keys[s]);
        Py_DECREF(rows[s]);
    }
    Py_XDECREF(shapes);
    Py_DECREF(order);
    return out;
}

/* tl_order(spans, kinds) -> list | None: the spans (dicts) sorted by (seq, or -1 when None; kinds[kind]), a stable
 * sort (timeline_summary.in_log_order, the definition); None when a span is not a dict, has no seq or kind, a seq
 * neither None nor an int of 8 bytes, or a kind not in kinds (the definition then says what it says). */
typedef struct { long long seq, kind; Py_ssize_t at; } T2Key;

static int t2_key_cmp(const void *a, const void *b) {
    const T2Key *x = a, *y = b;
    if (x->seq != y->seq)
        return x->seq < y->seq ? -1 : 1;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at;
}

static PyObject *tl_order(PyObject *self, PyObject *args) {
    PyObject *spans, *kinds;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!O!", &PyList_Type, &spans, &PyDict_Type, &kinds) || t2_init() < 0)
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(spans);
    T2Key *keys = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(T2Key));
    if (keys == NULL)
        return PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *d = PyList_GET_ITEM(spans, i), *seq, *kind, *rank;
        if (!PyDict_Check(d) || (seq = PyDict_GetItemWithError(d, T2[K_seq])) == NULL
            || (kind = PyDict_GetItemWithError(d, T2[K_kind])) == NULL
            || (rank = PyDict_GetItemWithError(kinds, kind)) == NULL || !PyLong_CheckExact(rank)
            || (seq != Py_None && !PyLong_CheckExact(seq)))
            goto none;
        int over = 0, over2 = 0;
        keys[i].seq = seq == Py_None ? -1 : PyLong_AsLongLongAndOverflow(seq, &over);
        keys[i].kind = PyLong_AsLongLongAndOverflow(rank, &over2);
        keys[i].at = i;
        if (over || over2 || PyErr_Occurred())
            goto none;
    }
    qsort(keys, (size_t)n, sizeof(T2Key), t2_key_cmp);
    PyObject *out = PyList_New(n);
    if (out != NULL)
        for (Py_ssize_t i = 0; i < n; i++)
            PyList_SET_ITEM(out, i, Py_NewRef(PyList_GET_ITEM(spans, keys[i].at)));
    PyMem_Free(keys);
    return out;
none:
    PyMem_Free(keys);
    if (PyErr_Occurred())
        return NULL;
    Py_RETURN_NONE;
}
/* (tl4) tl_getcols(dicts, keys) -> [[d.get(k) for d in dicts] for k in keys] (timeline_table.getcols_py, its
 * definition; None when an item is not a dict): every dict read once for all the keys, not once per key */
static PyObject *tl_getcols(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *rows, *keys;
    if (!PyArg_ParseTuple(args, "O!O!", &PyList_Type, &rows, &PyList_Type, &keys))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(rows), m = PyList_GET_SIZE(keys);
    for (Py_ssize_t i = 0; i < n; i++)
        if (!PyDict_CheckExact(PyList_GET_ITEM(rows, i)))
            Py_RETURN_NONE;
    PyObject *out = PyList_New(m);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t k = 0; k < m; k++) {
        PyObject *l = PyList_New(n);
        if (l == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, k, l);
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *row = PyList_GET_ITEM(rows, i);
        for (Py_ssize_t k = 0; k < m; k++) {
            PyObject *v = PyDict_GetItemWithError(row, PyList_GET_ITEM(keys, k));
            if (v == NULL && PyErr_Occurred()) {
                /* (the rest of the lists hold NULLs: filled before they are freed) */
                for (Py_ssize_t kk = 0; kk < m; kk++) {
                    PyObject *l = PyList_GET_ITEM(out, kk);
                    for (Py_ssize_t j = (kk < k ? i + 1 : i); j < n; j++)
                        PyList_SET_ITEM(l, j, Py_NewRef(Py_None));
                }
                Py_DECREF(out);
                return NULL;
            }
            PyList_SET_ITEM(PyList_GET_ITEM(out, k), i, Py_NewRef(v != NULL ? v : Py_None));
        }
    }
    return out;
}
/* ---- end tlc2 ---- */

/* ---- findc2: whole-log find's hits of a window's candidate rows, made in C (issue 29; owner: the findc2 helper) ----
 * find_hits(data, starts, lim, torn, max_row, types, needle, mode, kinds, make[, places]) -> (items, read, flags)
 * (kinds: the tool-call and tool-output kinds, and the error kind the find6 section's rows need, when given)
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

static int f6_array(P d, Py_ssize_t n, Py_ssize_t *i);   /* (the find6 section) */

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
    if (c == '[' && depth + 1 <= FT_DEPTH) {           /* (a list of plain strings and integers: find6) */
        int r = f6_array(d, n, i);
        if (r != 0)
            return r > 0 ? 0 : -1;
    }
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
    int kind;                  /* 0..3 FT_KINDS[kind], 4 the tool-call kind, 5 the tool-output kind, 6 the error kind */
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

/* memmem(h, n, w, m) (m >= 1): the needle's first and last bytes looked for 16 places a step (SSE2), each place
 * where both are compared whole (the C library's memmem of a short needle is a byte loop: ~5% of a find of "—") */
static P f2_memmem(P h, Py_ssize_t n, P w, Py_ssize_t m) {
    Py_ssize_t q = 0;
    if (m > n)
        return NULL;
#if defined(__SSE2__)
    const __m128i f = _mm_set1_epi8((char)w[0]), l = _mm_set1_epi8((char)w[m - 1]);
    for (; q + m - 1 + 16 <= n; q += 16) {
        __m128i a = _mm_loadu_si128((const __m128i *)(h + q)), b = _mm_loadu_si128((const __m128i *)(h + q + m - 1));
        unsigned k = (unsigned)_mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(a, f), _mm_cmpeq_epi8(b, l)));
        while (k) {
            Py_ssize_t at = q + __builtin_ctz(k);
            if (memcmp(h + at, w, (size_t)m) == 0)
                return h + at;
            k &= k - 1;
        }
    }
#endif
    for (; q + m <= n; q++)
        if (h[q] == w[0] && memcmp(h + q, w, (size_t)m) == 0)
            return h + q;
    return NULL;
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
            P at = f2_memmem(s + pos, n - pos, F2.needle, F2.m);
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

static int f6_more(P d, const FtTape *tp, Py_ssize_t tv, Py_ssize_t dv);   /* (the find6 section) */
static struct {
    int errors;          /* find_hits was given the error kind (kinds[2]): an attempt's error fields are read */
    PyObject *out;       /* more_text: the fields' (kind, text) appended here instead of matched */
} F6;

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
    int more = f6_more(d, tp, tv, dv);               /* (compaction/summary, assistant/attempt: find6) */
    if (more != 2)
        return more;
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
        || (o = PyBaseObject_Type.tp_new((PyTypeObject *)cls, F2_EMPTY, NULL)) == NULL)
        goto out;
    for (int j = 0; j < 13; j++)
        if (PyObject_GenericSetAttr(o, F2_KEYS[j], v[j]) < 0) {
            Py_CLEAR(o);
            goto out;
        }
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
    if ((PyTuple_GET_SIZE(kinds) != 2 && PyTuple_GET_SIZE(kinds) != 3) || PyTuple_GET_SIZE(make) != 4 || !PyType_Check(PyTuple_GET_ITEM(make, 0))
        || ((PyTypeObject *)PyTuple_GET_ITEM(make, 0))->tp_new != PyBaseObject_Type.tp_new
        || nd.len == 0 || (mode != 0 && mode != 1) || f2_setup() < 0) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "find_hits: two or three kinds, (cls: a class made by object.__new__, fast rows, "
                            "source, base), a needle, mode 0 or 1");
        goto out;
    }
    base = PyLong_AsSsize_t(PyTuple_GET_ITEM(make, 3));
    if (base == -1 && PyErr_Occurred())
        goto out;
    F6.errors = PyTuple_GET_SIZE(kinds) == 3;
    F6.out = NULL;
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

/* ---- find5: whole-log find's byte searches, 16 places a step: first_uesc, rows_any (issue 29; owner: the find5 helper) ----
 * first_uesc(data, start, lim) -> int
 *   The offset of the first ``\uXXXX`` escape of a character >= U+0080 wholly inside data[start:lim] (start, lim
 *   clamped to the buffer), -1: none: what app/log/query/find_prefilter._ESC_NONASCII.search(data, start, lim)
 *   finds (``\\u(?!00[0-7])[0-9a-fA-F]{4}``; the definition, tests/test_find_memmem.py holds them equal).  The
 *   places of a backslash followed by ``u`` are found 16 at a time (SSE2: two loads a byte apart), each checked;
 *   the C library's strstr of ``\u`` ran at ~0.5 GB/s here (its generic loop), this at memory speed. */
static inline int f5_hexc(unsigned char c) {
    return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

static inline int f5_is_esc(P d, Py_ssize_t p, Py_ssize_t lim) {
    if (p + 6 > lim)
        return 0;
    if (!f5_hexc(d[p + 2]) || !f5_hexc(d[p + 3]) || !f5_hexc(d[p + 4]) || !f5_hexc(d[p + 5]))
        return 0;
    return !(d[p + 2] == '0' && d[p + 3] == '0' && d[p + 4] >= '0' && d[p + 4] <= '7');
}

static Py_ssize_t f5_first_uesc(P d, Py_ssize_t k, Py_ssize_t lim) {
#if defined(__SSE2__)
    const __m128i bs = _mm_set1_epi8('\\'), u = _mm_set1_epi8('u');
    for (; k + 17 <= lim; k += 16) {
        __m128i a = _mm_loadu_si128((const __m128i *)(d + k)), b = _mm_loadu_si128((const __m128i *)(d + k + 1));
        unsigned m = (unsigned)_mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(a, bs), _mm_cmpeq_epi8(b, u)));
        while (m) {
            Py_ssize_t p = k + __builtin_ctz(m);
            if (f5_is_esc(d, p, lim))
                return p;
            m &= m - 1;
        }
    }
#endif
    for (; k + 1 < lim; k++)
        if (d[k] == '\\' && d[k + 1] == 'u' && f5_is_esc(d, k, lim))
            return k;
    return -1;
}

static PyObject *first_uesc(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer view;
    Py_ssize_t start, lim;
    if (!PyArg_ParseTuple(args, "y*nn", &view, &start, &lim))
        return NULL;
    if (start < 0)
        start = 0;
    if (lim > view.len)
        lim = view.len;
    Py_ssize_t r = start < lim ? f5_first_uesc((P)view.buf, start, lim) : -1;
    PyBuffer_Release(&view);
    return PyLong_FromSsize_t(r);
}
/* rows_any(data, start, end, needles, ks, table, starts) -> None | list of offsets
 *   Each needle (bytes, no b"\n") is an image through ``table`` (256 bytes mapping b"\n" onto itself and no other byte
 *   onto it); it is at s in data when table[data[s + j]] == needle[j] for every j.  ks[i] = (k, g): needle i is looked
 *   for by its bytes k and k + g (0 <= g <= 3; its probe: those two bytes and g); the needles of one probe share it,
 *   the probes in the order of their first needle.  The places q of [a, b) are taken in order, at each the probes in
 *   order and each probe's needles in order: the first needle whose probe is at q (table[data[q]] and
 *   table[data[q + g]] its two bytes) and that is wholly at s = q - k inside [a, b) gives the place s
 *   (app/log/query/find_anyrows.rows_any_py is the definition).
 *   starts None: the rows of data[start:end] are searched in order, from ``start``: a place found, it is kept and the
 *   search goes on after the end of its row; the answer: the places kept (one in each row holding a needle).
 *   starts a list (row starts, ascending): each row [s, its end) inside [start, end) is searched; the answer: the starts
 *   of the rows holding a needle.  None: more than F5_PROBES probes, more than F5_NEEDLES needles, a needle with a
 *   newline, or a probe byte with more than 4 bytes the table maps onto it (the caller searches otherwise).  The
 *   probes are looked for 16 places at a time (SSE2). */
#define F5_PROBES 16
#define F5_NEEDLES 512
typedef struct {
    unsigned char v0, v1;            /* the two bytes (images) */
    int g;                           /* the second's offset from the first */
    int n0, n1;                      /* bytes mapping onto each */
    unsigned char b0[4], b1[4];
    int first, count;                /* its needles: ord[first:first + count] */
} F5Probe;

typedef struct {
    P d;
    const unsigned char *tb;
    int np, nn;
    F5Probe pr[F5_PROBES];
    P nd[F5_NEEDLES];
    Py_ssize_t nl[F5_NEEDLES], nk[F5_NEEDLES];
    int probe[F5_NEEDLES], ord[F5_NEEDLES];
} F5Any;

static int f5_at(const F5Any *f, int i, Py_ssize_t q, Py_ssize_t a, Py_ssize_t b) {
    Py_ssize_t s = q - f->nk[i], m = f->nl[i];
    if (s < a || s + m > b)
        return 0;
    const unsigned char *tb = f->tb;
    P d = f->d, n = f->nd[i];
    for (Py_ssize_t j = 0; j < m; j++)
        if (tb[d[s + j]] != n[j])
            return 0;
    return 1;
}

/* the place of a needle of probe p at q (checked: inside [a, b)), else -1 */
static Py_ssize_t f5_probe_at(const F5Any *f, int p, Py_ssize_t q, Py_ssize_t a, Py_ssize_t b) {
    const F5Probe *pr = &f->pr[p];
    if (q + pr->g >= b || f->tb[f->d[q]] != pr->v0 || f->tb[f->d[q + pr->g]] != pr->v1)
        return -1;
    for (int c = 0; c < pr->count; c++) {
        int i = f->ord[pr->first + c];
        if (f5_at(f, i, q, a, b))
            return q - f->nk[i];
    }
    return -1;
}

/* the first place in [a, b) (see rows_any), -1: none */
static Py_ssize_t f5_search(const F5Any *f, Py_ssize_t a, Py_ssize_t b) {
    P d = f->d;
    Py_ssize_t q = a;
#if defined(__SSE2__)
    __m128i c0[F5_PROBES][4], c1[F5_PROBES][4];
    for (int p = 0; p < f->np; p++) {
        const F5Probe *pr = &f->pr[p];
        for (int k = 0; k < 4; k++) {
            c0[p][k] = _mm_set1_epi8((char)pr->b0[k < pr->n0 ? k : 0]);   /* (padded with the first) */
            c1[p][k] = _mm_set1_epi8((char)pr->b1[k < pr->n1 ? k : 0]);
        }
    }
    int wide = 0;                                      /* (a probe byte with more than 2 bytes onto it) */
    for (int p = 0; p < f->np; p++)
        wide |= f->pr[p].n0 > 2 || f->pr[p].n1 > 2;
    for (; q + 19 <= b; q += 16) {
        __m128i x[4];
        for (int j = 0; j < 4; j++)
            x[j] = _mm_loadu_si128((const __m128i *)(d + q + j));
        unsigned ms[F5_PROBES], all = 0;
        if (!wide)
            for (int p = 0; p < f->np; p++) {
                __m128i y = x[f->pr[p].g];
                __m128i e0 = _mm_or_si128(_mm_cmpeq_epi8(x[0], c0[p][0]), _mm_cmpeq_epi8(x[0], c0[p][1]));
                __m128i e1 = _mm_or_si128(_mm_cmpeq_epi8(y, c1[p][0]), _mm_cmpeq_epi8(y, c1[p][1]));
                ms[p] = (unsigned)_mm_movemask_epi8(_mm_and_si128(e0, e1));
                all |= ms[p];
            }
        else
            for (int p = 0; p < f->np; p++) {
                __m128i y = x[f->pr[p].g];
                __m128i e0 = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x[0], c0[p][0]), _mm_cmpeq_epi8(x[0], c0[p][1])),
                                          _mm_or_si128(_mm_cmpeq_epi8(x[0], c0[p][2]), _mm_cmpeq_epi8(x[0], c0[p][3])));
                __m128i e1 = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(y, c1[p][0]), _mm_cmpeq_epi8(y, c1[p][1])),
                                          _mm_or_si128(_mm_cmpeq_epi8(y, c1[p][2]), _mm_cmpeq_epi8(y, c1[p][3])));
                ms[p] = (unsigned)_mm_movemask_epi8(_mm_and_si128(e0, e1));
                all |= ms[p];
            }
        if (!all)
            continue;
        while (all) {
            int bit = __builtin_ctz(all);
            for (int p = 0; p < f->np; p++)
                if (ms[p] >> bit & 1) {
                    Py_ssize_t s = f5_probe_at(f, p, q + bit, a, b);
                    if (s >= 0)
                        return s;
                }
            all &= all - 1;
        }
    }
#endif
    for (; q < b; q++)
        for (int p = 0; p < f->np; p++) {
            Py_ssize_t s = f5_probe_at(f, p, q, a, b);
            if (s >= 0)
                return s;
        }
    return -1;
}

static int f5_append(PyObject *out, Py_ssize_t v) {
    PyObject *o = PyLong_FromSsize_t(v);
    int r = o == NULL ? -1 : PyList_Append(out, o);
    Py_XDECREF(o);
    return r;
}

/* the bytes the table maps onto v (at most 4) into out: their count, -1 more than 4 */
static int f5_pre(const unsigned char *tb, unsigned char v, unsigned char *out) {
    int n = 0;
    for (int c = 0; c < 256; c++)
        if (tb[c] == v) {
            if (n >= 4)
                return -1;
            out[n++] = (unsigned char)c;
        }
    if (n == 0)
        out[n++] = '\n';                               /* (no byte maps onto it: never found; b"\n" matches nothing) */
    return n;
}

/* f's needles and probes from ``needles`` and ``ks``: 0, 1 not this way (rows_any's None), -1 an error (raised) */
static int f5_setup(F5Any *f, PyObject *needles, PyObject *ks) {
    Py_ssize_t nn = PyTuple_GET_SIZE(needles);
    if (nn > F5_NEEDLES)
        return 1;
    f->nn = (int)nn;
    f->np = 0;
    for (Py_ssize_t i = 0; i < nn; i++) {
        PyObject *n = PyTuple_GET_ITEM(needles, i), *kg = PyTuple_GET_ITEM(ks, i);
        Py_ssize_t k = -1, g = -1;
        if (!PyBytes_Check(n) || !PyTuple_Check(kg) || PyTuple_GET_SIZE(kg) != 2) {
            PyErr_SetString(PyExc_TypeError, "rows_any: needles are bytes, ks (k, g) pairs");
            return -1;
        }
        k = PyLong_AsSsize_t(PyTuple_GET_ITEM(kg, 0));
        g = PyLong_AsSsize_t(PyTuple_GET_ITEM(kg, 1));
        if (PyErr_Occurred())
            return -1;
        f->nd[i] = (P)PyBytes_AS_STRING(n);
        f->nl[i] = PyBytes_GET_SIZE(n);
        f->nk[i] = k;
        if (k < 0 || g < 0 || g > 3 || k + g >= f->nl[i]) {
            PyErr_SetString(PyExc_ValueError, "rows_any: 0 <= k, 0 <= g <= 3, k + g < the needle's length");
            return -1;
        }
        if (memchr(f->nd[i], '\n', (size_t)f->nl[i]) != NULL)
            return 1;
        unsigned char v0 = f->nd[i][k], v1 = f->nd[i][k + g];
        int p = 0;
        while (p < f->np && !(f->pr[p].v0 == v0 && f->pr[p].v1 == v1 && f->pr[p].g == g))
            p++;
        f->probe[i] = p;
        if (p < f->np)
            continue;
        if (f->np >= F5_PROBES)
            return 1;
        F5Probe *pr = &f->pr[f->np++];
        pr->v0 = v0;
        pr->v1 = v1;
        pr->g = (int)g;
        if ((pr->n0 = f5_pre(f->tb, v0, pr->b0)) < 0 || (pr->n1 = f5_pre(f->tb, v1, pr->b1)) < 0)
            return 1;
    }
    int at = 0;                                        /* each probe's needles, in order */
    for (int p = 0; p < f->np; p++) {
        f->pr[p].first = at;
        for (int i = 0; i < f->nn; i++)
            if (f->probe[i] == p)
                f->ord[at++] = i;
        f->pr[p].count = at - f->pr[p].first;
    }
    return 0;
}

static PyObject *rows_any(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer view;
    PyObject *needles, *ks, *starts;
    const unsigned char *tb;
    Py_ssize_t start, end, ntb;
    static F5Any f;
    if (!PyArg_ParseTuple(args, "y*nnO!O!y#O", &view, &start, &end, &PyTuple_Type, &needles, &PyTuple_Type, &ks, &tb,
                          &ntb, &starts))
        return NULL;
    PyObject *out = NULL;
    if (ntb != 256 || PyTuple_GET_SIZE(ks) != PyTuple_GET_SIZE(needles) || (starts != Py_None && !PyList_Check(starts))) {
        PyErr_SetString(PyExc_ValueError, "rows_any: needles, as many ks, a 256-byte table, starts None or a list");
        goto fail;
    }
    f.d = (P)view.buf;
    f.tb = tb;
    int r = f5_setup(&f, needles, ks);
    if (r < 0)
        goto fail;
    if (r > 0) {
        PyBuffer_Release(&view);
        Py_RETURN_NONE;
    }
    if (start < 0)
        start = 0;
    if (end > view.len)
        end = view.len;
    if ((out = PyList_New(0)) == NULL)
        goto fail;
    if (starts == Py_None) {
        Py_ssize_t pos = start;
        while (pos < end) {
            Py_ssize_t s = f5_search(&f, pos, end);
            if (s < 0)
                break;
            if (f5_append(out, s) < 0)
                goto fail;
            P nl = memchr(f.d + s, '\n', (size_t)(end - s));
            if (nl == NULL)
                break;
            pos = nl - f.d + 1;
        }
    } else {
        for (Py_ssize_t j = 0; j < PyList_GET_SIZE(starts); j++) {
            Py_ssize_t s = PyLong_AsSsize_t(PyList_GET_ITEM(starts, j));
            if (s == -1 && PyErr_Occurred())
                goto fail;
            if (s < start || s >= end)
                continue;
            P nl = memchr(f.d + s, '\n', (size_t)(end - s));
            Py_ssize_t e = nl == NULL ? end : nl - f.d;
            if (f5_search(&f, s, e) >= 0 && f5_append(out, s) < 0)
                goto fail;
        }
    }
    PyBuffer_Release(&view);
    return out;
fail:
    Py_XDECREF(out);
    PyBuffer_Release(&view);
    return NULL;
}
/* ---- end find5 ---- */

/* ---- section exp6 ---- (issue 29 item 3: the Markdown and HTML exports' hot loops; owner: the exp6 helper)
 * ex6_row_type(raw) -> str | None: app/store/export_rows.py row_type(raw) read from the row's bytes, where they
 *   tell: a row written {"type":"T" with T free of backslashes and valid UTF-8, and no other key of its top-level
 *   object spelled "type" or written with a backslash (so no escape can spell "type" either).  None: the caller
 *   takes row_type's own way.  (A row that is not valid JSON may get what its first bytes say, as row_type's own
 *   quick read gives it: such a row is a bad row, which gives no event either way.)
 * ex6_escape(s, md) -> str: html.escape(s) (md 0); md 1: html.escape(s, quote=False) with a backslash put before
 *   each '[' and ']' (export_transcript._md_text).  One pass over s.
 * ex6_redact_walk(o, text, maxdepth) -> object | NotImplemented: redact_walk(o, text, maxdepth) (the export
 *   section's; the same answer and the same calls of text in the same order), each string's gates computed once
 *   (the first walk keeps them, with the size of each container's subtree and whether a gate passes in it), the
 *   second walk entering only containers where one passes, copying only those where a string changed. */

static PyObject *ex6_row_type(PyObject *self, PyObject *arg) {
    (void)self;
    if (!PyBytes_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "ex6_row_type: bytes are needed");
        return NULL;
    }
    P d = (P)PyBytes_AS_STRING(arg);
    Py_ssize_t n = PyBytes_GET_SIZE(arg);
    if (n < 9 || memcmp(d, "{\"type\":\"", 9) != 0)
        Py_RETURN_NONE;
    P q = memchr(d + 9, '"', (size_t)(n - 9));
    if (q == NULL || memchr(d + 9, '\\', (size_t)(q - d - 9)) != NULL)
        Py_RETURN_NONE;
    Py_ssize_t te = q - d, i = te + 1;
    int depth = 1, key = 0;
    while (i < n) {
        unsigned char c = d[i];
        if (c == '"') {
            Py_ssize_t s = ++i;
            int bs = 0;
            while (i < n && d[i] != '"') {
                if (d[i] == '\\') {
                    bs = 1;
                    i += 2;
                } else {
                    i++;
                }
            }
            if (key && depth == 1 && (bs || (i - s == 4 && memcmp(d + s, "type", 4) == 0)))
                Py_RETURN_NONE;
            key = 0;
            i++;
            continue;
        }
        if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            if (--depth == 0)
                break;
        } else if (c == ',' && depth == 1) {
            key = 1;
        }
        i++;
    }
    PyObject *t = PyUnicode_DecodeUTF8((const char *)d + 9, te - 9, NULL);
    if (t == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_UnicodeDecodeError))
            return NULL;
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    return t;
}

/* the extra characters the escape of c takes (0: c stays as it is): ex6_esc[md][c] for c < 128 */
static unsigned char ex6_esc[2][128];
static int ex6_esc_ready;

static void ex6_esc_init(void) {
    if (ex6_esc_ready)
        return;
    for (int md = 0; md < 2; md++) {
        ex6_esc[md]['&'] = 4;
        ex6_esc[md]['<'] = 3;
        ex6_esc[md]['>'] = 3;
    }
    ex6_esc[0]['"'] = 5;
    ex6_esc[0]['\''] = 5;
    ex6_esc[1]['['] = 1;
    ex6_esc[1][']'] = 1;
    ex6_esc_ready = 1;
}

#define EX6_EXTRA(c) ((c) < 128 ? (Py_ssize_t)tab[(c)] : 0)

/* the escaped text of n characters of type T at src into dst (of type T), extra characters known */
#define EX6_WRITE(T)                                                                                          \
    do {                                                                                                      \
        const T *src = (const T *)data;                                                                       \
        T *dst = (T *)od;                                                                                     \
        Py_ssize_t j = 0, run = 0;                                                                            \
        for (Py_ssize_t i = 0; i < n; i++) {                                                                  \
            T c = src[i];                                                                                     \
            if (c >= 128 || !tab[c])                                                                          \
                continue;                                                                                     \
            if (i > run) {                                                                                    \
                memcpy(dst + j, src + run, (size_t)(i - run) * sizeof(T));                                     \
                j += i - run;                                                                                 \
            }                                                                                                 \
            run = i + 1;                                                                                      \
            const char *rep = c == '&' ? "&amp;" : c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '"' ? "&quot;"  \
                              : c == '\'' ? "&#x27;" : c == '[' ? "\\[" : "\\]";                              \
            for (; *rep; rep++)                                                                               \
                dst[j++] = (T)(unsigned char)*rep;                                                            \
        }                                                                                                     \
        if (n > run)                                                                                          \
            memcpy(dst + j, src + run, (size_t)(n - run) * sizeof(T));                                         \
    } while (0)

static PyObject *ex6_escape(PyObject *self, PyObject *args) {
    PyObject *s;
    int md;
    (void)self;
    if (!PyArg_ParseTuple(args, "Ui", &s, &md))
        return NULL;
    ex6_esc_init();
    const unsigned char *tab = ex6_esc[md ? 1 : 0];
    Py_ssize_t n = PyUnicode_GET_LENGTH(s), extra = 0;
    int kind = PyUnicode_KIND(s);
    const void *data = PyUnicode_DATA(s);
    if (kind == PyUnicode_1BYTE_KIND) {
        const Py_UCS1 *b = data;
        for (Py_ssize_t i = 0; i < n; i++)
            extra += EX6_EXTRA(b[i]);
    } else if (kind == PyUnicode_2BYTE_KIND) {
        const Py_UCS2 *b = data;
        for (Py_ssize_t i = 0; i < n; i++)
            extra += EX6_EXTRA(b[i]);
    } else {
        const Py_UCS4 *b = data;
        for (Py_ssize_t i = 0; i < n; i++)
            extra += EX6_EXTRA(b[i]);
    }
    if (extra == 0) {
        if (PyUnicode_CheckExact(s)) {
            Py_INCREF(s);
            return s;
        }
        return PyUnicode_FromKindAndData(kind, data, n);
    }
    PyObject *out = PyUnicode_New(n + extra, PyUnicode_MAX_CHAR_VALUE(s));
    if (out == NULL)
        return NULL;
    if (PyUnicode_KIND(out) != kind) {          /* (never for a str of the canonical kind) */
        Py_DECREF(out);
        PyErr_SetString(PyExc_SystemError, "ex6_escape: a str not of its canonical kind");
        return NULL;
    }
    void *od = PyUnicode_DATA(out);
    if (kind == PyUnicode_1BYTE_KIND)
        EX6_WRITE(Py_UCS1);
    else if (kind == PyUnicode_2BYTE_KIND)
        EX6_WRITE(Py_UCS2);
    else
        EX6_WRITE(Py_UCS4);
    return out;
}

typedef struct {
    Py_ssize_t *a, n, cap;
    Py_ssize_t small[256];
} ex6_ents;

static int ex6_push(ex6_ents *e, Py_ssize_t v) {
    if (e->n == e->cap) {
        Py_ssize_t cap = e->cap * 2;
        Py_ssize_t *a = e->a == e->small ? PyMem_Malloc((size_t)cap * sizeof(Py_ssize_t))
                                         : PyMem_Realloc(e->a, (size_t)cap * sizeof(Py_ssize_t));
        if (a == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        if (e->a == e->small)
            memcpy(a, e->small, sizeof(e->small));
        e->a = a;
        e->cap = cap;
    }
    e->a[e->n++] = v;
    return 0;
}

/* the first walk (rd_scan's answer: 1, 0, -1 an error, -2 too deep or a subclass), each string's gates and each
 * container's (subtree entries << 1 | a gate passes in it) kept in e in the walk's order */
static int ex6_scan(PyObject *o, int depth, int maxdepth, ex6_ents *e) {
    int hit = 0, r;
    Py_ssize_t slot;
    if (PyUnicode_CheckExact(o)) {
        int g = rd_gate(o);
        if (g < 0 || ex6_push(e, g) < 0)
            return -1;
        return g != 0;
    }
    if (PyDict_CheckExact(o)) {
        if (depth > maxdepth)
            return -2;
        slot = e->n;
        if (ex6_push(e, 0) < 0)
            return -1;
        Py_ssize_t pos = 0;
        PyObject *k, *v;
        while (PyDict_Next(o, &pos, &k, &v)) {
            if ((r = ex6_scan(v, depth + 1, maxdepth, e)) < 0)
                return r;
            hit |= r;
        }
        e->a[slot] = (e->n - slot - 1) << 1 | hit;
        return hit;
    }
    if (PyList_CheckExact(o)) {
        if (depth > maxdepth)
            return -2;
        slot = e->n;
        if (ex6_push(e, 0) < 0)
            return -1;
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(o); i++) {
            if ((r = ex6_scan(PyList_GET_ITEM(o, i), depth + 1, maxdepth, e)) < 0)
                return r;
            hit |= r;
        }
        e->a[slot] = (e->n - slot - 1) << 1 | hit;
        return hit;
    }
    return PyUnicode_Check(o) || PyList_Check(o) || PyDict_Check(o) ? -2 : 0;
}

/* the second walk: o redacted (a new reference; o itself when nothing in it changed), NULL on an error */
static PyObject *ex6_build(PyObject *o, PyObject *text, ex6_ents *e, Py_ssize_t *k) {
    if (PyUnicode_CheckExact(o)) {
        Py_ssize_t g = *k < e->n ? e->a[(*k)++] : -1;
        if (g < 0) {
            PyErr_SetString(PyExc_RuntimeError, "ex6_redact_walk: the value changed while it was walked");
            return NULL;
        }
        if (g == 0) {
            Py_INCREF(o);
            return o;
        }
        return PyObject_CallFunction(text, "Oi", o, (int)g);
    }
    int isd = PyDict_CheckExact(o);
    if (!isd && !PyList_CheckExact(o)) {
        Py_INCREF(o);
        return o;
    }
    if (*k >= e->n) {
        PyErr_SetString(PyExc_RuntimeError, "ex6_redact_walk: the value changed while it was walked");
        return NULL;
    }
    Py_ssize_t v = e->a[(*k)++];
    if (!(v & 1)) {
        *k += v >> 1;
        Py_INCREF(o);
        return o;
    }
    PyObject *out = NULL;
    if (isd) {
        Py_ssize_t pos = 0;
        PyObject *key, *val;
        while (PyDict_Next(o, &pos, &key, &val)) {
            Py_INCREF(key);
            Py_INCREF(val);
            PyObject *w = ex6_build(val, text, e, k);
            int bad = w == NULL;
            if (!bad && w != val && out == NULL)
                bad = (out = PyDict_Copy(o)) == NULL;
            if (!bad && out != NULL && w != val)
                bad = PyDict_SetItem(out, key, w) < 0;
            Py_DECREF(key);
            Py_DECREF(val);
            Py_XDECREF(w);
            if (bad) {
                Py_XDECREF(out);
                return NULL;
            }
        }
    } else {
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(o); i++) {
            PyObject *val = PyList_GET_ITEM(o, i);
            Py_INCREF(val);
            PyObject *w = ex6_build(val, text, e, k);
            if (w == NULL) {
                Py_DECREF(val);
                Py_XDECREF(out);
                return NULL;
            }
            if (w != val && out == NULL && (out = PyList_GetSlice(o, 0, PyList_GET_SIZE(o))) == NULL) {
                Py_DECREF(val);
                Py_DECREF(w);
                return NULL;
            }
            Py_DECREF(val);
            if (out != NULL && i < PyList_GET_SIZE(out))
                PyList_SetItem(out, i, w);          /* (steals w) */
            else
                Py_DECREF(w);
        }
    }
    if (out == NULL) {
        Py_INCREF(o);
        return o;
    }
    return out;
}

static PyObject *ex6_redact_walk(PyObject *self, PyObject *args) {
    PyObject *o, *text, *res = NULL;
    int maxdepth;
    (void)self;
    rd_init();
    if (!PyArg_ParseTuple(args, "OOi", &o, &text, &maxdepth))
        return NULL;
    ex6_ents e;
    e.a = e.small;
    e.n = 0;
    e.cap = (Py_ssize_t)(sizeof(e.small) / sizeof(*e.small));
    int r = ex6_scan(o, 0, maxdepth, &e);
    if (r == -2) {
        res = Py_NotImplemented;
        Py_INCREF(res);
    } else if (r == 0) {
        res = o;
        Py_INCREF(res);
    } else if (r == 1) {
        Py_ssize_t k = 0;
        res = ex6_build(o, text, &e, &k);
    }
    if (e.a != e.small)
        PyMem_Free(e.a);
    return res;
}
/* ---- end exp6 ---- */
/* ---- section tl5: a turn/end whose reason holds more than its kind (issue 31; owner: the tl5 helper) ----
 * t5_turn_end (tl_turn's turn/end, the tlc2 section): the writer's layout up to the reason's kind (a plain string),
 * as before, and then any other members of the reason, as Builder's _on_turn_end reads them (its definition:
 * tests/test_timeline_tl5.py holds the two equal): an "error" member null, a plain string or an object whose "code"
 * is null or a plain string (its other members any JSON); any other member any JSON value.  *err: 0 no error in the
 * span (no error member, or a falsy one: null, "", {}), 1 an error, the bytes [*ea, *eb), 2 an error None (an object
 * with no code, or a null code).  A repeated kind, error or code, a key written with an escape, another kind of
 * error value, or a value nested deeper than max_depth: 0 (the turn goes row by row). */
static Py_ssize_t t5_error(P d, Py_ssize_t v, Py_ssize_t n, int m, int *err, Py_ssize_t *ea, Py_ssize_t *eb) {
    Py_ssize_t e = LIT(d, v, n, "null");
    if (e >= 0)
        return e;                                   /* (falsy: no error) */
    if (v < 0 || v >= n)
        return -1;
    if (d[v] == '"') {
        int esc = 0;
        e = tl_string(d, v, n, &esc);
        if (e < 0 || esc)
            return -1;
        if (e - v > 2) {                            /* ("" is falsy) */
            *err = 1;
            *ea = v + 1;
            *eb = e - 1;
        }
        return e;
    }
    if (d[v] != '{' || (m & (TL_STRICT - 1)) < 4)
        return -1;
    Py_ssize_t i = tl_ws(d, v + 1, n), k, ke;
    if (i < n && d[i] == '}')
        return i + 1;                               /* ({} is falsy) */
    int g_code = 0;
    *err = 2;
    for (;;) {
        Py_ssize_t w = t2_key(d, i, n, &k, &ke), we;
        if (w < 0)
            return -1;
        if (tl_key_is(d, k, ke, "code")) {
            Py_ssize_t a, b;
            we = t2_plain_or_null(d, w, n, &a, &b);
            if (g_code++ || we < 0)
                return -1;
            *err = a >= 0 ? 1 : 2;
            *ea = a;
            *eb = b;
        } else
            we = tl_value(d, w, n, 4, m);
        if (we < 0)
            return -1;
        i = we;
        int more = t2_next(d, &i, n);
        if (more < 0)
            return -1;
        if (!more)
            return i;
    }
}

static int t5_turn_end(P d, Py_ssize_t q, Py_ssize_t nl, int max_depth, long long *seq, long long *time,
                       long long *turn, Py_ssize_t *a, Py_ssize_t *b, int *err, Py_ssize_t *ea, Py_ssize_t *eb) {
    int esc = 0, m = max_depth | TL_STRICT, g_err = 0;
    Py_ssize_t k, ke;
    *err = 0;
    *ea = *eb = -1;
    Py_ssize_t i = tl_int(d, LIT(d, q, nl, "\",\"seq\":"), nl, seq);
    i = tl_int(d, LIT(d, i, nl, ",\"time\":"), nl, time);
    i = tl_int(d, LIT(d, i, nl, ",\"data\":{\"turn\":"), nl, turn);
    i = LIT(d, i, nl, ",\"reason\":{\"kind\":");
    Py_ssize_t e = tl_string(d, i, nl, &esc);
    if (e < 0 || esc || *seq < 0)
        return 0;
    *a = i + 1;
    *b = e - 1;
    i = e;
    for (;;) {
        int more = t2_next(d, &i, nl);
        if (more < 0)
            return 0;
        if (!more)
            break;
        Py_ssize_t v = t2_key(d, i, nl, &k, &ke), ve;
        if (v < 0 || tl_key_is(d, k, ke, "kind"))
            return 0;
        if (tl_key_is(d, k, ke, "error")) {
            if (g_err++)
                return 0;
            ve = t5_error(d, v, nl, m, err, ea, eb);
        } else
            ve = tl_value(d, v, nl, 3, m);
        if (ve < 0)
            return 0;
        i = ve;
    }
    return LIT(d, i, nl, "}}") == nl;
}
/* ---- end tl5 ---- */
/* ---- section find6: whole-log find's turns, more row types and plain lists in C (issue 29; owner: the find6 helper) ----
 * last_turn, more_text, row_starts and f6_array (f2_skim's plain lists) below; each says what it is held to. */
static const char F6_TS[] = "\"turn/start\"";

/* (0|[1-9][0-9]{0,15}) at d[*i] (before e): its value, *i after it; -1: none */
static long long f6_int(P d, Py_ssize_t *i, Py_ssize_t e) {
    Py_ssize_t k = *i;
    if (k >= e || d[k] < '0' || d[k] > '9')
        return -1;
    if (d[k] == '0') {
        *i = k + 1;
        return 0;
    }
    long long v = 0;
    Py_ssize_t a = k;
    while (k < e && d[k] >= '0' && d[k] <= '9' && k - a < 16)
        v = v * 10 + (d[k++] - '0');
    *i = k;
    return v;
}

/* the turn of the row d[s:e] matched whole by PLAIN_TURN with a seq <= MAX_SAFE_INT, else -1 */
static long long f6_plain_turn(P d, Py_ssize_t s, Py_ssize_t e) {
#define F6_LIT(str) do {                                                    \
        Py_ssize_t L = (Py_ssize_t)sizeof(str) - 1;                         \
        if (e - i < L || memcmp(d + i, str, (size_t)L) != 0)                \
            return -1;                                                      \
        i += L;                                                             \
    } while (0)
    Py_ssize_t i = s;
    F6_LIT("{\"type\":\"turn/start\",\"seq\":");
    long long seq = f6_int(d, &i, e);
    if (seq < 0 || seq > 9007199254740991LL)
        return -1;
    F6_LIT(",\"time\":");
    if (f6_int(d, &i, e) < 0)
        return -1;
    F6_LIT(",\"data\":{\"turn\":");
    long long turn = f6_int(d, &i, e);
    if (turn < 0)
        return -1;
    F6_LIT("}}");
    return i == e ? turn : -1;
#undef F6_LIT
}

/* more_text(raw) -> None | (seq, turn, [(kind, text)])
 *   find_hits reads more types when it is given them (in ``types``; the error kind as ``kinds[2]``), which it left
 *   to the exact way before (~13,000 rows of the 1 GB log's 188,541 hits of "the", 0.01-0.1 ms each there):
 *   - compaction/summary: one field of the assistant kind, content_text of its payload's ``summary`` (when the key is
 *     there) else of its ``content``, read by ft_content as a user message's content is;
 *   - assistant/attempt: an error field for each record of its ``stream`` (a list) that is an object of type
 *     "chunk" whose ``chunk`` is an object of type "finish" whose ``reason`` is an object of kind "error":
 *     textview.error_text of the reason's ``failure`` (when it is a non-empty string or object) else of its
 *     ``error``: a string itself, null or absent "", an object "CODE: message" (a non-empty string code) or its
 *     message (no code: null, absent or ""), the message a string, null or absent, not both absent;
 *   - tool/result with an error (not null): its output (as f2_row reads one without) and an error field, the
 *     error_text of its ``error`` as above;
 *   - the types that show no text (F6_QUIET): no field;
 *   plained (control characters as spaces) as every field find_hits matches.  Any other shape (an escaped type,
 *   record type, kind or key, a key twice, a number, list or boolean where a text is made, an error object with
 *   neither code nor message) leaves the row to the caller.  more_text gives the fields of one row as find_hits
 *   reads them (the row read as f2_row reads it): find_c2.find_hits_py, the definition, reads these rows through
 *   it, and app/log/query/find_more.more_text_py is its own definition (tests/test_find_more.py). */
static FtBuf F6_BUF;

/* a field made in F6_BUF: matched (f2_field) or, for more_text, appended to F6.out; 0, 1 the caller's row */
static int f6_field(int kind) {
    if (F6.out != NULL) {
        PyObject *x = ft_pystr(&F6_BUF), *k = x ? PyLong_FromLong(kind) : NULL, *t = k ? PyTuple_Pack(2, k, x) : NULL;
        int bad = t == NULL || PyList_Append(F6.out, t) < 0;
        Py_XDECREF(x);
        Py_XDECREF(k);
        Py_XDECREF(t);
        return bad ? -1 : 0;
    }
    return f2_field((P)(F6_BUF.p ? F6_BUF.p : ""), F6_BUF.len, kind, -1, -1, 0);
}

/* a text made of the optional string token v (ft_strv's s) added to F6_BUF, plained */
static int f6_put(P d, const FtTape *tp, Py_ssize_t v, int s) {
    return s > 0 ? ft_text(&F6_BUF, d, tp->t[v].a, tp->t[v].b, 1) : 0;
}

/* error_text of the token e (-1 absent) into F6_BUF: 0, 1 another shape (the caller's), -1 out of memory */
static int f6_error_text(P d, const FtTape *tp, Py_ssize_t e) {
    const FtTok *t = tp->t;
    int s = ft_strv(tp, e);
    if (s >= 0)                                        /* a string, null or absent (value_text: itself, "") */
        return f6_put(d, tp, e, s) < 0 ? -1 : 0;
    if (t[e].kind != '{' || ft_obj(d, tp, e) < 0)
        return 1;
    Py_ssize_t cv = ft_get(d, tp, e, "code"), mv = ft_get(d, tp, e, "message");
    int cs = ft_strv(tp, cv), ms = ft_strv(tp, mv);
    if (cs < 0 || ms < 0 || (cs == 0 && ms == 0))    /* (no code and no message: its JSON) */
        return 1;
    if (cs > 0 && t[cv].b > t[cv].a) {                 /* a code that is not "": "CODE: message" */
        if (f6_put(d, tp, cv, cs) < 0 || ft_put(&F6_BUF, ": ", 2) < 0)
            return -1;
    }
    return f6_put(d, tp, mv, ms) < 0 ? -1 : 0;
}

/* the error fields of an assistant/attempt's stream (token sv): 0, 1 the caller's, -1 out of memory */
static int f6_attempt(P d, const FtTape *tp, Py_ssize_t sv) {
    const FtTok *t = tp->t;
    if (sv < 0 || t[sv].kind != '[')
        return 0;                                      /* (no list: no record, no field) */
    for (Py_ssize_t c = sv + 1; c < t[sv].next; c = t[c].next) {
        if (t[c].kind != '{')
            continue;
        if (ft_obj(d, tp, c) < 0)
            return 1;
        Py_ssize_t rt = ft_get(d, tp, c, "type");
        if (rt < 0 || t[rt].kind != '"')
            continue;
        if (t[rt].esc)
            return 1;
        if (!ft_is(d, tp, rt, "chunk"))
            continue;                                  /* (a run of deltas: never a finish) */
        Py_ssize_t ch = ft_get(d, tp, c, "chunk");
        if (ch < 0 || t[ch].kind != '{')
            continue;
        if (ft_obj(d, tp, ch) < 0)
            return 1;
        Py_ssize_t ct = ft_get(d, tp, ch, "type");
        if (ct < 0 || t[ct].kind != '"')
            continue;
        if (t[ct].esc)
            return 1;
        if (!ft_is(d, tp, ct, "finish"))
            continue;
        Py_ssize_t r = ft_get(d, tp, ch, "reason");
        if (r < 0 || t[r].kind != '{')
            continue;
        if (ft_obj(d, tp, r) < 0)
            return 1;
        Py_ssize_t kv = ft_get(d, tp, r, "kind");
        if (kv < 0 || t[kv].kind != '"')
            continue;
        if (t[kv].esc)
            return 1;
        if (!ft_is(d, tp, kv, "error"))
            continue;
        Py_ssize_t fv = ft_get(d, tp, r, "failure"), e = ft_get(d, tp, r, "error");
        if (fv >= 0 && t[fv].kind != 'n') {            /* (failure or error: a falsy failure gives way) */
            if (t[fv].kind == '"')
                e = t[fv].b > t[fv].a ? fv : e;
            else if (t[fv].kind == '{')
                e = t[fv].next > fv + 1 ? fv : e;
            else
                return 1;
        }
        F6_BUF.len = 0;
        int x = f6_error_text(d, tp, e);
        if (x != 0)
            return x;
        if ((x = f6_field(6)) != 0)
            return x;
    }
    return 0;
}

/* the types whose rows show no text (textview.NO_PAYLOAD_TYPES): a row of one of them, read whole here (its one type
 * key unescaped), has no hit, as find_fast.quiet_type or the exact decode finds */
static const char *const F6_QUIET[] = {"turn/start", "step/start", "step/end", "request/header", "request/context",
                                       "session/end-seed", "llm/retry-started", "steering/message"};

/* f2_row's rows of the types find6 reads (type token tv, payload object dv): 0 read, 1 the caller's, -1 out of
 * memory; 2 another type (more_text: 1) */
static int f6_more(P d, const FtTape *tp, Py_ssize_t tv, Py_ssize_t dv) {
    const FtTok *t = tp->t;
    for (size_t k = 0; k < sizeof F6_QUIET / sizeof F6_QUIET[0]; k++)
        if (ft_is(d, tp, tv, F6_QUIET[k]))
            return 0;
    if (ft_is(d, tp, tv, "tool/result")) {             /* (one with an error: its output, then the error) */
        Py_ssize_t ev = ft_get(d, tp, dv, "error"), msg = ft_get(d, tp, dv, "message");
        if (ev < 0 || t[ev].kind == 'n')
            return F6.out != NULL ? 1 : 2;             /* (f2_row's own way) */
        if ((!F6.errors && F6.out == NULL) || ft_obj(d, tp, msg) < 0 || ft_answered(d, tp, msg) == -2)
            return 1;
        int parts = 0, x;
        F6_BUF.len = 0;
        if (ft_content(&F6_BUF, d, tp, ft_get(d, tp, msg, "content"), 2, &parts) < 0)
            return 1;
        if (parts && (x = f6_field(5)) != 0)
            return x;
        F6_BUF.len = 0;
        if ((x = f6_error_text(d, tp, ev)) != 0)
            return x;
        return f6_field(6);
    }
    if (ft_is(d, tp, tv, "compaction/summary")) {
        Py_ssize_t v = ft_get(d, tp, dv, "summary");
        int parts = 0;
        F6_BUF.len = 0;
        if (ft_content(&F6_BUF, d, tp, v >= 0 ? v : ft_get(d, tp, dv, "content"), 0, &parts) < 0)
            return 1;
        return parts ? f6_field(2) : 0;
    }
    if (ft_is(d, tp, tv, "assistant/attempt")) {
        if (!F6.errors && F6.out == NULL)
            return 1;
        return f6_attempt(d, tp, ft_get(d, tp, dv, "stream"));
    }
    return F6.out != NULL ? 1 : 2;
}

static PyObject *more_text(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer view;
    if (!PyArg_ParseTuple(args, "y*", &view))
        return NULL;
    P d = (P)view.buf;
    Py_ssize_t n = view.len;
    PyObject *res = NULL, *out = NULL;
    long long seq = 0, turn = 0;
    int named = 0, x = 1;
    if (FT_SPECIAL == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "more_text: text_setup first");
        goto done;
    }
    if ((out = PyList_New(0)) == NULL)
        goto done;
    if (n >= 10 && memcmp(d, "{\"type\":\"", 9) == 0) {
        P q = memchr(d + 9, '"', (size_t)(n - 9));
        Py_ssize_t tl = q == NULL ? 0 : q - (d + 9);
        if (q != NULL) {                               /* (f6_more says 1 for a type it does not read) */
            F6.out = out;
            x = f2_row(d, n, tl, 0, &seq, &turn, &named);
            F6.out = NULL;
        }
    }
    if (x < 0) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        goto done;
    }
    if (x != 0) {
        res = Py_None;
        Py_INCREF(res);
        goto done;
    }
    res = named ? Py_BuildValue("(LLO)", seq, turn, out) : Py_BuildValue("(LOO)", seq, Py_None, out);
done:
    Py_XDECREF(out);
    PyBuffer_Release(&view);
    return res;
}
/* f6_array(d, n, i): f2_skim of a list (d[*i] == '[', its items within FT_DEPTH) written as dsh writes an embedded
 * stream's runs ("texts": short strings, "dt": small integers): no white space, each item a string or an integer
 * written -?[1-9][0-9]* (at most 300 digits) or 0, followed by ',' or ']'.  A string of printable ASCII bytes (no quote,
 * no backslash) is passed 16 bytes a step, inline (most are a few bytes: no call); any other string is
 * checked by ft_str from its start.  1: the list is accepted (*i after it); -1: a string ft_str refuses (f2_skim
 * refuses it there too, the items before it being the same); 0: another shape (white space, another item, a comma
 * before ']'...): *i unchanged, f2_skim reads the list its own way.  It accepts only what f2_skim accepts
 * (tests/test_find_c2.py's stream edits, tests/test_find_more.py's lists). */
static const unsigned char F6_PLAIN[256] = {[0x20 ... 0x21] = 1, [0x23 ... 0x5B] = 1, [0x5D ... 0x7E] = 1};

static int f6_array(P d, Py_ssize_t n, Py_ssize_t *i) {
    Py_ssize_t k = *i + 1;
    if (k < n && d[k] == ']') {
        *i = k + 1;
        return 1;
    }
    for (;;) {
        if (k >= n)
            return 0;
        unsigned char c = d[k];
        if (c == '"') {
            Py_ssize_t j = k + 1;
#if defined(__SSE2__)
            while (j + 16 <= n) {                      /* (the string's first stop byte: ft_span's, inline) */
                __m128i x = _mm_loadu_si128((const __m128i *)(d + j));
                __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('"')),
                                                      _mm_cmpeq_epi8(x, _mm_set1_epi8('\\'))),
                                         _mm_or_si128(_mm_cmplt_epi8(x, _mm_set1_epi8(0x20)),
                                                      _mm_cmpeq_epi8(x, _mm_set1_epi8(0x7F))));
                unsigned msk = (unsigned)_mm_movemask_epi8(m);
                if (msk) {
                    j += __builtin_ctz(msk);
                    goto stop;
                }
                j += 16;
            }
#endif
            while (j < n && F6_PLAIN[d[j]])
                j++;
            if (j >= n)
                return 0;
#if defined(__SSE2__)
        stop:
#endif
            if (d[j] == '"')
                k = j + 1;
            else {
                Py_ssize_t a, b, p = k;
                int esc;
                if (ft_str(d, n, &p, &a, &b, &esc) < 0)
                    return -1;
                k = p;
            }
        } else if ((c >= '1' && c <= '9') || (c == '-' && k + 1 < n && d[k + 1] >= '1' && d[k + 1] <= '9')) {
            Py_ssize_t j = k + 1 + (c == '-');
            while (j < n && d[j] >= '0' && d[j] <= '9')
                j++;
            if (j - k - (c == '-') > 300)
                return 0;
            k = j;
        } else if (c == '0')
            k++;
        else
            return 0;
        if (k >= n)
            return 0;
        if (d[k] == ']') {
            *i = k + 1;
            return 1;
        }
        if (d[k] != ',')
            return 0;
        k++;
    }
}
/* row_starts(data, cands, lim) -> list | None
 *   find_rows.row_starts in C: the start of the row holding each candidate place (ascending), once each, the places
 *   at or past lim ending the search; None where a place is negative or lim is past the data (the caller's own way
 *   then).  A quoted query's
 *   prefilter gives a place in most rows of a window ('"tests': ~160 per window), each found by a memrchr and a memchr
 *   here instead of two bytes methods. */
static PyObject *row_starts(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer view;
    PyObject *cands;
    Py_ssize_t lim;
    if (!PyArg_ParseTuple(args, "y*O!n", &view, &PyList_Type, &cands, &lim))
        return NULL;
    P d = (P)view.buf;
    if (lim > view.len) {                              /* (a limit past the data: the caller's own way) */
        PyBuffer_Release(&view);
        Py_RETURN_NONE;
    }
    PyObject *out = PyList_New(0);
    Py_ssize_t last_end = -1;
    for (Py_ssize_t j = 0; out != NULL && j < PyList_GET_SIZE(cands); j++) {
        Py_ssize_t c = PyLong_AsSsize_t(PyList_GET_ITEM(cands, j));
        if (c == -1 && PyErr_Occurred()) {
            Py_CLEAR(out);
            break;
        }
        if (c < 0) {
            Py_CLEAR(out);
            out = Py_None;
            Py_INCREF(out);
            break;
        }
        if (c < last_end)
            continue;
        if (c >= lim)
            break;
        P q = c > 0 ? memrchr(d, '\n', (size_t)c) : NULL;
        P nl = memchr(d + c, '\n', (size_t)(lim - c));
        last_end = nl ? nl - d : lim;
        PyObject *v = PyLong_FromSsize_t(q ? q - d + 1 : 0);
        if (v == NULL || PyList_Append(out, v) < 0)
            Py_CLEAR(out);
        Py_XDECREF(v);
    }
    PyBuffer_Release(&view);
    return out;
}
/* last_turn(data, stop, end) -> None | (start, end, turn)
 *   The row of the last place of b'"turn/start"' wholly inside data[stop:end] (bytes.rfind's), as find_rows.last_turn_in
 *   reads it: its start (after a b"\n", or 0), its end (its b"\n" before ``end``, or ``end``) and its turn where the
 *   row is written the plain way (f6_plain_turn), else None; None: no such place.  Looked for backwards by the '/' and
 *   the 'a' 3 bytes on, 16 places a step: a tracker's ask (find_rows.TurnTracker._last) costs the bytes back to the
 *   last turn/start row, in one call.  app/log/query/find_turns.last_turn_py is the definition; tests/test_find_turns.py
 *   holds them equal at every alignment and the tracker to find_rows.last_turn_in. */
static Py_ssize_t f6_rfind(P d, Py_ssize_t stop, Py_ssize_t end) {
    const Py_ssize_t m = (Py_ssize_t)sizeof(F6_TS) - 1;
    Py_ssize_t s = end - m;                            /* (the last place one may start at) */
#if defined(__SSE2__)
    const __m128i sl = _mm_set1_epi8('/'), a = _mm_set1_epi8('a');
    for (; s - 15 >= stop; s -= 16) {
        Py_ssize_t b = s - 15;
        __m128i x = _mm_loadu_si128((const __m128i *)(d + b + 5)), y = _mm_loadu_si128((const __m128i *)(d + b + 8));
        unsigned msk = (unsigned)_mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(x, sl), _mm_cmpeq_epi8(y, a)));
        while (msk) {
            int hi = 31 - __builtin_clz(msk);
            if (memcmp(d + b + hi, F6_TS, (size_t)m) == 0)
                return b + hi;
            msk &= ~(1u << hi);
        }
    }
#endif
    for (; s >= stop; s--)
        if (d[s + 5] == '/' && memcmp(d + s, F6_TS, (size_t)m) == 0)
            return s;
    return -1;
}

static PyObject *last_turn(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer view;
    Py_ssize_t stop, end;
    if (!PyArg_ParseTuple(args, "y*nn", &view, &stop, &end))
        return NULL;
    P d = (P)view.buf;
    if (end > view.len)
        end = view.len;
    if (stop < 0)
        stop = 0;
    Py_ssize_t o = stop < end ? f6_rfind(d, stop, end) : -1;
    PyObject *res;
    if (o < 0) {
        res = Py_None;
        Py_INCREF(res);
    } else {
        P q = o > 0 ? memrchr(d, '\n', (size_t)o) : NULL;
        Py_ssize_t s = q ? q - d + 1 : 0;
        P nl = memchr(d + o, '\n', (size_t)(end - o));
        Py_ssize_t e = nl ? nl - d : end;
        long long t = f6_plain_turn(d, s, e);
        res = t >= 0 ? Py_BuildValue("(nnL)", s, e, t) : Py_BuildValue("(nnO)", s, e, Py_None);
    }
    PyBuffer_Release(&view);
    return res;
}
/* ---- end find6 ---- */
/* ---- section pass4: the read-path check's scan of a segment in one C call (issue 29; owner: the pass4 helper) ----
 * seg_types(data, plugin) -> (types, found): types, the set of bytes that app/log/index/verdict.py row_types gives
 *   (every row type a row of data starts with: {"type": then at most one blank, then a quoted run of bytes other than
 *   a quote, matched at the start of data and after each newline, matches not overlapping: a type holding a newline
 *   hides the rows it spans, as the regular expression's search does); found, b'"plugin"' in data when plugin is
 *   true (else False).  The interpreted definition: verdict.seg_types_py; tests/test_verdict_scan.py holds the two
 *   equal.  The bytes are read with the GIL let go. */
#define P4_KNOWN 64

/* the end (past the closing quote) of {"type": ?"[^"]*" at d[i:], its type in d[*a:*b]; -1 when none there */
static Py_ssize_t p4_type_at(P d, Py_ssize_t i, Py_ssize_t n, Py_ssize_t *a, Py_ssize_t *b) {
    if (n - i < 9 || memcmp(d + i, "{\"type\":", 8) != 0)
        return -1;
    i += 8;
    if (d[i] == ' ')
        i++;
    if (i >= n || d[i] != '"')
        return -1;
    i++;
    const unsigned char *z = memchr(d + i, '"', (size_t)(n - i));
    if (z == NULL)
        return -1;
    *a = i;
    *b = z - d;
    return *b + 1;
}

static PyObject *seg_types(PyObject *self, PyObject *args) {
    Py_buffer view;
    int plugin;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*p", &view, &plugin))
        return NULL;
    P d = (P)view.buf;
    Py_ssize_t n = view.len, ka[P4_KNOWN], kb[P4_KNOWN], known = 0, more = 0;
    Py_ssize_t *hits = NULL, nh = 0, cap = 0;           /* (types past the first P4_KNOWN distinct: each place) */
    int found = 0, oom = 0;
    Py_BEGIN_ALLOW_THREADS
    Py_ssize_t i = 0;
    int first = 1;
    for (;;) {
        Py_ssize_t at = i, a = 0, b = 0, e;
        if (!first) {
            const unsigned char *q = i < n ? memchr(d + i, '\n', (size_t)(n - i)) : NULL;
            if (q == NULL)
                break;
            at = q - d + 1;
        }
        first = 0;
        e = p4_type_at(d, at, n, &a, &b);
        if (e < 0) {
            i = at;
            continue;
        }
        i = e;
        Py_ssize_t k = 0;
        for (; k < known; k++)
            if (kb[k] - ka[k] == b - a && memcmp(d + ka[k], d + a, (size_t)(b - a)) == 0)
                break;
        if (k < known)
            continue;
        if (known < P4_KNOWN) {
            ka[known] = a;
            kb[known++] = b;
            continue;
        }
        if (nh + 2 > cap) {
            Py_ssize_t nc = cap ? cap * 2 : 256;
            Py_ssize_t *g = realloc(hits, (size_t)nc * sizeof(Py_ssize_t));
            if (g == NULL) {
                oom = 1;
                break;
            }
            hits = g;
            cap = nc;
        }
        hits[nh++] = a;
        hits[nh++] = b;
        more = 1;
    }
    if (plugin && !oom)
        found = memmem(d, (size_t)n, "\"plugin\"", 8) != NULL;
    Py_END_ALLOW_THREADS
    PyObject *set = NULL, *res = NULL;
    if (oom) {
        PyErr_NoMemory();
        goto out;
    }
    set = PySet_New(NULL);
    if (set == NULL)
        goto out;
    for (int pass = 0; pass < 1 + more; pass++) {
        Py_ssize_t m = pass ? nh : known * 2;
        for (Py_ssize_t k = 0; k < m; k += 2) {
            Py_ssize_t a = pass ? hits[k] : ka[k / 2], b = pass ? hits[k + 1] : kb[k / 2];
            PyObject *t = PyBytes_FromStringAndSize((const char *)d + a, b - a);
            if (t == NULL || PySet_Add(set, t) < 0) {
                Py_XDECREF(t);
                goto out;
            }
            Py_DECREF(t);
        }
    }
    res = Py_BuildValue("(OO)", set, found ? Py_True : Py_False);
out:
    Py_XDECREF(set);
    free(hits);
    PyBuffer_Release(&view);
    return res;
}
/* ---- end pass4 ---- */

static PyMethodDef methods[] = {
    {"rows_any", rows_any, METH_VARARGS, "The rows holding any of some needles through a table (see the find5 section)."},
    {"first_uesc", first_uesc, METH_VARARGS, "The first \\uXXXX escape of a non-ASCII character (see the find5 section)."},
    {"scan", scan, METH_VARARGS, "rowscan.scan, in C (see the module's source)."},
    {"not_legacy", py_not_legacy, METH_VARARGS, "rowscan.not_legacy, in C."},
    {"packed_lines", packed_lines, METH_VARARGS, "The logical export's lines of a packed row (see the source)."},
    {"depth_over", depth_over, METH_VARARGS, "limits.nesting_depth(raw, limit) > limit, in C (ahead3 section)."},
    {"packed_raw", packed_raw, METH_VARARGS, "The logical export's lines of a writer's packed row (ahead3 section)."},
    {"tl_scan", tl_scan, METH_VARARGS, "The timeline's rows of a buffer (timelinec section; whole turns: tlc2)."},
    {"tl_shapes", tl_shapes, METH_O, "Spans grouped by their keys (tlc2 section)."},
    {"tl_order", tl_order, METH_VARARGS, "Spans in log order (tlc2 section)."},
    {"tl_getcols", tl_getcols, METH_VARARGS, "Columns of a list of dicts by key, d.get(k) (tlc2 section)."},
    {"tl_count", tl_count, METH_O, "Elements of a JSON array (timelinec section)."},
    {"tl_stream", tl_stream, METH_O, "The timeline's summary of an embedded stream (timelinec section)."},
    {"tl_seqs", tl_seqs, METH_O, "Count and bounds of an increasing JSON array of integers (timelinec section)."},
    {"tl_columns", tl_columns, METH_VARARGS, "The columns of a list of dicts of one shape (timelinec section)."},
    {"tl_dtsum", tl_dtsum, METH_VARARGS, "Sum of the first k integers of a JSON array (timelinec section)."},
    {"tl_lines", tl_lines, METH_O, "buf.count(b'\\n') (timelinec section)."},
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
    {"plain_spans", plain_spans, METH_VARARGS, "redact_spans of a row export_rows.plain_row accepts (export section)."},
    {"redact_common", redact_common, METH_VARARGS, "Redactor._text's common rules, in C (export section)."},
    {"logical_block", logical_block, METH_VARARGS, "The logical export's lines of a segment's rows (export section)."},
    {"fold_count", fold_count, METH_VARARGS, "A caseless ASCII literal's first match and count in a text (find section)."},
    {"brackets", brackets, METH_O, "raw.count(b'[') + raw.count(b'{') in one pass (find section)."},
    {"find_ascii", find_ascii, METH_VARARGS, "find_folded of an ASCII needle, 16 places a step (find section)."},
    {"text_hits", text_hits, METH_VARARGS, "Whole-log find's text hits of a window's candidate rows (findc section)."},
    {"ahead_rows", ahead_rows, METH_VARARGS, "The background pass's rows of a segment (passc section)."},
    {"find_hits", find_hits, METH_VARARGS, "Whole-log find's hits of a window's candidate rows, made in C (findc2 section)."},
    {"ex6_row_type", ex6_row_type, METH_O, "export_rows.row_type read from a row's bytes, where they tell (exp6 section)."},
    {"ex6_escape", ex6_escape, METH_VARARGS, "html.escape(s), or the Markdown export's escape, in one pass (exp6 section)."},
    {"ex6_redact_walk", ex6_redact_walk, METH_VARARGS, "redact_walk, each string gated once (exp6 section)."},
    {"more_text", more_text, METH_VARARGS, "The fields find_hits reads of a summary or an attempt row (find6 section)."},
    {"row_starts", row_starts, METH_VARARGS, "find_rows.row_starts in C (find6 section)."},
    {"last_turn", last_turn, METH_VARARGS, "The last turn/start row of a stretch and its plain turn (find6 section)."},
    {"seg_types", seg_types, METH_VARARGS, "The read-path check's row types of a segment, and a plugin source (pass4 section)."},
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
