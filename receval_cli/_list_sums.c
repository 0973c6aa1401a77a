/* receval's list sums: the beyond-accuracy metrics' float sums over each
 * user's recommended items, in rank order, bit for bit what the polars core's running sums
 * give (receval_cli/metrics/stats.py's rec_sum, metrics/beyond.py's similarity_to_earlier,
 * evaluation/side_columns.py's tag_pairs); the Python side is evaluation/list_sums.py.
 *
 * Every walk reads the rows grouped by user (offsets: the user's rows are offsets[u] ..
 * offsets[u+1]), each user's rows in rank order, the first at rank 1: the walk's p-th row
 * is row order[p] of the arrays given in the rows' own order (order: from walk_order; an
 * empty order reads the arrays as they are). Each value is added in the order the
 * polars expressions add it, with the same roundings (built with -ffp-contract=off: no fused
 * multiply-add). A cutoff k is read at position min(k, the user's rows).
 *
 *   walk_order(walk, rank, order, offsets): the walk's order (order[walk[r]] = r: each
 *       row's place in rank order, numbered by the recs table, put back with no sort) and
 *       the users' offsets in it; the number of users, or -1 where `walk` is not 0 .. n - 1
 *       once each or a user's ranks do not run 1, 2, 3, ... (walk, rank: uint32).
 *   users_at(ids, order, offsets, out): each user's id (int64 bits) where every row of a
 *       user holds the same id; 0 where not (the caller checks that the ids differ).
 *   places(items, catalog, out): each row's item as its place among the catalog's items
 *       (int64), by a table over their range; 1, or 0 where an item is not in the catalog
 *       or the catalog holds one twice, or -1 where the range is too wide for a table.
 *   known(users, items, log_users, log_items, threads, out): per row (users grouped: each
 *       user's rows together), 1 where the log holds the row's (user, item), else 0 (out:
 *       uint8; ids as int64 bits); 1, or 0 where a user's rows are in two places, or -1
 *       where the users' range is too wide for a table.
 *   ordered_sums(offsets, order, cutoffs, terms, valid, threads, out, out_valid): per
 *       term and cutoff, the sum of the user's terms down to the cutoff, skipping missing
 *       ones (valid 0), as a running sum (polars' starts at 0.0: -0.0 alone gives 0.0);
 *       missing (out_valid 0) where the term at the cutoff's position is missing, as a
 *       running sum is there.
 *   similar_earlier(offsets, order, units, index, dims, threads, out): per row (out: in
 *       the walk's order), the sum over the dimensions d of (S_d - x_d) * x_d, with x the
 *       row's unit vector (the units' row index[j]: each item's vector held once) and S_d
 *       the running sum of the user's x_d down to this row: the cosine similarities to the
 *       items ranked above, added up.
 *   pairs(kind, offsets, order, cutoffs, index, cat_offsets, values, codes, threads, out): per
 *       cutoff, kind 0: the sum of the Jaccard similarities shared / (n_i + n_j - shared)
 *       of the pairs of the user's items that share a tag, in the order (later rank,
 *       earlier rank), plus the pairs of empty tag sets (e (e - 1) / 2 for e of them);
 *       kind 1: the pairs of the user's items that share a category code (int64). Each
 *       row's item is its place in the catalog (index); the catalog's tags are codes (0 ..
 *       codes - 1, sliced by cat_offsets), each item's once (the catalog reader makes them
 *       a set); its categories one code per item.
 * The walks split the users among `threads` threads; each user's values are computed
 * alone, so the split changes no value.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pthread.h>
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

/* the row read at the walk's position p (order: NULL, the rows as they are) */
#define AT(order, p) ((order) ? (order)[p] : (p))

/* an order of n rows, or an empty one (NULL: the rows as they are) */
static int take_order(Py_buffer *b, int64_t n, const int64_t **order) {
    *order = NULL;
    if (b->len == 0)
        return 0;
    if (need(b, n, 8, "order"))
        return -1;
    const int64_t *o = b->buf;
    for (int64_t p = 0; p < n; p++)
        if (o[p] < 0 || o[p] >= n) {
            PyErr_SetString(PyExc_ValueError, "order: a row outside 0 .. n - 1");
            return -1;
        }
    *order = o;
    return 0;
}

static PyObject *walk_order(PyObject *self, PyObject *args) {
    Py_buffer walk, rank, order, offsets;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*w*w*", &walk, &rank, &order, &offsets))
        return NULL;
    int64_t n = walk.len / 4, users = 0;
    int ok = need(&rank, n, 4, "rank") == 0 && need(&order, n, 8, "order") == 0 &&
             need(&offsets, n + 1, 8, "offsets") == 0;
    if (ok) {
        const uint32_t *w = walk.buf, *rk = rank.buf;
        int64_t *o = order.buf, *off = offsets.buf;
        Py_BEGIN_ALLOW_THREADS;
        for (int64_t p = 0; p < n; p++)
            o[p] = -1;
        for (int64_t r = 0; r < n && users >= 0; r++) {
            if ((int64_t)w[r] >= n || o[w[r]] >= 0)
                users = -1; /* outside 0 .. n - 1, or a place held twice */
            else
                o[w[r]] = r;
        }
        for (int64_t p = 0; p < n && users >= 0; p++) {
            uint32_t here = rk[o[p]];
            if (here == 1)
                off[users++] = p;
            else if (p == 0 || here != rk[o[p - 1]] + 1)
                users = -1;
        }
        if (users >= 0)
            off[users] = n;
        Py_END_ALLOW_THREADS;
    }
    PyBuffer_Release(&walk);
    PyBuffer_Release(&rank);
    PyBuffer_Release(&order);
    PyBuffer_Release(&offsets);
    if (!ok)
        return NULL;
    return PyLong_FromLongLong(users);
}

static PyObject *users_at(PyObject *self, PyObject *args) {
    Py_buffer ids, order, offsets, out;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*w*", &ids, &order, &offsets, &out))
        return NULL;
    int64_t n = ids.len / 8, users = offsets.len / 8 - 1;
    const int64_t *o = NULL;
    int ok = users >= 0 && take_order(&order, n, &o) == 0 && need(&out, users, 8, "out") == 0 &&
             ((const int64_t *)offsets.buf)[users] == n;
    int same = 1;
    if (ok) {
        const int64_t *id = ids.buf, *off = offsets.buf;
        int64_t *found = out.buf;
        Py_BEGIN_ALLOW_THREADS;
        for (int64_t u = 0; u < users && same; u++) {
            int64_t first = id[AT(o, off[u])];
            for (int64_t p = off[u] + 1; p < off[u + 1] && same; p++)
                same = id[AT(o, p)] == first;
            found[u] = first;
        }
        Py_END_ALLOW_THREADS;
    } else if (!PyErr_Occurred()) {
        PyErr_SetString(PyExc_ValueError, "offsets: at least one value, the last the rows");
    }
    PyBuffer_Release(&ids);
    PyBuffer_Release(&order);
    PyBuffer_Release(&offsets);
    PyBuffer_Release(&out);
    if (!ok)
        return NULL;
    return PyBool_FromLong(same);
}

#define PLACES_SPAN_PER_ITEM 8 /* a table of at most 8 slots per catalog item (or 2^20) */

/* The range of the ids v[0 .. n) (*low, *high) and a table's slots over it (high - low + 1,
 * in unsigned arithmetic: ids far apart overflow no signed value); 0 for no ids, and -1
 * where the table would be too wide: more than PLACES_SPAN_PER_ITEM slots for each of
 * `count` distinct ids (and 2^20). */
static int64_t table_span(const int64_t *v, int64_t n, int64_t count, int64_t *low,
                          int64_t *high) {
    *low = 0;
    *high = -1;
    for (int64_t c = 0; c < n; c++) {
        *low = c == 0 || v[c] < *low ? v[c] : *low;
        *high = c == 0 || v[c] > *high ? v[c] : *high;
    }
    uint64_t span = n ? (uint64_t)*high - (uint64_t)*low + 1 : 0;
    uint64_t room = (uint64_t)count * PLACES_SPAN_PER_ITEM;
    if (n && span == 0) /* the whole int64 range: 2^64 slots */
        return -1;
    return span > (room > ((uint64_t)1 << 20) ? room : ((uint64_t)1 << 20)) ? -1 : (int64_t)span;
}

static PyObject *places(PyObject *self, PyObject *args) {
    Py_buffer items, catalog, out;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*w*", &items, &catalog, &out))
        return NULL;
    int64_t n = items.len / 8, m = catalog.len / 8;
    int ok = need(&out, n, 8, "out") == 0, found = 1;
    if (ok) {
        const int64_t *it = items.buf, *cat = catalog.buf;
        int64_t *place = out.buf, low, high;
        int64_t span = table_span(cat, m, m, &low, &high);
        if (span < 0)
            found = -1;
        int64_t *table = found == 1 && m ? malloc(sizeof(int64_t) * (size_t)span) : NULL;
        if (found == 1 && m && !table) {
            found = -2;
        } else if (found == 1) {
            Py_BEGIN_ALLOW_THREADS;
            for (int64_t v = 0; v < span; v++)
                table[v] = -1;
            for (int64_t c = 0; c < m && found == 1; c++) {
                uint64_t slot = (uint64_t)cat[c] - (uint64_t)low;
                if (table[slot] >= 0)
                    found = 0; /* an item held twice */
                table[slot] = c;
            }
            for (int64_t r = 0; r < n && found == 1; r++) {
                uint64_t slot = (uint64_t)it[r] - (uint64_t)low;
                place[r] = it[r] >= low && it[r] <= high ? table[slot] : -1;
                found = place[r] >= 0;
            }
            Py_END_ALLOW_THREADS;
        }
        free(table);
    }
    PyBuffer_Release(&items);
    PyBuffer_Release(&catalog);
    PyBuffer_Release(&out);
    if (!ok)
        return NULL;
    if (found == -2)
        return PyErr_NoMemory();
    return PyLong_FromLong(found);
}

/* What a walk reads, the users split among threads by ranges of whole users (run_parts):
 * each user's values are computed alone, so the split changes no value. */
typedef struct {
    const int64_t *off, *order, *cut, *index;
    int64_t users, nk;
    /* sums: n_terms terms of n rows each (and their valid flags) */
    const double *terms;
    const uint8_t *valid;
    int64_t n_terms, n;
    uint8_t *out_valid; /* sums: n_terms x nk x users, beside out */
    /* similarity: each row's unit vector, `dims` values, the units' row index[row] */
    const double *units;
    int64_t dims;
    /* tags: the catalog's tag codes by item (cat_off), `codes` of them */
    const int64_t *cat_off, *cat_tags;
    int64_t codes;
    /* category: the catalog's category code by item, `codes` of them */
    const int64_t *category;
    double *out;       /* tags: nk x users; sums: n_terms x nk x users; similarity: n */
    int64_t *pairs;    /* category: nk x users */
    /* known: the rows' items; each user's logged items (log_items[log_off[u] ..]) */
    const int64_t *items, *log_off;
    int64_t *log_items;
    uint8_t *flags; /* known: one per row */
} PairJob;

typedef struct {
    const PairJob *job;
    int64_t u0, u1;
    int status;
} PairPart;

/* run `part` over the users, split into `threads` ranges of about equal rows */
static int run_parts(const PairJob *J, int threads, void *(*part)(void *)) {
    if (threads < 1)
        threads = 1;
    if (threads > 64)
        threads = 64;
    PairPart parts[64];
    pthread_t ids[64];
    int64_t n = J->off[J->users], u = 0;
    for (int t = 0; t < threads; t++) {
        parts[t].job = J;
        parts[t].u0 = u;
        int64_t until = n * (t + 1) / threads;
        while (u < J->users && (t == threads - 1 || J->off[u] < until))
            u++;
        parts[t].u1 = u;
        parts[t].status = 0;
    }
    int started = 0, status = 0;
    for (int t = 1; t < threads; t++, started++)
        if (pthread_create(&ids[t], NULL, part, &parts[t]))
            break;
    part(&parts[0]);
    for (int t = 1; t <= started; t++)
        pthread_join(ids[t], NULL);
    if (started < threads - 1) /* a thread not started: its users on this one */
        for (int t = started + 1; t < threads; t++)
            part(&parts[t]);
    for (int t = 0; t < threads; t++)
        status = parts[t].status ? parts[t].status : status;
    return status;
}

static void *ordered_sums_part(void *arg) {
    PairPart *P = arg;
    const PairJob *J = P->job;
    int64_t users = J->users, nk = J->nk;
    for (int64_t q = 0; q < J->n_terms; q++) {
        const double *t = J->terms + q * J->n;
        const uint8_t *v = J->valid + q * J->n;
        for (int64_t u = P->u0; u < P->u1; u++) {
            int64_t a = J->off[u], rows = J->off[u + 1] - a;
            double acc = 0.0;
            for (int64_t j = 0; j < rows; j++) {
                int64_t r = AT(J->order, a + j);
                if (v[r])
                    acc = acc + t[r];
                for (int64_t c = 0; c < nk; c++)
                    if (read_at(J->cut[c], rows) == j) {
                        J->out[(q * nk + c) * users + u] = v[r] ? acc : 0.0;
                        J->out_valid[(q * nk + c) * users + u] = v[r];
                    }
            }
        }
    }
    return NULL;
}

static PyObject *ordered_sums(PyObject *self, PyObject *args) {
    Py_buffer offsets, order, cutoffs, terms, valid, out, out_valid;
    int threads;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*iw*w*", &offsets, &order, &cutoffs, &terms, &valid,
                          &threads, &out, &out_valid))
        return NULL;
    int64_t users = offsets.len / 8 - 1, nk = cutoffs.len / 8;
    const int64_t *off = offsets.buf, *o = NULL;
    int64_t n = users >= 0 ? off[users] : 0;
    int64_t n_terms = n > 0 ? terms.len / 8 / n : 0;
    int ok = users >= 0 && take_order(&order, n, &o) == 0 &&
             need(&terms, n_terms * n, 8, "terms") == 0 &&
             need(&valid, n_terms * n, 1, "valid") == 0 &&
             need(&out, n_terms * nk * users, 8, "out") == 0 &&
             need(&out_valid, n_terms * nk * users, 1, "out_valid") == 0;
    if (ok) {
        Py_BEGIN_ALLOW_THREADS;
        PairJob J = {0};
        J.off = off;
        J.order = o;
        J.cut = cutoffs.buf;
        J.users = users;
        J.nk = nk;
        J.terms = terms.buf;
        J.valid = valid.buf;
        J.n_terms = n_terms;
        J.n = n;
        J.out = out.buf;
        J.out_valid = out_valid.buf;
        run_parts(&J, threads, ordered_sums_part);
        Py_END_ALLOW_THREADS;
    } else if (!PyErr_Occurred()) {
        PyErr_SetString(PyExc_ValueError, "offsets: at least one value");
    }
    PyBuffer_Release(&offsets);
    PyBuffer_Release(&order);
    PyBuffer_Release(&cutoffs);
    PyBuffer_Release(&terms);
    PyBuffer_Release(&valid);
    PyBuffer_Release(&out);
    PyBuffer_Release(&out_valid);
    if (!ok)
        return NULL;
    Py_RETURN_NONE;
}

static void *similar_earlier_part(void *arg) {
    PairPart *P = arg;
    const PairJob *J = P->job;
    int64_t dims = J->dims;
    double *running = malloc(sizeof(double) * (size_t)(dims > 0 ? dims : 1));
    P->status = running ? 0 : -1;
    for (int64_t u = P->u0; u < P->u1 && !P->status; u++) {
        for (int64_t j = J->off[u]; j < J->off[u + 1]; j++) {
            const double *x = J->units + J->index[AT(J->order, j)] * dims;
            double acc = 0.0;
            for (int64_t d = 0; d < dims; d++) {
                running[d] = (j == J->off[u] ? 0.0 : running[d]) + x[d];
                acc = acc + (running[d] - x[d]) * x[d];
            }
            J->out[j] = acc;
        }
    }
    free(running);
    return NULL;
}

static PyObject *similar_earlier(PyObject *self, PyObject *args) {
    Py_buffer offsets, order, units, index, out;
    long long dims;
    int threads;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*y*Liw*", &offsets, &order, &units, &index, &dims, &threads,
                          &out))
        return NULL;
    int64_t users = offsets.len / 8 - 1;
    const int64_t *off = offsets.buf, *o = NULL;
    int64_t n = users >= 0 ? off[users] : 0;
    int64_t vectors = dims > 0 ? units.len / 8 / dims : 0;
    int ok = users >= 0 && dims > 0 && take_order(&order, n, &o) == 0 &&
             need(&units, vectors * dims, 8, "units") == 0 && need(&index, n, 8, "index") == 0 &&
             need(&out, n, 8, "out") == 0;
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
        PairJob J = {0};
        J.off = off;
        J.order = o;
        J.users = users;
        J.units = units.buf;
        J.index = index.buf;
        J.dims = dims;
        J.out = out.buf;
        status = run_parts(&J, threads, similar_earlier_part);
        Py_END_ALLOW_THREADS;
    } else if (!PyErr_Occurred()) {
        PyErr_SetString(PyExc_ValueError, "offsets: at least one value; dims > 0");
    }
    PyBuffer_Release(&offsets);
    PyBuffer_Release(&order);
    PyBuffer_Release(&units);
    PyBuffer_Release(&index);
    PyBuffer_Release(&out);
    if (!ok)
        return NULL;
    if (status)
        return PyErr_NoMemory();
    Py_RETURN_NONE;
}


/* The pairs sharing a tag, found through each tag's postings (the earlier rows holding it,
 * chained through `prev`), never by comparing every pair: for row i, each earlier row j
 * met through i's tags counts one shared tag per meeting, and the pairs are then added in
 * the order of j. */
static void *tag_pairs_part(void *arg) {
    PairPart *P = arg;
    const PairJob *J = P->job;
    int64_t longest = 1, entries = 1;
    for (int64_t u = P->u0; u < P->u1; u++) {
        int64_t rows = J->off[u + 1] - J->off[u], held = 0;
        for (int64_t i = J->off[u]; i < J->off[u + 1]; i++) {
            int64_t item = J->index[AT(J->order, i)];
            held += J->cat_off[item + 1] - J->cat_off[item];
        }
        longest = rows > longest ? rows : longest;
        entries = held > entries ? held : entries;
    }
    int64_t codes = J->codes > 0 ? J->codes : 1;
    int64_t *head = malloc(sizeof(int64_t) * (size_t)codes);
    int64_t *stamp = malloc(sizeof(int64_t) * (size_t)codes);
    int64_t *prev = malloc(sizeof(int64_t) * (size_t)entries);
    int64_t *row_of = malloc(sizeof(int64_t) * (size_t)entries);
    int64_t *count = calloc((size_t)longest, sizeof(int64_t));
    P->status = head && stamp && prev && row_of && count ? 0 : -1;
    for (int64_t t = 0; t < J->codes && !P->status; t++)
        stamp[t] = -1;
    for (int64_t u = P->u0; u < P->u1 && !P->status; u++) {
        int64_t a = J->off[u], rows = J->off[u + 1] - a, empty = 0, used = 0;
        double acc = 0.0;
        for (int64_t i = 0; i < rows; i++) {
            int64_t item = J->index[AT(J->order, a + i)], n_i = J->cat_off[item + 1] - J->cat_off[item];
            const int64_t *tags = J->cat_tags + J->cat_off[item];
            int64_t low = i;
            for (int64_t p = 0; p < n_i; p++) {
                int64_t tag = tags[p];
                for (int64_t q = stamp[tag] == u ? head[tag] : -1; q >= 0; q = prev[q]) {
                    int64_t j = row_of[q];
                    count[j]++;
                    low = j < low ? j : low;
                }
            }
            /* the rows met, in the order of j: a scan from the first met (no sort) */
            for (int64_t j = low; j < i; j++) {
                int64_t shared = count[j];
                if (shared) {
                    int64_t other = J->index[AT(J->order, a + j)];
                    int64_t n_j = J->cat_off[other + 1] - J->cat_off[other];
                    acc = acc + (double)shared / (double)(n_i + n_j - shared);
                    count[j] = 0;
                }
            }
            for (int64_t p = 0; p < n_i; p++, used++) {
                int64_t tag = tags[p];
                prev[used] = stamp[tag] == u ? head[tag] : -1;
                row_of[used] = i;
                head[tag] = used;
                stamp[tag] = u;
            }
            if (n_i == 0)
                empty++;
            for (int64_t c = 0; c < J->nk; c++)
                if (read_at(J->cut[c], rows) == i)
                    J->out[c * J->users + u] = acc + (double)(empty * (empty - 1) / 2);
        }
    }
    free(head);
    free(stamp);
    free(prev);
    free(row_of);
    free(count);
    return NULL;
}

/* The tag pairs when the tags have at most MASK_WORDS * 64 codes: each item's tags as a
 * bit set (mask), and each tag's earlier rows as a bit set over the user's rows (seen).
 * For row i, the earlier rows sharing a tag with it are the union of its tags' `seen`,
 * read in the order of j (lowest bit first); each adds shared / (n_i + n_j - shared), the
 * shared tags counted by the bits both masks hold. The pairs sharing no tag add nothing
 * (their term is 0.0, and the sum is never -0.0), so the sum is the postings walk's, term
 * for term. */
#define MASK_WORDS 4
static void *tag_masks_part(void *arg) {
    PairPart *P = arg;
    const PairJob *J = P->job;
    int64_t words = (J->codes + 63) / 64, longest = 1, codes = J->codes > 0 ? J->codes : 1;
    if (words < 1)
        words = 1;
    for (int64_t u = P->u0; u < P->u1; u++)
        longest = J->off[u + 1] - J->off[u] > longest ? J->off[u + 1] - J->off[u] : longest;
    int64_t spans = (longest + 63) / 64; /* the words of a bit set over a user's rows */
    uint64_t *mask = calloc((size_t)(longest * words), sizeof(uint64_t));
    uint64_t *seen = calloc((size_t)(codes * spans), sizeof(uint64_t));
    uint64_t *met = malloc(sizeof(uint64_t) * (size_t)spans);
    int64_t *held = malloc(sizeof(int64_t) * (size_t)longest);
    P->status = mask && seen && met && held ? 0 : -1;
    for (int64_t u = P->u0; u < P->u1 && !P->status; u++) {
        int64_t a = J->off[u], rows = J->off[u + 1] - a, empty = 0;
        double acc = 0.0;
        for (int64_t i = 0; i < rows; i++) {
            int64_t item = J->index[AT(J->order, a + i)];
            int64_t n_i = J->cat_off[item + 1] - J->cat_off[item];
            const int64_t *tags = J->cat_tags + J->cat_off[item];
            uint64_t *mine = mask + i * words;
            for (int64_t w = 0; w < words; w++)
                mine[w] = 0;
            for (int64_t p = 0; p < n_i; p++)
                mine[tags[p] >> 6] |= (uint64_t)1 << (tags[p] & 63);
            held[i] = n_i;
            int64_t before = (i + 63) / 64; /* the words holding rows 0 .. i - 1 */
            for (int64_t w = 0; w < before; w++)
                met[w] = 0;
            for (int64_t p = 0; p < n_i; p++) {
                const uint64_t *rows_of = seen + tags[p] * spans;
                for (int64_t w = 0; w < before; w++)
                    met[w] |= rows_of[w];
            }
            for (int64_t w = 0; w < before; w++) {
                for (uint64_t bits = met[w]; bits; bits &= bits - 1) {
                    int64_t j = w * 64 + __builtin_ctzll(bits), shared = 0;
                    for (int64_t x = 0; x < words; x++)
                        shared += __builtin_popcountll(mine[x] & mask[j * words + x]);
                    acc = acc + (double)shared / (double)(n_i + held[j] - shared);
                }
            }
            for (int64_t p = 0; p < n_i; p++)
                seen[tags[p] * spans + i / 64] |= (uint64_t)1 << (i & 63);
            if (n_i == 0)
                empty++;
            for (int64_t c = 0; c < J->nk; c++)
                if (read_at(J->cut[c], rows) == i)
                    J->out[c * J->users + u] = acc + (double)(empty * (empty - 1) / 2);
        }
        for (int64_t i = 0; i < rows; i++) { /* the user's rows out of `seen` */
            int64_t item = J->index[AT(J->order, a + i)];
            for (int64_t p = J->cat_off[item]; p < J->cat_off[item + 1]; p++)
                seen[J->cat_tags[p] * spans + i / 64] = 0;
        }
    }
    free(mask);
    free(seen);
    free(met);
    free(held);
    return NULL;
}

/* The pairs of items sharing a category: each row pairs with the earlier rows of its
 * category (an integer count, exact in any order). */
static void *category_pairs_part(void *arg) {
    PairPart *P = arg;
    const PairJob *J = P->job;
    int64_t longest = 1;
    for (int64_t u = P->u0; u < P->u1; u++)
        longest = J->off[u + 1] - J->off[u] > longest ? J->off[u + 1] - J->off[u] : longest;
    int64_t *count = calloc((size_t)(J->codes > 0 ? J->codes : 1), sizeof(int64_t));
    int64_t *seen = malloc(sizeof(int64_t) * (size_t)longest);
    P->status = count && seen ? 0 : -1;
    for (int64_t u = P->u0; u < P->u1 && !P->status; u++) {
        int64_t a = J->off[u], rows = J->off[u + 1] - a, pairs = 0;
        for (int64_t i = 0; i < rows; i++) {
            int64_t code = J->category[J->index[AT(J->order, a + i)]];
            pairs += count[code]++;
            seen[i] = code;
            for (int64_t c = 0; c < J->nk; c++)
                if (read_at(J->cut[c], rows) == i)
                    J->pairs[c * J->users + u] = pairs;
        }
        for (int64_t i = 0; i < rows; i++)
            count[seen[i]] = 0;
    }
    free(count);
    free(seen);
    return NULL;
}


/* each user's logged items in a small open-addressing table (stamped with the user: never
 * cleared), then each row's item looked up in it */
static void *known_part(void *arg) {
    PairPart *P = arg;
    const PairJob *J = P->job;
    int64_t most = 0;
    for (int64_t u = P->u0; u < P->u1; u++)
        most = J->log_off[u + 1] - J->log_off[u] > most ? J->log_off[u + 1] - J->log_off[u] : most;
    int bits = 4;
    while (((int64_t)1 << bits) < 2 * most)
        bits++;
    int64_t *key = malloc(sizeof(int64_t) * ((size_t)1 << bits));
    int64_t *stamp = malloc(sizeof(int64_t) * ((size_t)1 << bits));
    P->status = key && stamp ? 0 : -1;
    for (int64_t h = 0; h < ((int64_t)1 << bits) && !P->status; h++)
        stamp[h] = -1;
    for (int64_t u = P->u0; u < P->u1 && !P->status; u++) {
        const int64_t *logged = J->log_items + J->log_off[u];
        int64_t n = J->log_off[u + 1] - J->log_off[u];
        int fit = 4; /* the user's table: at least twice its items */
        while (((int64_t)1 << fit) < 2 * n)
            fit++;
        uint64_t mask = ((uint64_t)1 << fit) - 1;
        for (int64_t i = 0; i < n; i++) {
            uint64_t h = ((uint64_t)logged[i] * 0x9E3779B97F4A7C15ULL) >> (64 - fit);
            while (stamp[h] == u && key[h] != logged[i])
                h = (h + 1) & mask;
            stamp[h] = u;
            key[h] = logged[i];
        }
        for (int64_t r = J->off[u]; r < J->off[u + 1]; r++) {
            int64_t item = J->items[r];
            uint64_t h = ((uint64_t)item * 0x9E3779B97F4A7C15ULL) >> (64 - fit);
            while (stamp[h] == u && key[h] != item)
                h = (h + 1) & mask;
            J->flags[r] = stamp[h] == u;
        }
    }
    free(key);
    free(stamp);
    return NULL;
}

static PyObject *known(PyObject *self, PyObject *args) {
    Py_buffer users, items, log_users, log_items, out;
    int threads;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*y*iw*", &users, &items, &log_users, &log_items, &threads,
                          &out))
        return NULL;
    int64_t n = users.len / 8, m = log_users.len / 8;
    int ok = need(&items, n, 8, "items") == 0 && need(&log_items, m, 8, "log_items") == 0 &&
             need(&out, n, 1, "out") == 0;
    int found = 1;
    int64_t *off = NULL, *slot = NULL, *log_off = NULL, *logged = NULL;
    if (ok) {
        const int64_t *id = users.buf, *log_id = log_users.buf;
        int64_t runs = 0, low, high;
        for (int64_t r = 0; r < n; r++)
            runs += r == 0 || id[r] != id[r - 1];
        int64_t span = table_span(id, n, runs, &low, &high);
        if (span < 0)
            found = -1;
        if (found == 1) {
            off = malloc(sizeof(int64_t) * (size_t)(runs + 1));
            slot = malloc(sizeof(int64_t) * (size_t)(span ? span : 1));
            log_off = calloc((size_t)(runs + 2), sizeof(int64_t));
            logged = malloc(sizeof(int64_t) * (size_t)(m ? m : 1));
            if (!off || !slot || !log_off || !logged)
                found = -2;
        }
        if (found == 1) {
            Py_BEGIN_ALLOW_THREADS;
            for (int64_t v = 0; v < span; v++)
                slot[v] = -1;
            int64_t u = -1;
            for (int64_t r = 0; r < n && found == 1; r++) {
                if (r == 0 || id[r] != id[r - 1]) {
                    uint64_t at = (uint64_t)id[r] - (uint64_t)low;
                    if (slot[at] >= 0)
                        found = 0; /* a user's rows in two places */
                    slot[at] = ++u;
                    off[u] = r;
                }
            }
            off[runs] = n;
            /* the log's rows of each user of the rows, in the log's order: counted, then
             * placed (log_off[u + 1] counts, then is where user u's next one goes) */
            for (int64_t q = 0; q < m && found == 1; q++) {
                int64_t v = log_id[q];
                if (v >= low && v <= high && slot[(uint64_t)v - (uint64_t)low] >= 0)
                    log_off[slot[(uint64_t)v - (uint64_t)low] + 2]++;
            }
            for (int64_t w = 2; w <= runs + 1 && found == 1; w++)
                log_off[w] += log_off[w - 1];
            const int64_t *log_item = log_items.buf;
            for (int64_t q = 0; q < m && found == 1; q++) {
                int64_t v = log_id[q];
                if (v >= low && v <= high && slot[(uint64_t)v - (uint64_t)low] >= 0)
                    logged[log_off[slot[(uint64_t)v - (uint64_t)low] + 1]++] = log_item[q];
            }
            Py_END_ALLOW_THREADS;
        }
        if (found == 1) {
            PairJob J = {0};
            J.off = off;
            J.users = runs;
            J.items = items.buf;
            J.log_off = log_off;
            J.log_items = logged;
            J.flags = out.buf;
            Py_BEGIN_ALLOW_THREADS;
            run_parts(&J, threads, known_part);
            Py_END_ALLOW_THREADS;
        }
    }
    free(off);
    free(slot);
    free(log_off);
    free(logged);
    PyBuffer_Release(&users);
    PyBuffer_Release(&items);
    PyBuffer_Release(&log_users);
    PyBuffer_Release(&log_items);
    PyBuffer_Release(&out);
    if (!ok)
        return NULL;
    if (found == -2)
        return PyErr_NoMemory();
    return PyLong_FromLong(found);
}

static int valid_index(const int64_t *index, int64_t n, int64_t items) {
    for (int64_t j = 0; j < n; j++)
        if (index[j] < 0 || index[j] >= items)
            return 0;
    return 1;
}

/* pairs(kind, offsets, cutoffs, index, cat_offsets, values, codes, threads, out): kind 0,
 * the tag pairs (values: the catalog's tag codes, cat_offsets: each item's slice; out:
 * float64); kind 1, the category pairs (values: each catalog item's category code,
 * cat_offsets: one value per item plus one, unread; out: int64) */
static PyObject *pairs(PyObject *self, PyObject *args) {
    Py_buffer offsets, order, cutoffs, index, cat_offsets, values, out;
    long long codes;
    int kind, threads;
    (void)self;
    if (!PyArg_ParseTuple(args, "iy*y*y*y*y*y*Liw*", &kind, &offsets, &order, &cutoffs, &index,
                          &cat_offsets, &values, &codes, &threads, &out))
        return NULL;
    PairJob J = {0};
    J.users = offsets.len / 8 - 1;
    J.nk = cutoffs.len / 8;
    J.off = offsets.buf;
    int64_t n = J.users >= 0 ? J.off[J.users] : 0, items = cat_offsets.len / 8 - 1;
    int64_t n_values = kind == 0 && items >= 0 ? ((const int64_t *)cat_offsets.buf)[items] : items;
    int ok = (kind == 0 || kind == 1) && J.users >= 0 && items >= 0 && codes >= 0 &&
             take_order(&order, n, &J.order) == 0 &&
             need(&index, n, 8, "index") == 0 && need(&values, n_values, 8, "values") == 0 &&
             need(&out, J.nk * J.users, 8, "out") == 0;
    if (ok && !valid_index(index.buf, n, items)) {
        PyErr_SetString(PyExc_ValueError, "index: a row outside the catalog");
        ok = 0;
    }
    if (ok) { /* every code below `codes` */
        const int64_t *v = values.buf;
        for (int64_t p = 0; p < n_values && ok; p++)
            ok = v[p] >= 0 && v[p] < codes;
        if (!ok)
            PyErr_SetString(PyExc_ValueError, "values: a code outside 0 .. codes - 1");
    }
    int status = 0;
    if (ok) {
        J.cut = cutoffs.buf;
        J.index = index.buf;
        J.cat_off = cat_offsets.buf;
        J.cat_tags = values.buf;
        J.category = values.buf;
        J.codes = codes;
        J.out = out.buf;
        J.pairs = out.buf;
        Py_BEGIN_ALLOW_THREADS;
        void *(*part)(void *) = category_pairs_part;
        if (kind == 0)
            part = codes <= 64 * MASK_WORDS ? tag_masks_part : tag_pairs_part;
        status = run_parts(&J, threads, part);
        Py_END_ALLOW_THREADS;
    } else if (!PyErr_Occurred()) {
        PyErr_SetString(PyExc_ValueError, "pairs: kind 0 or 1; offsets: at least one value");
    }
    PyBuffer_Release(&offsets);
    PyBuffer_Release(&order);
    PyBuffer_Release(&cutoffs);
    PyBuffer_Release(&index);
    PyBuffer_Release(&cat_offsets);
    PyBuffer_Release(&values);
    PyBuffer_Release(&out);
    if (!ok)
        return NULL;
    if (status)
        return PyErr_NoMemory();
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"walk_order", walk_order, METH_VARARGS,
     "walk_order(walk, rank, order, offsets): the rows in rank order; the users, or -1."},
    {"users_at", users_at, METH_VARARGS,
     "users_at(ids, order, offsets, out): each user's id; False where a user's differ."},
    {"places", places, METH_VARARGS,
     "places(items, catalog, out): each row's place in the catalog: 1, 0 missing, -1 wide."},
    {"known", known, METH_VARARGS,
     "known(users, items, log_users, log_items, threads, out): each row's pair in the log."},
    {"ordered_sums", ordered_sums, METH_VARARGS,
     "ordered_sums(offsets, order, cutoffs, terms, valid, threads, out, out_valid): sums."},
    {"similar_earlier", similar_earlier, METH_VARARGS,
     "similar_earlier(offsets, order, units, index, dims, threads, out): similarity above."},
    {"pairs", pairs, METH_VARARGS,
     "pairs(kind, offsets, order, cutoffs, index, cat_offsets, values, codes, threads, out)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_list_sums",
                                    "receval's list sums: see _list_sums.c.", -1, methods};

PyMODINIT_FUNC PyInit__list_sums(void) { return PyModule_Create(&module); }
