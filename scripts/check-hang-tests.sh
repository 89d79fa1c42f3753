#!/usr/bin/env bash
# Tests of mpix-check's point-to-point hang reports (check/src/hang.rs):
# builds check/tests/c/hangs.c with $MPICC, runs each hanging scenario
# under $MPIEXEC with the checker preloaded and MPIX_CHECK_TIMEOUT=2
# (without MPIX_CHECK_P2P: the hangs are found either way; one scenario
# with it), asserts the report lines, one report per job, and that the job
# ends non-zero within the limit; runs the correct scenarios (a rank
# computes 5 s, longer than the timeout, before its message; a wait on an
# inactive persistent collective): exit 0 and no report, at most one
# "still computing" line.
# Usage: scripts/check-hang-tests.sh TARGET_DIR
set -uo pipefail
cd "$(dirname "$0")/.."
suite=check-hang-tests
programs=(hangs)
errors=hangs
limit=20
checker_env=(MPIX_CHECK_TIMEOUT=2)
json_kind='"kind":"hang"'
one_report=1
. scripts/check-common.sh

recv="in MPI_Recv(source"
for n in 2 4; do
    if [ "$n" = 2 ]; then
        ring="the cycle: rank 0 waits for rank 1 in MPI_Recv(source 1, tag 0, MPI_COMM_WORLD); rank 1 waits for rank 0 in MPI_Recv(source 0, tag 0, MPI_COMM_WORLD)"
    else
        ring="the cycle: rank 0 waits for rank 1 in MPI_Recv(source 1, tag 0, MPI_COMM_WORLD); rank 1 waits for rank 2 in MPI_Recv(source 2, tag 0, MPI_COMM_WORLD); rank 2 waits for rank 3 in MPI_Recv(source 3, tag 0, MPI_COMM_WORLD); rank 3 waits for rank 0 in MPI_Recv(source 0, tag 0, MPI_COMM_WORLD)"
    fi
    scenario recv-ring "$n" fail -- recv_ring <<EOF2
mpix-check: MPI_Recv on MPI_COMM_WORLD: a hang: every rank this call waits for is blocked in MPI
(reported by rank 0 of $n)
mpix-check:   $ring
mpix-check: rank 1 waits $recv 
part of the hang that rank 0 reports
mpix-check:   rank 0: MPI_Recv(source 1, tag 0, MPI_COMM_WORLD), called from main at hangs.c:21
EOF2
    scenario skipped-send "$n" fail -- skipped_send <<EOF2
mpix-check: MPI_Recv on MPI_COMM_WORLD: a hang
mpix-check:   the chain: rank 0 waits for rank 1 in MPI_Recv(source 1, tag 0, MPI_COMM_WORLD); rank 1 is in MPI_Finalize
mpix-check:   rank 1: MPI_Finalize, called from main at hangs.c:106
EOF2
    # (rank 1 goes on to MPI_Comm_free of the_dup, which is collective.)
    scenario other-comm "$n" fail -- other_comm <<EOF2
mpix-check:   the cycle: rank 0 waits for rank 1 in MPI_Recv(source 1, tag 0, MPI_COMM_WORLD); rank 1 waits for rank 0 in MPI_Comm_free(the_dup)
mpix-check:   rank 0: a message from rank 1 with tag 0 is pending on the_dup
EOF2
    scenario irecv-wait "$n" fail -- irecv_wait <<EOF2
mpix-check: MPI_Wait on MPI_COMM_WORLD: a hang
mpix-check:   the cycle: rank 0 waits for rank 1 in MPI_Wait(MPI_Irecv(source 1, tag 3, MPI_COMM_WORLD)); rank 1 waits for rank 0 in MPI_Wait(MPI_Irecv(source 0, tag 3, MPI_COMM_WORLD))
EOF2
done
# Two ranks suffice for these (the pairs of -n 4 hang alike).
scenario wrong-tag 2 fail -- wrong_tag <<EOF2
mpix-check:   the chain: rank 0 waits for rank 1 in MPI_Recv(source 1, tag 1, MPI_COMM_WORLD); rank 1 is in MPI_Finalize
mpix-check:   rank 0: a message from rank 1 with tag 0 is pending on this communicator (MPI_COMM_WORLD)
EOF2
scenario probe-probe 2 fail -- probe_probe <<EOF2
mpix-check: MPI_Probe on MPI_COMM_WORLD: a hang
mpix-check:   the cycle: rank 0 waits for rank 1 in MPI_Probe(source 1, tag 0, MPI_COMM_WORLD); rank 1 waits for rank 0 in MPI_Probe(source 0, tag 0, MPI_COMM_WORLD)
EOF2
scenario ssend-ssend 2 fail MPIX_CHECK_P2P=1 -- ssend_ssend <<EOF2
mpix-check: MPI_Ssend on MPI_COMM_WORLD: a hang
mpix-check:   the cycle: rank 0 waits for rank 1 in MPI_Ssend(dest 1, tag 0, MPI_COMM_WORLD); rank 1 waits for rank 0 in MPI_Ssend(dest 0, tag 0, MPI_COMM_WORLD)
EOF2

# A persistent collective one rank starts and the others do not: rank 0
# waits for them in MPI_Wait, they wait for its message (both modes) or,
# in the batched mode, in MPI's own MPI_Barrier (the rank inside it is
# asked where it is: crate::inside).
if echo '#include <mpi.h>
int f(MPI_Request *r) { return MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, r); }' |
    "$MPICC" -x c -Werror=implicit-function-declaration -c -o /dev/null - 2>/dev/null; then
    for verify in immediate batched; do
        scenario "unstarted-$verify" 2 fail MPIX_CHECK_VERIFY=$verify -- unstarted <<EOF2
mpix-check: MPI_Wait on MPI_COMM_WORLD: a hang
mpix-check:   the cycle: rank 0 waits for rank 1 in MPI_Wait(MPI_Allreduce_init(MPI_COMM_WORLD)); rank 1 waits for rank 0 in MPI_Recv(source 0, tag 0, MPI_COMM_WORLD)
mpix-check:   rank 0: MPI_Wait(MPI_Allreduce_init(MPI_COMM_WORLD)), called from main at hangs.c:
EOF2
    done
    scenario unstarted-barrier 4 fail MPIX_CHECK_VERIFY=batched -- unstarted_barrier <<EOF2
mpix-check: MPI_Wait on MPI_COMM_WORLD: a hang
mpix-check:   the cycle: rank 0 waits for rank 1 in MPI_Wait(MPI_Allreduce_init(MPI_COMM_WORLD)); rank 1 waits for rank 0 in MPI_Barrier (call #2 on MPI_COMM_WORLD: MPI's own call, recorded by the batched mode)
mpix-check:   rank 3: MPI_Barrier (call #2 on MPI_COMM_WORLD: MPI's own call, recorded by the batched mode), called from main at hangs.c:
EOF2
    has_persistent=1
else
    echo "skip unstarted, unstarted-barrier, inactive-wait: mpi.h has no persistent collectives"
    has_persistent=0
fi

# quiet NAME N ENV... -- ARGS: a correct scenario. Exit 0, no report, at
# most one line, saying `silent` is still computing, and its result line.
quiet() {
    local name=$1 n=$2 envs=(); shift 2
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    local log="$out/$name-$n.log"
    timeout "$limit" "$MPIEXEC" "${mpiexec_args[@]}" -n "$n" env LD_PRELOAD="$lib" MPIX_CHECK_TIMEOUT=2 \
        "${envs[@]}" "$out/hangs" "$@" >"$log" 2>&1 </dev/null
    local rc=$?
    if [ $rc -ne 0 ]; then
        fail "$name -n $n: exit $rc, expected 0" "$log"
    elif grep -q '^mpix-check: MPI_' "$log" || [ "$(grep -c 'mpix-check' "$log")" -gt 1 ]; then
        fail "$name -n $n: a report on a correct program" "$log"
    elif [ "$(grep -c 'mpix-check' "$log")" = 1 ] && ! grep -q "$silent is still computing (not in MPI): not a hang, waiting on" "$log"; then
        fail "$name -n $n: an unexpected line" "$log"
    elif ! grep -q "^$1: done" "$log"; then
        fail "$name -n $n: no result line" "$log"
    else
        passed=$((passed + 1)); echo "ok   $name -n $n (exit 0, no report)"
    fi
}
# Rank 1 computes 5 s before its message; rank 0 waits in MPI_Recv past
# the timeout.
silent="rank 1" quiet computing 2 -- computing
# Rank 0 waits in MPI_Recv for rank 1, which waits inside MPI's own
# MPI_Barrier (batched mode) for rank 2, which computes 5 s first.
silent="rank 2" quiet inside-computing 4 MPIX_CHECK_VERIFY=batched -- inside_computing

# A wait on a persistent collective request never started returns at once
# (MPI-4.1 3.7.3); MPICH 4.0.2's own MPI_Wait waits for ever there (and
# its MPI_Request_get_status says not complete): the checker must end
# that with a hang report, never hang silently.
if [ "$has_persistent" = 1 ]; then
    log="$out/inactive-wait-2.log"
    timeout "$limit" "$MPIEXEC" "${mpiexec_args[@]}" -n 2 env LD_PRELOAD="$lib" MPIX_CHECK_TIMEOUT=2 \
        "$out/hangs" inactive_wait >"$log" 2>&1 </dev/null
    rc=$?
    if [ $rc -eq 0 ] && [ "$(grep -o 'inactive_wait: done' "$log" | wc -l)" = 2 ] && ! grep -q mpix-check "$log"; then
        passed=$((passed + 1)); echo "ok   inactive-wait -n 2 (exit 0, no report)"
    elif [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ "$(grep -c '^mpix-check: MPI_Wait on MPI_COMM_WORLD: a hang' "$log")" = 1 ] &&
        grep -q 'rank 0: MPI_Wait(MPI_Bcast_init(MPI_COMM_WORLD))' "$log"; then
        passed=$((passed + 1)); echo "ok   inactive-wait -n 2 (this MPI waits for ever: reported)"
    else
        fail "inactive-wait -n 2: exit $rc, neither done nor a hang report" "$log"
    fi
fi
echo "mpix-check hang tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
