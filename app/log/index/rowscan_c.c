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

/* ---- big29: find_folded, the whole-log find's byte search (issue 29) ----
 * find_folded(data, start, end, needle, table, k, rows) -> list of offsets
 *   Every place i of ``needle`` in ``data.translate(table)[start:end]``, left to right, not overlapping (the next
 *   search starts at i + len(needle)); ``rows``: only the first in each row (the next search starts after the
 *   first b"\n" from i + len(needle); none: the end).  Exactly app/log/query/find_prefilter.find_folded_py, without
 *   the translated copy: the places of needle[k] are found by memchr of the bytes the table maps onto it (one
 *   or two; more: a byte loop), each place checked byte by byte through the table.  ``table`` is 256 bytes
 *   mapping b"\n" onto itself and no other byte onto it (the caller checks). */
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
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    const unsigned char *d = (const unsigned char *)view.buf;
    if (start < 0)
        start = 0;
    if (end > view.len)
        end = view.len;
    PyObject *out = PyList_New(0);
    if (out == NULL) {
        PyBuffer_Release(&view);
        return NULL;
    }
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
        PyObject *v = PyLong_FromSsize_t(i);
        if (v == NULL || PyList_Append(out, v) < 0) {
            Py_XDECREF(v);
            Py_DECREF(out);
            PyBuffer_Release(&view);
            return NULL;
        }
        Py_DECREF(v);
        pos = i + nn;
        if (rows) {
            const unsigned char *e = pos < end ? memchr(d + pos, '\n', (size_t)(end - pos)) : NULL;
            if (e == NULL)
                break;
            pos = (e - d) + 1;
        }
    }
    PyBuffer_Release(&view);
    return out;
}

static PyMethodDef methods[] = {
    {"scan", scan, METH_VARARGS, "rowscan.scan, in C (see the module's source)."},
    {"not_legacy", py_not_legacy, METH_VARARGS, "rowscan.not_legacy, in C."},
    {"packed_lines", packed_lines, METH_VARARGS, "The logical export's lines of a packed row (see the source)."},
    {"find_folded", find_folded, METH_VARARGS, "The places of a needle in a window folded by a table (big29)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "rowscan_c", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_rowscan_c(void) {
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
