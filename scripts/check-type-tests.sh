#!/usr/bin/env bash
# Tests of mpix-check's datatype checks (check/src/datatypes.rs), as
# scripts/check-p2p-tests.sh does for the point-to-point ones: builds
# check/tests/c/type_*.c with $MPICC, runs each erroneous scenario of
# type_errors.c under $MPIEXEC -n 2 and -n 4 with the checker preloaded and
# asserts the report lines and the exit status, and runs type_correct.c
# (receives into types whose entries never overlap, sends from one whose
# entries do) with and without the checker: no report, the same results.
# Usage: scripts/check-type-tests.sh TARGET_DIR
set -uo pipefail
cd "$(dirname "$0")/.."
suite=check-type-tests
programs=(type_errors type_correct)
errors=type_errors
limit=60
checker_env=(MPIX_CHECK_TIMEOUT=10)
json_kind='"kind":"datatype-overlap"'
one_report=1
. scripts/check-common.sh

summary="the receive buffer's datatype has overlapping entries (a receive into it is erroneous)"
for n in 2 4; do
    l=$((n - 1))
    scenario overlap-recv "$n" fail -- recv <<EOF2
mpix-check: MPI_Recv on MPI_COMM_WORLD: $summary (reported by rank $l of $n)
mpix-check:   rank $l receives into (count, datatype) = 1 x a derived datatype (MPI_COMBINER_VECTOR)
mpix-check:   elements 1 and 2 of the buffer both hold its byte 4:
mpix-check:     element 1: MPI_COMBINER_VECTOR block 0, element 1 > MPI_INT (MPI_INT at byte 4)
mpix-check:     element 2: MPI_COMBINER_VECTOR block 1, element 0 > MPI_INT (MPI_INT at byte 4)
mpix-check:   rank $l called MPI_Recv from main at type_errors.c:43
EOF2
    scenario overlap-irecv "$n" fail -- irecv <<EOF2
mpix-check: MPI_Irecv on MPI_COMM_WORLD: $summary (reported by rank $l of $n)
mpix-check:   rank $l called MPI_Irecv from main at type_errors.c:48
EOF2
    scenario overlap-count "$n" fail -- count <<EOF2
mpix-check: MPI_Recv on MPI_COMM_WORLD: $summary (reported by rank $l of $n)
mpix-check:   rank $l receives into (count, datatype) = 3 x a derived datatype (MPI_COMBINER_RESIZED)
mpix-check:   elements 1 and 2 of the buffer both hold its byte 4:
mpix-check:     element 1: copy 0 of 3 x the type > MPI_COMBINER_RESIZED copy 0 > MPI_COMBINER_CONTIGUOUS copy 1 > MPI_INT (MPI_INT at byte 4)
mpix-check:     element 2: copy 1 of 3 x the type > MPI_COMBINER_RESIZED copy 0 > MPI_COMBINER_CONTIGUOUS copy 0 > MPI_INT (MPI_INT at byte 4)
EOF2
    scenario overlap-sendrecv "$n" fail -- sendrecv <<EOF2
mpix-check: MPI_Sendrecv on MPI_COMM_WORLD: $summary (reported by rank $l of $n)
EOF2
    scenario overlap-bcast "$n" fail -- bcast <<EOF2
mpix-check: MPI_Bcast on MPI_COMM_WORLD: $summary (reported by rank $l of $n)
mpix-check:   rank $l receives into (count, datatype) = 1 x a derived datatype (MPI_COMBINER_VECTOR)
mpix-check:   elements 1 and 2 of the buffer both hold its byte 4:
EOF2
    scenario overlap-allgather "$n" fail -- allgather <<EOF2
mpix-check: MPI_Allgather on MPI_COMM_WORLD: $summary (reported by rank $l of $n)
mpix-check:   rank $l receives into (count, datatype) = $n x a derived datatype (MPI_COMBINER_RESIZED)
mpix-check:     element 1: copy 0 of $n x the type > MPI_COMBINER_RESIZED copy 0 > MPI_COMBINER_CONTIGUOUS copy 1 > MPI_INT (MPI_INT at byte 4)
EOF2
    scenario overlap-warn "$n" ok MPIX_CHECK=warn -- warn <<EOF2
mpix-check: MPI_Recv on MPI_COMM_WORLD: $summary (reported by rank $l of $n)
warn: continued after the receive (rc 0)
EOF2
    scenario overlap-errors-return "$n" ok -- errors_return <<EOF2
mpix-check: MPI_Recv on MPI_COMM_WORLD: $summary (reported by rank $l of $n)
rank $l: call returned an error: mpix-check: erroneous use of a datatype (see the mpix-check report on stderr)
errors_return: continued after the receive (rc 0)
EOF2
    correct type-correct "$n" type_correct
done
echo "mpix-check datatype tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
