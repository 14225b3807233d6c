/* Native fastText supervised inference for lid.176 (filters/language.py's `language` stage).
 *
 *   Model(path)                    reads a fastText .bin/.ftz model (supervised, hierarchical softmax)
 *   Model.predict(texts, k, threshold)
 *                                  for each text, fastText's prediction of text.replace("\n", " ")
 *                                  (as its Python binding sees it: a newline appended, so the line
 *                                  ends with the EOS token): a tuple (labels, probabilities), as
 *                                  many as fastText returns, best first; k=-1: every label
 *   Model.labels                   the labels, in dictionary order
 *
 * Every step follows fastText's own code, so results are bit-identical to its binding
 * (tests/filters/test_language_native.py and benchmarks/language_parity.py compare them):
 * tokens split at ' ' \t \v \f \r \0 (and '\n', which the stage turns into spaces); a token equal to
 * "</s>" ends the line, as fastText's getLine does; labels and unknown tokens starting with
 * "__label__" add nothing; a known word adds its id then its character n-grams, an unknown one
 * only its n-grams ("<word>", minn..maxn UTF-8 characters, FNV-1a over signed chars, modulo
 * bucket, kept only if in the pruned index); the input rows are summed in that order in float32,
 * scaled by 1/count; the hierarchical-softmax tree (built from the label counts) is searched
 * depth-first with fastText's float/double mix and its std::push_heap / pop_heap / sort_heap order
 * (ties included).
 * Differences, for speed only: a bitmap and a flat open-addressing table replace std::unordered_map
 * for the pruned index; quantized rows are decoded once at load (the same float32 products); and
 * the rows of each token are memoized (TokenTable), so a repeated unknown token costs one lookup.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* fastText's wheels do a separate multiply and add; a fused multiply-add would round differently. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#define FASTTEXT_MAGIC 793712314
#define FASTTEXT_VERSION 12
#define LOSS_HS 1
#define MODEL_SUP 3
#define KSUB 256
#define MEMO_TOKENS 65536 /* unknown tokens memoized beyond the dictionary (then the memo restarts) */
#define MEMO_LONGEST 64   /* longer tokens (bytes) are not memoized */
static const char EOS[] = "</s>";
static const char LABEL_PREFIX[] = "__label__";

typedef struct {
    float score;
    int32_t node;
} Pred;

typedef struct {
    int32_t *rows;
    size_t count, capacity;
} Rows;

/* A token and the input rows it adds: key[key .. key + len), rows[first .. first + count). */
typedef struct {
    uint32_t hash, key, len, first, count;
} Token;

typedef struct {
    uint32_t hash;
    int32_t token; /* -1: empty */
} Slot;

/* Every dictionary entry (fixed), then unknown tokens as they are met (the memo). */
typedef struct {
    Token *tokens;
    uint32_t count, fixed, limit;
    unsigned char *keys;
    size_t keys_used, keys_capacity, keys_fixed;
    Rows rows;
    size_t rows_fixed;
    Slot *slots; /* open addressing on the hash */
    uint32_t mask;
} TokenTable;

typedef struct {
    PyObject_HEAD
    int32_t dim, minn, maxn, bucket, nwords, nlabels, size;
    int64_t pruned; /* fastText's pruneidx_size_: -1 = not pruned */
    uint64_t mod_m; /* bucket reciprocal for fastmod */
    TokenTable table;
    /* pruned index: a bitmap of the kept bucket ids, and per 64-bit word the kept ids before it;
     * the rows of kept n-grams are stored in bucket-id order, so an id's row is its rank */
    uint64_t *kept_bits;
    uint32_t *kept_before;
    void *input_block, *output_block; /* the allocations of `input` and `output` (64-byte aligned) */
    float *input;                      /* input rows, decoded: words, then kept n-gram buckets */
    int64_t input_rows;
    float *output; /* output rows: the first nlabels - 1 are the tree's inner nodes */
    float *out_scale; /* per output row: the quantized norm (NULL: none) */
    int64_t output_rows;
    int32_t *left, *right; /* tree of 2 * nlabels - 1 nodes */
    PyObject *labels;      /* tuple of str */
} Model;

/* ---- hashing and tables ----------------------------------------------------------------------- */

static uint32_t fasttext_hash(const unsigned char *s, size_t n) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) {
        h ^= (uint32_t)(int32_t)(int8_t)s[i]; /* fastText: uint32_t(int8_t(str[i])) */
        h *= 16777619u;
    }
    return h;
}

static uint64_t fastmod_m(uint32_t d) { return UINT64_MAX / d + 1; }
static uint32_t fastmod(uint32_t a, uint64_t m, uint32_t d) { /* a % d (Lemire) */
    return (uint32_t)(((__uint128_t)(m * a) * d) >> 64);
}

static inline uint32_t popcount64(uint64_t x) {
    x -= (x >> 1) & 0x5555555555555555ULL;
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    return (uint32_t)((x * 0x0101010101010101ULL) >> 56);
}

static uint32_t table_mask(int64_t count) {
    uint32_t size = 16;
    while ((int64_t)size < 2 * count) size <<= 1;
    return size - 1;
}

static int grow(void **data, size_t *capacity, size_t needed, size_t item) {
    if (needed <= *capacity) return 0;
    size_t capacity_new = *capacity ? *capacity : 64;
    while (capacity_new < needed) capacity_new *= 2;
    void *grown = PyMem_Realloc(*data, capacity_new * item);
    if (!grown) return PyErr_NoMemory(), -1;
    *data = grown;
    *capacity = capacity_new;
    return 0;
}

static int rows_push(Rows *out, int32_t row) {
    if (grow((void **)&out->rows, &out->capacity, out->count + 1, sizeof(int32_t)) < 0) return -1;
    out->rows[out->count++] = row;
    return 0;
}

/* Input row of bucket id `id` (fastText's pushHash), or -1 if the pruned model dropped it. */
static inline int32_t ngram_row(const Model *m, int32_t id) {
    if (m->pruned < 0) return m->nwords + id;
    uint64_t bits = m->kept_bits[(uint32_t)id >> 6], bit = (uint64_t)1 << (id & 63);
    if (!(bits & bit)) return -1;
    return m->nwords + (int32_t)(m->kept_before[(uint32_t)id >> 6] + popcount64(bits & (bit - 1)));
}

/* fastText's computeSubwords on `word` ("<token>"): the rows of its kept n-grams, appended. */
static int subword_rows(const Model *m, const unsigned char *word, size_t len, Rows *out) {
    for (size_t i = 0; i < len; i++) {
        if ((word[i] & 0xC0) == 0x80) continue;
        uint32_t h = 2166136261u;
        size_t j = i;
        for (int32_t n = 1; j < len && n <= m->maxn; n++) {
            do {
                h = (h ^ (uint32_t)(int32_t)(int8_t)word[j++]) * 16777619u;
            } while (j < len && (word[j] & 0xC0) == 0x80);
            if (n >= m->minn && !(n == 1 && (i == 0 || j == len))) {
                int32_t row = ngram_row(m, (int32_t)fastmod(h, m->mod_m, (uint32_t)m->bucket));
                if (row >= 0 && rows_push(out, row) < 0) return -1;
            }
        }
    }
    return 0;
}

/* The rows fastText adds for `token`, not in the dictionary: those of "<token>"'s n-grams; none for
 * EOS or a label-like token. `word` is scratch space. */
static int unknown_rows(const Model *m, const unsigned char *token, size_t len, Rows *out, Rows *word) {
    out->count = 0;
    if (len >= sizeof LABEL_PREFIX - 1 && memcmp(token, LABEL_PREFIX, sizeof LABEL_PREFIX - 1) == 0) return 0;
    if (len == sizeof EOS - 1 && memcmp(token, EOS, len) == 0) return 0;
    if (grow((void **)&word->rows, &word->capacity, (len + 2 + 3) / 4, sizeof(int32_t)) < 0) return -1;
    unsigned char *bytes = (unsigned char *)word->rows;
    bytes[0] = '<';
    memcpy(bytes + 1, token, len);
    bytes[len + 1] = '>';
    return subword_rows(m, bytes, len + 2, out);
}

static int32_t token_find(const TokenTable *t, const unsigned char *token, size_t len, uint32_t h) {
    for (uint32_t s = h & t->mask;; s = (s + 1) & t->mask) {
        int32_t i = t->slots[s].token;
        if (i < 0) return -1;
        if (t->slots[s].hash != h) continue;
        const Token *e = &t->tokens[i];
        if (e->len == len && memcmp(t->keys + e->key, token, len) == 0) return i;
    }
}

static void token_slot(TokenTable *t, uint32_t i) {
    uint32_t s = t->tokens[i].hash & t->mask;
    while (t->slots[s].token >= 0) s = (s + 1) & t->mask;
    t->slots[s] = (Slot){t->tokens[i].hash, (int32_t)i};
}

/* Adds `token` with `count` rows; returns its index, or -1 (memory error). */
static int32_t token_add(TokenTable *t, const unsigned char *token, size_t len, uint32_t h, const int32_t *rows,
                         size_t count) {
    if (t->count == t->limit) { /* the memo is full: start it again (results never depend on it) */
        t->count = t->fixed;
        t->keys_used = t->keys_fixed;
        t->rows.count = t->rows_fixed;
        memset(t->slots, 0xFF, sizeof(Slot) * (t->mask + 1));
        for (uint32_t i = 0; i < t->fixed; i++) token_slot(t, i);
    }
    if (grow((void **)&t->keys, &t->keys_capacity, t->keys_used + len, 1) < 0 ||
        grow((void **)&t->rows.rows, &t->rows.capacity, t->rows.count + count, sizeof(int32_t)) < 0)
        return -1;
    memcpy(t->keys + t->keys_used, token, len);
    memcpy(t->rows.rows + t->rows.count, rows, count * sizeof(int32_t));
    t->tokens[t->count] = (Token){h, (uint32_t)t->keys_used, (uint32_t)len, (uint32_t)t->rows.count, (uint32_t)count};
    t->keys_used += len;
    t->rows.count += count;
    token_slot(t, t->count);
    return (int32_t)t->count++;
}

/* ---- reading the file ------------------------------------------------------------------------ */

typedef struct {
    const unsigned char *data;
    size_t size, pos;
} Reader;

/* The next `n` bytes (and moves past them), or NULL with an error if the file ends first. */
static const unsigned char *skip(Reader *r, size_t n) {
    if (n > r->size - r->pos) {
        PyErr_SetString(PyExc_ValueError, "fastText model: truncated file");
        return NULL;
    }
    r->pos += n;
    return r->data + r->pos - n;
}

static int take(Reader *r, void *out, size_t n) { /* copies the next `n` bytes */
    const unsigned char *at = skip(r, n);
    if (!at) return -1;
    memcpy(out, at, n);
    return 0;
}

static int bad(const char *message) {
    PyErr_Format(PyExc_ValueError, "fastText model: %s", message);
    return -1;
}

static int read_args(Model *m, Reader *r) {
    int32_t magic, version, a[12];
    double t;
    if (take(r, &magic, 4) || take(r, &version, 4)) return -1;
    if (magic != FASTTEXT_MAGIC || version > FASTTEXT_VERSION) {
        PyErr_SetString(PyExc_ValueError, "not a fastText model (magic number or version)");
        return -1;
    }
    if (take(r, a, sizeof a) || take(r, &t, sizeof t)) return -1;
    /* dim ws epoch minCount neg wordNgrams loss model bucket minn maxn lrUpdateRate */
    m->dim = a[0];
    m->bucket = a[8];
    m->minn = a[9];
    m->maxn = a[10];
    if (version == 11 && a[7] == MODEL_SUP) m->maxn = 0; /* fastText's backward compatibility */
    if (a[7] != MODEL_SUP || a[6] != LOSS_HS || a[5] > 1)
        return bad("only supervised, hierarchical-softmax, wordNgrams=1 models are supported");
    if (m->dim <= 0 || m->bucket <= 0) return bad("bad dim or bucket");
    return 0;
}

/* fastText's buildTree on the label counts (Huffman, its tie rules). */
static int build_tree(Model *m, const int64_t *counts) {
    int32_t osz = m->nlabels, nodes = 2 * osz - 1;
    int64_t *count = PyMem_Malloc(sizeof(int64_t) * nodes);
    m->left = PyMem_Malloc(sizeof(int32_t) * nodes);
    m->right = PyMem_Malloc(sizeof(int32_t) * nodes);
    if (!count || !m->left || !m->right) return PyMem_Free(count), PyErr_NoMemory(), -1;
    for (int32_t i = 0; i < nodes; i++) {
        m->left[i] = m->right[i] = -1;
        count[i] = i < osz ? counts[i] : (int64_t)1e15;
    }
    int32_t leaf = osz - 1, node = osz;
    for (int32_t i = osz; i < nodes; i++) {
        int32_t mini[2];
        for (int j = 0; j < 2; j++) mini[j] = (leaf >= 0 && count[leaf] < count[node]) ? leaf-- : node++;
        m->left[i] = mini[0];
        m->right[i] = mini[1];
        count[i] = count[mini[0]] + count[mini[1]];
    }
    PyMem_Free(count);
    return 0;
}

/* fastText's pruneidx_ (bucket id -> row after the words): the kept ids into the bitmap; the pairs
 * themselves stay in the file until `rank_pruned_rows`. */
static int read_pruned_index(Model *m, Reader *r, const unsigned char **pairs) {
    if (m->pruned < 0) return 0;
    size_t words = ((size_t)m->bucket + 63) / 64;
    m->kept_bits = PyMem_Calloc(words, sizeof(uint64_t));
    m->kept_before = PyMem_Malloc(words * sizeof(uint32_t));
    if (!m->kept_bits || !m->kept_before) return PyErr_NoMemory(), -1;
    if ((uint64_t)m->pruned > r->size || !(*pairs = skip(r, (size_t)m->pruned * 8))) return -1;
    for (int64_t i = 0; i < m->pruned; i++) {
        int32_t pair[2];
        memcpy(pair, *pairs + 8 * i, sizeof pair);
        if (pair[0] < 0 || pair[0] >= m->bucket || pair[1] < 0) return bad("bad pruned index");
        m->kept_bits[(uint32_t)pair[0] >> 6] |= (uint64_t)1 << (pair[0] & 63);
    }
    uint32_t before = 0;
    for (size_t w = 0; w < words; w++) {
        m->kept_before[w] = before;
        before += popcount64(m->kept_bits[w]);
    }
    return 0;
}

/* The input rows of kept n-grams reordered by bucket id (the row of pruneidx_[id], the last pair
 * for an id as std::unordered_map's [] keeps, moves to its rank). */
static int rank_pruned_rows(Model *m, const unsigned char *pairs) {
    if (m->pruned < 0) return 0;
    int32_t *value = PyMem_Malloc(sizeof(int32_t) * (size_t)m->bucket);
    if (!value) return PyErr_NoMemory(), -1;
    memset(value, 0xFF, sizeof(int32_t) * (size_t)m->bucket);
    for (int64_t i = 0; i < m->pruned; i++) {
        int32_t pair[2];
        memcpy(pair, pairs + 8 * i, sizeof pair);
        value[pair[0]] = pair[1];
    }
    size_t dim = (size_t)m->dim, kept = 0;
    for (int32_t id = 0; id < m->bucket; id++) kept += value[id] >= 0;
    void *block = PyMem_Malloc(sizeof(float) * (m->nwords + kept) * dim + 64);
    if (!block) return PyMem_Free(value), PyErr_NoMemory(), -1;
    float *rows = (float *)(((uintptr_t)block + 63) & ~(uintptr_t)63);
    memcpy(rows, m->input, sizeof(float) * m->nwords * dim);
    float *next = rows + m->nwords * dim;
    for (int32_t id = 0; id < m->bucket; id++) {
        if (value[id] < 0) continue;
        if (value[id] >= m->input_rows - m->nwords) {
            PyMem_Free(value);
            PyMem_Free(block);
            return bad("the pruned index points past the input matrix");
        }
        memcpy(next, m->input + (m->nwords + (size_t)value[id]) * dim, sizeof(float) * dim);
        next += dim;
    }
    PyMem_Free(value);
    PyMem_Free(m->input_block);
    m->input_block = block;
    m->input = rows;
    m->input_rows = m->nwords + (int64_t)kept;
    return 0;
}

/* The token table's fixed part (fastText's initNgrams): each word adds its id, then the n-grams of
 * "<word>" (none for EOS); a label adds nothing. */
static int add_dictionary(Model *m, const unsigned char **words, const uint32_t *lengths) {
    TokenTable *t = &m->table;
    t->limit = (uint32_t)m->size + MEMO_TOKENS;
    t->mask = table_mask(t->limit);
    t->tokens = PyMem_Malloc(sizeof(Token) * t->limit);
    t->slots = PyMem_Malloc(sizeof(Slot) * (t->mask + 1));
    if (!t->tokens || !t->slots) return PyErr_NoMemory(), -1;
    memset(t->slots, 0xFF, sizeof(Slot) * (t->mask + 1));
    Rows rows = {NULL, 0, 0}, word = {NULL, 0, 0};
    int status = 0;
    for (int32_t i = 0; i < m->size && status == 0; i++) {
        rows.count = 0;
        size_t len = lengths[i];
        if (i < m->nwords) {
            int eos = len == sizeof EOS - 1 && memcmp(words[i], EOS, len) == 0;
            Rows grams = {NULL, 0, 0};
            status = rows_push(&rows, i);
            if (status == 0 && !eos) status = unknown_rows(m, words[i], len, &grams, &word);
            for (size_t g = 0; status == 0 && g < grams.count; g++) status = rows_push(&rows, grams.rows[g]);
            PyMem_Free(grams.rows);
        }
        if (status == 0 && token_add(t, words[i], len, fasttext_hash(words[i], len), rows.rows, rows.count) < 0)
            status = -1;
    }
    PyMem_Free(rows.rows);
    PyMem_Free(word.rows);
    t->fixed = t->count;
    t->keys_fixed = t->keys_used;
    t->rows_fixed = t->rows.count;
    return status;
}

static int read_dictionary(Model *m, Reader *r, const unsigned char **pairs) {
    int64_t ntokens;
    if (take(r, &m->size, 4) || take(r, &m->nwords, 4) || take(r, &m->nlabels, 4) || take(r, &ntokens, 8) ||
        take(r, &m->pruned, 8))
        return -1;
    if (m->nwords < 0 || m->nlabels <= 0 || m->size != m->nwords + m->nlabels) return bad("bad dictionary sizes");
    const unsigned char **words = PyMem_Malloc(sizeof(char *) * m->size);
    uint32_t *lengths = PyMem_Malloc(sizeof(uint32_t) * m->size);
    int64_t *counts = PyMem_Malloc(sizeof(int64_t) * m->nlabels);
    int status = -1;
    if (!words || !lengths || !counts) {
        PyErr_NoMemory();
        goto done;
    }
    m->labels = PyTuple_New(m->nlabels);
    if (!m->labels) goto done;
    for (int32_t i = 0; i < m->size; i++) { /* word\0, int64 count, int8 type */
        const unsigned char *end = memchr(r->data + r->pos, 0, r->size - r->pos);
        if (!end) {
            bad("truncated dictionary");
            goto done;
        }
        words[i] = r->data + r->pos;
        lengths[i] = (uint32_t)(end - words[i]);
        int64_t count;
        int8_t type;
        r->pos += lengths[i] + 1;
        if (take(r, &count, 8) || take(r, &type, 1)) goto done;
        if ((type == 1) != (i >= m->nwords)) {
            bad("words and labels out of order");
            goto done;
        }
        if (i >= m->nwords) {
            counts[i - m->nwords] = count;
            PyObject *label = PyUnicode_DecodeUTF8((const char *)words[i], lengths[i], "strict");
            if (!label) goto done;
            PyTuple_SET_ITEM(m->labels, i - m->nwords, label);
        }
    }
    m->mod_m = fastmod_m((uint32_t)m->bucket);
    if (build_tree(m, counts) == 0 && read_pruned_index(m, r, pairs) == 0) status = add_dictionary(m, words, lengths);
done:
    PyMem_Free(words);
    PyMem_Free(lengths);
    PyMem_Free(counts);
    return status;
}

/* A quantized matrix (fastText's QuantMatrix::load) of `rows` rows, decoded into `out`: for the
 * input (`scale` NULL), norm * centroid per element (the product addcode adds); for the output, the
 * centroids, with the norms kept apart in *scale (mulcode multiplies the finished dot product). */
static int read_quantized(Reader *r, int64_t rows, int32_t dim, float **scale, float *out) {
    uint8_t qnorm;
    int64_t size[2];
    int32_t codesize, pq[4]; /* dim nsubq dsub lastdsub */
    if (take(r, &qnorm, 1) || take(r, size, sizeof size) || take(r, &codesize, 4)) return -1;
    const unsigned char *codes = skip(r, (size_t)(codesize < 0 ? 0 : codesize));
    if (!codes || take(r, pq, sizeof pq)) return -1;
    int32_t nsubq = pq[1], dsub = pq[2], lastdsub = pq[3];
    if (size[0] != rows || size[1] != dim || pq[0] != dim || nsubq <= 0 || dsub <= 0 || lastdsub <= 0 ||
        (int64_t)nsubq * rows != codesize || (int64_t)(nsubq - 1) * dsub + lastdsub != dim)
        return bad("bad quantized matrix");
    const unsigned char *centroids = skip(r, (size_t)dim * KSUB * sizeof(float));
    if (!centroids) return -1;
    const unsigned char *norm_codes = NULL, *norm_centroids = NULL;
    if (qnorm) {
        int32_t npq[4];
        norm_codes = skip(r, (size_t)rows);
        if (!norm_codes || take(r, npq, sizeof npq)) return -1;
        if (npq[0] != 1 || npq[1] != 1 || npq[3] != 1) return bad("bad quantized matrix");
        norm_centroids = skip(r, KSUB * sizeof(float));
        if (!norm_centroids) return -1;
        if (scale && !(*scale = PyMem_Malloc(sizeof(float) * rows))) return PyErr_NoMemory(), -1;
    }
    for (int64_t t = 0; t < rows; t++) {
        float norm = 1.0f;
        if (qnorm) memcpy(&norm, norm_centroids + sizeof(float) * norm_codes[t], sizeof(float));
        if (qnorm && scale) (*scale)[t] = norm;
        const unsigned char *code = codes + (size_t)nsubq * t;
        float *row = out + (size_t)t * dim;
        for (int32_t q = 0; q < nsubq; q++) {
            int32_t d = q == nsubq - 1 ? lastdsub : dsub;
            size_t at = q == nsubq - 1 ? (size_t)q * KSUB * dsub + (size_t)code[q] * lastdsub
                                       : ((size_t)q * KSUB + code[q]) * dsub;
            for (int32_t n = 0; n < d; n++) {
                float c;
                memcpy(&c, centroids + sizeof(float) * (at + n), sizeof(float));
                row[q * dsub + n] = (qnorm && !scale) ? norm * c : c;
            }
        }
    }
    return 0;
}

/* A matrix, dense or quantized (then `scale` as in read_quantized), as rows of floats, 64-byte
 * aligned in the new allocation *block. */
static float *read_matrix(Reader *r, int quantized, int32_t dim, int64_t *rows, void **block, float **scale) {
    int64_t size[2]; /* rows, columns: after a quantized matrix's norm flag */
    size_t at = r->pos + (quantized ? 1 : 0);
    if (at + sizeof size > r->size) return skip(r, r->size - r->pos + 1), NULL; /* "truncated" */
    memcpy(size, r->data + at, sizeof size);
    if (size[1] != dim || size[0] <= 0 || size[0] > (int64_t)r->size) return bad("bad matrix"), NULL;
    *rows = size[0];
    *block = PyMem_Malloc(sizeof(float) * (size_t)size[0] * dim + 64);
    if (!*block) return PyErr_NoMemory(), NULL;
    float *out = (float *)(((uintptr_t)*block + 63) & ~(uintptr_t)63);
    if (quantized) return read_quantized(r, *rows, dim, scale, out) < 0 ? NULL : out;
    const unsigned char *values = skip(r, sizeof size) ? skip(r, sizeof(float) * (size_t)size[0] * dim) : NULL;
    if (!values) return NULL;
    memcpy(out, values, sizeof(float) * (size_t)size[0] * dim);
    return out;
}

static int read_model(Model *m, Reader *r) {
    uint8_t quant_input, qout;
    const unsigned char *pairs = NULL;
    if (read_args(m, r) || read_dictionary(m, r, &pairs) || take(r, &quant_input, 1)) return -1;
    if (!quant_input && m->pruned >= 0) return bad("a pruned model must be quantized");
    m->input = read_matrix(r, quant_input, m->dim, &m->input_rows, &m->input_block, NULL);
    if (!m->input || rank_pruned_rows(m, pairs) < 0 || take(r, &qout, 1)) return -1;
    m->output = read_matrix(r, quant_input && qout, m->dim, &m->output_rows, &m->output_block, &m->out_scale);
    if (!m->output) return -1;
    if (m->output_rows < m->nlabels - 1) return bad("fewer output rows than tree nodes");
    for (size_t i = 0; i < m->table.rows.count; i++)
        if (m->table.rows.rows[i] >= m->input_rows) return bad("the dictionary points past the input matrix");
    if (m->pruned < 0 && m->input_rows < (int64_t)m->nwords + m->bucket) return bad("too few input rows");
    return 0;
}

/* ---- prediction ------------------------------------------------------------------------------- */

static inline void add_row(const Model *m, float *hidden, int32_t row) {
    const float *v = m->input + (size_t)row * m->dim;
    for (int32_t j = 0; j < m->dim; j++) hidden[j] += v[j];
}

static float std_log(float x) { return (float)log((double)x + 1e-5); } /* fastText's std_log */

/* libstdc++'s heap algorithms with fastText's comparePairs (a.score > b.score), so ties come out
 * in the same order. */
static void heap_hole_up(Pred *first, ptrdiff_t hole, ptrdiff_t top, Pred value) {
    ptrdiff_t parent = (hole - 1) / 2;
    while (hole > top && first[parent].score > value.score) {
        first[hole] = first[parent];
        hole = parent;
        parent = (hole - 1) / 2;
    }
    first[hole] = value;
}

static void heap_push(Pred *first, ptrdiff_t len) { heap_hole_up(first, len - 1, 0, first[len - 1]); }

static void heap_pop(Pred *first, ptrdiff_t len) { /* the front moves to first[len - 1] */
    if (len < 2) return;
    Pred value = first[len - 1];
    first[len - 1] = first[0];
    ptrdiff_t n = len - 1, hole = 0, child = 0;
    while (child < (n - 1) / 2) {
        child = 2 * (child + 1);
        if (first[child].score > first[child - 1].score) child--;
        first[hole] = first[child];
        hole = child;
    }
    if ((n & 1) == 0 && child == (n - 2) / 2) {
        child = 2 * (child + 1);
        first[hole] = first[child - 1];
        hole = child - 1;
    }
    heap_hole_up(first, hole, 0, value);
}

typedef struct {
    const Model *m;
    const float *hidden;
    int32_t k;
    float floor; /* std_log(threshold) */
    Pred *heap;
    int32_t size;
} Search;

static void dfs(Search *s, int32_t node, float score) { /* fastText's HierarchicalSoftmaxLoss::dfs */
    const Model *m = s->m;
    if (score < s->floor) return;
    if (s->size == s->k && score < s->heap[0].score) return;
    if (m->left[node] == -1 && m->right[node] == -1) {
        s->heap[s->size++] = (Pred){score, node};
        heap_push(s->heap, s->size);
        if (s->size > s->k) heap_pop(s->heap, s->size--);
        return;
    }
    int32_t row = node - m->nlabels;
    const float *w = m->output + (size_t)row * m->dim;
    float f = 0.0f;
    for (int32_t j = 0; j < m->dim; j++) f += s->hidden[j] * w[j];
    if (m->out_scale) f *= m->out_scale[row];
    f = (float)(1.0 / (double)(1.0f + expf(-f)));
    dfs(s, m->left[node], score + std_log((float)(1.0 - (double)f)));
    dfs(s, m->right[node], score + std_log(f));
}

/* Scratch space of one predict call. */
typedef struct {
    float *hidden;
    Rows rows, word;
} Scratch;

/* Adds the rows of one token (fastText's getLine + addSubwords) to `hidden`; returns how many, or
 * -1 on a memory error. */
static Py_ssize_t add_token(Model *m, const unsigned char *token, size_t len, Scratch *scratch) {
    uint32_t h = fasttext_hash(token, len);
    int32_t i = token_find(&m->table, token, len, h);
    const int32_t *rows;
    size_t count;
    if (i < 0) {
        if (unknown_rows(m, token, len, &scratch->rows, &scratch->word) < 0) return -1;
        if (len <= MEMO_LONGEST) {
            i = token_add(&m->table, token, len, h, scratch->rows.rows, scratch->rows.count);
            if (i < 0) return -1;
        }
    }
    if (i >= 0) {
        rows = m->table.rows.rows + m->table.tokens[i].first;
        count = m->table.tokens[i].count;
    } else {
        rows = scratch->rows.rows;
        count = scratch->rows.count;
    }
    for (size_t j = 0; j < count; j++) add_row(m, scratch->hidden, rows[j]);
    return (Py_ssize_t)count;
}

static inline int separator(unsigned char c) {
    return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f' || c == '\0';
}

/* The prediction for one UTF-8 text: fills s->heap (sorted best first) and s->size. */
static int predict_one(Model *m, Search *s, const unsigned char *text, size_t len, Scratch *scratch) {
    float *hidden = scratch->hidden;
    memset(hidden, 0, sizeof(float) * m->dim);
    Py_ssize_t count = 0, added;
    int ended = 0;
    for (size_t i = 0; i < len && !ended;) {
        while (i < len && separator(text[i])) i++;
        size_t start = i;
        while (i < len && !separator(text[i])) i++;
        if (i == start) break;
        if ((added = add_token(m, text + start, i - start, scratch)) < 0) return -1;
        count += added;
        ended = i - start == sizeof EOS - 1 && memcmp(text + start, EOS, i - start) == 0; /* getLine stops */
    }
    if (!ended) { /* the newline fastText's binding appends: the EOS token */
        if ((added = add_token(m, (const unsigned char *)EOS, sizeof EOS - 1, scratch)) < 0) return -1;
        count += added;
    }
    s->size = 0;
    if (count == 0) return 0; /* fastText predicts nothing for a line without rows */
    float scale = (float)(1.0 / (double)count);
    for (int32_t j = 0; j < m->dim; j++) hidden[j] *= scale;
    s->hidden = hidden;
    dfs(s, 2 * m->nlabels - 2, 0.0f);
    for (ptrdiff_t n = s->size; n > 1; n--) heap_pop(s->heap, n); /* std::sort_heap */
    return 0;
}

static PyObject *result_tuple(const Model *m, const Search *s) {
    PyObject *labels = PyTuple_New(s->size), *probs = PyTuple_New(s->size);
    if (!labels || !probs) goto fail;
    for (int32_t i = 0; i < s->size; i++) {
        PyObject *label = PyTuple_GET_ITEM(m->labels, s->heap[i].node);
        Py_INCREF(label);
        PyTuple_SET_ITEM(labels, i, label);
        PyObject *prob = PyFloat_FromDouble((double)expf(s->heap[i].score)); /* fastText's std::exp */
        if (!prob) goto fail;
        PyTuple_SET_ITEM(probs, i, prob);
    }
    return Py_BuildValue("(NN)", labels, probs);
fail:
    Py_XDECREF(labels);
    Py_XDECREF(probs);
    return NULL;
}

static PyObject *Model_predict(Model *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"texts", "k", "threshold", NULL};
    PyObject *texts;
    int k = 1;
    float threshold = 0.0f;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|if", keywords, &texts, &k, &threshold)) return NULL;
    if (!self->labels) {
        PyErr_SetString(PyExc_RuntimeError, "Model is not loaded");
        return NULL;
    }
    if (k == -1) k = (int)self->output_rows; /* fastText's kUnlimitedPredictions: the output size */
    if (k <= 0) {
        PyErr_SetString(PyExc_ValueError, "k needs to be 1 or higher!");
        return NULL;
    }
    PyObject *seq = PySequence_Fast(texts, "texts must be a sequence of str");
    if (!seq) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject *out = PyList_New(n);
    Scratch scratch = {PyMem_Malloc(sizeof(float) * self->dim), {NULL, 0, 0}, {NULL, 0, 0}};
    Search s = {self, NULL, k, std_log(threshold), PyMem_Malloc(sizeof(Pred) * ((size_t)k + 1)), 0};
    if (!out || !scratch.hidden || !s.heap) {
        if (out) PyErr_NoMemory();
        goto fail;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *text = PySequence_Fast_GET_ITEM(seq, i), *encoded = NULL;
        if (!PyUnicode_Check(text)) {
            PyErr_SetString(PyExc_TypeError, "texts must be a sequence of str");
            goto fail;
        }
        const char *data;
        Py_ssize_t len;
        if (PyUnicode_IS_ASCII(text)) {
            data = (const char *)PyUnicode_DATA(text);
            len = PyUnicode_GET_LENGTH(text);
        } else { /* a temporary UTF-8 copy (not cached on the str); surrogates raise here */
            if (!(encoded = PyUnicode_AsUTF8String(text))) goto fail;
            data = PyBytes_AS_STRING(encoded);
            len = PyBytes_GET_SIZE(encoded);
        }
        int failed = predict_one(self, &s, (const unsigned char *)data, (size_t)len, &scratch);
        Py_XDECREF(encoded);
        PyObject *result = failed ? NULL : result_tuple(self, &s);
        if (!result) goto fail;
        PyList_SET_ITEM(out, i, result);
    }
    goto done;
fail:
    Py_CLEAR(out);
done:
    Py_DECREF(seq);
    PyMem_Free(scratch.hidden);
    PyMem_Free(scratch.rows.rows);
    PyMem_Free(scratch.word.rows);
    PyMem_Free(s.heap);
    return out;
}

/* ---- the type ----------------------------------------------------------------------------------- */

static void Model_free_arrays(Model *m) {
    TokenTable *t = &m->table;
    void **arrays[] = {(void **)&t->tokens,     (void **)&t->keys,        (void **)&t->rows.rows,
                       (void **)&t->slots,      (void **)&m->kept_bits,   (void **)&m->kept_before,
                       (void **)&m->input_block, (void **)&m->output_block,
                       (void **)&m->out_scale,  (void **)&m->left,        (void **)&m->right};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) {
        PyMem_Free(*arrays[i]);
        *arrays[i] = NULL;
    }
    memset(t, 0, sizeof *t);
    m->input = m->output = NULL;
    Py_CLEAR(m->labels);
}

static void Model_dealloc(Model *self) {
    Model_free_arrays(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int Model_init(Model *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"path", NULL};
    PyObject *path;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&", keywords, PyUnicode_FSConverter, &path)) return -1;
    if (self->labels) {
        Py_DECREF(path);
        PyErr_SetString(PyExc_RuntimeError, "Model is already loaded");
        return -1;
    }
    FILE *file = fopen(PyBytes_AS_STRING(path), "rb");
    if (!file) {
        PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, path);
        Py_DECREF(path);
        return -1;
    }
    Py_DECREF(path);
    unsigned char *data = NULL;
    size_t size = 0, capacity = 0, got;
    do {
        if (size == capacity) {
            capacity = capacity ? capacity * 2 : (1 << 20);
            unsigned char *grown = PyMem_Realloc(data, capacity);
            if (!grown) {
                fclose(file);
                PyMem_Free(data);
                PyErr_NoMemory();
                return -1;
            }
            data = grown;
        }
        got = fread(data + size, 1, capacity - size, file);
        size += got;
    } while (got > 0);
    int error = ferror(file);
    fclose(file);
    Reader reader = {data, size, 0};
    int status = error ? (PyErr_SetString(PyExc_OSError, "fastText model: read error"), -1) : read_model(self, &reader);
    PyMem_Free(data);
    if (status < 0) Model_free_arrays(self);
    return status;
}

static PyObject *Model_labels(Model *self, void *closure) {
    (void)closure;
    if (!self->labels) Py_RETURN_NONE;
    Py_INCREF(self->labels);
    return self->labels;
}

static PyMethodDef Model_methods[] = {
    {"predict", (PyCFunction)(void (*)(void))Model_predict, METH_VARARGS | METH_KEYWORDS,
     "predict(texts, k=1, threshold=0.0) -> [(labels, probabilities)] as fastText on text.replace('\\n', ' ')"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Model_getset[] = {
    {"labels", (getter)Model_labels, NULL, "the labels in dictionary order", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject ModelType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "filters._lid_native.Model",
    .tp_basicsize = sizeof(Model),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Model(path): a fastText supervised model (hierarchical softmax) for prediction",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Model_init,
    .tp_dealloc = (destructor)Model_dealloc,
    .tp_methods = Model_methods,
    .tp_getset = Model_getset,
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_lid_native",
                                    "Native fastText lid.176 inference, bit-identical to fastText's binding.", -1,
                                    NULL};

PyMODINIT_FUNC PyInit__lid_native(void) {
    if (PyType_Ready(&ModelType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Py_INCREF(&ModelType);
    if (PyModule_AddObject(m, "Model", (PyObject *)&ModelType) < 0) {
        Py_DECREF(&ModelType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
