/* receval's list sums (#35 item 5): the beyond-accuracy metrics' float sums over each
 * user's recommended items, in rank order, bit for bit what the polars core's running sums
 * give (receval_cli/metrics/stats.py's rec_sum, metrics/beyond.py's similarity_to_earlier,
 * evaluation/side_columns.py's tag_pairs); the Python side is evaluation/list_sums.py.
 *
 * Every input is grouped by user (offsets: the user's rows are offsets[u] .. offsets[u+1]),
 * each user's rows in rank order, the first at rank 1. Each value is added in the order the
 * polars expressions add it, with the same roundings (built with -ffp-contract=off: no fused
 * multiply-add). A cutoff k is read at position min(k, the user's rows).
 *
 *   ordered_sums(offsets, cutoffs, terms, valid, out, out_valid): per term and cutoff, the
 *       sum of the user's terms down to the cutoff, skipping missing ones (valid 0), as a
 *       running sum (polars' starts at 0.0: -0.0 alone gives 0.0); missing (out_valid 0)
 *       where the term at the cutoff's position is missing, as a running sum is there.
 *   similar_earlier(offsets, units, index, dims, out): per row, the sum over the
 *       dimensions d of (S_d - x_d) * x_d, with x the row's unit vector (the units' row
 *       index[j]: each item's vector held once) and S_d the running sum of the user's x_d
 *       down to this row: the cosine similarities to the items ranked above, added up.
 *   tag_pairs(offsets, cutoffs, tag_offsets, tags, n_tags, codes, out): per cutoff, the
 *       sum of the Jaccard similarities shared / (n_i + n_j - shared) of the pairs of the
 *       user's items that share a tag, in the order (later rank, earlier rank), plus the
 *       pairs of empty tag sets (n_tags 0: e (e - 1) / 2 for e of them). `tags` holds each
 *       row's tag codes (0 .. codes - 1; tag_offsets), each once (the catalog reader makes
 *       each item's tags a set).
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>

static int need(Py_buffer *b, Py_ssize_t items, Py_ssize_t size, const char *name) {
    if (b->len != items * size) {
        PyErr_Format(PyExc_ValueError, "%s: %zd bytes, expected %zd", name, b->len, items * size);
        return -1;
    }
    return 0;
}

/* the position (0-based, within the user's rows) where cutoff k is read */
static int64_t read_at(int64_t k, int64_t rows) { return (k < rows ? k : rows) - 1; }

static void ordered_sums_run(const int64_t *off, int64_t users, const int64_t *cut, int64_t nk,
                             const double *term, const uint8_t *valid, int64_t n_terms,
                             int64_t n, double *out, uint8_t *out_valid) {
    for (int64_t q = 0; q < n_terms; q++) {
        const double *t = term + q * n;
        const uint8_t *v = valid + q * n;
        for (int64_t u = 0; u < users; u++) {
            int64_t a = off[u], rows = off[u + 1] - a;
            double acc = 0.0;
            for (int64_t j = 0; j < rows; j++) {
                if (v[a + j])
                    acc = acc + t[a + j];
                for (int64_t c = 0; c < nk; c++)
                    if (read_at(cut[c], rows) == j) {
                        out[(q * nk + c) * users + u] = v[a + j] ? acc : 0.0;
                        out_valid[(q * nk + c) * users + u] = v[a + j];
                    }
            }
        }
    }
}

static PyObject *ordered_sums(PyObject *self, PyObject *args) {
    Py_buffer offsets, cutoffs, terms, valid, out, out_valid;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*y*w*w*", &offsets, &cutoffs, &terms, &valid, &out,
                          &out_valid))
        return NULL;
    int64_t users = offsets.len / 8 - 1, nk = cutoffs.len / 8;
    const int64_t *off = offsets.buf;
    int64_t n = users >= 0 ? off[users] : 0;
    int64_t n_terms = n > 0 ? terms.len / 8 / n : 0;
    int ok = users >= 0 && need(&terms, n_terms * n, 8, "terms") == 0 &&
             need(&valid, n_terms * n, 1, "valid") == 0 &&
             need(&out, n_terms * nk * users, 8, "out") == 0 &&
             need(&out_valid, n_terms * nk * users, 1, "out_valid") == 0;
    if (ok) {
        Py_BEGIN_ALLOW_THREADS;
        ordered_sums_run(off, users, cutoffs.buf, nk, terms.buf, valid.buf, n_terms, n, out.buf,
                         out_valid.buf);
        Py_END_ALLOW_THREADS;
    } else if (!PyErr_Occurred()) {
        PyErr_SetString(PyExc_ValueError, "offsets: at least one value");
    }
    PyBuffer_Release(&offsets);
    PyBuffer_Release(&cutoffs);
    PyBuffer_Release(&terms);
    PyBuffer_Release(&valid);
    PyBuffer_Release(&out);
    PyBuffer_Release(&out_valid);
    if (!ok)
        return NULL;
    Py_RETURN_NONE;
}

static int similar_earlier_run(const int64_t *off, int64_t users, const double *units,
                               const int64_t *index, int64_t dims, double *out) {
    double *running = malloc(sizeof(double) * (size_t)(dims > 0 ? dims : 1));
    if (!running)
        return -1;
    for (int64_t u = 0; u < users; u++) {
        for (int64_t j = off[u]; j < off[u + 1]; j++) {
            const double *x = units + index[j] * dims;
            double acc = 0.0;
            for (int64_t d = 0; d < dims; d++) {
                running[d] = (j == off[u] ? 0.0 : running[d]) + x[d];
                acc = acc + (running[d] - x[d]) * x[d];
            }
            out[j] = acc;
        }
    }
    free(running);
    return 0;
}

static PyObject *similar_earlier(PyObject *self, PyObject *args) {
    Py_buffer offsets, units, index, out;
    long long dims;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*Lw*", &offsets, &units, &index, &dims, &out))
        return NULL;
    int64_t users = offsets.len / 8 - 1;
    const int64_t *off = offsets.buf;
    int64_t n = users >= 0 ? off[users] : 0;
    int64_t vectors = dims > 0 ? units.len / 8 / dims : 0;
    int ok = users >= 0 && dims > 0 && need(&units, vectors * dims, 8, "units") == 0 &&
             need(&index, n, 8, "index") == 0 && need(&out, n, 8, "out") == 0;
    if (ok) { /* every row's vector among the units */
        const int64_t *at = index.buf;
        for (int64_t j = 0; j < n && ok; j++)
            ok = at[j] >= 0 && at[j] < vectors;
        if (!ok)
            PyErr_SetString(PyExc_ValueError, "index: a row outside the units");
    }
    int status = 0;
    if (ok) {
        Py_BEGIN_ALLOW_THREADS;
        status = similar_earlier_run(off, users, units.buf, index.buf, dims, out.buf);
        Py_END_ALLOW_THREADS;
    } else if (!PyErr_Occurred()) {
        PyErr_SetString(PyExc_ValueError, "offsets: at least one value; dims > 0");
    }
    PyBuffer_Release(&offsets);
    PyBuffer_Release(&units);
    PyBuffer_Release(&index);
    PyBuffer_Release(&out);
    if (!ok)
        return NULL;
    if (status)
        return PyErr_NoMemory();
    Py_RETURN_NONE;
}

static int by_value(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The pairs sharing a tag, found through each tag's postings (the earlier rows holding it,
 * chained through `prev`), never by comparing every pair: for row i, each earlier row j
 * met through i's tags counts one shared tag per meeting, and the pairs are then added in
 * the order of j. */
static int tag_pairs_run(const int64_t *off, int64_t users, const int64_t *cut, int64_t nk,
                         const int64_t *toff, const int64_t *tags, const int64_t *n_tags,
                         int64_t codes, double *out) {
    int64_t n = off[users], longest = 1, flat = toff[n];
    for (int64_t u = 0; u < users; u++)
        if (off[u + 1] - off[u] > longest)
            longest = off[u + 1] - off[u];
    int64_t *head = malloc(sizeof(int64_t) * (size_t)(codes > 0 ? codes : 1));
    int64_t *stamp = malloc(sizeof(int64_t) * (size_t)(codes > 0 ? codes : 1));
    int64_t *prev = malloc(sizeof(int64_t) * (size_t)(flat > 0 ? flat : 1));
    int64_t *row_of = malloc(sizeof(int64_t) * (size_t)(flat > 0 ? flat : 1));
    int64_t *count = calloc((size_t)longest, sizeof(int64_t));
    int64_t *touched = malloc(sizeof(int64_t) * (size_t)longest);
    int status = head && stamp && prev && row_of && count && touched ? 0 : -1;
    if (!status) {
        for (int64_t t = 0; t < codes; t++)
            stamp[t] = -1;
        for (int64_t i = 0; i < n; i++)
            for (int64_t p = toff[i]; p < toff[i + 1]; p++)
                row_of[p] = i;
    }
    for (int64_t u = 0; u < users && !status; u++) {
        int64_t a = off[u], rows = off[u + 1] - a, empty = 0;
        double acc = 0.0;
        for (int64_t i = a; i < a + rows; i++) {
            int64_t met = 0;
            for (int64_t p = toff[i]; p < toff[i + 1]; p++) {
                int64_t tag = tags[p];
                for (int64_t q = stamp[tag] == u ? head[tag] : -1; q >= 0; q = prev[q]) {
                    int64_t j = row_of[q] - a;
                    if (count[j]++ == 0)
                        touched[met++] = j;
                }
            }
            if (met > 1)
                qsort(touched, (size_t)met, sizeof(int64_t), by_value);
            for (int64_t m = 0; m < met; m++) {
                int64_t j = touched[m], shared = count[j];
                acc = acc + (double)shared / (double)(n_tags[i] + n_tags[a + j] - shared);
                count[j] = 0;
            }
            for (int64_t p = toff[i]; p < toff[i + 1]; p++) {
                int64_t tag = tags[p];
                prev[p] = stamp[tag] == u ? head[tag] : -1;
                head[tag] = p;
                stamp[tag] = u;
            }
            if (n_tags[i] == 0)
                empty++;
            for (int64_t c = 0; c < nk; c++)
                if (read_at(cut[c], rows) == i - a)
                    out[c * users + u] = acc + (double)(empty * (empty - 1) / 2);
        }
    }
    free(head);
    free(stamp);
    free(prev);
    free(row_of);
    free(count);
    free(touched);
    return status;
}

static PyObject *tag_pairs(PyObject *self, PyObject *args) {
    Py_buffer offsets, cutoffs, tag_offsets, tags, n_tags, out;
    long long codes;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*Lw*", &offsets, &cutoffs, &tag_offsets, &tags,
                          &n_tags, &codes, &out))
        return NULL;
    int64_t users = offsets.len / 8 - 1, nk = cutoffs.len / 8;
    const int64_t *off = offsets.buf;
    int64_t n = users >= 0 ? off[users] : 0;
    int ok = users >= 0 && codes >= 0 && need(&tag_offsets, n + 1, 8, "tag_offsets") == 0 &&
             need(&n_tags, n, 8, "n_tags") == 0 &&
             need(&tags, ((const int64_t *)tag_offsets.buf)[n], 8, "tags") == 0 &&
             need(&out, nk * users, 8, "out") == 0;
    if (ok) {  /* every code below `codes` */
        const int64_t *t = tags.buf;
        for (Py_ssize_t p = 0; p < tags.len / 8 && ok; p++)
            ok = t[p] >= 0 && t[p] < codes;
        if (!ok)
            PyErr_SetString(PyExc_ValueError, "tags: a code outside 0 .. codes - 1");
    }
    int status = 0;
    if (ok) {
        Py_BEGIN_ALLOW_THREADS;
        status = tag_pairs_run(off, users, cutoffs.buf, nk, tag_offsets.buf, tags.buf,
                               n_tags.buf, codes, out.buf);
        Py_END_ALLOW_THREADS;
    } else if (!PyErr_Occurred()) {
        PyErr_SetString(PyExc_ValueError, "offsets: at least one value");
    }
    PyBuffer_Release(&offsets);
    PyBuffer_Release(&cutoffs);
    PyBuffer_Release(&tag_offsets);
    PyBuffer_Release(&tags);
    PyBuffer_Release(&n_tags);
    PyBuffer_Release(&out);
    if (!ok)
        return NULL;
    if (status)
        return PyErr_NoMemory();
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"ordered_sums", ordered_sums, METH_VARARGS,
     "ordered_sums(offsets, cutoffs, terms, valid, out, out_valid): running sums at cutoffs."},
    {"similar_earlier", similar_earlier, METH_VARARGS,
     "similar_earlier(offsets, units, index, dims, out): similarity to the rows above."},
    {"tag_pairs", tag_pairs, METH_VARARGS,
     "tag_pairs(offsets, cutoffs, tag_offsets, tags, n_tags, codes, out): Jaccard sums."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_list_sums",
                                    "receval's list sums (#35): see _list_sums.c.", -1, methods};

PyMODINIT_FUNC PyInit__list_sums(void) { return PyModule_Create(&module); }
