#!/usr/bin/env bash
# Tests of mpix-check (check/): builds the C test programs of
# check/tests/c with $MPICC and runs them under $MPIEXEC -n 2 and -n 4 with
# the checker preloaded. Each erroneous scenario must make the job fail (or,
# where stated, return the error / continue) and print the report lines
# asserted below; the correct programs must print no report and the same
# results as without the checker.
# Usage: scripts/check-tests.sh TARGET_DIR   (the cargo target dir of a
# release build of the workspace for that MPI)
set -uo pipefail
cd "$(dirname "$0")/.."
suite=check-tests
programs=(errors correct)
errors=errors
limit=120
# The immediate mode (each call verified before it is made); the batched
# mode, the default, has its own section below.
checker_env=(MPIX_CHECK_TIMEOUT=3 MPIX_CHECK_VERIFY=immediate)
json_kind='"tool":"mpix-check"'
# One report per finding (the other ranks of a finding print one line
# pointing at it); the exceptions say why.
one_report=1
. scripts/check-common.sh

# The differences MPI lives through (the call neither hangs nor fails) or
# fails on in the call (a truncation), by one rank (the last): run in each
# mode of verification, with the same reports. PREFIX names the mode's runs.
differences() { # N PREFIX
    local n=$1 prefix=$2 l=$(($1 - 1)) others
    if [ "$n" = 2 ]; then others="rank 0"; else others="ranks 0-$((n - 2))"; fi
    scenario "${prefix}paper2-int-vs-byte" "$n" fail -- int_byte <<EOF2
mpix-check: MPI_Bcast on MPI_COMM_WORLD, call #1 there: the type signatures do not match (reported by rank $l of $n)
rank 0 (root) (count, datatype) = 1 x MPI_INT: 1 element, 4 bytes
rank $l (count, datatype) = 4 x MPI_BYTE: 4 elements, 4 bytes
first difference at element 0 of the signatures:
rank 0 (root) has MPI_INT at element 0 of 1 x MPI_INT
rank $l has MPI_BYTE at element 0 of 4 x MPI_BYTE
EOF2
    scenario "${prefix}paper4-root" "$n" fail -- root <<EOF2
mpix-check: MPI_Bcast on MPI_COMM_WORLD, call #1 there: the ranks passed different roots
mpix-check:   $others: root 0
mpix-check:   rank $l: root $l
mpix-check: rank $l of $n is in the finding on MPI_Bcast on MPI_COMM_WORLD, call #1 there, that rank 0 reports
EOF2
    if [ "$n" = 4 ]; then # two ranks per half: a root can differ within the odd half
        # Ranks named in the communicator and in MPI_COMM_WORLD.
        scenario "${prefix}split-root" "$n" fail -- split_root <<EOF2
mpix-check: MPI_Bcast on an unnamed communicator of 2 ranks, call #1 there: the ranks passed different roots (reported by rank 0 of 2)
mpix-check:   rank 0 (world rank 1): root 0
mpix-check:   rank 1 (world rank 3): root 1
mpix-check: rank 1 of 2 is in the finding on MPI_Bcast on an unnamed communicator of 2 ranks, call #1 there, that rank 0 reports
EOF2
    fi
    scenario "${prefix}op" "$n" fail -- op <<EOF2
mpix-check: MPI_Allreduce on MPI_COMM_WORLD, call #1 there: the ranks passed different ops
mpix-check:   $others: MPI_SUM
mpix-check:   rank $l: MPI_MAX
EOF2
    scenario "${prefix}user-op" "$n" fail -- user_op <<EOF2
mpix-check: MPI_Reduce on MPI_COMM_WORLD, call #1 there: the ranks passed different ops
mpix-check:   $others: a user op (function identity
mpix-check:   rank $l: a user op (function identity
EOF2
    scenario "${prefix}in-place" "$n" fail -- in_place <<EOF2
mpix-check: MPI_Allreduce on MPI_COMM_WORLD, call #1 there: MPI_IN_PLACE must be given on all ranks or on none
mpix-check:   rank 0: MPI_IN_PLACE
EOF2
    scenario "${prefix}struct-path" "$n" fail -- struct <<EOF2
the type signatures do not match (reported by rank $l of $n)
first difference at element 1 of the signatures:
rank 0 (root) has MPI_DOUBLE at MPI_COMBINER_CONTIGUOUS copy 0 > MPI_COMBINER_STRUCT member 1, copy 0 > MPI_DOUBLE
rank $l has MPI_FLOAT at MPI_COMBINER_CONTIGUOUS copy 0 > MPI_COMBINER_STRUCT member 1, copy 0 > MPI_FLOAT
EOF2
    # The "v" calls are batched with a copy of their counts: the program
    # changes its arrays after the call. MPI_Reduce_scatter is verified
    # before the call in both modes (MPI fails or hangs on this one).
    scenario "${prefix}alltoallv-pair" "$n" fail -- alltoallv <<EOF2
mpix-check: MPI_Alltoallv on MPI_COMM_WORLD, call #1 there: the type signatures of the data rank 0 sends to rank 1 do not match (reported by rank 1 of $n)
rank 0 sends (sendcounts[1], sendtype) = 1 x MPI_INT: 1 element, 4 bytes
rank 1 receives (recvcounts[0], recvtype) = 1 x MPI_FLOAT: 1 element, 4 bytes
rank 0 has MPI_INT at element 0 of 1 x MPI_INT
rank 1 has MPI_FLOAT at element 0 of 1 x MPI_FLOAT
EOF2
    # The "w" calls are batched with a copy of their types too: the
    # program frees its derived type and changes its arrays after the call.
    scenario "${prefix}alltoallw-pair" "$n" fail -- alltoallw <<EOF2
mpix-check: MPI_Alltoallw on MPI_COMM_WORLD, call #1 there: the type signatures of the data rank 0 sends to rank $l do not match (reported by rank $l of $n)
rank 0 sends (sendcounts[$l], sendtypes[$l]) = 1 x MPI_INT: 1 element, 4 bytes
rank $l receives (recvcounts[0], recvtypes[0]) = 1 x a derived datatype (MPI_COMBINER_CONTIGUOUS): 1 element, 4 bytes
rank 0 has MPI_INT at element 0 of 1 x MPI_INT
rank $l has MPI_FLOAT at MPI_COMBINER_CONTIGUOUS copy 0 > MPI_FLOAT
EOF2
    scenario "${prefix}neighbor-pair" "$n" fail -- neighbor <<EOF2
mpix-check: MPI_Neighbor_alltoall on an unnamed communicator of $n ranks, call #1 there: the type signatures of the data rank 0 sends to rank $l do not match (reported by rank $l of $n)
rank 0 sends (sendcount, sendtype) = 1 x MPI_INT: 1 element, 4 bytes
rank $l receives (recvcount, recvtype) = 1 x MPI_FLOAT: 1 element, 4 bytes
rank 0 has MPI_INT at element 0 of 1 x MPI_INT
rank $l has MPI_FLOAT at element 0 of 1 x MPI_FLOAT
EOF2
    # Counts that make MPI fail in the call (a truncation): reported by
    # the checker first in both modes.
    scenario "${prefix}alltoallv-count" "$n" fail -- alltoallv_count <<EOF2
mpix-check: MPI_Alltoallv on MPI_COMM_WORLD, call #1 there: the type signatures of the data rank 0 sends to rank $l do not match (reported by rank $l of $n)
rank 0 sends (sendcounts[$l], sendtype) = 2 x MPI_INT: 2 elements, 8 bytes
rank $l receives (recvcounts[0], recvtype) = 1 x MPI_INT: 1 element, 4 bytes
EOF2
    scenario "${prefix}reduce-scatter-counts" "$n" fail -- reduce_scatter <<EOF2
mpix-check: MPI_Reduce_scatter on MPI_COMM_WORLD, call #1 there: the ranks passed different recvcounts
EOF2
    # At -n 4 MPICH 5's gather hangs at the root on this difference: the
    # batched mode, which verifies after the call, finds it at the timeout
    # in the ranks' records (the root's type is not fetched from inside
    # MPI: no first differing element).
    if [ -z "$prefix" ] || [ "$n" = 2 ]; then
        scenario "${prefix}gather-count" "$n" fail -- gather_count <<EOF2
mpix-check: MPI_Gather on MPI_COMM_WORLD, call #1 there: the type signatures do not match (reported by rank $l of $n)
rank 0 (root) (recvcount, recvtype) = 1 x MPI_INT: 1 element, 4 bytes
rank $l (sendcount, sendtype) = 2 x MPI_INT: 2 elements, 8 bytes
first difference at element 1 of the signatures:
EOF2
    else
        scenario "${prefix}gather-count" "$n" fail -- gather_count <<EOF2
mpix-check: MPI_Gather on MPI_COMM_WORLD, call #1 there: the type signatures do not match (reported by rank $l of $n)
rank 0 (root) (recvcount, recvtype) =
1 element, 4 bytes
rank $l (sendcount, sendtype) = 2 x MPI_INT: 2 elements, 8 bytes
rank $l called MPI_Gather from main at errors.c:
EOF2
    fi
}

for n in 2 4; do
    l=$((n - 1))
    if [ "$n" = 2 ]; then others="rank 0"; else others="ranks 0-$((n - 2))"; fi
    scenario paper1-barrier-vs-bcast "$n" fail -- barrier_bcast <<EOF2
on MPI_COMM_WORLD, call #1 there: the ranks are in different collective calls
mpix-check:   $others: MPI_Bcast (call #1 on this communicator)
mpix-check:   rank $l: MPI_Barrier (call #1 on this communicator)
EOF2
    differences "$n" ""
    scenario cart-dims "$n" fail -- cart_dims <<EOF2
mpix-check: MPI_Cart_create on MPI_COMM_WORLD, call #1 there: the ranks passed different dims and periods
EOF2
    scenario ibcast-root "$n" fail -- ibcast_root <<EOF2
mpix-check: MPI_Ibcast on MPI_COMM_WORLD, call #1 there: the ranks passed different roots
mpix-check:   rank $l: root $l
EOF2
    # A blocking collective and its nonblocking form meet in one check
    # (timeout on and off): reported at once as different calls.
    if [ "$n" = 2 ]; then evens="rank 0"; odds="rank 1"; ones="rank 1"; else evens="ranks 0, 2"; odds="ranks 1, 3"; ones="ranks 1-3"; fi
    for t in 3 0; do
        # Each rank's call site (the programs are built with -g).
        scenario "bcast-vs-ibcast-t$t" "$n" fail MPIX_CHECK_TIMEOUT=$t -- bcast_ibcast <<EOF2
on MPI_COMM_WORLD, call #1 there: the ranks are in different collective calls
mpix-check:   $others: MPI_Bcast (call #1 on this communicator)
mpix-check:   rank $l: MPI_Ibcast (call #1 on this communicator)
mpix-check:   rank 0 called MPI_Bcast from main at errors.c:
mpix-check:   rank $l called MPI_Ibcast; its check ran in MPI_Wait, called from main at errors.c:
EOF2
        scenario "allreduce-vs-iallreduce-t$t" "$n" fail MPIX_CHECK_TIMEOUT=$t -- allreduce_iallreduce <<EOF2
on MPI_COMM_WORLD, call #1 there: the ranks are in different collective calls
mpix-check:   $evens: MPI_Allreduce (call #1 on this communicator)
mpix-check:   $odds: MPI_Iallreduce (call #1 on this communicator)
EOF2
        scenario "barrier-vs-ibarrier-t$t" "$n" fail MPIX_CHECK_TIMEOUT=$t -- barrier_ibarrier <<EOF2
on MPI_COMM_WORLD, call #1 there: the ranks are in different collective calls
mpix-check:   rank 0: MPI_Ibarrier (call #1 on this communicator)
mpix-check:   $ones: MPI_Barrier (call #1 on this communicator)
EOF2
    done
    scenario persistent-root "$n" fail -- persistent_root <<EOF2
on MPI_COMM_WORLD, call #1 there: the ranks passed different roots
mpix-check:   rank $l: root $l
EOF2
    scenario large-count-pair "$n" fail -- large_count <<EOF2
on MPI_COMM_WORLD, call #1 there: the type signatures of the data rank 0 sends to rank $l do not match (reported by rank $l of $n)
rank 0 sends (sendcounts[$l], sendtype) = 1 x MPI_INT: 1 element, 4 bytes
rank $l receives (recvcounts[0], recvtype) = 1 x MPI_FLOAT: 1 element, 4 bytes
EOF2
    scenario win-fence-assert "$n" fail -- win_fence <<EOF2
mpix-check: MPI_Win_fence on 
, call #1 there: the ranks passed different assert
mpix-check:   $others: assert 0
mpix-check:   rank $l: assert
EOF2
    # A file's default error handler is MPI_ERRORS_RETURN: the call returns the error.
    scenario file-view-etype "$n" ok -- file_view <<EOF2
mpix-check: MPI_File_set_view on the file "mpix-check-errors.tmp" opened on MPI_COMM_WORLD, call #1 there: the type signatures do not match (reported by rank $l of $n)
rank 0 etype = 1 x MPI_INT: 1 element, 4 bytes
rank $l etype = 1 x MPI_FLOAT: 1 element, 4 bytes
rank $l has MPI_FLOAT at element 0 of 1 x MPI_FLOAT
rank $l: call returned
EOF2
    # The timeouts name where each missing rank waits (the status channel).
    if [ "$n" = 2 ]; then
        upper="rank 1 (world rank 1)"; lower="rank 0 (world rank 0)"
    else
        upper="ranks 2, 3 (world ranks 2, 3)"; lower="ranks 0, 1 (world ranks 0, 1)"
    fi
    # Two findings (one per communicator), each printed by every waiting
    # rank: stuck ranks cannot agree on one reporter.
    one_report=0
    scenario timeout-two-comms "$n" fail -- two_comms <<EOF2
on comm1, call #1 there: no matching check from the other ranks after 3 s
is waiting in MPI_Bcast (call #1 on comm1)
mpix-check:   $upper: not arrived: waiting in MPI_Bcast (call #1 on comm2)
mpix-check:   $lower: not arrived: waiting in MPI_Bcast (call #1 on comm1)
EOF2
    one_report=1
    scenario timeout-bcast-as-send "$n" fail -- bcast_as_send <<EOF2
mpix-check: MPI_Bcast on MPI_COMM_WORLD, call #1 there: no matching check from the other ranks after 3 s
rank 0 is waiting in MPI_Bcast (call #1 on MPI_COMM_WORLD)
not arrived: waiting in MPI_Recv(source 0, tag 0, MPI_COMM_WORLD)
EOF2
    scenario inter-two-roots "$n" fail -- inter_two_roots <<EOF2
mpix-check: MPI_Bcast on an unnamed intercommunicator ($((n / 2)) local, $((n / 2)) remote ranks), call #1 there: the roots break the intercommunicator rule
group rank 0: MPI_ROOT
EOF2
    # A signature finding per differing pair of ranks (at -n 4, two).
    one_report=0
    scenario inter-signature "$n" fail -- inter_allgather <<EOF2
mpix-check: MPI_Allgather on an unnamed intercommunicator ($((n / 2)) local, $((n / 2)) remote ranks), call #1 there: the type signatures of the data remote group rank 0 sends to local group rank 0 do not match
remote group rank 0 sends (sendcount, sendtype) = 1 x MPI_INT: 1 element, 4 bytes
local group rank 0 receives (recvcount, recvtype) = 1 x MPI_FLOAT: 1 element, 4 bytes
remote group rank 0 has MPI_INT at element 0 of 1 x MPI_INT
local group rank 0 has MPI_FLOAT at element 0 of 1 x MPI_FLOAT
EOF2
    one_report=1
    if [ "$n" = 4 ]; then # one rank per group at -n 2: high cannot differ within a group
        # One report, from either group: "local" and "remote" are the reporter's.
        scenario inter-merge-high "$n" fail -- inter_high <<EOF2
mpix-check: MPI_Intercomm_merge on an unnamed intercommunicator (2 local, 2 remote ranks), call #1 there: the ranks passed different high
group rank 0: high 0
group rank 1: high 1
EOF2
    fi
    scenario errors-return "$n" ok -- errors_return <<EOF2
mpix-check: MPI_Bcast on MPI_COMM_WORLD, call #1 there: the ranks passed different roots
rank 0: MPI_Bcast returned an error: mpix-check: inconsistent collective call
rank $l: MPI_Bcast returned an error: mpix-check: inconsistent collective call
EOF2
    scenario warn "$n" ok MPIX_CHECK=warn -- warn <<EOF2
mpix-check: MPI_Reduce on MPI_COMM_WORLD, call #1 there: the type signatures do not match
warn: continued after the report
EOF2

    # The false-positive suite: no report, and the same results with and without the checker.
    correct correct "$n" correct
    # The same with the timeout off (the checks' waits are MPI's blocking
    # ones then, and nonblocking checks poll).
    correct_timeout=0 correct correct "$n" correct
done
# Batched verification (MPIX_CHECK_VERIFY=batched, in batches of 4 calls):
# the same reports, printed when the batch is verified (here at
# MPI_Finalize, or at the truncation MPI raises); a difference at call #3
# followed by 1000 correct calls still names call #3 and its line (in both
# modes), and so does a difference in a loop that frees and builds its
# type or op again each time (the MPI may give the new one the old handle:
# the same arguments, another call) or changes a counts or datatypes
# array in place; the correct program silent. The differences MPI hangs
# on are found after the timeout in this mode (docs/mpix-check.md,
# "Batched verification").
for n in 2 4; do
    l=$((n - 1))
    for verify in immediate batched; do
        scenario "late-$verify" "$n" fail MPIX_CHECK_VERIFY=$verify MPIX_CHECK_BATCH=16 -- late <<EOF2
mpix-check: MPI_Allreduce on MPI_COMM_WORLD, call #3 there: the ranks passed different ops
mpix-check:   rank $l: MPI_MAX
mpix-check:   rank 0 called MPI_Allreduce from main at errors.c:61
mpix-check:   rank $l called MPI_Allreduce from main at errors.c:61
EOF2
        scenario "recycled-type-$verify" "$n" fail MPIX_CHECK_VERIFY=$verify MPIX_CHECK_BATCH=16 -- recycled_type <<EOF2
mpix-check: MPI_Bcast on MPI_COMM_WORLD, call #17 there: the type signatures do not match
mpix-check:     rank $l has MPI_FLOAT at MPI_COMBINER_CONTIGUOUS copy 0 > MPI_FLOAT
mpix-check:   rank $l called MPI_Bcast from main at errors.c:74
EOF2
        scenario "recycled-op-$verify" "$n" fail MPIX_CHECK_VERIFY=$verify MPIX_CHECK_BATCH=16 -- recycled_op <<EOF2
mpix-check: MPI_Allreduce on MPI_COMM_WORLD, call #11 there: the ranks passed different ops
mpix-check:   rank $l: a user op (function identity
EOF2
        scenario "recycled-types-$verify" "$n" fail MPIX_CHECK_VERIFY=$verify MPIX_CHECK_BATCH=16 -- recycled_types <<EOF2
mpix-check: MPI_Alltoallw on MPI_COMM_WORLD, call #17 there: the type signatures of the data rank 0 sends to rank $l do not match
rank $l receives (recvcounts[0], recvtypes[0]) = 1 x MPI_FLOAT: 1 element, 4 bytes
EOF2
        scenario "recycled-counts-$verify" "$n" fail MPIX_CHECK_VERIFY=$verify MPIX_CHECK_BATCH=16 -- recycled_counts <<EOF2
mpix-check: MPI_Alltoallv on MPI_COMM_WORLD, call #17 there: the type signatures of the data rank 0 sends to rank $l do not match
rank $l receives (recvcounts[0], recvtype) = 2 x MPI_INT: 2 elements, 8 bytes
EOF2
    done
done
checker_env=(MPIX_CHECK_TIMEOUT=3 MPIX_CHECK_VERIFY=batched MPIX_CHECK_BATCH=4)
for n in 2 4; do
    l=$((n - 1))
    if [ "$n" = 2 ]; then others="rank 0"; else others="ranks 0-$((n - 2))"; fi
    differences "$n" batched-
    correct_tag=batched correct correct "$n" correct
    # A communicator whose error handler returns errors: its calls are
    # verified before they are made, so the call a finding is about
    # returns it, as in the immediate mode.
    scenario batched-errors-return "$n" ok -- errors_return <<EOF2
mpix-check: MPI_Bcast on MPI_COMM_WORLD, call #1 there: the ranks passed different roots
rank 0: MPI_Bcast returned an error: mpix-check: inconsistent collective call
rank $l: MPI_Bcast returned an error: mpix-check: inconsistent collective call
EOF2
    # The handler set after calls were recorded: those are verified, then
    # the call the finding is about returns it.
    scenario batched-errors-return-late "$n" ok -- errors_return_late <<EOF2
mpix-check: MPI_Bcast on MPI_COMM_WORLD, call #4 there: the ranks passed different roots
rank 0: call #4 returned an error
rank $l: call #4 returned an error
EOF2
    # The timeout off: no hang watch to find a difference MPI hangs on,
    # so every call is verified before it is made (the immediate report).
    scenario batched-barrier-vs-bcast-t0 "$n" fail MPIX_CHECK_TIMEOUT=0 -- barrier_bcast <<EOF2
on MPI_COMM_WORLD, call #1 there: the ranks are in different collective calls
mpix-check:   $others: MPI_Bcast (call #1 on this communicator)
mpix-check:   rank $l: MPI_Barrier (call #1 on this communicator)
EOF2
    # The paper's section 5 example (two communicators of one group used
    # in opposite orders): MPI completes these small broadcasts, the
    # order across communicators (crate::order) finds it.
    if [ "$n" = 2 ]; then upper="rank 1"; lower="rank 0"; else upper="ranks 2, 3"; lower="ranks 0, 1"; fi
    scenario batched-two-comms "$n" fail -- two_comms <<EOF2
mpix-check: MPI_Bcast on comm1, call #1 there: the ranks made this call at different points among their blocking collective calls on MPI_COMM_WORLD and comm2, which hold all its ranks
mpix-check:   $lower: after 2 blocking calls on them
mpix-check:   $upper: after 3 blocking calls on them
mpix-check:   rank 0 called MPI_Bcast from main at errors.c:213
mpix-check:   rank $l called MPI_Bcast from main at errors.c:217
EOF2
    # A communicator used before a wider one (MPI_COMM_WORLD) by one rank
    # and after it by another (at -n 4: at -n 2 the two have one group).
    if [ "$n" = 4 ]; then
        scenario batched-pair-order "$n" fail -- pair_order <<EOF2
mpix-check: MPI_Bcast on pair, call #1 there: the ranks made this call at different points among their blocking collective calls on MPI_COMM_WORLD, which hold all its ranks
mpix-check:   rank 0: after 2 blocking calls on them
mpix-check:   rank 1: after 1 blocking call on them
EOF2
    fi
    # The differences MPI hangs on: a rank inside MPI's own call says
    # which (crate::inside, over TCP); the lowest rank in a check reports,
    # naming each rank's call and its call site as the immediate mode's
    # report does.
    if [ "$n" = 2 ]; then evens="rank 0"; odds="rank 1"; ones="rank 1"; else evens="ranks 0, 2"; odds="ranks 1, 3"; ones="ranks 1-3"; fi
    scenario batched-barrier-vs-bcast "$n" fail -- barrier_bcast <<EOF2
mpix-check: MPI_Bcast on MPI_COMM_WORLD, call #1 there: the ranks are in different collective calls (MPI hangs on them: found after 3 s) (reported by rank 0 of $n)
mpix-check:   $others: MPI_Bcast (call #1 on this communicator)
mpix-check:   rank $l: MPI_Barrier (call #1 on this communicator)
mpix-check:   rank 0 called MPI_Bcast from main at errors.c:
mpix-check:   rank $l called MPI_Barrier from main at errors.c:
(world rank $((n - 1))): not arrived: inside MPI_Barrier (call #1 on MPI_COMM_WORLD), MPI's own call
EOF2
    scenario batched-barrier-vs-bcast-late "$n" fail -- barrier_bcast_late <<EOF2
mpix-check: MPI_Bcast on MPI_COMM_WORLD, call #3 there: the ranks are in different collective calls (MPI hangs on them: found after 3 s) (reported by rank 0 of $n)
mpix-check:   $others: MPI_Bcast (call #3 on this communicator)
mpix-check:   rank $l: MPI_Barrier (call #3 on this communicator)
(world rank $((n - 1))): not arrived: inside MPI_Barrier (call #3 on MPI_COMM_WORLD), MPI's own call
EOF2
    scenario batched-bcast-vs-ibcast "$n" fail -- bcast_ibcast <<EOF2
mpix-check: MPI_Bcast on MPI_COMM_WORLD, call #1 there: the ranks are in different collective calls (MPI hangs on them: found after 3 s) (reported by rank 0 of $n)
mpix-check:   $others: MPI_Bcast (call #1 on this communicator)
mpix-check:   rank $l: MPI_Ibcast (call #1 on this communicator)
mpix-check:   rank 0 called MPI_Bcast from main at errors.c:
mpix-check:   rank $l called MPI_Ibcast; its check ran in MPI_Wait, called from main at errors.c:
(world rank $((n - 1))): not arrived: waiting in MPI_Ibcast (call #1 on MPI_COMM_WORLD)
EOF2
    scenario batched-allreduce-vs-iallreduce "$n" fail -- allreduce_iallreduce <<EOF2
mpix-check: MPI_Iallreduce on MPI_COMM_WORLD, call #1 there: the ranks are in different collective calls (MPI hangs on them: found after 3 s) (reported by rank 1 of $n)
mpix-check:   $evens: MPI_Allreduce (call #1 on this communicator)
mpix-check:   $odds: MPI_Iallreduce (call #1 on this communicator)
not arrived: inside MPI_Allreduce (call #1 on MPI_COMM_WORLD), MPI's own call
EOF2
    scenario batched-barrier-vs-ibarrier "$n" fail -- barrier_ibarrier <<EOF2
mpix-check: MPI_Ibarrier on MPI_COMM_WORLD, call #1 there: the ranks are in different collective calls (MPI hangs on them: found after 3 s) (reported by rank 0 of $n)
mpix-check:   rank 0: MPI_Ibarrier (call #1 on this communicator)
mpix-check:   $ones: MPI_Barrier (call #1 on this communicator)
$ones (world $ones): not arrived: inside MPI_Barrier (call #1 on MPI_COMM_WORLD), MPI's own call
EOF2
done
echo "mpix-check tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
