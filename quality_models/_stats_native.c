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
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define NCOUNTS 13
#define SHORT_LINE 30

/* Gopher's stop words, matched case-insensitively on ASCII letters only: no other code point
 * lower-cases to these letters (str.lower on the Python side). A word of 2-4 letters is packed
 * into one integer (a letter per byte), so a word is compared once against each packed stop word. */
#define PACK2(a, b) ((uint32_t)(a) | (uint32_t)(b) << 8)
#define PACK3(a, b, c) (PACK2(a, b) | (uint32_t)(c) << 16)
#define PACK4(a, b, c, d) (PACK3(a, b, c) | (uint32_t)(d) << 24)

/* Whether a packed lower-case word is a stop word: compares without branches (a switch branches
 * on every word, and mispredicts). */
static inline __attribute__((always_inline)) int stopword_key(uint32_t key) {
    return (key == PACK2('b', 'e')) | (key == PACK2('t', 'o')) | (key == PACK2('o', 'f')) |
           (key == PACK3('t', 'h', 'e')) | (key == PACK3('a', 'n', 'd')) | (key == PACK4('t', 'h', 'a', 't')) |
           (key == PACK4('h', 'a', 'v', 'e')) | (key == PACK4('w', 'i', 't', 'h'));
}

static inline __attribute__((always_inline)) int is_stopword(int kind, const void *data, Py_ssize_t start, Py_ssize_t len) {
    if (len < 2 || len > 4) return 0;
    uint32_t key = 0;
    for (Py_ssize_t i = 0; i < len; i++) {
        Py_UCS4 ch = PyUnicode_READ(kind, data, start + i);
        if (ch >= 'A' && ch <= 'Z') ch += 32;
        if (ch < 'a' || ch > 'z') return 0;
        key |= (uint32_t)ch << (8 * i);
    }
    return stopword_key(key);
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

/* The running counts of one text (COUNTS order is set when they are copied out). */
typedef struct {
    int64_t words, word_chars, lettered, stop, symbols, upper, digits, end_punct, bullets, shorts;
    Py_ssize_t nlines, word_start, line_start, dots;
    unsigned has_letter;
} Counts;

/* The line that a break at `i` ends: stripped, and counted if not empty. */
static inline __attribute__((always_inline)) int end_line(Counts *c, int kind, const void *data, Py_ssize_t i,
                                                          Scratch *s) {
    Py_ssize_t a = c->line_start, b = i;
    while (a < b && class_of(PyUnicode_READ(kind, data, a)) & SPACE) a++;
    while (b > a && class_of(PyUnicode_READ(kind, data, b - 1)) & SPACE) b--;
    c->line_start = i + 1;
    if (b == a) return 0;
    c->end_punct += ends_punct(PyUnicode_READ(kind, data, b - 1));
    c->bullets += starts_bullet(PyUnicode_READ(kind, data, a));
    c->shorts += b - a < SHORT_LINE;
    return push_line(s, &c->nlines, a, b - a, kind, data);
}

/* One character `ch` at `i`. The common path is one table load and a few counter updates; words
 * end, lines end and '.', '#', U+2026 take the branches. */
static inline __attribute__((always_inline)) int count_char(Counts *c, int kind, const void *data, Py_ssize_t i,
                                                            Py_UCS4 ch, Scratch *s) {
    unsigned cls = class_of(ch);
    if (!(cls & SPACE)) {
        if (c->word_start < 0) {
            c->word_start = i;
            c->has_letter = 0;
        }
        c->word_chars++;
        c->has_letter |= cls & LETTER;
        c->upper += (cls & UPPER) != 0;
        c->digits += (cls & DIGIT) != 0;
    } else {
        if (c->word_start >= 0) {
            c->words++;
            c->lettered += c->has_letter != 0;
            c->stop += is_stopword(kind, data, c->word_start, i - c->word_start);
            c->word_start = -1;
        }
        if ((cls & BREAK) && end_line(c, kind, data, i, s) < 0) return -1;
    }
    if (cls & SPECIAL) {
        if (ch == '.') {
            c->dots++;
        } else {
            c->symbols += c->dots / 3 + 1;
            c->dots = 0;
        }
    } else if (c->dots) {
        c->symbols += c->dots / 3;
        c->dots = 0;
    }
    return 0;
}

#if defined(__SSE2__)
#define ASCII_BLOCK 16

static inline __attribute__((always_inline)) unsigned mask_of(__m128i match) {
    return (unsigned)_mm_movemask_epi8(match);
}

/* Set bits of a 16-bit mask (__builtin_popcount is a library call without -mpopcnt). */
static inline __attribute__((always_inline)) int64_t bits16(unsigned x) {
    x -= (x >> 1) & 0x5555;
    x = (x & 0x3333) + ((x >> 2) & 0x3333);
    x = (x + (x >> 4)) & 0x0F0F;
    return (x + (x >> 8)) & 0x1F;
}

/* `is_stopword` of the block's word at bytes [first, end), from the block's bytes (zero-padded to 32)
 * and its letter mask: a word of 2-4 letters, lower-cased by setting bit 5 of each letter. */
static inline __attribute__((always_inline)) int block_stopword(const unsigned char *bytes, unsigned letter,
                                                                int first, int end) {
    int len = end - first;
    if (len < 2 || len > 4 || ((letter >> first) & ((1u << len) - 1)) != (1u << len) - 1) return 0;
    uint32_t key;
    memcpy(&key, bytes + first, 4);
    return stopword_key((key | 0x20202020u) & (uint32_t)(((uint64_t)1 << (8 * len)) - 1));
}

/* Bytes in [lo, hi], for ASCII bytes (signed compares are exact below 0x80). */
static inline __attribute__((always_inline)) __m128i in_range(__m128i v, char lo, char hi) {
    return _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8((char)(lo - 1))),
                         _mm_cmplt_epi8(v, _mm_set1_epi8((char)(hi + 1))));
}

/* `count_char` over the 16 ASCII bytes at `i` of a 1-byte text, from bit masks: 0 if a byte is not
 * ASCII (nothing counted; the caller counts them one by one), 1 if counted, -1 out of memory.
 * Words, lines and runs of dots are events between bits, taken in order; a word or a run of dots
 * that reaches the block's end carries over in `c` as in `count_char`. */
static inline __attribute__((always_inline)) int count_ascii_block(Counts *c, const unsigned char *data,
                                                                   Py_ssize_t i, Scratch *s) {
    __m128i v = _mm_loadu_si128((const __m128i *)(data + i));
    if (mask_of(v)) return 0;
    unsigned char bytes[2 * ASCII_BLOCK];
    _mm_storeu_si128((__m128i *)bytes, v);
    _mm_storeu_si128((__m128i *)(bytes + ASCII_BLOCK), _mm_setzero_si128());
    /* Python's ASCII whitespace: \t \n \v \f \r, \x1c-\x1f and ' '; breaks: \n \v \f \r \x1c-\x1e. */
    unsigned space = mask_of(_mm_or_si128(_mm_or_si128(in_range(v, 9, 13), in_range(v, 0x1c, 0x1f)),
                                          _mm_cmpeq_epi8(v, _mm_set1_epi8(' '))));
    unsigned breaks = mask_of(_mm_or_si128(in_range(v, 10, 13), in_range(v, 0x1c, 0x1e)));
    unsigned upper = mask_of(in_range(v, 'A', 'Z'));
    unsigned letter = upper | mask_of(in_range(v, 'a', 'z'));
    unsigned dots = mask_of(_mm_cmpeq_epi8(v, _mm_set1_epi8('.')));
    unsigned hashes = mask_of(_mm_cmpeq_epi8(v, _mm_set1_epi8('#')));
    unsigned word = ~space & 0xFFFF;
    unsigned before = (word << 1) | (c->word_start >= 0); /* the previous byte is in a word */
    unsigned starts = word & ~before, ends = space & before;
    c->word_chars += bits16(word);
    c->upper += bits16(upper);
    c->digits += bits16(mask_of(in_range(v, '0', '9')));
    while (ends) {
        int end = __builtin_ctz(ends);
        ends &= ends - 1;
        c->words++;
        if (c->word_start >= 0) { /* the word carried in from before this block */
            c->lettered += (c->has_letter | (letter & ((1u << end) - 1))) != 0;
            c->stop += is_stopword(PyUnicode_1BYTE_KIND, data, c->word_start, i + end - c->word_start);
            c->word_start = -1;
        } else {
            int first = __builtin_ctz(starts);
            starts &= starts - 1;
            c->lettered += (letter & ((1u << end) - (1u << first))) != 0;
            c->stop += block_stopword(bytes, letter, first, end);
        }
    }
    if (starts) { /* the last word runs on past the block */
        int first = __builtin_ctz(starts);
        c->word_start = i + first;
        c->has_letter = letter >> first;
    } else if (c->word_start >= 0) {
        c->has_letter |= letter;
    }
    while (breaks) {
        int at = __builtin_ctz(breaks);
        breaks &= breaks - 1;
        if (end_line(c, PyUnicode_1BYTE_KIND, data, i + at, s) < 0) return -1;
    }
    c->symbols += bits16(hashes);
    if (c->dots) { /* a run of dots carried in ends at the block's first byte that is not a dot */
        int run = __builtin_ctz(~dots);
        if (run == ASCII_BLOCK) {
            c->dots += run;
            return 1;
        }
        c->symbols += (c->dots + run) / 3;
        c->dots = 0;
        dots &= ~((1u << run) - 1);
    }
    while (dots) {
        int first = __builtin_ctz(dots);
        int run = __builtin_ctz(~(dots >> first));
        if (first + run == ASCII_BLOCK) {
            c->dots = run;
            break;
        }
        c->symbols += run / 3;
        dots &= ~(((1u << run) - 1) << first);
    }
    return 1;
}
#endif

/* One pass over a text of one storage kind (inlined per kind, so PyUnicode_READ is a plain load);
 * 1-byte texts go 16 ASCII bytes at a time where SSE2 is there. */
static inline __attribute__((always_inline)) int count_kind(int kind, const void *data, Py_ssize_t length,
                                                            int64_t *out, Scratch *s) {
    Counts c = {0};
    c.word_start = -1;
    Py_ssize_t i = 0;
    while (i < length) {
#if defined(__SSE2__)
        if (kind == PyUnicode_1BYTE_KIND && i + ASCII_BLOCK <= length) {
            int done = count_ascii_block(&c, (const unsigned char *)data, i, s);
            if (done < 0) return -1;
            Py_ssize_t end = i + ASCII_BLOCK;
            if (done) {
                i = end;
                continue;
            }
            for (; i < end; i++)
                if (count_char(&c, kind, data, i, PyUnicode_READ(kind, data, i), s) < 0) return -1;
            continue;
        }
#endif
        if (count_char(&c, kind, data, i, PyUnicode_READ(kind, data, i), s) < 0) return -1;
        i++;
    }
    if (count_char(&c, kind, data, length, '\n', s) < 0) return -1; /* a final break ends all */
    Py_ssize_t distinct = distinct_lines(s, c.nlines, kind, (const char *)data);
    if (distinct < 0) return -1;
    int64_t values[NCOUNTS] = {c.words,    c.word_chars, c.lettered, c.stop,  c.symbols, c.nlines,   c.end_punct,
                               c.bullets,  c.shorts,     distinct,   c.upper, c.digits,  length};
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
