/* #35 item 1: numba_kernel_jit.kernel_unsorted's algorithm in C99 (see CORE_PLAN.md).
 *
 * Predictions and truth each grouped by user (ascending), any order within a user. Per
 * user with a relevant item: rank the list by (score desc, item desc) with a stable merge
 * sort, order the user's truth by item (binary-search look-ups) and by grade descending
 * (the ideal list), walk the list once to the deepest cutoff, and add the 36 values
 * (ndcg, precision, recall, map, mrr, hit_rate at each cutoff) exactly into fixed-point
 * limbs (a float64 is an integer multiple of 2^-1075), as receval's exact sums.
 * Built with -ffp-contract=off: no fused multiply-add, every operation rounded as in
 * receval's polars expressions. */

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define LIMBS 68 /* (2048 + 53) / 32 + 3 */
#define N_METRICS 6
#define THRESHOLD 1.0

static void accumulate(int64_t *limbs, double value) {
    int64_t bits;
    memcpy(&bits, &value, sizeof bits);
    int negative = bits < 0;
    int64_t exponent = (bits >> 52) & 0x7FF;
    int64_t mantissa = bits & 0xFFFFFFFFFFFFFLL;
    if (exponent == 0)
        exponent = 1;
    else
        mantissa |= (int64_t)1 << 52;
    if (mantissa == 0)
        return;
    int64_t limb = exponent >> 5, offset = exponent & 31;
    int64_t low = (mantissa & 0xFFFFFFFFLL) << offset;
    int64_t high = (mantissa >> 32) << offset;
    int64_t d0 = low & 0xFFFFFFFFLL, d1 = (low >> 32) + (high & 0xFFFFFFFFLL), d2 = high >> 32;
    if (negative) {
        limbs[limb] -= d0;
        limbs[limb + 1] -= d1;
        limbs[limb + 2] -= d2;
    } else {
        limbs[limb] += d0;
        limbs[limb + 1] += d1;
        limbs[limb + 2] += d2;
    }
}

/* stable bottom-up merge sort of positions 0..n-1; mode 0: primary desc then secondary
 * desc; 1: secondary asc; 2: primary desc. Returns the buffer holding the order. */
static int64_t *order(int64_t *idx, int64_t *tmp, int64_t n, const double *primary,
                      const int64_t *secondary, int mode) {
    for (int64_t j = 0; j < n; j++)
        idx[j] = j;
    for (int64_t width = 1; width < n; width *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * width) {
            int64_t mid = lo + width < n ? lo + width : n;
            int64_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            int64_t a = lo, b = mid, o = lo;
            while (a < mid && b < hi) {
                int64_t ia = idx[a], ib = idx[b];
                int b_first;
                if (mode == 0) {
                    double pa = primary[ia], pb = primary[ib];
                    b_first = pb > pa || (pb == pa && secondary[ib] > secondary[ia]);
                } else if (mode == 1) {
                    b_first = secondary[ib] < secondary[ia];
                } else {
                    b_first = primary[ib] > primary[ia];
                }
                tmp[o++] = b_first ? idx[b++] : idx[a++];
            }
            while (a < mid)
                tmp[o++] = idx[a++];
            while (b < hi)
                tmp[o++] = idx[b++];
        }
        int64_t *swap = idx;
        idx = tmp;
        tmp = swap;
    }
    return idx;
}

static void record(double *out, int64_t ki, int64_t nk, int64_t k, int64_t hits, double dcg,
                   double psum, int64_t first, double rel, double idcg) {
    double h = (double)hits;
    out[0 * nk + ki] = idcg > 0.0 ? dcg / idcg : 0.0;
    out[1 * nk + ki] = h / (double)k;
    out[2 * nk + ki] = h / rel;
    out[3 * nk + ki] = psum / rel;
    out[4 * nk + ki] = (first > 0 && first <= k) ? 1.0 / (double)first : 0.0;
    out[5 * nk + ki] = hits > 0 ? 1.0 : 0.0;
}

static double ideal_to(const double *ideal, int64_t ilen, int64_t k, const double *disc,
                       double idcg, int64_t ipos) {
    int64_t stop = k < ilen ? k : ilen;
    for (int64_t p = ipos; p < stop; p++) {
        double g = ideal[p];
        idcg += (g > 0.0 ? g : 0.0) * disc[p + 1];
    }
    return idcg;
}

static void user_stats(const double *grades, int64_t n, const double *ideal, int64_t ilen,
                       int64_t n_relevant, const int64_t *cutoffs, int64_t nk,
                       const double *disc, double *out) {
    int64_t hits = 0, first = 0, ki = 0, ipos = 0;
    double dcg = 0.0, psum = 0.0, idcg = 0.0, rel = (double)n_relevant;
    int64_t deepest = cutoffs[nk - 1];
    int64_t last = n < deepest ? n : deepest;
    for (int64_t r = 1; r <= last; r++) {
        double g = grades[r - 1];
        if (!isnan(g)) {
            if (g > 0.0)
                dcg += g * disc[r];
            if (g >= THRESHOLD) {
                hits += 1;
                psum += (double)hits / (double)r;
                if (first == 0)
                    first = r;
            }
        }
        while (ki < nk && cutoffs[ki] == r) {
            idcg = ideal_to(ideal, ilen, cutoffs[ki], disc, idcg, ipos);
            ipos = cutoffs[ki] < ilen ? cutoffs[ki] : ilen;
            record(out, ki, nk, cutoffs[ki], hits, dcg, psum, first, rel, idcg);
            ki++;
        }
    }
    while (ki < nk) {
        idcg = ideal_to(ideal, ilen, cutoffs[ki], disc, idcg, ipos);
        ipos = cutoffs[ki] < ilen ? cutoffs[ki] : ilen;
        record(out, ki, nk, cutoffs[ki], hits, dcg, psum, first, rel, idcg);
        ki++;
    }
}

/* Returns the users counted, or -1 when memory ran out. limbs: n_stats x LIMBS, zeroed. */
int64_t kernel_unsorted(int64_t n, const int64_t *users, const int64_t *items,
                        const double *scores, int64_t tn, const int64_t *truth_users,
                        const int64_t *truth_items, const double *truth_grades, int64_t nk,
                        const int64_t *cutoffs, const double *disc, int64_t *limbs) {
    int64_t n_stats = N_METRICS * nk, size = 256, counted = 0;
    double *out = malloc(sizeof(double) * n_stats);
    double *grades = malloc(sizeof(double) * size), *ideal = malloc(sizeof(double) * size);
    double *sorted_grades = malloc(sizeof(double) * size);
    int64_t *sorted_items = malloc(sizeof(int64_t) * size), *idx = malloc(sizeof(int64_t) * size);
    int64_t *tmp = malloc(sizeof(int64_t) * size);
    int64_t i = 0, t = 0;
    while (i < n) {
        int64_t user = users[i], end = i + 1;
        while (end < n && users[end] == user)
            end++;
        while (t < tn && truth_users[t] < user)
            t++;
        int64_t tend = t, n_relevant = 0;
        while (tend < tn && truth_users[tend] == user) {
            if (truth_grades[tend] >= THRESHOLD)
                n_relevant++;
            tend++;
        }
        if (n_relevant > 0) {
            int64_t m = end - i, tl = tend - t;
            int64_t need = m > tl ? m : tl;
            if (need > size) {
                size = need > 2 * size ? need : 2 * size;
                grades = realloc(grades, sizeof(double) * size);
                ideal = realloc(ideal, sizeof(double) * size);
                sorted_grades = realloc(sorted_grades, sizeof(double) * size);
                sorted_items = realloc(sorted_items, sizeof(int64_t) * size);
                idx = realloc(idx, sizeof(int64_t) * size);
                tmp = realloc(tmp, sizeof(int64_t) * size);
                if (!grades || !ideal || !sorted_grades || !sorted_items || !idx || !tmp)
                    return -1;
            }
            int64_t depth = m < cutoffs[nk - 1] ? m : cutoffs[nk - 1];
            int64_t *o = order(idx, tmp, tl, truth_grades + t, truth_items + t, 1);
            for (int64_t p = 0; p < tl; p++) {
                sorted_items[p] = truth_items[t + o[p]];
                sorted_grades[p] = truth_grades[t + o[p]];
            }
            o = order(idx, tmp, tl, truth_grades + t, truth_items + t, 2);
            for (int64_t p = 0; p < tl; p++)
                ideal[p] = truth_grades[t + o[p]];
            o = order(idx, tmp, m, scores + i, items + i, 0);
            for (int64_t r = 0; r < depth; r++) {
                int64_t item = items[i + o[r]], lo = 0, hi = tl;
                while (lo < hi) {
                    int64_t mid = (lo + hi) >> 1;
                    if (sorted_items[mid] < item)
                        lo = mid + 1;
                    else
                        hi = mid;
                }
                grades[r] = (lo < tl && sorted_items[lo] == item) ? sorted_grades[lo] : NAN;
            }
            user_stats(grades, depth, ideal, tl, n_relevant, cutoffs, nk, disc, out);
            for (int64_t c = 0; c < n_stats; c++)
                accumulate(limbs + c * LIMBS, out[c]);
            counted++;
        }
        t = tend;
        i = end;
    }
    free(out);
    free(grades);
    free(ideal);
    free(sorted_grades);
    free(sorted_items);
    free(idx);
    free(tmp);
    return counted;
}
