#!/usr/bin/env bash
# The checker's overhead (not a test): check/tests/c/overhead.c under
# $MPIEXEC -n 2 and -n 4, without and with LD_PRELOAD of libmpix_check.so,
# one after the other in the same invocation, and the ratios. The
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
for n in ${CHECK_BENCH_RANKS:-2 4}; do
    "$MPIEXEC" "${mpiexec_args[@]}" -n "$n" "$out/overhead" plain >"$out/plain-$n.txt"
    "$MPIEXEC" "${mpiexec_args[@]}" -n "$n" env LD_PRELOAD="$lib" "$out/overhead" checked >"$out/checked-$n.txt"
    paste "$out/plain-$n.txt" "$out/checked-$n.txt" |
        awk '{ printf "%-16s %-12s %-8s %d ranks: %10.3f us plain %10.3f us checked  x%.2f  (+%.3f us)\n", $2, $3, $4, $5, $7, $15, $15 / $7, $15 - $7 }'
done
