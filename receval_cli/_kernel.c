/* receval's compiled core: the per-user statistics of the ranking metrics in one
 * pass over each user's list, bit for bit what the polars core computes
 * (receval_cli/metrics/stats.py; the Python side is receval_cli/evaluation/kernel_core.py).
 *
 * Both inputs come grouped by user, ascending (int64 ids). For each user of either input,
 * in user order: its list is ranked by (score descending, tie-break), a total order (see
 * DEFINE_SORT and rank_scores); its ground truth is ordered by item (for binary-search
 * look-ups); each running sum (Walk) is walked once down the ranked list, to the deepest
 * cutoff that reads it, adding its terms in rank order (the polars core's running sums),
 * and each statistic is read at its cutoff.
 *
 * Built with -ffp-contract=off (setup.py): no fused multiply-add, every operation rounded
 * as the polars expressions round it. The discount tables come from polars (its log
 * differs from C's log2 in the last bit), so are passed in.
 *
 * Its functions:
 *   scan(users, t_users, scores, t_rel) -> (status, union users, longest list, largest
 *       truth): status 0 clean, 1 predictions not grouped ascending, 2 truth not, 3 a NaN
 *       score, 4 a NaN or infinite grade.
 *   evaluate(...) -> status: 0 done, 5 a (user, item) repeated in the predictions, 6 in
 *       the truth, -1 out of memory. See its argument list below. Users are split among
 *       threads; each user's values are computed alone, so the split changes no value.
 *   distinct(values, mask, out) -> count: the distinct values of the masked rows (the
 *       recommended items): ascending where the ids span a dense range, else in the order
 *       first met.
 *   exact_sum(values) -> the exact sum of float64 values (metrics/exact_sum.py).
 *
 * One file (about 1,100 lines) on purpose: the extension is one translation unit, built by
 * setuptools from this source alone.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { HITS = 0, RR = 1, PSUM = 2, DCG = 3, HITS_R = 4 };
enum { LINEAR = 0, EXPONENTIAL = 1, BINARY = 2, RELEVANT_ONLY = 4 };
enum { TIE_ITEM_DESC = 0, TIE_ITEM_ASC = 1, TIE_INPUT = 2 };

/* one requested statistic: kind, cutoff (the depth it is read at), gain, discount table */
typedef struct {
    int64_t kind, k, gain, disc;
} Request;

/* a prediction row to rank: its score, and its place in the list (ties: break_ties) */
typedef struct {
    uint64_t score; /* the score's bits, comparable as unsigned integers (comparable) */
    int64_t at;     /* the row's place in the list */
} Ranked;

/* an unsigned integer in the order of the doubles (no NaN): -0.0 as 0.0 */
static inline uint64_t comparable(double score) {
    double x = score + 0.0;
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    return (bits >> 63) ? ~bits : bits | (1ULL << 63);
}

/* a truth row ordered by item: the item, its position */
typedef struct {
    int64_t item, at;
} ByItem;

typedef struct {
    double *grade;   /* per ranked position: the item's grade, NAN when not in the truth */
    uint8_t *rel;    /* per ranked position: relevant */
    Ranked *ranked, *ranked_tmp;
    ByItem *by_item, *by_item_tmp;
    int64_t *t_items, *t_pos;
    double *gains, *gains_tmp;
    uint64_t *keys;         /* rank_scores' keys: 4 per position (padding, merges) */
    int64_t *hits_sum;      /* per ranked position: the relevant rows down to it */
    double *walk_sum;       /* per walk (Walks) and ranked position: its running sum */
    int64_t walks;          /* the walks walk_sum holds */
    int64_t *stamp, *slots; /* the duplicate finder's table */
    int64_t size, slot_size, generation;
} Scratch;

static int grow(Scratch *s, int64_t need) {
    if (need <= s->size)
        return 0;
    int64_t size = need > 2 * s->size ? need : 2 * s->size;
    void *p;
#define GROW(field, type)                                                                  \
    p = realloc(s->field, sizeof(type) * (size_t)size);                                    \
    if (!p)                                                                                \
        return -1;                                                                         \
    s->field = p;
    GROW(grade, double)
    GROW(rel, uint8_t)
    GROW(ranked, Ranked)
    GROW(ranked_tmp, Ranked)
    GROW(by_item, ByItem)
    GROW(by_item_tmp, ByItem)
    GROW(gains_tmp, double)
    GROW(t_items, int64_t)
    GROW(t_pos, int64_t)
    GROW(gains, double)
    GROW(hits_sum, int64_t)
#undef GROW
    p = realloc(s->keys, sizeof(uint64_t) * 4 * (size_t)size);
    if (!p)
        return -1;
    s->keys = p;
    p = realloc(s->walk_sum, sizeof(double) * (size_t)(size * (s->walks ? s->walks : 1)));
    if (!p)
        return -1;
    s->walk_sum = p;
    s->size = size;
    int64_t slots = 16;
    while (slots < 2 * size)
        slots *= 2;
    if (slots > s->slot_size) {
        free(s->stamp);
        free(s->slots);
        s->stamp = calloc((size_t)slots, sizeof(int64_t));
        s->slots = malloc(sizeof(int64_t) * (size_t)slots);
        if (!s->stamp || !s->slots)
            return -1;
        s->slot_size = slots;
        s->generation = 0;
    }
    return 0;
}

static void release(Scratch *s) {
    free(s->grade);
    free(s->rel);
    free(s->ranked);
    free(s->ranked_tmp);
    free(s->by_item);
    free(s->by_item_tmp);
    free(s->gains_tmp);
    free(s->t_items);
    free(s->t_pos);
    free(s->gains);
    free(s->keys);
    free(s->hits_sum);
    free(s->walk_sum);
    free(s->stamp);
    free(s->slots);
}

/* Does the list items[0..m) repeat an item? An open-addressing table whose slots of an
 * earlier list are told apart by their generation stamp (never cleared). */
static int repeats(Scratch *s, const int64_t *items, int64_t m) {
    int64_t mask = s->slot_size - 1, gen = ++s->generation;
    for (int64_t j = 0; j < m; j++) {
        uint64_t h = (uint64_t)items[j] * 0x9E3779B97F4A7C15ULL;
        int64_t at = (int64_t)(h >> 20) & mask;
        while (s->stamp[at] == gen) {
            if (s->slots[at] == items[j])
                return 1;
            at = (at + 1) & mask;
        }
        s->stamp[at] = gen;
        s->slots[at] = items[j];
    }
    return 0;
}

/* Sorts of a user's rows by a strict total order, so that any correct sort gives the one
 * order the polars core's stable sort gives: a list by (score descending, then its
 * tie-break key descending: the keys are unique within a list, repeated items having
 * been refused before); the truth by item ascending (a repeated item is found next to
 * its twin after the sort and refused); gains descending (equal gains are the same
 * number, so their order changes no sum). Insertion sort on runs of SORT_RUN, then
 * bottom-up merges between the array and `tmp`; returns the buffer holding the result.
 * -0.0 and 0.0 compare equal, as in the polars core; NaN scores never reach here. */
enum { SORT_RUN = 16 };

#define DEFINE_SORT(NAME, T, BEFORE)                                                       \
    static T *NAME(T *a, T *tmp, int64_t n) {                                              \
        for (int64_t lo = 0; lo < n; lo += SORT_RUN) {                                     \
            int64_t hi = lo + SORT_RUN < n ? lo + SORT_RUN : n;                            \
            for (int64_t i = lo + 1; i < hi; i++) {                                        \
                T x = a[i];                                                                \
                int64_t j = i;                                                             \
                while (j > lo && BEFORE(x, a[j - 1])) {                                    \
                    a[j] = a[j - 1];                                                       \
                    j--;                                                                   \
                }                                                                          \
                a[j] = x;                                                                  \
            }                                                                              \
        }                                                                                  \
        for (int64_t width = SORT_RUN; width < n; width *= 2) {                            \
            for (int64_t lo = 0; lo < n; lo += 2 * width) {                                \
                int64_t mid = lo + width < n ? lo + width : n;                             \
                int64_t hi = lo + 2 * width < n ? lo + 2 * width : n;                      \
                int64_t x = lo, y = mid, o = lo;                                           \
                while (x < mid && y < hi) {                                                \
                    int take = BEFORE(a[y], a[x]);                                         \
                    const T *from = take ? &a[y] : &a[x];                                  \
                    tmp[o++] = *from;                                                      \
                    y += take;                                                             \
                    x += !take;                                                            \
                }                                                                          \
                while (x < mid)                                                            \
                    tmp[o++] = a[x++];                                                     \
                while (y < hi)                                                             \
                    tmp[o++] = a[y++];                                                     \
            }                                                                              \
            T *swap = a;                                                                   \
            a = tmp;                                                                       \
            tmp = swap;                                                                    \
        }                                                                                  \
        return a;                                                                          \
    }

#define RANKED_BEFORE(p, q) ((p).score > (q).score)
#define ITEM_BEFORE(p, q) ((p).item < (q).item)
#define GAIN_BEFORE(p, q) ((p) > (q))
DEFINE_SORT(sort_ranked, Ranked, RANKED_BEFORE)
DEFINE_SORT(sort_by_item, ByItem, ITEM_BEFORE)
DEFINE_SORT(sort_gains, double, GAIN_BEFORE)

/* Sixteen keys in descending order, by Batcher's odd-even merge network (63 exchanges,
 * checked on all 2^16 inputs of 0s and 1s): no branch on the keys, so no mispredictions. */
#define CX(a, b)                                                                           \
    do {                                                                                   \
        uint64_t x_ = a, y_ = b;                                                           \
        a = x_ > y_ ? x_ : y_;                                                             \
        b = x_ > y_ ? y_ : x_;                                                             \
    } while (0)
static void sort16(uint64_t *a) {
    uint64_t v0 = a[0], v1 = a[1], v2 = a[2], v3 = a[3], v4 = a[4], v5 = a[5], v6 = a[6],
             v7 = a[7], v8 = a[8], v9 = a[9], v10 = a[10], v11 = a[11], v12 = a[12],
             v13 = a[13], v14 = a[14], v15 = a[15];
    CX(v0, v1); CX(v2, v3); CX(v0, v2); CX(v1, v3); CX(v1, v2); CX(v4, v5); CX(v6, v7);
    CX(v4, v6); CX(v5, v7); CX(v5, v6); CX(v0, v4); CX(v2, v6); CX(v2, v4); CX(v1, v5);
    CX(v3, v7); CX(v3, v5); CX(v1, v2); CX(v3, v4); CX(v5, v6); CX(v8, v9);
    CX(v10, v11); CX(v8, v10); CX(v9, v11); CX(v9, v10); CX(v12, v13); CX(v14, v15);
    CX(v12, v14); CX(v13, v15); CX(v13, v14); CX(v8, v12); CX(v10, v14); CX(v10, v12);
    CX(v9, v13); CX(v11, v15); CX(v11, v13); CX(v9, v10); CX(v11, v12); CX(v13, v14);
    CX(v0, v8); CX(v4, v12); CX(v4, v8); CX(v2, v10); CX(v6, v14); CX(v6, v10);
    CX(v2, v4); CX(v6, v8); CX(v10, v12); CX(v1, v9); CX(v5, v13); CX(v5, v9);
    CX(v3, v11); CX(v7, v15); CX(v7, v11); CX(v3, v5); CX(v7, v9); CX(v11, v13);
    CX(v1, v2); CX(v3, v4); CX(v5, v6); CX(v7, v8); CX(v9, v10); CX(v11, v12);
    CX(v13, v14);
    a[0] = v0, a[1] = v1, a[2] = v2, a[3] = v3, a[4] = v4, a[5] = v5, a[6] = v6, a[7] = v7;
    a[8] = v8, a[9] = v9, a[10] = v10, a[11] = v11, a[12] = v12, a[13] = v13, a[14] = v14;
    a[15] = v15;
}
#undef CX

/* Two descending runs of n distinct keys each, from[0..n) and from[n..2n), merged into
 * to[0..2n): the n largest from the front and the n smallest from the back at once (two
 * chains of dependent loads instead of one), without branches. Neither chain reads past
 * its runs: after k < n steps from one end, k keys have been taken from the two runs. */
static void merge_halves(const uint64_t *from, uint64_t *to, int64_t n) {
    const uint64_t *l = from, *r = from + n, *tl = from + n - 1, *tr = from + 2 * n - 1;
    uint64_t *d = to, *td = to + 2 * n - 1;
    for (int64_t k = 0; k < n; k++) {
        int right = *r > *l;
        *d++ = right ? *r : *l;
        r += right;
        l += !right;
        int left = *tl < *tr;
        *td-- = left ? *tl : *tr;
        tl -= left;
        tr -= !left;
    }
}

/* The list's rows ordered by score, descending, equal scores in their places' order: the
 * order sort_ranked gives, made faster by sorting 8-byte keys without branches (sort16,
 * merge_halves: the kernel took about a quarter less time on 1M rows of 100-item lists).
 * A key is the score's comparable bits with its lowest `bits` replaced by the row's place
 * (reversed: the smaller place first), so keys are distinct and above 0; the list is
 * padded with 0s to a power of two. Rows whose scores differ only in those low bits come
 * in place order, and each such run is put in score order after. */
static Ranked *rank_scores(Scratch *s, const double *scores, int64_t m) {
    int bits = 1;
    while (bits < 32 && (1LL << bits) < m)
        bits++;
    if ((1LL << bits) < m) { /* a list of over 2^32 rows: the pairs themselves */
        for (int64_t j = 0; j < m; j++)
            s->ranked[j] = (Ranked){comparable(scores[j]), j};
        return sort_ranked(s->ranked, s->ranked_tmp, m);
    }
    uint64_t low = (1ULL << bits) - 1;
    int64_t padded = 16;
    while (padded < m)
        padded *= 2;
    uint64_t *keys = s->keys, *tmp = s->keys + padded; /* grow: 4 * size keys */
    for (int64_t j = 0; j < m; j++)
        keys[j] = (comparable(scores[j]) & ~low) | (low - (uint64_t)j);
    for (int64_t j = m; j < padded; j++)
        keys[j] = 0;
    for (int64_t lo = 0; lo < padded; lo += 16)
        sort16(keys + lo);
    for (int64_t width = 16; width < padded; width *= 2) {
        for (int64_t lo = 0; lo < padded; lo += 2 * width)
            merge_halves(keys + lo, tmp + lo, width);
        uint64_t *swap = keys;
        keys = tmp;
        tmp = swap;
    }
    Ranked *o = s->ranked;
    for (int64_t r = 0; r < m; r++) {
        int64_t at = (int64_t)(low - (keys[r] & low));
        o[r] = (Ranked){comparable(scores[at]), at};
    }
    for (int64_t lo = 0, hi; lo < m; lo = hi) { /* runs of equal high bits, by score */
        for (hi = lo + 1; hi < m && (o[hi].score & ~low) == (o[lo].score & ~low);)
            hi++;
        for (int64_t r = lo + 1; r < hi; r++) {
            Ranked x = o[r];
            int64_t q = r;
            for (; q > lo && x.score > o[q - 1].score; q--)
                o[q] = o[q - 1];
            o[q] = x;
        }
    }
    return o;
}

/* The tie-break inside each run of equal scores of a list sorted by score: items
 * descending or ascending, or the input order (the rows' places ascending). Runs are
 * short (ties are few), so an insertion sort. */
static void break_ties(Ranked *o, int64_t m, const int64_t *items, int tie) {
    for (int64_t lo = 0, hi; lo < m; lo = hi) {
        for (hi = lo + 1; hi < m && o[hi].score == o[lo].score;)
            hi++;
        for (int64_t r = lo + 1; r < hi; r++) {
            Ranked x = o[r];
            int64_t q = r;
            for (; q > lo; q--) {
                int64_t a = x.at, b = o[q - 1].at;
                int before = tie == TIE_ITEM_DESC  ? items[a] > items[b]
                             : tie == TIE_ITEM_ASC ? items[a] < items[b]
                                                   : a < b;
                if (!before)
                    break;
                o[q] = o[q - 1];
            }
            o[q] = x;
        }
    }
}

/* gain(rel) of metrics/stats.py for a grade in the truth (never null here) */
static double gain_of(double grade, int relevant, int64_t kind) {
    double value;
    if ((kind & 3) == BINARY)
        return relevant ? 1.0 : 0.0;
    double g = grade < 0.0 ? 0.0 : grade; /* clip(lower_bound=0) */
    value = (kind & 3) == EXPONENTIAL ? pow(2.0, g) - 1.0 : g;
    if ((kind & RELEVANT_ONLY) && !relevant)
        value = 0.0;
    return value;
}

/* A running sum down a ranked list that statistics read at their cutoffs: AP's precision
 * sum, or the DCG of one (gain, discount table). Each is walked once per list, as deep as
 * its deepest statistic reads (`depth`), and a statistic at cutoff k reads its value at
 * position k: the same terms added in the same order as a walk that stops at k, so the same
 * bits. The relevant rows' count (hits, hits within |R|, the first relevant rank) is a walk
 * of its own (Job.hits_depth). */
enum { MOST_WALKS = 16 };
typedef struct {
    int64_t kind, gain, disc, depth;
} Walk;

typedef struct {
    /* predictions, grouped by user ascending */
    int64_t n;
    const int64_t *users, *items;
    const double *scores;
    /* ground truth, grouped by user ascending */
    int64_t tn;
    const int64_t *t_users, *t_items;
    const double *t_rel;
    const uint8_t *t_relevant;
    /* what to compute */
    int tie;
    int64_t depth; /* how deep each list is kept (the largest cutoff, max_depth) */
    int64_t n_req;
    const Request *req;
    const int64_t *req_walk; /* per request: its walk in walks, -1 for the counted ones */
    int64_t n_walks, hits_depth;
    Walk walks[MOST_WALKS];
    int64_t n_ideal;
    const int64_t *ideal; /* pairs (gain, discount table) */
    const double *disc;   /* discount tables, each disc_len long, indexed by position */
    int64_t disc_len;
    /* outputs, one entry per user of either input (n_out) */
    int64_t *out_user, *out_list_rows, *out_truth_items, *out_n_relevant;
    uint8_t *out_flags; /* 1: in the predictions, 2: in the truth, 4: a hit row */
    double *out_stats;  /* n_req x n_out */
    uint8_t *out_valid; /* n_req x n_out: 0 where the polars core's value is null */
    double *out_ideal;  /* n_ideal x tn: each truth row's running ideal DCG, in its user's
                           truth rows' places */
    uint8_t *in_top;    /* per prediction row: ranked within depth */
    /* the ranked rows, NULL where not asked (the lists and the recs table read them): for
       a user's rows i .. i + m - 1, top_row[i + r] is the row ranked r + 1, top_item its
       item and top_rank its rank, for r below depth; the places left are -1, unset and 0 */
    uint32_t *top_rank;
    int64_t *top_row;
    int64_t *top_item;
    uint8_t *top_relevant; /* beside them: 1 relevant, 0 not, 2 not in the ground truth */
    int64_t n_out;
} Job;

/* the users of one thread: prediction rows [i0, i1), truth rows [t0, t1), written from
 * output row u0 on */
typedef struct {
    const Job *job;
    int64_t i0, i1, t0, t1, u0;
    int status;
} Part;

static int evaluate_part(const Job *J, int64_t i, int64_t n, int64_t t, int64_t tn, int64_t u) {
    Scratch s = {0};
    s.walks = J->n_walks;
    int status = 0;
    int64_t depth = J->depth;
    if (grow(&s, 256) < 0) {
        status = -1;
        goto done;
    }
    while (i < n || t < tn) {
        int64_t user;
        if (i < n && (t >= tn || J->users[i] <= J->t_users[t]))
            user = J->users[i];
        else
            user = J->t_users[t];
        int64_t end = i, tend = t;
        while (end < n && J->users[end] == user)
            end++;
        while (tend < tn && J->t_users[tend] == user)
            tend++;
        int64_t m = end - i, tl = tend - t;
        if (grow(&s, m > tl ? m : tl) < 0) {
            status = -1;
            goto done;
        }
        uint8_t flags = (m > 0 ? 1 : 0) | (tl > 0 ? 2 : 0);
        int64_t n_relevant = 0;
        /* the truth by item: look-ups, and repeated items side by side */
        for (int64_t p = 0; p < tl; p++)
            s.by_item[p] = (ByItem){J->t_items[t + p], p};
        const ByItem *order_t = sort_by_item(s.by_item, s.by_item_tmp, tl);
        for (int64_t p = 0; p < tl; p++) {
            s.t_pos[p] = t + order_t[p].at;
            s.t_items[p] = J->t_items[s.t_pos[p]];
            if (p > 0 && s.t_items[p] == s.t_items[p - 1]) {
                status = 6;
                goto done;
            }
            n_relevant += J->t_relevant[s.t_pos[p]] ? 1 : 0;
        }
        if (m > 0 && repeats(&s, J->items + i, m)) {
            status = 5;
            goto done;
        }
        /* the ideal lists: each (gain, discount)'s running DCG of the sorted gains */
        for (int64_t q = 0; q < J->n_ideal; q++) {
            int64_t kind = J->ideal[2 * q];
            const double *disc = J->disc + J->ideal[2 * q + 1] * J->disc_len;
            for (int64_t p = 0; p < tl; p++) {
                double g = gain_of(J->t_rel[t + p], J->t_relevant[t + p], kind);
                s.gains[p] = g < 0.0 ? 0.0 : g;
            }
            const double *sorted = sort_gains(s.gains, s.gains_tmp, tl);
            double *out = J->out_ideal + q * J->tn + t;
            double acc = 0.0;
            for (int64_t p = 0; p < tl; p++) {
                double term = sorted[p] * disc[p + 1];
                acc = p == 0 ? term : acc + term;
                out[p] = acc;
            }
        }
        /* the ranked list, and each ranked item's grade */
        int64_t kept = m < depth ? m : depth, hits_rows = 0;
        if (m > 0) {
            Ranked *o = rank_scores(&s, J->scores + i, m);
            break_ties(o, m, J->items + i, J->tie);
            for (int64_t r = 0; r < kept; r++) {
                int64_t row = i + o[r].at, item = J->items[row], lo = 0;
                J->in_top[row] = 1;
                if (J->top_rank) {
                    J->top_rank[i + r] = (uint32_t)(r + 1);
                    J->top_row[i + r] = row;
                    J->top_item[i + r] = item;
                }
                uint8_t *top_relevant = J->top_rank ? J->top_relevant + i + r : NULL;
                if (tl > 0) { /* the first truth item not below it: a branchless search */
                    const int64_t *base = s.t_items;
                    for (int64_t len = tl; len > 1; len -= len >> 1)
                        base = base[len >> 1] < item ? base + (len >> 1) : base;
                    lo = (base - s.t_items) + (*base < item);
                }
                if (lo < tl && s.t_items[lo] == item) {
                    s.grade[r] = J->t_rel[s.t_pos[lo]];
                    s.rel[r] = J->t_relevant[s.t_pos[lo]];
                    hits_rows++;
                } else {
                    s.grade[r] = NAN;
                    s.rel[r] = 0;
                }
                if (top_relevant)
                    *top_relevant = isnan(s.grade[r]) ? 2 : (s.rel[r] ? 1 : 0);
            }
        }
        if (hits_rows > 0)
            flags |= 4;
        /* the running sums, each walked once down the list (Walk) */
        int64_t first_relevant = kept, hits_depth = kept < J->hits_depth ? kept : J->hits_depth;
        for (int64_t r = 0, count = 0; r < hits_depth; r++) {
            count += s.rel[r];
            s.hits_sum[r] = count;
            if (s.rel[r] && first_relevant == kept)
                first_relevant = r;
        }
        for (int64_t w = 0; w < J->n_walks; w++) {
            const Walk *W = &J->walks[w];
            const double *disc = J->disc + W->disc * J->disc_len;
            double *sum = s.walk_sum + w * s.size;
            int64_t last = kept < W->depth ? kept : W->depth, seen = 0, hits = 0;
            double acc = 0.0;
            for (int64_t r = 0; r < last; r++) {
                if (!isnan(s.grade[r])) {
                    double term;
                    if (W->kind == PSUM)
                        term = s.rel[r] ? (double)++hits / (double)(r + 1) : 0.0;
                    else
                        term = gain_of(s.grade[r], s.rel[r], W->gain) * disc[r + 1];
                    acc = seen++ == 0 ? term : acc + term;
                }
                sum[r] = acc;
            }
        }
        /* each statistic: its walk read at its cutoff */
        for (int64_t q = 0; q < J->n_req; q++) {
            const Request *R = &J->req[q];
            int64_t k = R->kind == HITS_R ? n_relevant : R->k;
            int64_t last = kept < k ? kept : k;
            double value = 0.0;
            int valid = hits_rows > 0;
            if (R->kind == HITS || R->kind == HITS_R) {
                value = last > 0 ? (double)s.hits_sum[last - 1] : 0.0;
            } else if (R->kind == RR) {
                valid = first_relevant < last && hits_rows > 0;
                value = first_relevant < last ? 1.0 / (double)(first_relevant + 1) : 0.0;
            } else if (last > 0) { /* PSUM, DCG */
                value = s.walk_sum[J->req_walk[q] * s.size + last - 1];
            }
            J->out_stats[q * J->n_out + u] = value;
            J->out_valid[q * J->n_out + u] = (uint8_t)valid;
        }
        J->out_user[u] = user;
        J->out_list_rows[u] = m;
        J->out_truth_items[u] = tl;
        J->out_n_relevant[u] = n_relevant;
        J->out_flags[u] = flags;
        u++;
        i = end;
        t = tend;
    }
done:
    release(&s);
    return status;
}

static void *run_part(void *arg) {
    Part *P = arg;
    P->status = evaluate_part(P->job, P->i0, P->i1, P->t0, P->t1, P->u0);
    return NULL;
}

static int64_t lower_bound(const int64_t *values, int64_t n, int64_t value) {
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = (lo + hi) >> 1;
        if (values[mid] < value)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The users split into `threads` parts of about equal prediction rows, each part run by a
 * thread of its own (every user's values are computed alone, so the parts change no
 * value). Returns the first nonzero status of the parts. */
static int evaluate_job(const Job *J, int threads) {
    enum { MOST = 64 };
    Part parts[MOST];
    pthread_t ids[MOST];
    int64_t splits[MOST + 1]; /* the first user of each part */
    if (threads > MOST)
        threads = MOST;
    if (threads < 1)
        threads = 1;
    int made = 0;
    for (int p = 0; p < threads; p++) {
        int64_t at = J->n * p / threads;
        if (p > 0 && at < J->n && J->users[at] <= splits[made - 1])
            at = lower_bound(J->users, J->n, splits[made - 1] + 1);
        if (at >= J->n && p > 0)
            break;
        splits[made++] = p == 0 ? INT64_MIN : J->users[at];
    }
    /* each part's first output row: the users of both inputs before its first user */
    int64_t i = 0, t = 0, u = 0;
    for (int p = 0; p < made; p++) {
        int64_t i0 = p == 0 ? 0 : lower_bound(J->users, J->n, splits[p]);
        int64_t t0 = p == 0 ? 0 : lower_bound(J->t_users, J->tn, splits[p]);
        while (i < i0 || t < t0) {
            int64_t user = (i < i0 && (t >= t0 || J->users[i] <= J->t_users[t])) ? J->users[i]
                                                                                 : J->t_users[t];
            while (i < i0 && J->users[i] == user)
                i++;
            while (t < t0 && J->t_users[t] == user)
                t++;
            u++;
        }
        parts[p] = (Part){J, i0, J->n, t0, J->tn, u, 0};
        if (p > 0) {
            parts[p - 1].i1 = i0;
            parts[p - 1].t1 = t0;
        }
    }
    int started = 0;
    for (int p = 1; p < made; p++) {
        if (pthread_create(&ids[p], NULL, run_part, &parts[p]) != 0)
            break;
        started = p;
    }
    run_part(&parts[0]);
    for (int p = 1; p <= started; p++)
        pthread_join(ids[p], NULL);
    for (int p = started + 1; p < made; p++) /* threads that could not start */
        run_part(&parts[p]);
    for (int p = 0; p < made; p++)
        if (parts[p].status)
            return parts[p].status;
    return 0;
}

static __thread uint64_t *kept_bits = NULL; /* distinct's bitmap, all zero between calls */
static __thread size_t kept_words = 0;

/* The distinct values of the rows whose mask is set, into out; returns their number, or
 * -1 when memory ran out. An open-addressing set, grown as it fills. */
static int64_t distinct(const int64_t *values, const uint8_t *mask, int64_t n, int64_t *out) {
    /* ids in a range of at most 2^28 and 256 per row (most catalogs number their items):
     * a bitmap of the range (32 MiB at most), read back in ascending order and left all
     * zero for the next call on this thread (kept_bits: a batch of 1M rows over a catalog
     * of 100M items needs 12 MiB, which a fresh allocation faulted in page by page each
     * time). The open-addressing set below took a miss of the cache for most rows there */
    int64_t low = INT64_MAX, high = INT64_MIN;
    for (int64_t j = 0; j < n; j++) {
        if (mask[j]) {
            low = values[j] < low ? values[j] : low;
            high = values[j] > high ? values[j] : high;
        }
    }
    if (low > high)
        return 0;
    if ((uint64_t)high - (uint64_t)low < ((uint64_t)1 << 28) &&
        (uint64_t)high - (uint64_t)low < 256 * (uint64_t)n) {
        uint64_t span = (uint64_t)high - (uint64_t)low + 1, count = 0;
        size_t words = (size_t)(span / 64 + 1);
        if (kept_words < words) {
            free(kept_bits);
            kept_words = 0;
            kept_bits = calloc(words, sizeof(uint64_t));
            if (!kept_bits)
                return -1;
            kept_words = words;
        }
        uint64_t *bits = kept_bits;
        for (int64_t j = 0; j < n; j++) {
            if (mask[j]) {
                uint64_t at = (uint64_t)values[j] - (uint64_t)low;
                bits[at >> 6] |= (uint64_t)1 << (at & 63);
            }
        }
        for (uint64_t word = 0; word <= span / 64; word++) {
            uint64_t w = bits[word];
            if (w)
                bits[word] = 0;
            while (w) {
                int bit = __builtin_ctzll(w);
                out[count++] = (int64_t)((uint64_t)low + word * 64 + (uint64_t)bit);
                w &= w - 1;
            }
        }
        return (int64_t)count;
    }
    int64_t size = 1 << 16, count = 0;
    int64_t *slots = malloc(sizeof(int64_t) * (size_t)size);
    uint8_t *used = calloc((size_t)size, 1);
    if (!slots || !used) {
        free(slots);
        free(used);
        return -1;
    }
    for (int64_t j = 0; j < n; j++) {
        if (!mask[j])
            continue;
        int64_t value = values[j];
        if (2 * (count + 1) > size) { /* keep the set at most half full */
            int64_t grown = 2 * size;
            int64_t *new_slots = malloc(sizeof(int64_t) * (size_t)grown);
            uint8_t *new_used = calloc((size_t)grown, 1);
            if (!new_slots || !new_used) {
                free(new_slots);
                free(new_used);
                free(slots);
                free(used);
                return -1;
            }
            for (int64_t c = 0; c < count; c++) {
                uint64_t h = (uint64_t)out[c] * 0x9E3779B97F4A7C15ULL;
                int64_t at = (int64_t)(h >> 20) & (grown - 1);
                while (new_used[at])
                    at = (at + 1) & (grown - 1);
                new_used[at] = 1;
                new_slots[at] = out[c];
            }
            free(slots);
            free(used);
            slots = new_slots;
            used = new_used;
            size = grown;
        }
        uint64_t h = (uint64_t)value * 0x9E3779B97F4A7C15ULL;
        int64_t at = (int64_t)(h >> 20) & (size - 1);
        while (used[at] && slots[at] != value)
            at = (at + 1) & (size - 1);
        if (!used[at]) {
            used[at] = 1;
            slots[at] = value;
            out[count++] = value;
        }
    }
    free(slots);
    free(used);
    return count;
}

static int grouped(const int64_t *values, Py_ssize_t n) {
    for (Py_ssize_t j = 1; j < n; j++)
        if (values[j] < values[j - 1])
            return 0;
    return 1;
}

static int need(Py_buffer *b, Py_ssize_t items, Py_ssize_t size, const char *name) {
    if (b->len != items * size) {
        PyErr_Format(PyExc_ValueError, "%s: %zd bytes, expected %zd", name, b->len, items * size);
        return -1;
    }
    return 0;
}

static PyObject *scan(PyObject *self, PyObject *args) {
    Py_buffer users, t_users, scores, t_rel;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*y*", &users, &t_users, &scores, &t_rel))
        return NULL;
    Py_ssize_t n = users.len / 8, tn = t_users.len / 8;
    const int64_t *u = users.buf, *tu = t_users.buf;
    const double *sc = scores.buf, *tr = t_rel.buf;
    int status = 0;
    int64_t n_out = 0, longest = 0, largest = 0;
    if (need(&scores, n, 8, "scores") < 0 || need(&t_rel, tn, 8, "t_rel") < 0) {
        status = -2;
        goto out;
    }
    Py_BEGIN_ALLOW_THREADS;
    if (!grouped(u, n))
        status = 1;
    else if (!grouped(tu, tn))
        status = 2;
    for (Py_ssize_t j = 0; j < n && !status; j++)
        if (isnan(sc[j]))
            status = 3;
    for (Py_ssize_t j = 0; j < tn && !status; j++)
        if (isnan(tr[j]) || isinf(tr[j]))
            status = 4;
    if (!status) {
        Py_ssize_t i = 0, t = 0;
        while (i < n || t < tn) {
            int64_t user = (i < n && (t >= tn || u[i] <= tu[t])) ? u[i] : tu[t];
            Py_ssize_t a = i, b = t;
            while (i < n && u[i] == user)
                i++;
            while (t < tn && tu[t] == user)
                t++;
            if (i - a > longest)
                longest = i - a;
            if (t - b > largest)
                largest = t - b;
            n_out++;
        }
    }
    Py_END_ALLOW_THREADS;
out:
    PyBuffer_Release(&users);
    PyBuffer_Release(&t_users);
    PyBuffer_Release(&scores);
    PyBuffer_Release(&t_rel);
    if (status == -2)
        return NULL;
    return Py_BuildValue("iLLL", status, (long long)n_out, (long long)longest, (long long)largest);
}

/* The walks the requests read (Walk), each as deep as its deepest request, and each
 * request's walk; 0 when they do not fit in MOST_WALKS. */
static int walks_of(Job *J, const Request *req, int64_t *req_walk) {
    J->n_walks = 0;
    J->hits_depth = 0;
    for (int64_t q = 0; q < J->n_req; q++) {
        const Request *R = &req[q];
        int64_t deepest = R->kind == HITS_R ? J->depth : R->k;
        req_walk[q] = -1;
        if (R->kind == HITS || R->kind == HITS_R || R->kind == RR) {
            J->hits_depth = deepest > J->hits_depth ? deepest : J->hits_depth;
            continue;
        }
        int64_t gain = R->kind == PSUM ? 0 : R->gain, disc = R->kind == PSUM ? 0 : R->disc, w = 0;
        while (w < J->n_walks && !(J->walks[w].kind == R->kind && J->walks[w].gain == gain &&
                                   J->walks[w].disc == disc))
            w++;
        if (w == J->n_walks) {
            if (w == MOST_WALKS)
                return 0;
            J->walks[w] = (Walk){R->kind, gain, disc, 0};
            J->n_walks++;
        }
        J->walks[w].depth = deepest > J->walks[w].depth ? deepest : J->walks[w].depth;
        req_walk[q] = w;
    }
    return 1;
}

static PyObject *evaluate(PyObject *self, PyObject *args) {
    /* inputs: users, items, scores, t_users, t_items, t_rel, t_relevant (uint8), requests
     * (int64 x 4 each: kind, k, gain, discount table), ideal (int64 x 2 each: gain,
     * discount table), discount tables (float64, disc_len each); then tie, depth, n_out,
     * threads;
     * outputs: out_user, out_list_rows, out_truth_items, out_n_relevant (int64, n_out),
     * out_flags (uint8, n_out), out_stats (float64, requests x n_out), out_valid (uint8,
     * requests x n_out), out_ideal (float64, ideal x truth rows), in_top (uint8 per
     * prediction row, zeroed), top_rank (uint32 per prediction row, zeroed), top_row
     * (int64 per prediction row, -1), top_relevant (uint8 per prediction row) and top_item
     * (int64 per prediction row), or all four empty: not asked */
    enum { N_BUFFERS = 23 };
    Py_buffer b[N_BUFFERS];
    int tie, threads;
    long long depth, n_out;
    (void)self;
    memset(b, 0, sizeof b);
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*y*y*y*iLLiw*w*w*w*w*w*w*w*w*w*w*w*w*", &b[0], &b[1],
                          &b[2], &b[3], &b[4], &b[5], &b[6], &b[7], &b[8], &b[9], &tie, &depth,
                          &n_out, &threads, &b[10], &b[11], &b[12], &b[13], &b[14], &b[15],
                          &b[16], &b[17], &b[18], &b[19], &b[20], &b[21], &b[22]))
        return NULL;
    Job J;
    J.n = b[0].len / 8;
    J.tn = b[3].len / 8;
    J.n_req = b[7].len / 32;
    J.n_ideal = b[8].len / 16;
    J.n_out = n_out;
    J.tie = tie;
    J.depth = depth;
    int64_t n_disc = 0;
    for (int64_t q = 0; q < J.n_req; q++) {
        const int64_t *r = (const int64_t *)b[7].buf + 4 * q;
        if (r[0] == DCG && r[3] + 1 > n_disc)
            n_disc = r[3] + 1;
    }
    for (int64_t q = 0; q < J.n_ideal; q++) {
        int64_t d = ((const int64_t *)b[8].buf)[2 * q + 1];
        n_disc = d + 1 > n_disc ? d + 1 : n_disc;
    }
    J.disc_len = n_disc ? b[9].len / 8 / n_disc : 0;
    int64_t *req_walk = malloc(sizeof(int64_t) * (size_t)(J.n_req ? J.n_req : 1));
    if (!req_walk) {
        for (int j = 0; j < N_BUFFERS; j++)
            PyBuffer_Release(&b[j]);
        return PyErr_NoMemory();
    }
    int walks_fit = walks_of(&J, b[7].buf, req_walk);
    J.req_walk = req_walk;
    int ok = need(&b[1], J.n, 8, "items") == 0 && need(&b[2], J.n, 8, "scores") == 0 &&
             need(&b[4], J.tn, 8, "t_items") == 0 && need(&b[5], J.tn, 8, "t_rel") == 0 &&
             need(&b[6], J.tn, 1, "t_relevant") == 0 &&
             need(&b[9], n_disc * J.disc_len, 8, "discounts") == 0 &&
             need(&b[10], n_out, 8, "out_user") == 0 &&
             need(&b[11], n_out, 8, "out_list_rows") == 0 &&
             need(&b[12], n_out, 8, "out_truth_items") == 0 &&
             need(&b[13], n_out, 8, "out_n_relevant") == 0 &&
             need(&b[14], n_out, 1, "out_flags") == 0 &&
             need(&b[15], J.n_req * n_out, 8, "out_stats") == 0 &&
             need(&b[16], J.n_req * n_out, 1, "out_valid") == 0 &&
             need(&b[17], J.n_ideal * J.tn, 8, "out_ideal") == 0 &&
             need(&b[18], J.n, 1, "in_top") == 0 &&
             (b[19].len == 0 || need(&b[19], J.n, 4, "top_rank") == 0) &&
             need(&b[20], b[19].len ? J.n : 0, 8, "top_row") == 0 &&
             need(&b[21], b[19].len ? J.n : 0, 1, "top_relevant") == 0 &&
             need(&b[22], b[19].len ? J.n : 0, 8, "top_item") == 0;
    /* every list is read to the deepest position a discount is asked at */
    if (ok && n_disc && J.disc_len < 1) {
        PyErr_SetString(PyExc_ValueError, "empty discount tables");
        ok = 0;
    }
    if (ok && !walks_fit) {
        PyErr_SetString(PyExc_ValueError, "more (gain, discount) pairs than MOST_WALKS");
        ok = 0;
    }
    int status = 0;
    if (ok) {
        J.users = b[0].buf;
        J.items = b[1].buf;
        J.scores = b[2].buf;
        J.t_users = b[3].buf;
        J.t_items = b[4].buf;
        J.t_rel = b[5].buf;
        J.t_relevant = b[6].buf;
        J.req = b[7].buf;
        J.ideal = b[8].buf;
        J.disc = b[9].buf;
        J.out_user = b[10].buf;
        J.out_list_rows = b[11].buf;
        J.out_truth_items = b[12].buf;
        J.out_n_relevant = b[13].buf;
        J.out_flags = b[14].buf;
        J.out_stats = b[15].buf;
        J.out_valid = b[16].buf;
        J.out_ideal = b[17].buf;
        J.in_top = b[18].buf;
        J.top_rank = b[19].len ? b[19].buf : NULL;
        J.top_row = b[19].len ? b[20].buf : NULL;
        J.top_relevant = b[19].len ? b[21].buf : NULL;
        J.top_item = b[19].len ? b[22].buf : NULL;
        Py_BEGIN_ALLOW_THREADS;
        status = evaluate_job(&J, threads);
        Py_END_ALLOW_THREADS;
    }
    free(req_walk);
    for (int j = 0; j < N_BUFFERS; j++)
        PyBuffer_Release(&b[j]);
    if (!ok)
        return NULL;
    return PyLong_FromLong(status);
}

static PyObject *distinct_items(PyObject *self, PyObject *args) {
    Py_buffer values, mask, out;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*w*", &values, &mask, &out))
        return NULL;
    int64_t n = values.len / 8, count = -2;
    if (need(&mask, n, 1, "mask") == 0 && need(&out, n, 8, "out") == 0) {
        Py_BEGIN_ALLOW_THREADS;
        count = distinct(values.buf, mask.buf, n, out.buf);
        Py_END_ALLOW_THREADS;
    }
    PyBuffer_Release(&values);
    PyBuffer_Release(&mask);
    PyBuffer_Release(&out);
    if (count == -2)
        return NULL;
    return PyLong_FromLongLong((long long)count);
}

/* mark(values, mask, bits) -> status: sets bit v of `bits` (uint64 words) for the value v
 * of each masked row. 0 done; -1 a masked value is negative (nothing guaranteed marked);
 * N > 0: a value needs N bits, more than `bits` holds (those that fit are marked: grow it
 * and call again). marked(bits, out) -> count: the set bits' numbers, ascending, into out.
 * Together: a run's distinct recommended items in one bit per id (12 MiB for a catalog of
 * 100M items), read back sorted, in place of each batch's distinct items kept until the
 * end and made distinct again (memory that grew with the catalog). */
static PyObject *mark(PyObject *self, PyObject *args) {
    Py_buffer values, mask, bits;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*w*", &values, &mask, &bits))
        return NULL;
    int64_t n = values.len / 8, status = -2;
    if (need(&mask, n, 1, "mask") == 0) {
        const int64_t *v = values.buf;
        const uint8_t *m = mask.buf;
        uint64_t *b = bits.buf, held = (uint64_t)bits.len / 8 * 64, wanted = 0;
        status = 0;
        Py_BEGIN_ALLOW_THREADS;
        for (int64_t j = 0; j < n; j++) {
            if (!m[j])
                continue;
            if (v[j] < 0) {
                status = -1;
                break;
            }
            uint64_t at = (uint64_t)v[j];
            if (at >= held) {
                wanted = at + 1 > wanted ? at + 1 : wanted;
                continue;
            }
            b[at >> 6] |= (uint64_t)1 << (at & 63);
        }
        Py_END_ALLOW_THREADS;
        if (status == 0 && wanted)
            status = (int64_t)wanted;
    }
    PyBuffer_Release(&values);
    PyBuffer_Release(&mask);
    PyBuffer_Release(&bits);
    if (status == -2)
        return NULL;
    return PyLong_FromLongLong((long long)status);
}

static PyObject *marked(PyObject *self, PyObject *args) {
    Py_buffer bits, out;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*w*", &bits, &out))
        return NULL;
    const uint64_t *b = bits.buf;
    int64_t *o = out.buf, words = bits.len / 8, room = out.len / 8, count = 0;
    Py_BEGIN_ALLOW_THREADS;
    for (int64_t word = 0; word < words; word++) {
        uint64_t w = b[word];
        while (w && count < room) {
            o[count++] = word * 64 + __builtin_ctzll(w);
            w &= w - 1;
        }
    }
    Py_END_ALLOW_THREADS;
    PyBuffer_Release(&bits);
    PyBuffer_Release(&out);
    return PyLong_FromLongLong((long long)count);
}

/* exact_sum(values) -> (lanes, nan, pos_inf, neg_inf): the sum of the finite float64
 * values, exactly, times 2^1075 (metrics/exact_sum.py's `scaled`): the integer
 * sum(lanes[i] << (32 * i)). A finite value is m * 2^(e - 1075) with m below 2^53 and e
 * from 1 (subnormals: e = 1, no implicit bit), so it adds m << e; that is split into
 * 32-bit parts added to signed 64-bit lanes, whose carries are moved up every 2^20
 * values (each lane then stays within +-2^53) and at the end. */
#define SUM_LANES 70 /* 2046 + 53 bits of one value, 63 more of a count, and the sign */

static void carry_lanes(int64_t *lane) {
    for (int i = 0; i < SUM_LANES - 1; i++) {
        int64_t carry = lane[i] >> 32; /* arithmetic: floor(lane / 2^32) */
        lane[i] -= (int64_t)((uint64_t)carry << 32);
        lane[i + 1] += carry;
    }
}

static PyObject *exact_sum(PyObject *self, PyObject *args) {
    Py_buffer values;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*", &values))
        return NULL;
    const uint64_t *bits = values.buf;
    Py_ssize_t n = values.len / 8;
    int64_t lane[SUM_LANES] = {0};
    int nan = 0, pos_inf = 0, neg_inf = 0;
    Py_BEGIN_ALLOW_THREADS;
    for (Py_ssize_t j = 0; j < n; j++) {
        uint64_t b = bits[j], m = b & ((1ULL << 52) - 1);
        int e = (int)((b >> 52) & 0x7FF), negative = (int)(b >> 63);
        if (e == 0x7FF) {
            if (m)
                nan = 1;
            else if (negative)
                neg_inf = 1;
            else
                pos_inf = 1;
            continue;
        }
        m |= (uint64_t)(e != 0) << 52; /* without branches: zeros and values mix */
        e += e == 0;
        unsigned __int128 v = (unsigned __int128)m << (e & 31);
        int64_t *at = lane + (e >> 5), sign = -(int64_t)negative;
        at[0] += ((int64_t)(uint32_t)v ^ sign) - sign;
        at[1] += ((int64_t)(uint32_t)(v >> 32) ^ sign) - sign;
        at[2] += ((int64_t)(uint32_t)(v >> 64) ^ sign) - sign;
        if ((j & ((1 << 20) - 1)) == (1 << 20) - 1)
            carry_lanes(lane);
    }
    carry_lanes(lane);
    Py_END_ALLOW_THREADS;
    PyBuffer_Release(&values);
    PyObject *lanes = PyTuple_New(SUM_LANES);
    if (lanes == NULL)
        return NULL;
    for (int i = 0; i < SUM_LANES; i++) {
        PyObject *one = PyLong_FromLongLong((long long)lane[i]);
        if (one == NULL) {
            Py_DECREF(lanes);
            return NULL;
        }
        PyTuple_SET_ITEM(lanes, i, one);
    }
    return Py_BuildValue("Niii", lanes, nan, pos_inf, neg_inf);
}

static PyMethodDef methods[] = {
    {"mark", mark, METH_VARARGS, "mark(values, mask, bits) -> status: see _kernel.c."},
    {"marked", marked, METH_VARARGS, "marked(bits, out) -> count: the set bits, ascending."},
    {"distinct", distinct_items, METH_VARARGS,
     "distinct(values, mask, out) -> count: the distinct values where mask is set."},
    {"scan", scan, METH_VARARGS, "Check the inputs' order and values; count the users."},
    {"evaluate", evaluate, METH_VARARGS, "The per-user statistics (see _kernel.c)."},
    {"exact_sum", exact_sum, METH_VARARGS,
     "exact_sum(values) -> (lanes, nan, pos_inf, neg_inf): see _kernel.c."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_kernel",
                                    "receval's compiled core: see _kernel.c.", -1,
                                    methods};

PyMODINIT_FUNC PyInit__kernel(void) { return PyModule_Create(&module); }
