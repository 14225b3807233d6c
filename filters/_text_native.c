/* Native hot paths of filters/text_analysis.py; that module's pure-Python `Reference` functions
 * are what these must equal (tests/filters/test_text_native.py and benchmarks/text_analysis_parity.py
 * compare them).
 *
 *   set_tables(symbols, terminal, sentence_end, punct)  character sets (called once): symbol-word
 *                                     characters, terminal punctuation, sentence-final characters,
 *                                     Unicode P* characters
 *   split_words(text, tokenizer)      whitespace chunks (str.split()), each looked up in the dict
 *                                     tokenizer.cache or passed to tokenizer.tokens(chunk); their
 *                                     tokens, flattened (known chunks are memoized here too, see
 *                                     MemoSlot; common chunk shapes are split here, see common_shape)
 *   word_count(text, tokenizer)       len(split_words(text, tokenizer)), without the list
 *   c4_lines(text, rules, tokenizer)  C4's line rules: (reason or None, sentences, kept text)
 *   line_marks(text)                  str.splitlines(): (lines, bullet lines, ellipsis lines)
 *   run_duplicates(text, shortest)    pieces between runs of >= shortest newlines: (pieces,
 *                                     repeats of an earlier piece, their characters)
 *   fineweb_lines(text, short)        non-blank "\n" lines: (lines, ending in terminal punctuation,
 *                                     at most `short` characters, characters of repeated lines)
 *   word_classes(words)               (words with a character outside the symbol set, their
 *                                     characters, words with an alphabetic character)
 *   top_ngram_chars(words, sizes)     for each n in sizes: len(" ".join(g)) x count of the most
 *                                     frequent n-gram g
 *   dup_ngram_chars(words, sizes)     for each n in sizes: characters of n-grams repeating an
 *                                     earlier one (Gopher)
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define READ(i) PyUnicode_READ(kind, data, (i))

static uint64_t mix64(uint64_t x) { /* murmur3's finalizer */
    x ^= x >> 33;
    x *= 0xFF51AFD7ED558CCDULL;
    x ^= x >> 33;
    x *= 0xC4CEB9FE1A85EC53ULL;
    x ^= x >> 33;
    return x;
}

static size_t table_size(Py_ssize_t items) { /* a power of two at least twice `items` */
    size_t size = 16;
    while (size < (size_t)items * 2) size <<= 1;
    return size;
}

/* ---- character sets ------------------------------------------------------------------------------ */

typedef struct {
    uint64_t ascii[2]; /* bitmap of the characters below 128 */
    Py_UCS4 *other;    /* the others, sorted */
    Py_ssize_t count;
} CharSet;
static CharSet symbols, terminal, sentence_end, unicode_punct;
static int tables_ready;

static int cmp_ucs4(const void *a, const void *b) {
    Py_UCS4 x = *(const Py_UCS4 *)a, y = *(const Py_UCS4 *)b;
    return (x > y) - (x < y);
}

static int charset_fill(CharSet *set, PyObject *chars) {
    Py_ssize_t n = PyUnicode_GET_LENGTH(chars), count = 0;
    Py_UCS4 *other = PyMem_Malloc(sizeof(Py_UCS4) * (n ? n : 1));
    if (other == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    uint64_t ascii[2] = {0, 0};
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ_CHAR(chars, i);
        if (c < 128) ascii[c >> 6] |= (uint64_t)1 << (c & 63);
        else other[count++] = c;
    }
    qsort(other, count, sizeof(Py_UCS4), cmp_ucs4);
    PyMem_Free(set->other);
    *set = (CharSet){{ascii[0], ascii[1]}, other, count};
    return 0;
}

static int in_set(const CharSet *set, Py_UCS4 c) {
    if (c < 128) return (set->ascii[c >> 6] >> (c & 63)) & 1;
    return set->count && bsearch(&c, set->other, set->count, sizeof(Py_UCS4), cmp_ucs4) != NULL;
}

static PyObject *set_tables(PyObject *self, PyObject *args) {
    PyObject *chars[4];
    if (!PyArg_ParseTuple(args, "UUUU:set_tables", &chars[0], &chars[1], &chars[2], &chars[3])) return NULL;
    CharSet *sets[4] = {&symbols, &terminal, &sentence_end, &unicode_punct};
    for (int i = 0; i < 4; i++)
        if (charset_fill(sets[i], chars[i]) < 0) return NULL;
    tables_ready = 1;
    Py_RETURN_NONE;
}

static int check_tables(const char *function) {
    if (tables_ready) return 0;
    PyErr_Format(PyExc_RuntimeError, "%s: set_tables was not called", function);
    return -1;
}

/* ---- the word split --------------------------------------------------------------------------- */

/* A front memo of `cache`, keyed by the chunk's characters, so a known chunk costs no str object
 * and no SipHash: open addressing, at most MEMO_LIMIT chunks. A slot is half a cache line and holds
 * short Latin-1 chunks' characters itself, and a chunk that is its own only token is appended
 * straight from the slot: a known chunk costs one memory access, not three (slot, chunk, tuple).
 * The memo belongs to one `cache` dict and is emptied when another is passed. */
#define MEMO_LIMIT 200000
#define MEMO_MAX_CHARS 32 /* a longer chunk is not memoized (MAX_CACHED_CHUNK in text_analysis.py) */
#define INLINE_CHARS 10
#define NOT_INLINE 0xFF
typedef struct {
    PyObject *tokens; /* the chunk's tokens (a tuple); NULL: empty slot */
    PyObject *chunk;
    uint32_t hash;    /* low bits of the chunk's hash */
    uint8_t size;     /* the chunk's length when `chars` holds its (Latin-1) characters, else NOT_INLINE */
    uint8_t single;   /* tokens == (chunk,) */
    char chars[INLINE_CHARS];
} MemoSlot;
static MemoSlot *memo;
static size_t memo_mask, memo_count;
static PyObject *memo_owner; /* the `cache` dict the memo mirrors (a new reference) */

static void memo_clear(void) {
    for (size_t i = 0; memo != NULL && i <= memo_mask; i++) {
        Py_XDECREF(memo[i].chunk);
        Py_XDECREF(memo[i].tokens);
    }
    PyMem_Free(memo);
    memo = NULL;
    memo_mask = memo_count = 0;
    Py_CLEAR(memo_owner);
}

static int same_chars(PyObject *chunk, int kind, const void *data, Py_ssize_t start, Py_ssize_t len) {
    if (PyUnicode_GET_LENGTH(chunk) != len) return 0;
    int chunk_kind = PyUnicode_KIND(chunk);
    const void *chunk_data = PyUnicode_DATA(chunk);
    if (chunk_kind == kind) return memcmp(chunk_data, (const char *)data + start * kind, len * kind) == 0;
    for (Py_ssize_t i = 0; i < len; i++)
        if (PyUnicode_READ(chunk_kind, chunk_data, i) != READ(start + i)) return 0;
    return 1;
}

static int slot_matches(const MemoSlot *m, int kind, const void *data, Py_ssize_t start, Py_ssize_t len) {
    if (m->size == NOT_INLINE) return same_chars(m->chunk, kind, data, start, len);
    if (m->size != len) return 0;
    if (kind == PyUnicode_1BYTE_KIND) return memcmp(m->chars, (const char *)data + start, len) == 0;
    for (Py_ssize_t i = 0; i < len; i++)
        if ((Py_UCS4)(unsigned char)m->chars[i] != READ(start + i)) return 0;
    return 1;
}

static MemoSlot *memo_find(uint32_t hash, int kind, const void *data, Py_ssize_t start, Py_ssize_t len) {
    for (size_t slot = hash & memo_mask; memo != NULL && memo[slot].tokens != NULL; slot = (slot + 1) & memo_mask) {
        if (memo[slot].hash == hash && slot_matches(&memo[slot], kind, data, start, len)) return &memo[slot];
    }
    return NULL;
}

static int memo_insert(uint32_t hash, PyObject *chunk, PyObject *tokens) {
    if (memo_count >= MEMO_LIMIT) return 0;
    if (memo == NULL || (memo_count + 1) * 2 > memo_mask + 1) {
        size_t size = memo == NULL ? 1024 : (memo_mask + 1) * 2;
        MemoSlot *grown = PyMem_Calloc(size, sizeof(MemoSlot));
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        for (size_t i = 0; memo != NULL && i <= memo_mask; i++) {
            if (memo[i].tokens == NULL) continue;
            size_t slot = memo[i].hash & (size - 1);
            while (grown[slot].tokens != NULL) slot = (slot + 1) & (size - 1);
            grown[slot] = memo[i];
        }
        PyMem_Free(memo);
        memo = grown;
        memo_mask = size - 1;
    }
    size_t slot = hash & memo_mask;
    while (memo[slot].tokens != NULL) slot = (slot + 1) & memo_mask;
    MemoSlot *m = &memo[slot];
    Py_ssize_t len = PyUnicode_GET_LENGTH(chunk);
    *m = (MemoSlot){tokens, chunk, hash, NOT_INLINE, PyTuple_GET_SIZE(tokens) == 1 && PyTuple_GET_ITEM(tokens, 0) == chunk, {0}};
    if (PyUnicode_KIND(chunk) == PyUnicode_1BYTE_KIND && len <= INLINE_CHARS) {
        m->size = (uint8_t)len;
        memcpy(m->chars, PyUnicode_DATA(chunk), len);
    }
    Py_INCREF(chunk);
    Py_INCREF(tokens);
    memo_count++;
    return 0;
}

/* The word split's tokenizer: the attributes of text_analysis._SpacyEnglishTokenizer (new references). */
typedef struct {
    PyObject *cache, *tokens, *specials;
} Tokenizer;

static int tokenizer_open(PyObject *object, Tokenizer *t) {
    t->cache = PyObject_GetAttrString(object, "cache");
    t->tokens = t->cache == NULL ? NULL : PyObject_GetAttrString(object, "tokens");
    t->specials = t->tokens == NULL ? NULL : PyObject_GetAttrString(object, "specials");
    if (t->specials != NULL && (!PyDict_Check(t->cache) || !PyDict_Check(t->specials))) {
        PyErr_SetString(PyExc_TypeError, "tokenizer.cache and tokenizer.specials must be dicts");
        Py_CLEAR(t->specials);
    }
    if (t->specials != NULL) return 0;
    Py_CLEAR(t->cache);
    Py_CLEAR(t->tokens);
    return -1;
}

static void tokenizer_close(Tokenizer *t) {
    Py_CLEAR(t->cache);
    Py_CLEAR(t->tokens);
    Py_CLEAR(t->specials);
}

/* 1: data[start:end) is a key of `specials`, 0: not, -1: error */
static int is_special(int kind, const void *data, Py_ssize_t start, Py_ssize_t end, PyObject *specials) {
    PyObject *piece = PyUnicode_FromKindAndData(kind, (const char *)data + start * kind, end - start);
    if (piece == NULL) return -1;
    int found = PyDict_Contains(specials, piece);
    Py_DECREF(piece);
    return found;
}

static int is_prefix_char(Py_UCS4 c) { /* single-character prefix rules of spaCy's English tokenizer */
    return c == '(' || c == '[' || c == '{' || c == '"' || c == '\'' || c == '`' || c == 0x201C || c == 0x2018 ||
           c == 0xAB;
}

static int is_suffix_char(Py_UCS4 c) { /* single-character suffix rules */
    return c == ',' || c == ';' || c == ':' || c == '!' || c == '?' || c == ')' || c == ']' || c == '}' ||
           c == '"' || c == '\'' || c == 0x201D || c == 0x2019 || c == 0xBB;
}

static int is_ascii_letter(Py_UCS4 c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

#define MAX_SHAPE_TOKENS 9

/* spaCy's tokens of the commonest chunk shapes, without its regexes: [p] core [s...] where p is one
 * character of is_prefix_char; the suffixes, innermost first, are an optional "." right after a
 * core ending in a-z or 0-9, then up to three of is_suffix_char or 's 'S ’s ’S; and the core is
 * letters only (str.isalpha), ASCII digits only, or ASCII letter runs joined by single hyphens
 * (which spaCy's infix rule splits off). Peeling p and the suffixes one by one is then what spaCy's
 * prefix and suffix rules do, and letters or digits match no affix or infix rule
 * (tests/filters/test_text_native.py checks these on every letter of Unicode). spaCy consults its
 * special cases only on runs of these tokens (the chunk, each string left after peeling, and the
 * merges of special cases split apart), so the tokens are the answer unless the core or a run of two
 * or more tokens is a special case: such chunks, like every other shape, go to the Python tokenizer.
 * Returns a new tuple, NULL with no error for "not this shape", NULL with an error. */
static PyObject *common_shape(int kind, const void *data, Py_ssize_t start, Py_ssize_t end, PyObject *chunk,
                              PyObject *specials) {
    Py_ssize_t cuts[MAX_SHAPE_TOKENS + 1], suffix_cuts[4], a = start, b = end;
    int ncuts = 0, nsuffix = 0;
    if (end - start >= 2 && is_prefix_char(READ(start))) a++;
    while (nsuffix < 3 && b - a >= 2) {
        Py_UCS4 last = READ(b - 1);
        if ((last == 's' || last == 'S') && b - a >= 3 && (READ(b - 2) == '\'' || READ(b - 2) == 0x2019)) b -= 2;
        else if (is_suffix_char(last)) b--;
        else break;
        suffix_cuts[nsuffix++] = b;
    }
    if (b - a >= 2 && READ(b - 1) == '.') {
        Py_UCS4 before = READ(b - 2);
        if (!((before >= 'a' && before <= 'z') || (before >= '0' && before <= '9'))) return NULL;
        suffix_cuts[nsuffix++] = --b;
    }
    /* the core [a, b): letters, digits, or ASCII letters with single hyphens between */
    int letters = 1, digits = 1, hyphenated = 1, hyphens = 0;
    for (Py_ssize_t i = a; i < b; i++) {
        Py_UCS4 c = READ(i);
        letters &= Py_UNICODE_ISALPHA(c);
        digits &= c >= '0' && c <= '9';
        if (c == '-') {
            hyphens++;
            hyphenated &= i > a && i + 1 < b && READ(i - 1) != '-';
        } else {
            hyphenated &= is_ascii_letter(c);
        }
    }
    hyphenated &= hyphens > 0;
    if (a == b || !(letters || digits || hyphenated) || (a > start) + 2 * hyphens + 1 + nsuffix > MAX_SHAPE_TOKENS)
        return NULL;
    cuts[ncuts++] = start;
    if (a > start) cuts[ncuts++] = a;
    for (Py_ssize_t i = a; hyphens && i < b; i++)
        if (READ(i) == '-') {
            cuts[ncuts++] = i;
            cuts[ncuts++] = i + 1;
        }
    for (int k = nsuffix - 1; k >= 0; k--) cuts[ncuts++] = suffix_cuts[k];
    cuts[ncuts] = end; /* tokens: [cuts[k], cuts[k + 1]) for k < ncuts */
    if (!hyphens) {
        int special = is_special(kind, data, a, b, specials);
        if (special != 0) return NULL; /* a special case, or an error */
    }
    for (int i = 0; i < ncuts; i++)
        for (int j = i + 2; j <= ncuts; j++) {
            int special = is_special(kind, data, cuts[i], cuts[j], specials);
            if (special != 0) return NULL;
        }
    if (ncuts == 1) return PyTuple_Pack(1, chunk);
    PyObject *out = PyTuple_New(ncuts);
    for (int k = 0; out != NULL && k < ncuts; k++) {
        PyObject *token = PyUnicode_FromKindAndData(kind, (const char *)data + cuts[k] * kind, cuts[k + 1] - cuts[k]);
        if (token == NULL) Py_CLEAR(out);
        else PyTuple_SET_ITEM(out, k, token);
    }
    return out;
}

typedef int (*TokenSink)(void *state, PyObject *const *tokens, Py_ssize_t count);

/* Passes the tokens of the chunk data[start:end) hashed `hash` to `sink`: from the memo, else from
 * tokenizer.cache, else its common shape, else tokenizer.tokens(chunk); the chunk then joins the memo. */
static int chunk_tokens(int kind, const void *data, Py_ssize_t start, Py_ssize_t end, uint32_t hash,
                        const Tokenizer *t, TokenSink sink, void *state) {
    MemoSlot *m = memo_find(hash, kind, data, start, end - start);
    if (m != NULL) {
        if (m->single) {
            PyObject *chunk = m->chunk;
            return sink(state, &chunk, 1);
        }
        return sink(state, PySequence_Fast_ITEMS(m->tokens), PyTuple_GET_SIZE(m->tokens));
    }
    PyObject *chunk = PyUnicode_FromKindAndData(kind, (const char *)data + start * kind, end - start);
    if (chunk == NULL) return -1;
    PyObject *found = PyDict_GetItemWithError(t->cache, chunk);
    if (found != NULL) Py_INCREF(found);
    else if (!PyErr_Occurred()) found = common_shape(kind, data, start, end, chunk, t->specials);
    if (found == NULL && !PyErr_Occurred()) found = PyObject_CallOneArg(t->tokens, chunk);
    if (found != NULL && !PyTuple_Check(found)) {
        Py_CLEAR(found);
        PyErr_SetString(PyExc_TypeError, "split_words: tokens must be tuples");
    }
    int status = found == NULL || (end - start <= MEMO_MAX_CHARS && memo_insert(hash, chunk, found) < 0) ? -1 : 0;
    if (status == 0) status = sink(state, PySequence_Fast_ITEMS(found), PyTuple_GET_SIZE(found));
    Py_XDECREF(found);
    Py_DECREF(chunk);
    return status;
}

/* Passes the tokens of each whitespace chunk of data[0:n) to `sink`, in order; with a `gap` token,
 * also where spaCy's tokenizer makes a whitespace token: for a leading run of whitespace, and for
 * any later run but a single space (`Reference.sentence_tokens`). */
static int walk_chunks(int kind, const void *data, Py_ssize_t n, const Tokenizer *t, TokenSink sink,
                       void *state, PyObject *gap) {
    if (memo_owner != t->cache) {
        memo_clear();
        Py_INCREF(t->cache);
        memo_owner = t->cache;
    }
    Py_ssize_t i = 0;
    while (i < n) {
        Py_ssize_t run = i;
        while (i < n && Py_UNICODE_ISSPACE(READ(i))) i++;
        if (gap != NULL && i > run && (run == 0 || i - run > 1 || READ(run) != ' ') && sink(state, &gap, 1) < 0)
            return -1;
        if (i >= n) break;
        uint64_t hash = 0xCBF29CE484222325ULL; /* FNV-1a over code points, then mixed */
        Py_ssize_t j = i;
        for (; j < n; j++) {
            Py_UCS4 c = READ(j);
            if (Py_UNICODE_ISSPACE(c)) break;
            hash = (hash ^ c) * 0x100000001B3ULL;
        }
        if (chunk_tokens(kind, data, i, j, (uint32_t)mix64(hash), t, sink, state) < 0) return -1;
        i = j;
    }
    return 0;
}

/* Tokens collected by the word split (borrowed: the memo or a live tuple holds each one until the
 * list is built). */
typedef struct {
    PyObject **items;
    Py_ssize_t count, capacity;
} Tokens;

static int collect_tokens(void *state, PyObject *const *tokens, Py_ssize_t count) {
    Tokens *out = state;
    if (out->count + count > out->capacity) {
        Py_ssize_t capacity = out->capacity * 2 > out->count + count ? out->capacity * 2 : out->count + count + 256;
        PyObject **grown = PyMem_Realloc(out->items, sizeof(PyObject *) * capacity);
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        out->items = grown;
        out->capacity = capacity;
    }
    for (Py_ssize_t k = 0; k < count; k++) {
        Py_INCREF(tokens[k]); /* a miss path's tuple dies before the list is built */
        out->items[out->count++] = tokens[k];
    }
    return 0;
}

static int count_tokens(void *state, PyObject *const *tokens, Py_ssize_t count) {
    *(Py_ssize_t *)state += count;
    return 0;
}

static PyObject *split_words(PyObject *self, PyObject *args) {
    PyObject *text, *object, *out = NULL;
    Tokenizer t;
    if (!PyArg_ParseTuple(args, "UO:split_words", &text, &object) || tokenizer_open(object, &t) < 0) return NULL;
    Tokens tokens = {NULL, 0, 0};
    if (walk_chunks(PyUnicode_KIND(text), PyUnicode_DATA(text), PyUnicode_GET_LENGTH(text), &t, collect_tokens,
                    &tokens, NULL) == 0 &&
        (out = PyList_New(tokens.count)) != NULL) {
        for (Py_ssize_t k = 0; k < tokens.count; k++) PyList_SET_ITEM(out, k, tokens.items[k]); /* steals */
        tokens.count = 0;
    }
    for (Py_ssize_t k = 0; k < tokens.count; k++) Py_DECREF(tokens.items[k]);
    PyMem_Free(tokens.items);
    tokenizer_close(&t);
    return out;
}

static PyObject *word_count(PyObject *self, PyObject *args) {
    PyObject *text, *object;
    Tokenizer t;
    if (!PyArg_ParseTuple(args, "UO:word_count", &text, &object) || tokenizer_open(object, &t) < 0) return NULL;
    Py_ssize_t count = 0;
    int status = walk_chunks(PyUnicode_KIND(text), PyUnicode_DATA(text), PyUnicode_GET_LENGTH(text), &t,
                             count_tokens, &count, NULL);
    tokenizer_close(&t);
    return status < 0 ? NULL : PyLong_FromSsize_t(count);
}

/* spaCy's Sentencizer on tokens: a token equal to a sentence-final character ends a sentence, the
 * next token that is not all Unicode punctuation (a whitespace token too) starts one. */
typedef struct {
    Py_ssize_t words, breaks;
    int seen_end;
} Sentences;

static int count_sentence_tokens(void *state, PyObject *const *tokens, Py_ssize_t count) {
    Sentences *s = state;
    for (Py_ssize_t k = 0; k < count; k++) {
        PyObject *word = tokens[k];
        if (!PyUnicode_Check(word)) {
            PyErr_SetString(PyExc_TypeError, "tokens must be str");
            return -1;
        }
        Py_ssize_t n = PyUnicode_GET_LENGTH(word);
        s->words++;
        if (n == 1 && in_set(&sentence_end, PyUnicode_READ_CHAR(word, 0))) {
            s->seen_end = 1;
        } else if (s->seen_end) {
            int kind = PyUnicode_KIND(word);
            const void *data = PyUnicode_DATA(word);
            Py_ssize_t i = 0;
            while (i < n && in_set(&unicode_punct, READ(i))) i++;
            if (i < n) {
                s->breaks++;
                s->seen_end = 0;
            }
        }
    }
    return 0;
}

/* ---- line rules ------------------------------------------------------------------------------- */

/* A line of str.splitlines(): [*start, *end) from `pos`; returns where the next line starts. */
static Py_ssize_t next_line(int kind, const void *data, Py_ssize_t n, Py_ssize_t pos, Py_ssize_t *start,
                            Py_ssize_t *end) {
    Py_ssize_t i = pos;
    while (i < n && !Py_UNICODE_ISLINEBREAK(READ(i))) i++;
    *start = pos;
    *end = i;
    if (i < n && READ(i) == '\r' && i + 1 < n && READ(i + 1) == '\n') i++;
    return i < n ? i + 1 : n;
}

static int ends_with_dots(const Py_UCS4 *s, Py_ssize_t len) {
    return len >= 3 && s[len - 1] == '.' && s[len - 2] == '.' && s[len - 3] == '.';
}

static int starts_with_ascii(const Py_UCS4 *s, Py_ssize_t len, Py_ssize_t i, const char *needle) {
    for (; *needle; needle++, i++)
        if (i >= len || s[i] != (Py_UCS4)(unsigned char)*needle) return 0;
    return 1;
}

/* Length of C4's citation marker (\[\d*]|\[edit]|\[citation needed], \d = Unicode decimal as in
 * `re`) at data[i] (a '['), 0 if none; the marker ends by `end`. */
static Py_ssize_t citation_length(int kind, const void *data, Py_ssize_t i, Py_ssize_t end) {
    Py_ssize_t j = i + 1;
    while (j < end && Py_UNICODE_ISDECIMAL(READ(j))) j++;
    if (j < end && READ(j) == ']') return j + 1 - i;
    static const char *words[] = {"[edit]", "[citation needed]"};
    for (int w = 0; w < 2; w++) {
        Py_ssize_t m = (Py_ssize_t)strlen(words[w]), k = 0;
        while (k < m && i + k < end && READ(i + k) == (Py_UCS4)words[w][k]) k++;
        if (k == m) return m;
    }
    return 0;
}

/* text_analysis.POLICY_SUBSTRINGS (c4_lower_hits looks for each by its first letter) */
static const char *POLICY[] = {"terms of use", "privacy policy", "cookie policy", "uses cookies",
                               "use of cookies", "use cookies"};

typedef struct {
    Py_ssize_t max_word_length, min_words, min_sentences;
    int citations, terminal_punct, lorem, javascript, curly, policy;
} C4Rules;

/* (lorem ipsum, javascript, policy phrase) found in line.lower() (Python's own lower() for non-ASCII
 * lines, whose full case mapping can change the length) */
static int c4_lower_hits(const Py_UCS4 *line, Py_ssize_t len, int ascii, Py_UCS4 *lower, int hits[3]) {
    const Py_UCS4 *low = lower;
    Py_UCS4 *copy = NULL;
    Py_ssize_t low_len = len;
    if (ascii) {
        for (Py_ssize_t k = 0; k < len; k++) lower[k] = line[k] >= 'A' && line[k] <= 'Z' ? line[k] + 32 : line[k];
    } else {
        PyObject *str = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, line, len);
        PyObject *lowered = str == NULL ? NULL : PyObject_CallMethod(str, "lower", NULL);
        Py_XDECREF(str);
        if (lowered == NULL) return -1;
        low_len = PyUnicode_GET_LENGTH(lowered);
        copy = PyUnicode_AsUCS4Copy(lowered);
        Py_DECREF(lowered);
        if (copy == NULL) return -1;
        low = copy;
    }
    hits[0] = hits[1] = hits[2] = 0;
    for (Py_ssize_t i = 0; i < low_len; i++) { /* one pass: the phrases by their first letter */
        switch (low[i]) {
        case 'l': hits[0] |= starts_with_ascii(low, low_len, i, "lorem ipsum"); break;
        case 'j': hits[1] |= starts_with_ascii(low, low_len, i, "javascript"); break;
        case 't': hits[2] |= starts_with_ascii(low, low_len, i, POLICY[0]); break;
        case 'p': hits[2] |= starts_with_ascii(low, low_len, i, POLICY[1]); break;
        case 'c': hits[2] |= starts_with_ascii(low, low_len, i, POLICY[2]); break;
        case 'u':
            hits[2] |= starts_with_ascii(low, low_len, i, POLICY[3]) || starts_with_ascii(low, low_len, i, POLICY[4]) ||
                       starts_with_ascii(low, low_len, i, POLICY[5]);
            break;
        }
    }
    PyMem_Free(copy);
    return 0;
}

/* C4's rules on each stripped line, in the reference's order (text_analysis.Reference.c4_lines). */
static PyObject *c4_lines(PyObject *self, PyObject *args) {
    PyObject *text, *rule_tuple, *object;
    C4Rules r;
    Tokenizer t;
    if (!PyArg_ParseTuple(args, "UO!O:c4_lines", &text, &PyTuple_Type, &rule_tuple, &object) ||
        !PyArg_ParseTuple(rule_tuple, "nppnppppn:c4_lines rules", &r.max_word_length, &r.citations,
                          &r.terminal_punct, &r.min_words, &r.lorem, &r.javascript, &r.curly, &r.policy,
                          &r.min_sentences) ||
        check_tables("c4_lines") < 0 || tokenizer_open(object, &t) < 0)
        return NULL;
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), pos = 0, out_len = 0, kept = 0, sentences = 0;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_UCS4 *line = PyMem_Malloc(sizeof(Py_UCS4) * (n + 1)), *lower = PyMem_Malloc(sizeof(Py_UCS4) * (n + 1));
    Py_UCS4 *out = PyMem_Malloc(sizeof(Py_UCS4) * (n + 1));
    const char *reason = NULL;
    PyObject *result = NULL;
    if (line == NULL || lower == NULL || out == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    while (pos < n) {
        Py_ssize_t start, end, words = 0, longest = 0, len = 0;
        pos = next_line(kind, data, n, pos, &start, &end);
        while (start < end && Py_UNICODE_ISSPACE(READ(start))) start++;
        while (end > start && Py_UNICODE_ISSPACE(READ(end - 1))) end--;
        for (Py_ssize_t i = start; i < end;) {
            Py_ssize_t j = i;
            while (j < end && !Py_UNICODE_ISSPACE(READ(j))) j++;
            words++;
            if (j - i > longest) longest = j - i;
            for (i = j; i < end && Py_UNICODE_ISSPACE(READ(i)); i++) {}
        }
        /* the reference checks the word length, then terminal punctuation, then the word count:
         * all three only drop the line, so their order does not matter */
        if ((r.max_word_length && longest > r.max_word_length) || words < r.min_words) continue;
        Py_UCS4 widest = 0;
        for (Py_ssize_t i = start; i < end;) {
            Py_UCS4 c = READ(i);
            Py_ssize_t skip = c == '[' && r.citations ? citation_length(kind, data, i, end) : 0;
            if (skip) {
                i += skip;
                continue;
            }
            line[len++] = c;
            widest |= c;
            i++;
        }
        if (r.terminal_punct) {
            Py_UCS4 last = len ? line[len - 1] : 0;
            int ends = last == '.' || last == '?' || last == '!' || last == '"' || last == '\'';
            if (!ends || ends_with_dots(line, len)) continue;
        }
        int hits[3];
        if (c4_lower_hits(line, len, widest < 128, lower, hits) < 0) goto done;
        if (r.lorem && hits[0]) {
            reason = "lorem_ipsum";
            break;
        }
        if (r.javascript && hits[1]) continue;
        if (r.curly) {
            Py_ssize_t k = 0;
            while (k < len && line[k] != '{') k++;
            if (k < len) {
                reason = "curly_bracket";
                break;
            }
        }
        if (r.policy && hits[2]) continue;
        if (sentences < r.min_sentences) {
            Sentences s = {0, 0, 0};
            PyObject *gap = PyUnicode_FromOrdinal(' '); /* spaCy's whitespace token, as one space */
            int status = gap == NULL ? -1 : walk_chunks(PyUnicode_4BYTE_KIND, line, len, &t, count_sentence_tokens, &s, gap);
            Py_XDECREF(gap);
            if (status < 0) goto done;
            sentences += s.words ? 1 + s.breaks : 0;
        }
        if (kept++) out[out_len++] = '\n';
        memcpy(out + out_len, line, sizeof(Py_UCS4) * len);
        out_len += len;
    }
    if (reason != NULL) result = Py_BuildValue("(sns)", reason, sentences, "");
    else {
        PyObject *joined = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, out, out_len);
        if (joined != NULL) result = Py_BuildValue("(OnN)", Py_None, sentences, joined);
    }
done:
    tokenizer_close(&t);
    PyMem_Free(line);
    PyMem_Free(lower);
    PyMem_Free(out);
    return result;
}

static PyObject *line_marks(PyObject *self, PyObject *args) {
    PyObject *text;
    if (!PyArg_ParseTuple(args, "U:line_marks", &text)) return NULL;
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), pos = 0, lines = 0, bullets = 0, ellipses = 0;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    while (pos < n) {
        Py_ssize_t start, end;
        pos = next_line(kind, data, n, pos, &start, &end);
        lines++;
        while (start < end && Py_UNICODE_ISSPACE(READ(start))) start++;
        while (end > start && Py_UNICODE_ISSPACE(READ(end - 1))) end--;
        if (start < end && (READ(start) == 0x2022 || READ(start) == '-')) bullets++;
        if (start < end && (READ(end - 1) == 0x2026 ||
                            (end - start >= 3 && READ(end - 1) == '.' && READ(end - 2) == '.' && READ(end - 3) == '.')))
            ellipses++;
    }
    return Py_BuildValue("(nnn)", lines, bullets, ellipses);
}

typedef struct {
    Py_ssize_t start, len;
} Span;

typedef struct {
    Span *items;
    Py_ssize_t count, capacity;
} Spans;

static int spans_add(Spans *spans, Py_ssize_t start, Py_ssize_t len) {
    if (spans->count == spans->capacity) {
        Py_ssize_t capacity = spans->capacity ? spans->capacity * 2 : 64;
        Span *grown = PyMem_Realloc(spans->items, sizeof(Span) * capacity);
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        spans->items = grown;
        spans->capacity = capacity;
    }
    spans->items[spans->count++] = (Span){start, len};
    return 0;
}

static uint64_t hash_bytes(const unsigned char *p, size_t len) {
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ len;
    for (; len >= 8; p += 8, len -= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        h = mix64(h ^ word);
    }
    uint64_t word = 0;
    memcpy(&word, p, len);
    return mix64(h ^ word);
}

/* text_analysis.duplicates over spans of one text: (spans equal to an earlier one, their characters) */
static int span_duplicates(int kind, const void *data, const Spans *spans, Py_ssize_t *repeats,
                           Py_ssize_t *chars) {
    size_t size = table_size(spans->count), mask = size - 1;
    Py_ssize_t *slots = PyMem_Calloc(size, sizeof(Py_ssize_t)); /* span index + 1, 0 = empty */
    uint64_t *hashes = PyMem_Malloc(sizeof(uint64_t) * (spans->count ? spans->count : 1));
    *repeats = *chars = 0;
    if (slots == NULL || hashes == NULL) {
        PyMem_Free(slots);
        PyMem_Free(hashes);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t s = 0; s < spans->count; s++) {
        Span span = spans->items[s];
        const unsigned char *bytes = (const unsigned char *)data + span.start * kind;
        uint64_t h = hashes[s] = hash_bytes(bytes, span.len * kind);
        for (size_t slot = h & mask;; slot = (slot + 1) & mask) {
            Py_ssize_t other = slots[slot] - 1;
            if (other < 0) {
                slots[slot] = s + 1;
                break;
            }
            Span seen = spans->items[other];
            if (hashes[other] == h && seen.len == span.len &&
                memcmp((const unsigned char *)data + seen.start * kind, bytes, span.len * kind) == 0) {
                (*repeats)++;
                *chars += span.len;
                break;
            }
        }
    }
    PyMem_Free(slots);
    PyMem_Free(hashes);
    return 0;
}

static PyObject *run_duplicates(PyObject *self, PyObject *args) {
    PyObject *text;
    Py_ssize_t shortest;
    if (!PyArg_ParseTuple(args, "Un:run_duplicates", &text, &shortest)) return NULL;
    if (shortest < 1) {
        PyErr_SetString(PyExc_ValueError, "run_duplicates: shortest must be at least 1");
        return NULL;
    }
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), start = 0, i = 0, repeats, chars;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Spans spans = {NULL, 0, 0};
    PyObject *result = NULL;
    while (i < n) {
        if (READ(i) != '\n') {
            i++;
            continue;
        }
        Py_ssize_t run = i;
        while (i < n && READ(i) == '\n') i++;
        if (i - run < shortest) continue;
        if (spans_add(&spans, start, run - start) < 0) goto done;
        start = i;
    }
    if (spans_add(&spans, start, n - start) < 0 || span_duplicates(kind, data, &spans, &repeats, &chars) < 0)
        goto done;
    result = Py_BuildValue("(nnn)", spans.count, repeats, chars);
done:
    PyMem_Free(spans.items);
    return result;
}

static PyObject *fineweb_lines(PyObject *self, PyObject *args) {
    PyObject *text;
    Py_ssize_t short_length, punct = 0, short_lines = 0, repeats, chars;
    if (!PyArg_ParseTuple(args, "Un:fineweb_lines", &text, &short_length) || check_tables("fineweb_lines") < 0)
        return NULL;
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Spans spans = {NULL, 0, 0};
    PyObject *result = NULL;
    for (Py_ssize_t start = 0; start <= n;) {
        Py_ssize_t end = start, k = start;
        while (end < n && READ(end) != '\n') end++;
        while (k < end && Py_UNICODE_ISSPACE(READ(k))) k++;
        if (k < end) { /* not blank */
            if (spans_add(&spans, start, end - start) < 0) goto done;
            punct += in_set(&terminal, READ(end - 1));
            short_lines += end - start <= short_length;
        }
        start = end + 1;
    }
    if (span_duplicates(kind, data, &spans, &repeats, &chars) < 0) goto done;
    result = Py_BuildValue("(nnnn)", spans.count, punct, short_lines, chars);
done:
    PyMem_Free(spans.items);
    return result;
}

/* ---- word statistics ------------------------------------------------------------------------------ */

static PyObject *word_classes(PyObject *self, PyObject *args) {
    PyObject *words;
    if (!PyArg_ParseTuple(args, "O!:word_classes", &PyList_Type, &words) || check_tables("word_classes") < 0)
        return NULL;
    Py_ssize_t content = 0, chars = 0, alpha = 0;
    for (Py_ssize_t w = 0; w < PyList_GET_SIZE(words); w++) {
        PyObject *word = PyList_GET_ITEM(words, w);
        if (!PyUnicode_Check(word)) {
            PyErr_SetString(PyExc_TypeError, "word_classes: words must be str");
            return NULL;
        }
        Py_ssize_t n = PyUnicode_GET_LENGTH(word), i = 0;
        int kind = PyUnicode_KIND(word);
        const void *data = PyUnicode_DATA(word);
        while (i < n && in_set(&symbols, READ(i))) i++;
        if (i < n) {
            content++;
            chars += n;
        }
        for (i = 0; i < n; i++) {
            if (Py_UNICODE_ISALPHA(READ(i))) {
                alpha++;
                break;
            }
        }
    }
    return Py_BuildValue("(nnn)", content, chars, alpha);
}

/* ---- n-gram statistics ------------------------------------------------------------------------- */

/* Word ids: equal strings get equal ids (str hashes are cached by CPython, so this is cheap). */
static int word_ids(PyObject *words, Py_ssize_t count, uint32_t *ids) {
    size_t size = table_size(count), mask = size - 1;
    Py_ssize_t *slots = PyMem_Malloc(sizeof(Py_ssize_t) * size); /* word index + 1, 0 = empty */
    Py_hash_t *hashes = PyMem_Malloc(sizeof(Py_hash_t) * (count ? count : 1));
    int status = -1;
    if (slots == NULL || hashes == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    memset(slots, 0, sizeof(Py_ssize_t) * size);
    uint32_t next = 0;
    for (Py_ssize_t w = 0; w < count; w++) {
        PyObject *word = PyList_GET_ITEM(words, w);
        if (!PyUnicode_Check(word)) {
            PyErr_SetString(PyExc_TypeError, "words must be str");
            goto done;
        }
        Py_hash_t hash = PyObject_Hash(word);
        if (hash == -1) goto done;
        hashes[w] = hash;
        size_t slot = mix64((uint64_t)hash) & mask;
        for (;;) {
            Py_ssize_t other = slots[slot] - 1;
            if (other < 0) {
                slots[slot] = w + 1;
                ids[w] = next++;
                break;
            }
            if (hashes[other] == hash) {
                PyObject *that = PyList_GET_ITEM(words, other);
                if (that == word || PyUnicode_Compare(that, word) == 0) {
                    ids[w] = ids[other];
                    break;
                }
            }
            slot = (slot + 1) & mask;
        }
    }
    status = 0;
done:
    PyMem_Free(slots);
    PyMem_Free(hashes);
    return status;
}

/* len(" ".join(g)) x count of the most frequent n-gram g of `ids` (word ids of `words`), ties to the
 * n-gram seen first (Counter.most_common(1)); gram_hash[s] is the hash of the n-gram at s, the
 * buffers hold `count` entries, `slots` mask + 1. */
static Py_ssize_t top_chars(PyObject *words, const uint32_t *ids, Py_ssize_t count, Py_ssize_t n,
                            const uint64_t *gram_hash, Py_ssize_t *slots, Py_ssize_t *counts, size_t mask) {
    if (count < n) return 0;
    Py_ssize_t grams = count - n + 1;
    memset(slots, 0, sizeof(Py_ssize_t) * (mask + 1)); /* first start + 1, 0 = empty */
    for (Py_ssize_t s = 0; s < grams; s++) {
        uint64_t h = gram_hash[s];
        counts[s] = 0;
        for (size_t slot = h & mask;; slot = (slot + 1) & mask) {
            Py_ssize_t first = slots[slot] - 1;
            if (first < 0) {
                slots[slot] = s + 1;
                counts[s] = 1;
                break;
            }
            if (gram_hash[first] == h && memcmp(ids + first, ids + s, sizeof(uint32_t) * n) == 0) {
                counts[first]++;
                break;
            }
        }
    }
    Py_ssize_t best = 0;
    for (Py_ssize_t s = 1; s < grams; s++)
        if (counts[s] > counts[best]) best = s;
    Py_ssize_t chars = n - 1;
    for (Py_ssize_t k = 0; k < n; k++) chars += PyUnicode_GET_LENGTH(PyList_GET_ITEM(words, best + k));
    return chars * counts[best];
}

/* Reads `sizes` (a tuple of n >= 1) into a new array, or NULL with an error. */
static Py_ssize_t *read_sizes(PyObject *sizes, const char *function) {
    Py_ssize_t count = PyTuple_GET_SIZE(sizes);
    Py_ssize_t *out = PyMem_Malloc(sizeof(Py_ssize_t) * (count ? count : 1));
    if (out == NULL) return (Py_ssize_t *)PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < count; i++) {
        out[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(sizes, i));
        if (out[i] < 1) {
            if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "%s: n must be at least 1", function);
            PyMem_Free(out);
            return NULL;
        }
    }
    return out;
}

static PyObject *top_ngram_chars(PyObject *self, PyObject *args) {
    PyObject *words, *sizes;
    if (!PyArg_ParseTuple(args, "O!O!:top_ngram_chars", &PyList_Type, &words, &PyTuple_Type, &sizes)) return NULL;
    Py_ssize_t count = PyList_GET_SIZE(words), nsizes = PyTuple_GET_SIZE(sizes);
    Py_ssize_t *ns = read_sizes(sizes, "top_ngram_chars");
    if (ns == NULL) return NULL;
    size_t size = table_size(count), mask = size - 1;
    uint32_t *ids = PyMem_Malloc(sizeof(uint32_t) * (count + 1));
    uint64_t *gram_hash = PyMem_Malloc(sizeof(uint64_t) * (count + 1));
    Py_ssize_t *slots = PyMem_Malloc(sizeof(Py_ssize_t) * size);
    Py_ssize_t *counts = PyMem_Malloc(sizeof(Py_ssize_t) * (count + 1)); /* by first start */
    PyObject *result = NULL;
    if (ids == NULL || gram_hash == NULL || slots == NULL || counts == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (word_ids(words, count, ids) < 0 || (result = PyTuple_New(nsizes)) == NULL) goto done;
    Py_ssize_t hashed = count + 1; /* gram_hash holds the hashes of the `hashed`-grams */
    for (Py_ssize_t i = 0; i < nsizes; i++) {
        if (ns[i] < hashed) { /* start over from 0-grams */
            for (Py_ssize_t s = 0; s < count; s++) gram_hash[s] = 0;
            hashed = 0;
        }
        for (; hashed < ns[i] && hashed < count; hashed++) /* n-gram hashes from (n-1)-gram hashes */
            for (Py_ssize_t s = 0; s + hashed < count; s++)
                gram_hash[s] = mix64(gram_hash[s] * 0x9E3779B97F4A7C15ULL + ids[s + hashed]);
        PyObject *value = PyLong_FromSsize_t(top_chars(words, ids, count, ns[i], gram_hash, slots, counts, mask));
        if (value == NULL) {
            Py_CLEAR(result);
            goto done;
        }
        PyTuple_SET_ITEM(result, i, value);
    }
done:
    PyMem_Free(ns);
    PyMem_Free(ids);
    PyMem_Free(gram_hash);
    PyMem_Free(slots);
    PyMem_Free(counts);
    return result;
}

#define MERSENNE61 ((((uint64_t)1) << 61) - 1)

static uint64_t mulmod61(uint64_t a, uint64_t b) {
    __uint128_t product = (__uint128_t)a * b;
    uint64_t low = (uint64_t)product & MERSENNE61, high = (uint64_t)(product >> 61);
    uint64_t sum = low + high;
    return sum >= MERSENNE61 ? sum - MERSENNE61 : sum;
}

/* Characters in word n-grams that repeat an earlier n-gram, skipping past each repeat (Gopher).
 * An n-gram is its words concatenated: a slice of all words concatenated (UCS4 `joined`), hashed
 * by a polynomial mod 2**61-1 read off prefix hashes, and compared in full when hashes match. */
static Py_ssize_t dup_chars(const Py_UCS4 *joined, const Py_ssize_t *offsets, const uint64_t *prefix,
                            const uint64_t *powers, Py_ssize_t count, Py_ssize_t n, Py_ssize_t *slots,
                            size_t mask) {
    Py_ssize_t grams = count - n + 1, repeated = 0, idx = 0;
    memset(slots, 0, sizeof(Py_ssize_t) * (mask + 1));
    while (idx < grams) {
        Py_ssize_t start = offsets[idx], end = offsets[idx + n], len = end - start;
        uint64_t h = prefix[end] + MERSENNE61 - mulmod61(prefix[start], powers[len]);
        if (h >= MERSENNE61) h -= MERSENNE61;
        size_t slot = mix64(h ^ ((uint64_t)len << 40)) & mask;
        int seen = 0;
        for (;; slot = (slot + 1) & mask) {
            Py_ssize_t other = slots[slot] - 1; /* gram index + 1, 0 = empty */
            if (other < 0) break;
            Py_ssize_t other_start = offsets[other], other_len = offsets[other + n] - other_start;
            if (other_len == len &&
                memcmp(joined + other_start, joined + start, sizeof(Py_UCS4) * len) == 0) {
                seen = 1;
                break;
            }
        }
        if (seen) {
            repeated += len;
            idx += n;
        } else {
            slots[slot] = idx + 1;
            idx += 1;
        }
    }
    return repeated;
}

static PyObject *dup_ngram_chars(PyObject *self, PyObject *args) {
    PyObject *words, *sizes;
    if (!PyArg_ParseTuple(args, "O!O!:dup_ngram_chars", &PyList_Type, &words, &PyTuple_Type, &sizes))
        return NULL;
    Py_ssize_t count = PyList_GET_SIZE(words), nsizes = PyTuple_GET_SIZE(sizes), smallest = count + 1;
    Py_ssize_t *ns = read_sizes(sizes, "dup_ngram_chars");
    if (ns == NULL) return NULL;
    for (Py_ssize_t i = 0; i < nsizes; i++)
        if (ns[i] < smallest) smallest = ns[i];
    Py_ssize_t *offsets = PyMem_Malloc(sizeof(Py_ssize_t) * (count + 1));
    Py_UCS4 *joined = NULL;
    uint64_t *prefix = NULL, *powers = NULL;
    Py_ssize_t *slots = NULL;
    PyObject *result = NULL;
    if (offsets == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    offsets[0] = 0;
    for (Py_ssize_t w = 0; w < count; w++) {
        PyObject *word = PyList_GET_ITEM(words, w);
        if (!PyUnicode_Check(word)) {
            PyErr_SetString(PyExc_TypeError, "dup_ngram_chars: words must be str");
            goto done;
        }
        offsets[w + 1] = offsets[w] + PyUnicode_GET_LENGTH(word);
    }
    Py_ssize_t total = offsets[count];
    size_t size = table_size(count), mask = size - 1;
    joined = PyMem_Malloc(sizeof(Py_UCS4) * (total + 1));
    prefix = PyMem_Malloc(sizeof(uint64_t) * (total + 1));
    powers = PyMem_Malloc(sizeof(uint64_t) * (total + 1));
    slots = PyMem_Malloc(sizeof(Py_ssize_t) * size);
    if (!joined || !prefix || !powers || !slots) {
        PyErr_NoMemory();
        goto done;
    }
    if (smallest <= count) { /* else every size has no n-gram: skip the hashing */
        for (Py_ssize_t w = 0; w < count; w++) {
            Py_ssize_t len = offsets[w + 1] - offsets[w];
            if (PyUnicode_AsUCS4(PyList_GET_ITEM(words, w), joined + offsets[w], len + 1, 0) == NULL)
                goto done;
        }
        const uint64_t base = 0x1F3D5B79A1C3E5ULL;
        prefix[0] = 0;
        powers[0] = 1;
        for (Py_ssize_t i = 0; i < total; i++) {
            prefix[i + 1] = mulmod61(prefix[i], base) + joined[i] + 1;
            if (prefix[i + 1] >= MERSENNE61) prefix[i + 1] -= MERSENNE61;
            powers[i + 1] = mulmod61(powers[i], base);
        }
    }
    result = PyTuple_New(nsizes);
    if (result == NULL) goto done;
    for (Py_ssize_t i = 0; i < nsizes; i++) {
        Py_ssize_t n = ns[i];
        Py_ssize_t chars = n > count ? 0 : dup_chars(joined, offsets, prefix, powers, count, n, slots, mask);
        PyObject *value = PyLong_FromSsize_t(chars);
        if (value == NULL) {
            Py_CLEAR(result);
            goto done;
        }
        PyTuple_SET_ITEM(result, i, value);
    }
done:
    PyMem_Free(ns);
    PyMem_Free(offsets);
    PyMem_Free(joined);
    PyMem_Free(prefix);
    PyMem_Free(powers);
    PyMem_Free(slots);
    return result;
}

static PyMethodDef methods[] = {
    {"set_tables", set_tables, METH_VARARGS, "Set the symbol, terminal, sentence-end and Unicode punctuation characters."},
    {"split_words", split_words, METH_VARARGS, "Tokens of the whitespace chunks of text, split as tokenizer splits them."},
    {"word_count", word_count, METH_VARARGS, "len(split_words(text, tokenizer)), without the list."},
    {"c4_lines", c4_lines, METH_VARARGS, "C4's line rules: (reason or None, sentences, kept text)."},
    {"line_marks", line_marks, METH_VARARGS, "(lines, bullet lines, ellipsis lines) of str.splitlines()."},
    {"run_duplicates", run_duplicates, METH_VARARGS, "(pieces, repeated pieces, their characters) between newline runs."},
    {"fineweb_lines", fineweb_lines, METH_VARARGS, "(non-blank lines, ending in terminal punctuation, short, repeated characters)."},
    {"word_classes", word_classes, METH_VARARGS, "(words with a non-symbol character, their characters, words with a letter)."},
    {"top_ngram_chars", top_ngram_chars, METH_VARARGS, "Per n in sizes: characters covered by the most frequent n-gram."},
    {"dup_ngram_chars", dup_ngram_chars, METH_VARARGS, "Per n in sizes: characters in n-grams repeating an earlier one."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_text_native", "Native hot paths of filters.text_analysis.", -1, methods,
};

PyMODINIT_FUNC PyInit__text_native(void) { return PyModule_Create(&module); }
