/* Native hot paths of filters/text_analysis.py; that module's pure-Python functions are the
 * reference these must equal (tests/filters/test_text_native.py compares them on many texts).
 *
 *   split_words(text, cache, tokens)  whitespace chunks (str.split()), each looked up in the dict
 *                                     `cache` or passed to `tokens(chunk)`; their tokens, flattened
 *                                     (known chunks are memoized here too, see MemoSlot)
 *   split_newline_runs(text, shortest) text split at runs of at least `shortest` newlines
 *   set_punctuation(chars)            the characters that make a "symbol word" (called once)
 *   content_words(words)              words with a character outside that set
 *   alpha_word_count(words)           words with an alphabetic character (str.isalpha per char)
 *   top_ngram_chars(words, n)         (len(" ".join(g)) ) x count of the most frequent n-gram g
 *   dup_ngram_chars(words, sizes)     for each n in sizes: characters of n-grams repeating an
 *                                     earlier one (Gopher)
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t mix64(uint64_t x) { /* murmur3's finalizer */
    x ^= x >> 33;
    x *= 0xFF51AFD7ED558CCDULL;
    x ^= x >> 33;
    x *= 0xC4CEB9FE1A85EC53ULL;
    x ^= x >> 33;
    return x;
}

/* ---- split_words ----------------------------------------------------------------------------- */

/* A front memo of `cache`, keyed by the chunk's characters, so a known chunk costs no str object
 * and no SipHash: open addressing, (hash, chunk, tokens) per slot, at most MEMO_LIMIT chunks. It
 * belongs to one `cache` dict and is emptied when another is passed. */
#define MEMO_LIMIT 200000
typedef struct {
    uint64_t hash;
    PyObject *chunk; /* NULL: empty slot */
    PyObject *tokens;
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
        if (PyUnicode_READ(chunk_kind, chunk_data, i) != PyUnicode_READ(kind, data, start + i)) return 0;
    return 1;
}

static int memo_insert(uint64_t hash, PyObject *chunk, PyObject *tokens) {
    if (memo_count >= MEMO_LIMIT) return 0;
    if (memo == NULL || (memo_count + 1) * 2 > memo_mask + 1) {
        size_t size = memo == NULL ? 1024 : (memo_mask + 1) * 2;
        MemoSlot *grown = PyMem_Calloc(size, sizeof(MemoSlot));
        if (grown == NULL) return -1;
        for (size_t i = 0; memo != NULL && i <= memo_mask; i++) {
            if (memo[i].chunk == NULL) continue;
            size_t slot = memo[i].hash & (size - 1);
            while (grown[slot].chunk != NULL) slot = (slot + 1) & (size - 1);
            grown[slot] = memo[i];
        }
        PyMem_Free(memo);
        memo = grown;
        memo_mask = size - 1;
    }
    size_t slot = hash & memo_mask;
    while (memo[slot].chunk != NULL) slot = (slot + 1) & memo_mask;
    Py_INCREF(chunk);
    Py_INCREF(tokens);
    memo[slot] = (MemoSlot){hash, chunk, tokens};
    memo_count++;
    return 0;
}

static PyObject *split_words(PyObject *self, PyObject *args) {
    PyObject *text, *cache, *tokens;
    if (!PyArg_ParseTuple(args, "UO!O:split_words", &text, &PyDict_Type, &cache, &tokens)) return NULL;
    if (memo_owner != cache) {
        memo_clear();
        Py_INCREF(cache);
        memo_owner = cache;
    }
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    PyObject *out = PyList_New(0);
    if (out == NULL) return NULL;
    Py_ssize_t i = 0;
    while (i < n) {
        while (i < n && Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, i))) i++;
        if (i >= n) break;
        uint64_t hash = 0xCBF29CE484222325ULL; /* FNV-1a over code points, then mixed */
        Py_ssize_t j = i;
        for (; j < n; j++) {
            Py_UCS4 c = PyUnicode_READ(kind, data, j);
            if (Py_UNICODE_ISSPACE(c)) break;
            hash = (hash ^ c) * 0x100000001B3ULL;
        }
        hash = mix64(hash);
        PyObject *found = NULL;
        for (size_t slot = hash & memo_mask; memo != NULL && memo[slot].chunk != NULL;
             slot = (slot + 1) & memo_mask) {
            if (memo[slot].hash == hash && same_chars(memo[slot].chunk, kind, data, i, j - i)) {
                found = memo[slot].tokens;
                Py_INCREF(found);
                break;
            }
        }
        if (found == NULL) {
            PyObject *chunk = PyUnicode_Substring(text, i, j);
            if (chunk == NULL) goto fail;
            found = PyDict_GetItemWithError(cache, chunk);
            if (found != NULL) Py_INCREF(found);
            else if (!PyErr_Occurred()) found = PyObject_CallOneArg(tokens, chunk);
            if (found == NULL || !PyTuple_Check(found) || memo_insert(hash, chunk, found) < 0) {
                if (found != NULL && !PyErr_Occurred())
                    PyErr_SetString(PyExc_TypeError, "split_words: tokens must be tuples");
                Py_XDECREF(found);
                Py_DECREF(chunk);
                goto fail;
            }
            Py_DECREF(chunk);
        }
        Py_ssize_t count = PyTuple_GET_SIZE(found);
        for (Py_ssize_t k = 0; k < count; k++) {
            if (PyList_Append(out, PyTuple_GET_ITEM(found, k)) < 0) {
                Py_DECREF(found);
                goto fail;
            }
        }
        Py_DECREF(found);
        i = j;
    }
    return out;
fail:
    Py_DECREF(out);
    return NULL;
}

/* ---- lines and paragraphs -------------------------------------------------------------------- */

static PyObject *split_newline_runs(PyObject *self, PyObject *args) {
    PyObject *text;
    Py_ssize_t shortest;
    if (!PyArg_ParseTuple(args, "Un:split_newline_runs", &text, &shortest)) return NULL;
    if (shortest < 1) {
        PyErr_SetString(PyExc_ValueError, "split_newline_runs: shortest must be at least 1");
        return NULL;
    }
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), start = 0, i = 0;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    PyObject *out = PyList_New(0), *piece;
    if (out == NULL) return NULL;
    while (i < n) {
        if (PyUnicode_READ(kind, data, i) != '\n') {
            i++;
            continue;
        }
        Py_ssize_t run = i;
        while (i < n && PyUnicode_READ(kind, data, i) == '\n') i++;
        if (i - run < shortest) continue;
        piece = PyUnicode_Substring(text, start, run);
        if (piece == NULL || PyList_Append(out, piece) < 0) goto fail;
        Py_DECREF(piece);
        start = i;
    }
    piece = PyUnicode_Substring(text, start, n);
    if (piece == NULL || PyList_Append(out, piece) < 0) goto fail;
    Py_DECREF(piece);
    return out;
fail:
    Py_XDECREF(piece);
    Py_DECREF(out);
    return NULL;
}

/* ---- symbol and alphabetic words --------------------------------------------------------------- */

static uint64_t punct_ascii[2];    /* bitmap of punctuation characters below 128 */
static Py_UCS4 *punct_other;       /* sorted punctuation characters from 128 up */
static Py_ssize_t punct_other_len;
static int punct_ready;

static int cmp_ucs4(const void *a, const void *b) {
    Py_UCS4 x = *(const Py_UCS4 *)a, y = *(const Py_UCS4 *)b;
    return (x > y) - (x < y);
}

static PyObject *set_punctuation(PyObject *self, PyObject *args) {
    PyObject *chars;
    if (!PyArg_ParseTuple(args, "U:set_punctuation", &chars)) return NULL;
    Py_ssize_t n = PyUnicode_GET_LENGTH(chars);
    Py_UCS4 *other = PyMem_Malloc(sizeof(Py_UCS4) * (n ? n : 1));
    if (other == NULL) return PyErr_NoMemory();
    uint64_t ascii[2] = {0, 0};
    Py_ssize_t count = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ_CHAR(chars, i);
        if (c < 128) ascii[c >> 6] |= (uint64_t)1 << (c & 63);
        else other[count++] = c;
    }
    qsort(other, count, sizeof(Py_UCS4), cmp_ucs4);
    PyMem_Free(punct_other);
    punct_other = other;
    punct_other_len = count;
    punct_ascii[0] = ascii[0];
    punct_ascii[1] = ascii[1];
    punct_ready = 1;
    Py_RETURN_NONE;
}

static int is_punctuation(Py_UCS4 c) {
    if (c < 128) return (punct_ascii[c >> 6] >> (c & 63)) & 1;
    return bsearch(&c, punct_other, punct_other_len, sizeof(Py_UCS4), cmp_ucs4) != NULL;
}

static PyObject *content_words(PyObject *self, PyObject *args) {
    PyObject *words;
    if (!PyArg_ParseTuple(args, "O!:content_words", &PyList_Type, &words)) return NULL;
    if (!punct_ready) {
        PyErr_SetString(PyExc_RuntimeError, "content_words: set_punctuation was not called");
        return NULL;
    }
    PyObject *out = PyList_New(0);
    if (out == NULL) return NULL;
    for (Py_ssize_t w = 0; w < PyList_GET_SIZE(words); w++) {
        PyObject *word = PyList_GET_ITEM(words, w);
        if (!PyUnicode_Check(word)) {
            Py_DECREF(out);
            PyErr_SetString(PyExc_TypeError, "content_words: words must be str");
            return NULL;
        }
        Py_ssize_t n = PyUnicode_GET_LENGTH(word);
        int kind = PyUnicode_KIND(word);
        const void *data = PyUnicode_DATA(word);
        Py_ssize_t i = 0;
        while (i < n && is_punctuation(PyUnicode_READ(kind, data, i))) i++;
        if (i < n && PyList_Append(out, word) < 0) {
            Py_DECREF(out);
            return NULL;
        }
    }
    return out;
}

static PyObject *alpha_word_count(PyObject *self, PyObject *args) {
    PyObject *words;
    if (!PyArg_ParseTuple(args, "O!:alpha_word_count", &PyList_Type, &words)) return NULL;
    Py_ssize_t count = 0;
    for (Py_ssize_t w = 0; w < PyList_GET_SIZE(words); w++) {
        PyObject *word = PyList_GET_ITEM(words, w);
        if (!PyUnicode_Check(word)) {
            PyErr_SetString(PyExc_TypeError, "alpha_word_count: words must be str");
            return NULL;
        }
        Py_ssize_t n = PyUnicode_GET_LENGTH(word);
        int kind = PyUnicode_KIND(word);
        const void *data = PyUnicode_DATA(word);
        for (Py_ssize_t i = 0; i < n; i++) {
            if (Py_UNICODE_ISALPHA(PyUnicode_READ(kind, data, i))) {
                count++;
                break;
            }
        }
    }
    return PyLong_FromSsize_t(count);
}

/* ---- n-gram statistics ------------------------------------------------------------------------- */

static size_t table_size(Py_ssize_t items) { /* a power of two at least twice `items` */
    size_t size = 16;
    while (size < (size_t)items * 2) size <<= 1;
    return size;
}

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

static PyObject *top_ngram_chars(PyObject *self, PyObject *args) {
    PyObject *words;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "O!n:top_ngram_chars", &PyList_Type, &words, &n)) return NULL;
    Py_ssize_t count = PyList_GET_SIZE(words);
    if (n < 1) {
        PyErr_SetString(PyExc_ValueError, "top_ngram_chars: n must be at least 1");
        return NULL;
    }
    if (count < n) return PyLong_FromLong(0);
    Py_ssize_t grams = count - n + 1;
    size_t size = table_size(grams), mask = size - 1;
    uint32_t *ids = PyMem_Malloc(sizeof(uint32_t) * count);
    uint64_t *gram_hash = PyMem_Malloc(sizeof(uint64_t) * grams);
    Py_ssize_t *slots = PyMem_Malloc(sizeof(Py_ssize_t) * size); /* first start + 1, 0 = empty */
    Py_ssize_t *counts = PyMem_Calloc(grams, sizeof(Py_ssize_t)); /* by first start */
    PyObject *result = NULL;
    if (ids == NULL || gram_hash == NULL || slots == NULL || counts == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (word_ids(words, count, ids) < 0) goto done;
    memset(slots, 0, sizeof(Py_ssize_t) * size);
    for (Py_ssize_t s = 0; s < grams; s++) {
        uint64_t h = (uint64_t)n;
        for (Py_ssize_t k = 0; k < n; k++) h = mix64(h * 0x9E3779B97F4A7C15ULL + ids[s + k]);
        gram_hash[s] = h;
        size_t slot = h & mask;
        for (;;) {
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
            slot = (slot + 1) & mask;
        }
    }
    /* Counter.most_common(1): the highest count, ties to the n-gram seen first */
    Py_ssize_t best = 0;
    for (Py_ssize_t s = 1; s < grams; s++)
        if (counts[s] > counts[best]) best = s;
    Py_ssize_t chars = n - 1;
    for (Py_ssize_t k = 0; k < n; k++) chars += PyUnicode_GET_LENGTH(PyList_GET_ITEM(words, best + k));
    result = PyLong_FromSsize_t(chars * counts[best]);
done:
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
    for (Py_ssize_t i = 0; i < nsizes; i++) {
        Py_ssize_t n = PyLong_AsSsize_t(PyTuple_GET_ITEM(sizes, i));
        if (n == -1 && PyErr_Occurred()) return NULL;
        if (n < 1) {
            PyErr_SetString(PyExc_ValueError, "dup_ngram_chars: n must be at least 1");
            return NULL;
        }
        if (n < smallest) smallest = n;
    }
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
        Py_ssize_t n = PyLong_AsSsize_t(PyTuple_GET_ITEM(sizes, i));
        Py_ssize_t chars = n > count ? 0 : dup_chars(joined, offsets, prefix, powers, count, n, slots, mask);
        PyObject *value = PyLong_FromSsize_t(chars);
        if (value == NULL) {
            Py_CLEAR(result);
            goto done;
        }
        PyTuple_SET_ITEM(result, i, value);
    }
done:
    PyMem_Free(offsets);
    PyMem_Free(joined);
    PyMem_Free(prefix);
    PyMem_Free(powers);
    PyMem_Free(slots);
    return result;
}

static PyMethodDef methods[] = {
    {"split_words", split_words, METH_VARARGS, "Tokens of the whitespace chunks of text (cache, else tokens(chunk))."},
    {"split_newline_runs", split_newline_runs, METH_VARARGS, "re.split('\\n{shortest,}', text)."},
    {"set_punctuation", set_punctuation, METH_VARARGS, "Set the characters of symbol words."},
    {"content_words", content_words, METH_VARARGS, "Words with a character outside the punctuation set."},
    {"alpha_word_count", alpha_word_count, METH_VARARGS, "Number of words with an alphabetic character."},
    {"top_ngram_chars", top_ngram_chars, METH_VARARGS, "Characters covered by the most frequent n-gram."},
    {"dup_ngram_chars", dup_ngram_chars, METH_VARARGS, "Per n in sizes: characters in n-grams repeating an earlier one."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_text_native", "Native hot paths of filters.text_analysis.", -1, methods,
};

PyMODINIT_FUNC PyInit__text_native(void) { return PyModule_Create(&module); }
