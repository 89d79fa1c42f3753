# shellcheck shell=bash
# What scripts/check-tests.sh and scripts/check-p2p-tests.sh share; sourced
# by them from the repository's root, with these set first:
#   suite       the folder under TARGET_DIR for the programs and logs
#   programs    the check/tests/c programs to build (array)
#   checker_env the environment of every checked run (array; with
#               LD_PRELOAD of the checker)
#   errors      the program of the erroneous scenarios
#   limit       seconds a run may take
#   json_kind   what a scenario's MPIX_CHECK_LOG must hold
#   one_report  1: an erroneous scenario prints exactly one report
# and the script's own arguments ($1: TARGET_DIR). It defines `scenario`
# (an erroneous run and its expected lines) and `correct` (a correct
# program with and without the checker), and counts both in
# $passed/$failed.
target=${1:-target}
MPICC=${MPICC:-mpicc}
MPIEXEC=${MPIEXEC:-mpiexec}
read -ra mpiexec_args <<<"${MPIEXEC_ARGS:-}"
lib="$(pwd)/$target/release/libmpix_check.so"
out="$target/$suite"
mkdir -p "$out"
passed=0
failed=0
fail() { failed=$((failed + 1)); echo "FAIL $1"; [ -f "$2" ] && tail -n 20 "$2"; }
# Seconds since $1 (an $EPOCHREALTIME), for the ok lines: where a suite's time goes.
took() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f s", b - a }'; }

[ -f "$lib" ] || { echo "no $lib: build with cargo build --release first"; exit 1; }
for p in "${programs[@]}"; do
    "$MPICC" -g -std=c99 -pthread -Wall -Wextra -Werror -o "$out/$p" "check/tests/c/$p.c" || exit 1
done
rm -f "$out"/*.json

# scenario NAME N EXPECT(fail|ok) ENV... -- ARGS: $errors with ARGS under
# the checker; the expected lines on stdin, one per line (read first:
# mpiexec forwards its stdin to rank 0)
scenario() {
    local name=$1 n=$2 expect=$3; shift 3
    local pats=()
    mapfile -t pats
    local envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    local log="$out/$name-$n.log" t0=$EPOCHREALTIME
    timeout "$limit" "$MPIEXEC" "${mpiexec_args[@]}" -n "$n" env LD_PRELOAD="$lib" "${checker_env[@]}" \
        MPIX_CHECK_LOG="$out/$name-$n.json" "${envs[@]}" "$out/$errors" "$@" >"$log" 2>&1 </dev/null
    local rc=$?
    if [ "$expect" = fail ] && { [ $rc -eq 0 ] || [ $rc -eq 124 ]; }; then fail "$name -n $n: exit $rc, expected the job to fail" "$log"; return; fi
    if [ "$expect" = ok ] && [ $rc -ne 0 ]; then fail "$name -n $n: exit $rc, expected 0" "$log"; return; fi
    [ "${#pats[@]}" -gt 0 ] || { fail "$name -n $n: the scenario lists no expected lines" "$log"; return; }
    local pat
    for pat in "${pats[@]}"; do
        [ -z "$pat" ] && continue
        if ! grep -qF -- "$pat" "$log"; then fail "$name -n $n: no line with '$pat'" "$log"; return; fi
    done
    if ! grep -qF -- "$json_kind" "$out/$name-$n.json" 2>/dev/null; then
        fail "$name -n $n: no JSON line in MPIX_CHECK_LOG" "$log"; return
    fi
    if [ "$one_report" = 1 ] && [ "$(grep -c '^mpix-check: MPI_' "$log")" != 1 ]; then
        fail "$name -n $n: expected exactly one report" "$log"; return
    fi
    passed=$((passed + 1)); echo "ok   $name -n $n ($(took "$t0"))"
}

# correct NAME N PROGRAM [ARGS]: the false-positive check of a
# correct program that prints "NAME: ..." result lines (one of them
# "NAME: checksum ..."): the same exit status 0, no report, no more objects
# left behind and the same result lines with the checker as without it.
# correct_timeout (default 20) is the checked run's MPIX_CHECK_TIMEOUT;
# correct_tag, if set, names the checked run's log apart (another mode).
correct() {
    local name=$1 n=$2 program=$3; shift 3
    local t=${correct_timeout:-20}
    local plain="$out/$name-plain-$n.log" checked="$out/$name${correct_tag:+-$correct_tag}-checked-t$t-$n.log" rc1 rc2 t0=$EPOCHREALTIME
    timeout "$limit" "$MPIEXEC" "${mpiexec_args[@]}" -n "$n" "$out/$program" "$@" >"$plain" 2>&1 </dev/null
    rc1=$?
    timeout "$limit" "$MPIEXEC" "${mpiexec_args[@]}" -n "$n" env LD_PRELOAD="$lib" "${checker_env[@]}" \
        MPIX_CHECK_TIMEOUT="$t" "$out/$program" "$@" >"$checked" 2>&1 </dev/null
    rc2=$?
    if [ $rc1 -ne 0 ] || [ $rc2 -ne 0 ]; then
        fail "$name -n $n: exit $rc1 without the checker, $rc2 with it" "$checked"
    elif grep -q "mpix-check" "$checked"; then
        fail "$name -n $n: a report on a correct program" "$checked"
    elif [ "$(grep -ci leak "$checked")" != "$(grep -ci leak "$plain")" ]; then
        fail "$name -n $n: the MPI reports objects left behind with the checker only" "$checked"
    elif ! grep -q "^$name: checksum" "$checked" || ! diff <(grep "^$name:" "$plain") <(grep "^$name:" "$checked") >/dev/null; then
        fail "$name -n $n: results differ with the checker" "$checked"
    else
        passed=$((passed + 1)); echo "ok   $name${correct_tag:+ ($correct_tag)} -n $n, MPIX_CHECK_TIMEOUT=$t (no report, same results: $(grep "^$name: checksum" "$checked"); $(took "$t0"))"
        return 0
    fi
    return 1
}
