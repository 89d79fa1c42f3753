#!/usr/bin/env bash
# The checker's overhead (not a test): check/tests/c/overhead.c under
# $MPIEXEC -n 2, 4 and 8, without and with LD_PRELOAD of libmpix_check.so
# (immediate and batched verification), one after the other in the same
# invocation, and the ratios. The
# MPI_Bcast(SELF) lines time the check alone (a one-rank broadcast moves
# nothing) for 10 and 10^9 elements.
# Usage: scripts/check-bench.sh TARGET_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:-target}
MPICC=${MPICC:-mpicc}
MPIEXEC=${MPIEXEC:-mpiexec}
read -ra mpiexec_args <<<"${MPIEXEC_ARGS:-}"
lib="$(pwd)/$target/release/libmpix_check.so"
out="$target/check-bench"
mkdir -p "$out"
"$MPICC" -O2 -std=c99 -Wall -Wextra -Werror -o "$out/overhead" check/tests/c/overhead.c
# Three runs per rank count: plain, checked (each call verified before it
# is made: MPIX_CHECK_VERIFY=immediate) and batched (MPIX_CHECK_VERIFY=
# batched: calls verified 64 at a time, by default). With more ranks
# than cores the run is oversubscribed (8 on a 2-core machine): the
# ratios say what the checker costs there too.
for n in ${CHECK_BENCH_RANKS:-2 4 8}; do
    div=1 # oversubscribed: fewer calls (check/tests/c/overhead.c)
    [ "$n" -le "$(nproc)" ] || div=200
    "$MPIEXEC" "${mpiexec_args[@]}" -n "$n" "$out/overhead" plain "$div" >"$out/plain-$n.txt"
    "$MPIEXEC" "${mpiexec_args[@]}" -n "$n" env LD_PRELOAD="$lib" MPIX_CHECK_VERIFY=immediate \
        MPIX_CHECK_STATS=1 "$out/overhead" checked "$div" >"$out/checked-$n.txt" 2>"$out/checked-$n.stats"
    "$MPIEXEC" "${mpiexec_args[@]}" -n "$n" env LD_PRELOAD="$lib" MPIX_CHECK_VERIFY=batched \
        MPIX_CHECK_STATS=1 "$out/overhead" batched "$div" >"$out/batched-$n.txt" 2>"$out/batched-$n.stats"
    paste "$out/plain-$n.txt" "$out/checked-$n.txt" "$out/batched-$n.txt" |
        awk '{ printf "%-16s %-12s %-8s %d ranks: %9.3f us plain %9.3f us immediate x%.2f %9.3f us batched x%.2f\n", $2, $3, $4, $5, $7, $15, $15 / $7, $23, $23 / $7 }'
    # The checks' own messages, per checked call and rank (MPIX_CHECK_STATS).
    for mode in checked batched; do
        awk -v n="$n" -v m="$mode" '/messages per call/ { sum += $(NF - 3); k++ } END { if (k) printf "%s, %d ranks: %.3f messages the checks sent per checked collective call and rank (mean of %d ranks)\n", m, n, sum / k, k }' "$out/$mode-$n.stats"
    done
done
