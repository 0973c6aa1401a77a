#!/usr/bin/env bash
# Regenerate the trec_eval 10.0 golden files in this folder, at full precision.
#
#   usage: ./make.sh [MIRROR_GIT_DIR]
#   env:   WORK (build folders, default /tmp), COMMIT (default: conformance SOURCE_COMMIT)
#
# Steps: export trec_eval from the git mirror; build it unmodified (te10src) and with
# measure values printed as %.17g (te10full); check the unmodified build against the
# conformance suite's out.test.aq, and the full build's values rounded to 4 places;
# convert the CSV data to TREC files; run the full build three ways per dataset.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
DATA=$HERE/../../data
CONF=$HERE/../../../conformance/trec_eval
MIRROR=${1:-/work/.mirror/usnistgov+trec_eval/repo}
COMMIT=${COMMIT:-$(cat "$CONF/SOURCE_COMMIT" 2>/dev/null || echo f425365)}
COMMIT=${COMMIT:0:7}
WORK=${WORK:-/tmp}
SRC=$WORK/te10src
FULL=$WORK/te10full
DATASETS="tiefree ties tiefree_int ties_int"

# 1. export and build, unmodified and patched
for d in "$SRC" "$FULL"; do
    rm -rf "$d"; mkdir -p "$d"
    git --git-dir="$MIRROR" archive "$COMMIT" | tar -x -C "$d"
done
# The one change: float measure values print with 17 significant digits (%.17g)
# instead of %6.4f; integer measures (%ld) and debug prints are untouched.
sed -i 's/%6\.4f\\n"/%.17g\\n"/' "$FULL/meas_print_single.c" "$FULL/meas_print_final.c"
test "$(cat "$FULL/meas_print_single.c" "$FULL/meas_print_final.c" | grep -c '%\.17g')" = 9
! grep -q '%6\.4f' "$FULL/meas_print_single.c" "$FULL/meas_print_final.c"
make -C "$SRC" >/dev/null
make -C "$FULL" >/dev/null

# 2. conformance: the unmodified build reproduces NIST's expected output exactly;
#    the full-precision build agrees with it once rounded to 4 places
if [ -f "$CONF/out.test.aq" ]; then
    (cd "$CONF" && "$SRC/trec_eval" -q -m all_trec qrels.test results.test) | cmp - "$CONF/out.test.aq"
    (cd "$CONF" && "$FULL/trec_eval" -q -m all_trec qrels.test results.test) > "$WORK/te10full.out.test.aq"
    python3 - "$CONF/out.test.aq" "$WORK/te10full.out.test.aq" <<'PY'
import sys
a = open(sys.argv[1]).read().splitlines()
b = open(sys.argv[2]).read().splitlines()
assert len(a) == len(b), (len(a), len(b))
for x, y in zip(a, b):
    xs, ys = x.split("\t"), y.split("\t")
    assert xs[:2] == ys[:2], (x, y)
    assert xs[2] == ys[2] or "%6.4f" % float(ys[2]) == xs[2], (x, y)
print("conformance: out.test.aq reproduced exactly; full precision rounds to it (%d lines)" % len(a))
PY
fi

# 3. CSV -> TREC
python3 "$HERE/to_trec.py" "$DATA" "$HERE" $DATASETS

# 4. run.  trec_eval 10.0 without -c exits (rc 4) when a qrels query has no results,
#    so (a) and (c) use <dataset>.qrels_ret (qrels of users with predictions).
PARAMS="-m P.1,3,7 -m ndcg_cut.3,7,23 -m map_cut.3,7 -m success.2,3 -m recall.3,7
 -m iprec_at_recall.0.25,0.75 -m Rprec_mult.0.5,1.5 -m utility.2,-1,0,0
 -m 11pt_avg.0.25,0.5 -m set_F.0.5 -m ndcg.1=3,2=9 -m relative_P.3,7 -m unj.3,7"
# the same under -c on the whole qrels, with c != 0 in utility (one parameterisation per
# measure per run) and rbp's pair parameter
PARAMS_C="${PARAMS/utility.2,-1,0,0/utility.2,-1,-1,0} -m rbp.p=0.5 -m rbp_resid.p=0.5"
# (rbp.0.5 and rbp_resid.0.5 are refused: "malformed pair parameters in '0.5'"; their
# parameter is a pair, rbp.p=0.5, printed rbp_p=0.5: the .rbp outputs)
cd "$HERE"
for ds in $DATASETS; do
    "$FULL/trec_eval" -q -m all_trec "$ds.qrels_ret" "$ds.run" > "$ds.aq"
    "$FULL/trec_eval" -q -c -m all_trec "$ds.qrels" "$ds.run" > "$ds.aqc"
    # shellcheck disable=SC2086
    "$FULL/trec_eval" -q $PARAMS "$ds.qrels_ret" "$ds.run" > "$ds.params"
    "$FULL/trec_eval" -q -m rbp.p=0.5 -m rbp_resid.p=0.5 "$ds.qrels_ret" "$ds.run" > "$ds.rbp"
    # -c with parameters: the qrels users without a run are scored on trec_eval's
    # one-document placeholder ranking, and measures written with parameters keep its value
    # shellcheck disable=SC2086
    "$FULL/trec_eval" -q -c $PARAMS_C "$ds.qrels" "$ds.run" > "$ds.paramsc"
done
echo "written to $HERE"
