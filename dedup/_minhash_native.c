/* Native hot paths of dedup/signatures.py; that module's numpy/Python code is the reference these
 * must equal (tests/dedup/test_signatures_native.py compares them on many texts).
 *
 *   simplify(lowered, punctuation)   numbers -> "0", punctuation -> space, whitespace collapsed to
 *                                    single spaces (the middle of `normalize_text`)
 *   shingle_hashes(utf8, ngram, base) sorted unique 64-bit word n-gram hashes (`ShingleHasher`)
 *   minhash(shingle_sets, a, b)      per set, per permutation: min of (a*x + b) folded mod 2**61-1
 * 64-bit arrays travel as buffers (bytes out, any buffer in) in native byte order.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MERSENNE61 ((((uint64_t)1) << 61) - 1)
#define POLY 0x9E3779B97F4A7C15ULL

static int contains(const Py_UCS4 *sorted, Py_ssize_t count, Py_UCS4 c) {
    Py_ssize_t lo = 0, hi = count;
    while (lo < hi) {
        Py_ssize_t mid = (lo + hi) / 2;
        if (sorted[mid] < c) lo = mid + 1;
        else hi = mid;
    }
    return lo < count && sorted[lo] == c;
}

/* \d of a str pattern (Unicode Nd), with an ASCII fast path */
#define IS_DIGIT(c) ((c) < 128 ? (c) >= '0' && (c) <= '9' : Py_UNICODE_ISDECIMAL(c))

static int is_number_separator(Py_UCS4 c) { /* [.,،٫⎖⎗⎘] */
    return c == '.' || c == ',' || c == 0x060C || c == 0x066B || c == 0x2396 || c == 0x2397 || c == 0x2398;
}

/* `punctuation` must be sorted (the caller passes it so). */
static PyObject *simplify(PyObject *self, PyObject *args) {
    PyObject *text, *punctuation;
    if (!PyArg_ParseTuple(args, "UU:simplify", &text, &punctuation)) return NULL;
    Py_UCS4 *table = PyUnicode_AsUCS4Copy(punctuation);
    if (table == NULL) return NULL;
    Py_ssize_t table_len = PyUnicode_GET_LENGTH(punctuation);
    uint64_t ascii[2] = {0, 0};
    for (Py_ssize_t i = 0; i < table_len; i++)
        if (table[i] < 128) ascii[table[i] >> 6] |= (uint64_t)1 << (table[i] & 63);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), k = 0;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_UCS4 *out = PyMem_Malloc(sizeof(Py_UCS4) * (n ? n : 1));
    if (out == NULL) {
        PyMem_Free(table);
        return PyErr_NoMemory();
    }
    int space = 0; /* a separator is pending (only after a first character) */
    Py_ssize_t i = 0;
    while (i < n) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (IS_DIGIT(c)) { /* \d+([.,،٫⎖⎗⎘]\d+)? -> 0 */
            Py_ssize_t j = i + 1;
            while (j < n && IS_DIGIT(PyUnicode_READ(kind, data, j))) j++;
            if (j + 1 < n && is_number_separator(PyUnicode_READ(kind, data, j)) &&
                IS_DIGIT(PyUnicode_READ(kind, data, j + 1))) {
                j += 2;
                while (j < n && IS_DIGIT(PyUnicode_READ(kind, data, j))) j++;
            }
            c = '0';
            i = j;
        } else {
            i++;
            int blank = c < 128 ? (int)((ascii[c >> 6] >> (c & 63)) & 1) : contains(table, table_len, c);
            if (blank || Py_UNICODE_ISSPACE(c)) {
                space = k > 0;
                continue;
            }
        }
        if (space) out[k++] = ' ';
        out[k++] = c;
        space = 0;
    }
    PyObject *result = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, out, k);
    PyMem_Free(out);
    PyMem_Free(table);
    return result;
}

static uint64_t fmix64(uint64_t x) {
    x ^= x >> 33;
    x *= 0xFF51AFD7ED558CCDULL;
    x ^= x >> 33;
    x *= 0xC4CEB9FE1A85EC53ULL;
    x ^= x >> 33;
    return x;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* n-gram = bytes from its first word's start to its last word's end; its hash is
 * fmix64(sum c_j * base**(end-1-j) + length * POLY) mod 2**64. Fewer than `ngram` words: one
 * n-gram of all the words. */
static PyObject *shingle_hashes(PyObject *self, PyObject *args) {
    const unsigned char *data;
    Py_ssize_t n, ngram;
    unsigned long long base;
    if (!PyArg_ParseTuple(args, "y#nK:shingle_hashes", &data, &n, &ngram, &base)) return NULL;
    if (ngram < 1) {
        PyErr_SetString(PyExc_ValueError, "shingle_hashes: ngram must be at least 1");
        return NULL;
    }
    if (n == 0) return PyBytes_FromStringAndSize(NULL, 0);
    Py_ssize_t words = 1;
    for (Py_ssize_t i = 0; i < n; i++) words += data[i] == ' ';
    Py_ssize_t width = ngram < words ? ngram : words, grams = words - width + 1;
    Py_ssize_t *starts = PyMem_Malloc(sizeof(Py_ssize_t) * (words + 1)); /* word starts, then n+1 */
    uint64_t *prefix = PyMem_Malloc(sizeof(uint64_t) * (n + 1));
    uint64_t *powers = PyMem_Malloc(sizeof(uint64_t) * (n + 1));
    PyObject *result = PyBytes_FromStringAndSize(NULL, sizeof(uint64_t) * grams);
    if (starts == NULL || prefix == NULL || powers == NULL || result == NULL) {
        if (result == NULL) PyErr_Clear();
        Py_CLEAR(result);
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t w = 0;
    starts[w++] = 0;
    prefix[0] = 0;
    powers[0] = 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        prefix[i + 1] = prefix[i] * base + data[i];
        powers[i + 1] = powers[i] * base;
        if (data[i] == ' ') starts[w++] = i + 1;
    }
    starts[w] = n + 1; /* so starts[g + width] - 1 is the end of word g + width - 1 */
    uint64_t *hashes = (uint64_t *)PyBytes_AS_STRING(result);
    for (Py_ssize_t g = 0; g < grams; g++) {
        Py_ssize_t start = starts[g], end = starts[g + width] - 1, len = end - start;
        hashes[g] = fmix64(prefix[end] - prefix[start] * powers[len] + (uint64_t)len * POLY);
    }
    qsort(hashes, grams, sizeof(uint64_t), cmp_u64);
    Py_ssize_t unique = 0;
    for (Py_ssize_t g = 0; g < grams; g++)
        if (unique == 0 || hashes[g] != hashes[unique - 1]) hashes[unique++] = hashes[g];
    if (unique != grams) _PyBytes_Resize(&result, sizeof(uint64_t) * unique);
done:
    PyMem_Free(starts);
    PyMem_Free(prefix);
    PyMem_Free(powers);
    return result;
}

/* out[p] = min over x of v = a[p]*x + b[p] (mod 2**64), folded to (v & P) + (v >> 61); empty set:
 * all 2**64-1 */
static void minhash_one(const uint64_t *x, Py_ssize_t count, const uint64_t *a, const uint64_t *b,
                        Py_ssize_t perms, uint64_t *out) {
    for (Py_ssize_t p = 0; p < perms; p++) out[p] = UINT64_MAX;
    for (Py_ssize_t i = 0; i < count; i++) {
        uint64_t value = x[i];
        for (Py_ssize_t p = 0; p < perms; p++) {
            uint64_t v = a[p] * value + b[p];
            v = (v & MERSENNE61) + (v >> 61);
            out[p] = v < out[p] ? v : out[p];
        }
    }
}

static PyObject *minhash(PyObject *self, PyObject *args) {
    PyObject *sets;
    Py_buffer a, b;
    if (!PyArg_ParseTuple(args, "Oy*y*:minhash", &sets, &a, &b)) return NULL;
    PyObject *result = NULL, *seq = NULL;
    if (a.len != b.len || a.len % sizeof(uint64_t)) {
        PyErr_SetString(PyExc_ValueError, "minhash: a and b must be uint64 arrays of one length");
        goto done;
    }
    seq = PySequence_Fast(sets, "minhash: shingle_sets must be a sequence");
    if (seq == NULL) goto done;
    Py_ssize_t docs = PySequence_Fast_GET_SIZE(seq), perms = a.len / sizeof(uint64_t);
    result = PyBytes_FromStringAndSize(NULL, sizeof(uint64_t) * perms * docs);
    if (result == NULL) goto done;
    uint64_t *out = (uint64_t *)PyBytes_AS_STRING(result);
    for (Py_ssize_t d = 0; d < docs; d++) {
        Py_buffer set;
        if (PyObject_GetBuffer(PySequence_Fast_GET_ITEM(seq, d), &set, PyBUF_C_CONTIGUOUS) < 0) {
            Py_CLEAR(result);
            goto done;
        }
        if (set.len % sizeof(uint64_t) || (set.itemsize != 1 && set.itemsize != sizeof(uint64_t))) {
            PyBuffer_Release(&set);
            PyErr_SetString(PyExc_ValueError, "minhash: shingle sets must be uint64 arrays");
            Py_CLEAR(result);
            goto done;
        }
        minhash_one(set.buf, set.len / sizeof(uint64_t), a.buf, b.buf, perms, out + d * perms);
        PyBuffer_Release(&set);
    }
done:
    Py_XDECREF(seq);
    PyBuffer_Release(&a);
    PyBuffer_Release(&b);
    return result;
}

static PyMethodDef methods[] = {
    {"simplify", simplify, METH_VARARGS, "Numbers to 0, punctuation and whitespace runs to one space."},
    {"shingle_hashes", shingle_hashes, METH_VARARGS, "Sorted unique hashes of the word n-grams."},
    {"minhash", minhash, METH_VARARGS, "MinHash signatures of shingle sets (bytes, docs x perms)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_minhash_native", "Native hot paths of dedup.signatures.", -1, methods,
};

PyMODINIT_FUNC PyInit__minhash_native(void) { return PyModule_Create(&module); }
