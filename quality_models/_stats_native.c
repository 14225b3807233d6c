/* Document statistics of the `quality` stage in one pass per text (quality_models/combined.py).
 *
 * counts(texts) -> bytes: NCOUNTS int64 per text, in COUNTS order of combined.py, with the
 * semantics of its Python reference `reference_counts` (str.split words, Python's Unicode
 * predicates, str.splitlines + str.strip lines): the same integers, so the same statistics.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define NCOUNTS 13
#define SHORT_LINE 30

/* Gopher's stop words, matched case-insensitively on ASCII letters only: no other code point
 * lower-cases to these letters (str.lower on the Python side). A word of 2-4 letters is packed
 * into one integer (a letter per byte), so a word is compared once against each packed stop word. */
#define PACK2(a, b) ((uint32_t)(a) | (uint32_t)(b) << 8)
#define PACK3(a, b, c) (PACK2(a, b) | (uint32_t)(c) << 16)
#define PACK4(a, b, c, d) (PACK3(a, b, c) | (uint32_t)(d) << 24)

static inline __attribute__((always_inline)) int is_stopword(int kind, const void *data, Py_ssize_t start, Py_ssize_t len) {
    if (len < 2 || len > 4) return 0;
    uint32_t key = 0;
    for (Py_ssize_t i = 0; i < len; i++) {
        Py_UCS4 ch = PyUnicode_READ(kind, data, start + i);
        if (ch >= 'A' && ch <= 'Z') ch += 32;
        if (ch < 'a' || ch > 'z') return 0;
        key |= (uint32_t)ch << (8 * i);
    }
    switch (key) {
    case PACK2('b', 'e'): case PACK2('t', 'o'): case PACK2('o', 'f'):
    case PACK3('t', 'h', 'e'): case PACK3('a', 'n', 'd'):
    case PACK4('t', 'h', 'a', 't'): case PACK4('h', 'a', 'v', 'e'): case PACK4('w', 'i', 't', 'h'):
        return 1;
    default:
        return 0;
    }
}

static int ends_punct(Py_UCS4 ch) {
    return ch == '.' || ch == '!' || ch == '?' || ch == '"' || ch == '\'' || ch == ':' || ch == 0x201D;
}

static int starts_bullet(Py_UCS4 ch) {
    return ch == 0x2022 || ch == '-' || ch == '*' || ch == 0x00B7 || ch == 0x2013 || ch == 0x25BA;
}

typedef struct {
    Py_ssize_t start, len;
    uint64_t hash;
} Line;

typedef struct {
    Line *lines;
    Py_ssize_t *table;
    Py_ssize_t lines_cap, table_cap;
} Scratch;

/* Distinct lines among `n`, by hash then content (open addressing). */
static Py_ssize_t distinct_lines(Scratch *s, Py_ssize_t n, int kind, const char *data) {
    Py_ssize_t size = 16;
    while (size < 2 * n) size *= 2;
    if (size > s->table_cap) {
        Py_ssize_t *table = PyMem_Realloc(s->table, size * sizeof(Py_ssize_t));
        if (!table) return -1;
        s->table = table;
        s->table_cap = size;
    }
    memset(s->table, 0xff, size * sizeof(Py_ssize_t));
    Py_ssize_t distinct = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Line *line = &s->lines[i];
        Py_ssize_t slot = (Py_ssize_t)(line->hash & (uint64_t)(size - 1));
        for (;; slot = (slot + 1) & (size - 1)) {
            Py_ssize_t j = s->table[slot];
            if (j < 0) {
                s->table[slot] = i;
                distinct++;
                break;
            }
            Line *other = &s->lines[j];
            if (other->hash == line->hash && other->len == line->len &&
                memcmp(data + other->start * kind, data + line->start * kind, line->len * kind) == 0)
                break;
        }
    }
    return distinct;
}

static inline __attribute__((always_inline)) int push_line(Scratch *s, Py_ssize_t *n, Py_ssize_t start, Py_ssize_t len, int kind, const void *data) {
    if (*n == s->lines_cap) {
        Py_ssize_t cap = s->lines_cap ? 2 * s->lines_cap : 256;
        Line *lines = PyMem_Realloc(s->lines, cap * sizeof(Line));
        if (!lines) return -1;
        s->lines = lines;
        s->lines_cap = cap;
    }
    /* Only equal lines must hash alike (distinct_lines compares contents): the line's bytes,
     * 8 at a time, multiplied into the hash. */
    const unsigned char *bytes = (const unsigned char *)data + start * kind;
    Py_ssize_t nbytes = len * kind, i = 0;
    uint64_t hash = 14695981039346656037ULL, chunk;
    for (; i + 8 <= nbytes; i += 8) {
        memcpy(&chunk, bytes + i, 8);
        hash = (hash ^ chunk) * 0x9E3779B97F4A7C15ULL;
        hash ^= hash >> 29;
    }
    chunk = 0;
    memcpy(&chunk, bytes + i, (size_t)(nbytes - i));
    hash = (hash ^ chunk ^ (uint64_t)nbytes) * 0x9E3779B97F4A7C15ULL;
    hash ^= hash >> 29;
    s->lines[*n].start = start;
    s->lines[*n].len = len;
    s->lines[*n].hash = hash;
    (*n)++;
    return 0;
}

/* Character classes: what the counts need to know of a code point, from Python's predicates
 * (a table for the first 256 code points, `wide_class` above them). UPPER and DIGIT are what the
 * reference's regexes [A-Z] and \d count; LETTER makes a word "lettered" (ASCII letters, or a
 * non-ASCII alphanumeric that is not a decimal digit); SPECIAL marks '.', '#' and U+2026. */
enum { SPACE = 1, BREAK = 2, UPPER = 4, DIGIT = 8, LETTER = 16, SPECIAL = 32 };
static unsigned char char_class[256];

static unsigned wide_class(Py_UCS4 ch) {
    unsigned c = 0;
    if (Py_UNICODE_ISSPACE(ch)) c |= SPACE;
    if (Py_UNICODE_ISLINEBREAK(ch)) c |= BREAK;
    if (Py_UNICODE_ISDECIMAL(ch)) c |= DIGIT;
    else if (Py_UNICODE_ISALNUM(ch)) c |= LETTER;
    if (ch == 0x2026) c |= SPECIAL;
    return c;
}

static void init_classes(void) {
    for (int ch = 0; ch < 256; ch++) {
        unsigned c = ch < 128 ? 0 : wide_class(ch);
        if (ch < 128) {
            if (Py_UNICODE_ISSPACE(ch)) c |= SPACE;
            if (Py_UNICODE_ISLINEBREAK(ch)) c |= BREAK;
            if (ch >= 'A' && ch <= 'Z') c |= UPPER | LETTER;
            if (ch >= 'a' && ch <= 'z') c |= LETTER;
            if (ch >= '0' && ch <= '9') c |= DIGIT;
            if (ch == '.' || ch == '#') c |= SPECIAL;
        }
        char_class[ch] = (unsigned char)c;
    }
}

static inline __attribute__((always_inline)) unsigned class_of(Py_UCS4 ch) {
    return ch < 256 ? char_class[ch] : wide_class(ch);
}

/* One pass over a text of one storage kind (inlined per kind, so PyUnicode_READ is a plain load).
 * The common path per character is one table load and a few counter updates; words end, lines
 * end and '.', '#', U+2026 take the branches. */
static inline __attribute__((always_inline)) int count_kind(int kind, const void *data, Py_ssize_t length,
                                                            int64_t *out, Scratch *s) {
    int64_t words = 0, word_chars = 0, lettered = 0, stop = 0, symbols = 0, upper = 0, digits = 0;
    int64_t end_punct = 0, bullets = 0, shorts = 0;
    Py_ssize_t nlines = 0, word_start = -1, line_start = 0, dots = 0;
    unsigned has_letter = 0;
    for (Py_ssize_t i = 0; i <= length; i++) {
        Py_UCS4 ch = i < length ? PyUnicode_READ(kind, data, i) : '\n'; /* a final break ends all */
        unsigned cls = class_of(ch);
        if (!(cls & SPACE)) {
            if (word_start < 0) {
                word_start = i;
                has_letter = 0;
            }
            word_chars++;
            has_letter |= cls & LETTER;
            upper += (cls & UPPER) != 0;
            digits += (cls & DIGIT) != 0;
        } else {
            if (word_start >= 0) {
                words++;
                lettered += has_letter != 0;
                stop += is_stopword(kind, data, word_start, i - word_start);
                word_start = -1;
            }
            if (cls & BREAK) {
                Py_ssize_t a = line_start, b = i;
                while (a < b && class_of(PyUnicode_READ(kind, data, a)) & SPACE) a++;
                while (b > a && class_of(PyUnicode_READ(kind, data, b - 1)) & SPACE) b--;
                if (b > a) {
                    end_punct += ends_punct(PyUnicode_READ(kind, data, b - 1));
                    bullets += starts_bullet(PyUnicode_READ(kind, data, a));
                    shorts += b - a < SHORT_LINE;
                    if (push_line(s, &nlines, a, b - a, kind, data) < 0) return -1;
                }
                line_start = i + 1;
            }
        }
        if (cls & SPECIAL) {
            if (ch == '.') {
                dots++;
            } else {
                symbols += dots / 3 + 1;
                dots = 0;
            }
        } else if (dots) {
            symbols += dots / 3;
            dots = 0;
        }
    }
    Py_ssize_t distinct = distinct_lines(s, nlines, kind, (const char *)data);
    if (distinct < 0) return -1;
    int64_t values[NCOUNTS] = {words,    word_chars, lettered, stop,     symbols, nlines, end_punct,
                               bullets,  shorts,     distinct, upper,    digits,  length};
    memcpy(out, values, sizeof(values));
    return 0;
}

static int count_text(PyObject *text, int64_t *out, Scratch *s) {
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    switch (PyUnicode_KIND(text)) {
    case PyUnicode_1BYTE_KIND:
        return count_kind(PyUnicode_1BYTE_KIND, data, length, out, s);
    case PyUnicode_2BYTE_KIND:
        return count_kind(PyUnicode_2BYTE_KIND, data, length, out, s);
    default:
        return count_kind(PyUnicode_4BYTE_KIND, data, length, out, s);
    }
}

static PyObject *counts(PyObject *self, PyObject *arg) {
    PyObject *seq = PySequence_Fast(arg, "counts() takes a sequence of str");
    if (!seq) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject *result = PyBytes_FromStringAndSize(NULL, n * NCOUNTS * (Py_ssize_t)sizeof(int64_t));
    Scratch scratch = {NULL, NULL, 0, 0};
    if (!result) goto fail;
    int64_t *out = (int64_t *)PyBytes_AS_STRING(result);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *text = PySequence_Fast_GET_ITEM(seq, i);
        if (!PyUnicode_Check(text)) {
            PyErr_Format(PyExc_TypeError, "counts() takes str items, got %.100s", Py_TYPE(text)->tp_name);
            goto fail;
        }
        if (count_text(text, out + i * NCOUNTS, &scratch) < 0) {
            PyErr_NoMemory();
            goto fail;
        }
    }
    PyMem_Free(scratch.lines);
    PyMem_Free(scratch.table);
    Py_DECREF(seq);
    return result;
fail:
    PyMem_Free(scratch.lines);
    PyMem_Free(scratch.table);
    Py_XDECREF(result);
    Py_DECREF(seq);
    return NULL;
}

static PyMethodDef methods[] = {
    {"counts", counts, METH_O, "NCOUNTS int64 per text (quality_models.combined.COUNTS), as bytes."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_stats_native", NULL, -1, methods};

PyMODINIT_FUNC PyInit__stats_native(void) {
    init_classes();
    return PyModule_Create(&module);
}
