"""The numba kernels of numba_kernel.py (a module of their own, so that the driver can
import numba and load or compile them in a thread while polars reads the files).

Every function is compiled with cache=True: the machine code is written to numba's
on-disk cache (NUMBA_CACHE_DIR, else __pycache__ beside this file) on the first run and
loaded from it by later runs.
"""

from __future__ import annotations

import os
import time

# numba's OpenMP layer, its default here, spins its threads between parallel regions:
# measured on this 2-core machine under load, the parallel kernel took 100x longer with it
os.environ.setdefault("NUMBA_THREADING_LAYER", "workqueue")

_T0 = time.perf_counter()

import numpy as np  # noqa: E402
from numba import njit, prange  # noqa: E402

IMPORT_SECONDS = time.perf_counter() - _T0  # numba's import (numpy is already loaded)

THRESHOLD = 1.0  # relevance_threshold (receval's default)
LIMB_BITS = 32
LIMBS = (2048 + 53) // LIMB_BITS + 3  # scaled values reach 2^(2046 + 53)
N_STATS = 36  # 6 metrics x 6 cutoffs


@njit(cache=True, nogil=True)
def _accumulate(limbs, column, bits):
    """Add a finite float64 (given by its bits) exactly into limbs[column]: value * 2^1075
    as base-2^32 digits; each digit takes < 2^33 per value, so int64 holds 2^30 values
    without normalising."""
    negative = bits < 0
    exponent = (bits >> 52) & 0x7FF
    mantissa = bits & 0xFFFFFFFFFFFFF
    if exponent == 0:
        exponent = 1  # subnormal: mantissa * 2^(1 - 1075)
    else:
        mantissa |= np.int64(1) << 52
    if mantissa == 0:
        return
    limb = exponent >> 5
    offset = exponent & 31
    low = (mantissa & 0xFFFFFFFF) << offset  # < 2^63
    high = (mantissa >> 32) << offset  # < 2^52
    if negative:
        limbs[column, limb] -= low & 0xFFFFFFFF
        limbs[column, limb + 1] -= (low >> 32) + (high & 0xFFFFFFFF)
        limbs[column, limb + 2] -= high >> 32
    else:
        limbs[column, limb] += low & 0xFFFFFFFF
        limbs[column, limb + 1] += (low >> 32) + (high & 0xFFFFFFFF)
        limbs[column, limb + 2] += high >> 32


@njit(cache=True, nogil=True, inline="always")
def _ideal_to(ideal, istart, ilen, k, disc, idcg, ipos):
    """The running ideal DCG carried from position ipos on to min(k, ilen)."""
    stop = min(k, ilen)
    for p in range(ipos, stop):
        g = ideal[istart + p]
        idcg += (g if g > 0.0 else 0.0) * disc[p + 1]
    return idcg


@njit(cache=True, nogil=True, inline="always")
def _record(out, ki, nk, k, hits, dcg, psum, first, rel, idcg):
    h = float(hits)
    out[0 * nk + ki] = dcg / idcg if idcg > 0.0 else 0.0  # ndcg
    out[1 * nk + ki] = h / float(k)  # precision (denominator k)
    out[2 * nk + ki] = h / rel  # recall
    out[3 * nk + ki] = psum / rel  # map (denominator |R|)
    out[4 * nk + ki] = 1.0 / float(first) if 0 < first <= k else 0.0  # mrr
    out[5 * nk + ki] = 1.0 if hits > 0 else 0.0  # hit_rate


@njit(cache=True, nogil=True)
def _user_stats(grades, start, end, ideal, istart, iend, n_relevant, cutoffs, disc, out):
    """The 36 per-user values of one user into out (metric-major: ndcg@k..., precision@k
    ...). grades[start:end]: the grades of the user's list in rank order (NaN: not in the
    truth); ideal[istart:iend]: the user's truth grades sorted descending."""
    nk = cutoffs.shape[0]
    n = end - start
    hits = 0
    dcg = 0.0
    psum = 0.0
    first = 0
    ki = 0
    rel = float(n_relevant)
    idcg = 0.0
    ipos = 0
    ilen = iend - istart
    for r in range(1, min(n, cutoffs[nk - 1]) + 1):  # no rank past the deepest cutoff counts
        g = grades[start + r - 1]
        if not np.isnan(g):  # in the truth: a row of receval's hits table
            if g > 0.0:
                dcg += g * disc[r]  # in rank order, as receval's running sum
            if g >= THRESHOLD:
                hits += 1
                psum += hits / float(r)
                if first == 0:
                    first = r
        while ki < nk and cutoffs[ki] == r:
            idcg = _ideal_to(ideal, istart, ilen, cutoffs[ki], disc, idcg, ipos)
            ipos = min(cutoffs[ki], ilen)
            _record(out, ki, nk, cutoffs[ki], hits, dcg, psum, first, rel, idcg)
            ki += 1
    while ki < nk:  # cutoffs past the list's end
        idcg = _ideal_to(ideal, istart, ilen, cutoffs[ki], disc, idcg, ipos)
        ipos = min(cutoffs[ki], ilen)
        _record(out, ki, nk, cutoffs[ki], hits, dcg, psum, first, rel, idcg)
        ki += 1


@njit(cache=True, nogil=True)
def kernel_sorted(users, grades, truth_users, truth_grades, cutoffs, disc, keep, kept_users):
    """Predictions sorted by (user, score desc, item desc) with their grades (NaN: not in
    the truth); truth grades sorted by (user, grade desc). Returns the limbs of the exact
    sums and the users counted. keep (users x 36, or 0 rows) and kept_users receive each
    user's values when asked (--per-user)."""
    n_stats = 6 * cutoffs.shape[0]
    limbs = np.zeros((n_stats, LIMBS), dtype=np.int64)
    out = np.empty(n_stats, dtype=np.float64)
    out_bits = out.view(np.int64)
    n = users.shape[0]
    tn = truth_users.shape[0]
    i = 0
    t = 0
    counted = 0
    while i < n:
        user = users[i]
        end = i + 1
        while end < n and users[end] == user:
            end += 1
        while t < tn and truth_users[t] < user:
            t += 1
        tend = t
        n_relevant = 0
        while tend < tn and truth_users[tend] == user:
            if truth_grades[tend] >= THRESHOLD:
                n_relevant += 1
            tend += 1
        if n_relevant > 0:  # users_without_relevant: skip; users only in one file: skip
            _user_stats(grades, i, end, truth_grades, t, tend, n_relevant, cutoffs, disc, out)
            for c in range(n_stats):
                _accumulate(limbs, c, out_bits[c])
            if keep.shape[0] > 0:
                keep[counted, :] = out
                kept_users[counted] = user
            counted += 1
        t = tend
        i = end
    return limbs, counted


@njit(cache=True, nogil=True)
def _order(idx, tmp, n, primary, secondary, start, mode):
    """Positions 0..n-1 of primary/secondary[start:start + n] in order, by a stable
    bottom-up merge sort; mode 0: primary (score) descending, then secondary (item)
    descending (receval's rank with tie_break item_desc); 1: secondary (item) ascending;
    2: primary (grade) descending. Returns the buffer (idx or tmp) that holds the order."""
    for j in range(n):
        idx[j] = j
    width = 1
    while width < n:
        lo = 0
        while lo < n:
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            a = lo
            b = mid
            o = lo
            while a < mid and b < hi:
                ia = idx[a]
                ib = idx[b]
                if mode == 0:
                    pa = primary[start + ia]
                    pb = primary[start + ib]
                    later_item = secondary[start + ib] > secondary[start + ia]
                    b_first = pb > pa or (pb == pa and later_item)
                elif mode == 1:
                    b_first = secondary[start + ib] < secondary[start + ia]
                else:
                    b_first = primary[start + ib] > primary[start + ia]
                if b_first:
                    tmp[o] = ib
                    b += 1
                else:
                    tmp[o] = ia
                    a += 1
                o += 1
            while a < mid:
                tmp[o] = idx[a]
                a += 1
                o += 1
            while b < hi:
                tmp[o] = idx[b]
                b += 1
                o += 1
            lo += 2 * width
        idx, tmp = tmp, idx
        width *= 2
    return idx


@njit(cache=True, nogil=True)
def _rank_user(
    items, scores, i, m, truth_items, truth_grades, t, tl, depth,
    idx, tmp, sorted_items, sorted_grades, ideal, grades,
):  # fmt: skip
    """One user's ranked grades (grades[:depth]; NaN: not in the truth) and ideal list
    (ideal[:tl], grades descending), from the user's rows i..i+m of the predictions and
    t..t+tl of the truth, in any order."""
    # the user's truth by item (look-ups), then by grade descending (ideal list)
    order = _order(idx, tmp, tl, truth_grades, truth_items, t, 1)
    for p in range(tl):
        sorted_items[p] = truth_items[t + order[p]]
        sorted_grades[p] = truth_grades[t + order[p]]
    order = _order(idx, tmp, tl, truth_grades, truth_items, t, 2)
    for p in range(tl):
        ideal[p] = truth_grades[t + order[p]]
    # the ranked list, read down to the deepest cutoff, with each item's grade
    order = _order(idx, tmp, m, scores, items, i, 0)
    for r in range(depth):
        item = items[i + order[r]]
        lo = 0
        hi = tl
        while lo < hi:
            mid = (lo + hi) >> 1
            if sorted_items[mid] < item:
                lo = mid + 1
            else:
                hi = mid
        if lo < tl and sorted_items[lo] == item:
            grades[r] = sorted_grades[lo]
        else:
            grades[r] = np.nan


@njit(cache=True, nogil=True)
def kernel_unsorted(
    users, items, scores, truth_users, truth_items, truth_grades, cutoffs, disc, keep, kept_users
):
    """Predictions and truth each grouped by user (ascending), in any order within a user.
    The kernel ranks each list (score desc, item desc), orders the user's truth by item
    (for the binary-search look-ups) and by grade descending (the ideal list)."""
    n_stats = 6 * cutoffs.shape[0]
    limbs = np.zeros((n_stats, LIMBS), dtype=np.int64)
    out = np.empty(n_stats, dtype=np.float64)
    out_bits = out.view(np.int64)
    n = users.shape[0]
    tn = truth_users.shape[0]
    size = 256
    grades = np.empty(size, dtype=np.float64)
    ideal = np.empty(size, dtype=np.float64)
    sorted_items = np.empty(size, dtype=np.int64)
    sorted_grades = np.empty(size, dtype=np.float64)
    idx = np.empty(size, dtype=np.int64)
    tmp = np.empty(size, dtype=np.int64)
    i = 0
    t = 0
    counted = 0
    while i < n:
        user = users[i]
        end = i + 1
        while end < n and users[end] == user:
            end += 1
        while t < tn and truth_users[t] < user:
            t += 1
        tend = t
        n_relevant = 0
        while tend < tn and truth_users[tend] == user:
            if truth_grades[tend] >= THRESHOLD:
                n_relevant += 1
            tend += 1
        if n_relevant > 0:
            m = end - i
            tl = tend - t
            if max(m, tl) > size:
                size = max(m, tl, 2 * size)
                grades = np.empty(size, dtype=np.float64)
                ideal = np.empty(size, dtype=np.float64)
                sorted_items = np.empty(size, dtype=np.int64)
                sorted_grades = np.empty(size, dtype=np.float64)
                idx = np.empty(size, dtype=np.int64)
                tmp = np.empty(size, dtype=np.int64)
            depth = min(m, cutoffs[cutoffs.shape[0] - 1])
            _rank_user(
                items, scores, i, m, truth_items, truth_grades, t, tl, depth,
                idx, tmp, sorted_items, sorted_grades, ideal, grades,
            )  # fmt: skip
            _user_stats(grades, 0, depth, ideal, 0, tl, n_relevant, cutoffs, disc, out)
            for c in range(n_stats):
                _accumulate(limbs, c, out_bits[c])
            if keep.shape[0] > 0:
                keep[counted, :] = out
                kept_users[counted] = user
            counted += 1
        t = tend
        i = end
    return limbs, counted


@njit(cache=True, nogil=True)
def _groups(users, truth_users, truth_grades):
    """The users' row ranges in both tables (each grouped by user, ascending): starts[g],
    starts[g + 1] in the predictions, tstarts[g], tends[g] in the truth, and the user's
    relevant items."""
    n = users.shape[0]
    count = 0
    for j in range(n):
        if j == 0 or users[j] != users[j - 1]:
            count += 1
    starts = np.empty(count + 1, dtype=np.int64)
    tstarts = np.empty(count, dtype=np.int64)
    tends = np.empty(count, dtype=np.int64)
    relevant = np.zeros(count, dtype=np.int64)
    g = 0
    for j in range(n):
        if j == 0 or users[j] != users[j - 1]:
            starts[g] = j
            g += 1
    starts[count] = n
    tn = truth_users.shape[0]
    t = 0
    for g in range(count):
        user = users[starts[g]]
        while t < tn and truth_users[t] < user:
            t += 1
        tstarts[g] = t
        while t < tn and truth_users[t] == user:
            if truth_grades[t] >= THRESHOLD:
                relevant[g] += 1
            t += 1
        tends[g] = t
    return starts, tstarts, tends, relevant


@njit(cache=True, nogil=True, parallel=True)
def kernel_unsorted_parallel(
    users, items, scores, truth_users, truth_items, truth_grades, cutoffs, disc, keep, kept_users
):
    """kernel_unsorted with the users split into chunks over the cores (prange). Each
    chunk sums into limbs of its own; exact sums add up to the same integer in any order,
    so the means are the same bits as the serial kernel's. keep (one row per user group,
    NaN for a skipped user) and kept_users receive the per-user values when asked."""
    n_stats = 6 * cutoffs.shape[0]
    starts, tstarts, tends, relevant = _groups(users, truth_users, truth_grades)
    count = tstarts.shape[0]
    chunks = max(1, min(256, count // 256))  # at least 256 users a chunk
    chunk_limbs = np.zeros((chunks, n_stats, LIMBS), dtype=np.int64)
    chunk_counted = np.zeros(chunks, dtype=np.int64)
    for c in prange(chunks):
        first = count * c // chunks
        last = count * (c + 1) // chunks
        longest = 1
        for g in range(first, last):
            longest = max(longest, starts[g + 1] - starts[g], tends[g] - tstarts[g])
        grades = np.empty(longest, dtype=np.float64)
        ideal = np.empty(longest, dtype=np.float64)
        sorted_items = np.empty(longest, dtype=np.int64)
        sorted_grades = np.empty(longest, dtype=np.float64)
        idx = np.empty(longest, dtype=np.int64)
        tmp = np.empty(longest, dtype=np.int64)
        out = np.empty(n_stats, dtype=np.float64)
        out_bits = out.view(np.int64)
        limbs = np.zeros((n_stats, LIMBS), dtype=np.int64)
        for g in range(first, last):
            if relevant[g] == 0:
                if keep.shape[0] > 0:
                    keep[g, :] = np.nan
                    kept_users[g] = users[starts[g]]
                continue
            i = starts[g]
            m = starts[g + 1] - i
            t = tstarts[g]
            tl = tends[g] - t
            depth = min(m, cutoffs[cutoffs.shape[0] - 1])
            _rank_user(
                items, scores, i, m, truth_items, truth_grades, t, tl, depth,
                idx, tmp, sorted_items, sorted_grades, ideal, grades,
            )  # fmt: skip
            _user_stats(grades, 0, depth, ideal, 0, tl, relevant[g], cutoffs, disc, out)
            for s in range(n_stats):
                _accumulate(limbs, s, out_bits[s])
            if keep.shape[0] > 0:
                keep[g, :] = out
                kept_users[g] = users[i]
            chunk_counted[c] += 1
        chunk_limbs[c] = limbs
    total = np.zeros((n_stats, LIMBS), dtype=np.int64)
    for c in range(chunks):
        total += chunk_limbs[c]
    return total, chunk_counted.sum()


def readonly(array: np.ndarray) -> np.ndarray:
    """numba types a read-only array apart from a writable one (and compiles for each):
    polars' zero-copy views are read-only, so every input is made read-only."""
    array.setflags(write=False)
    return array


def no_keep() -> tuple[np.ndarray, np.ndarray]:
    return np.empty((0, N_STATS)), np.empty(0, dtype=np.int64)


def warm(mode: str) -> float:
    """Call the kernel on tiny arrays of the real types: compiles it, or loads it from
    numba's on-disk cache. Returns the seconds it took."""
    started = time.perf_counter()
    cutoffs = readonly(np.array([1, 5, 10, 20, 50, 100], dtype=np.int64))
    disc = readonly(1.0 / np.log2(np.arange(2.0, 103.0)))  # any values: only the types count
    users = readonly(np.array([1, 1, 2], dtype=np.int64))
    t_users = readonly(np.array([1, 2], dtype=np.int64))
    t_grades = readonly(np.array([2.0, 1.0]))
    if mode == "join":
        grades = readonly(np.array([2.0, np.nan, 1.0]))
        kernel_sorted(users, grades, t_users, t_grades, cutoffs, disc, *no_keep())
    else:
        kernel = kernel_unsorted_parallel if mode == "kernel-sort-parallel" else kernel_unsorted
        items = readonly(np.array([3, 4, 5], dtype=np.int64))
        scores = readonly(np.array([0.5, 0.25, 0.5]))
        t_items = readonly(np.array([3, 5], dtype=np.int64))
        kernel(users, items, scores, t_users, t_items, t_grades, cutoffs, disc, *no_keep())
    return time.perf_counter() - started
