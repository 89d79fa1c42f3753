#!/usr/bin/env bash
# The checker and the type exchange together (issue 29): the exchange's C
# tests and examples, and check/tests/c/exchange_mix.c (the program's own
# exchange calls while the checker uses the exchange for its point-to-point
# checks, on the same communicators), each run under mpiexec -n 2 and -n 4
# with libmpix_check.so preloaded and every check on (collective checks in
# their default mode, MPIX_CHECK_P2P=1): each must exit 0 with no report,
# as it does without the checker. Then exchange_mix's erroneous variant
# must be reported, naming the sender's derived type, and its partial
# variant (only ranks 0 and 1 exchange) reported as a collective mismatch
# naming MPIX_Type_send, in both verification modes. Before the fix, the
# first exchange call under MPIX_CHECK_P2P=1 deadlocked (the checker's set-up
# of the exchange's own duplicate re-entered the exchange's set-up lock).
# Usage: scripts/check-exchange-tests.sh TARGET_DIR   (after cargo build
# of the library and cargo build --release -p mpix-check into it)
set -uo pipefail
cd "$(dirname "$0")/.."
target=${1:-target}
MPICC=${MPICC:-mpicc}
MPIEXEC=${MPIEXEC:-mpiexec}
read -ra mpiexec_args <<<"${MPIEXEC_ARGS:-}"
checker="$(pwd)/$target/release/libmpix_check.so"
lib="$target/debug"
out="$target/check-exchange-tests"
limit=120
mkdir -p "$out"
[ -f "$checker" ] || { echo "no $checker: build with cargo build --release -p mpix-check first"; exit 1; }
passed=0
failed=0
fail() { failed=$((failed + 1)); echo "FAIL $1"; [ -f "$2" ] && tail -n 20 "$2"; }

# program: its source, and its arguments under mpiexec
declare -A sources=(
    [exchange]=tests/c/exchange.c [mp_send]=tests/c/mp_send.c [rma]=tests/c/rma.c
    [skeleton_content]=examples/skeleton_content.c [am_rma]=examples/am_rma.c
    [exchange_mix]=check/tests/c/exchange_mix.c
)
declare -A args=([am_rma]=2)
for p in "${!sources[@]}"; do
    "$MPICC" -std=c99 -Wall -Wextra -Werror -Iinclude -Itests/c -o "$out/$p" "${sources[$p]}" \
        -L"$lib" -lmpix_marshal -Wl,-rpath,"$(cd "$lib" && pwd)" || exit 1
done
run() { # log, n, checked(0|1), program args...
    local log=$1 n=$2 checked=$3; shift 3
    local pre=()
    [ "$checked" = 1 ] && pre=(env LD_PRELOAD="$checker" MPIX_CHECK_P2P=1 MPIX_CHECK_TIMEOUT=30)
    timeout "$limit" "$MPIEXEC" "${mpiexec_args[@]}" -n "$n" "${pre[@]}" "$@" >"$log" 2>&1 </dev/null
}

for n in 2 4; do
    for p in exchange mp_send rma skeleton_content am_rma exchange_mix; do
        plain="$out/$p-plain-$n.log" checked="$out/$p-checked-$n.log"
        run "$plain" "$n" 0 "$out/$p" ${args[$p]:-}
        rc1=$?
        run "$checked" "$n" 1 "$out/$p" ${args[$p]:-}
        rc2=$?
        if [ $rc1 -ne 0 ] || [ $rc2 -ne 0 ]; then
            fail "$p -n $n: exit $rc1 without the checker, $rc2 with it (124: timed out)" "$checked"
        elif grep -q "mpix-check" "$checked"; then
            fail "$p -n $n: a report on a correct program" "$checked"
        elif ! diff <(grep -E "checks passed|checksum" "$plain") <(grep -E "checks passed|checksum" "$checked") >/dev/null; then
            fail "$p -n $n: results differ with the checker" "$checked"
        else
            passed=$((passed + 1)); echo "ok   $p -n $n under the checker (no report, same results)"
        fi
    done
    log="$out/exchange_mix-wrong-$n.log"
    run "$log" "$n" 1 "$out/exchange_mix" wrong
    rc=$?
    want="rank 0 sends (count, datatype) = 6 x a derived datatype \"record\" (MPI_COMBINER_STRUCT): 18 elements"
    if [ $rc -eq 0 ] || [ $rc -eq 124 ]; then
        fail "exchange_mix wrong -n $n: exit $rc, expected the job to fail with a report" "$log"
    elif ! grep -qF -- "$want" "$log" || ! grep -qF "rank 1 receives (count, datatype) = 18 x MPI_DOUBLE" "$log"; then
        fail "exchange_mix wrong -n $n: the report does not name both sides' types" "$log"
    else
        passed=$((passed + 1)); echo "ok   exchange_mix wrong -n $n: reported"
    fi
done
# Only ranks 0 and 1 use the exchange, the others call MPI_Barrier: the
# exchange's first call is collective, and the report names it as the
# program called it; in the batched mode too (found by the hang watch
# there: the barrier is recorded and MPI holds it, 3 s).
for n in 3 4; do
  for verify in immediate batched; do
    log="$out/exchange_mix-partial-$verify-$n.log"
    t=30; [ "$verify" = batched ] && t=3
    run "$log" "$n" 1 env MPIX_CHECK_VERIFY=$verify MPIX_CHECK_TIMEOUT=$t "$out/exchange_mix" partial
    rc=$?
    if [ $rc -eq 0 ] || [ $rc -eq 124 ]; then
        fail "exchange_mix partial ($verify) -n $n: exit $rc, expected the job to fail with a report" "$log"
    elif ! grep -qF "mpix-check: MPIX_Type_send (the first type exchange call on a communicator is collective) on MPI_COMM_WORLD, call #1 there: the ranks are in different collective calls" "$log" ||
        ! grep -qF "ranks 0, 1: a first type exchange call (MPIX_Type_send" "$log" ||
        ! grep -qE "rank(s)? 2(, 3)?: MPI_Barrier \(call #1 on this communicator\)" "$log"; then
        fail "exchange_mix partial ($verify) -n $n: the report does not name the exchange call and the barrier" "$log"
    else
        passed=$((passed + 1)); echo "ok   exchange_mix partial ($verify) -n $n: reported as MPIX_Type_send"
    fi
  done
done
echo "mpix-check with the type exchange: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
