#!/usr/bin/env bash
# Tests of mpix-check's datatype checks (check/src/datatypes.rs), as
# scripts/check-p2p-tests.sh does for the point-to-point ones: builds
# check/tests/c/type_*.c with $MPICC, runs each erroneous scenario of
# type_errors.c under $MPIEXEC -n 2 (and -n 4 where other ranks take part)
# with the checker preloaded and asserts the report lines and the exit
# status, and runs type_correct.c
# (receives into types whose entries never overlap, sends from one whose
# entries do) with and without the checker: no report, the same results;
# then the scenarios of type_args.c (datatype arguments MPI must refuse,
# types never freed) and rma_io_errors.c (one-sided and file calls) the
# same way, and rma_io_correct.c as type_correct.c.
# Usage: scripts/check-type-tests.sh TARGET_DIR
set -uo pipefail
cd "$(dirname "$0")/.."
suite=check-type-tests
programs=(type_errors type_args type_correct rma_io_errors rma_io_correct)
errors=type_errors
limit=60
checker_env=(MPIX_CHECK_TIMEOUT=10)
json_kind='"kind":"datatype-overlap"'
one_report=1
. scripts/check-common.sh

summary="the receive buffer's datatype has overlapping entries (a receive into it is erroneous)"
for n in 2 4; do
    l=$((n - 1))
    if [ "$n" = 2 ]; then # one rank's own call: -n 4 would repeat it
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
    fi
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
    if [ "$n" = 2 ]; then # one rank's own call: -n 4 would repeat it
    scenario overlap-warn "$n" ok MPIX_CHECK=warn -- warn <<EOF2
mpix-check: MPI_Recv on MPI_COMM_WORLD: $summary (reported by rank $l of $n)
warn: continued after the receive (rc 0)
EOF2
    scenario overlap-errors-return "$n" ok -- errors_return <<EOF2
mpix-check: MPI_Recv on MPI_COMM_WORLD: $summary (reported by rank $l of $n)
rank $l: call returned an error: mpix-check: erroneous use of a datatype (see the mpix-check report on stderr)
errors_return: continued after the receive (rc 0)
EOF2
    fi
    correct type-correct "$n" type_correct
done

# Datatype arguments MPI must refuse: the report, then MPI's own error.
errors=type_args
json_kind='"kind":"datatype-argument"'
arg_summary="a datatype argument is not a committed datatype"
for n in 2 4; do
    l=$((n - 1))
    if [ "$n" = 2 ]; then # one rank's own call: -n 4 would repeat it
    scenario uncommitted-send "$n" fail -- uncommitted-send <<EOF2
mpix-check: MPI_Send on MPI_COMM_WORLD: $arg_summary (reported by rank 0 of $n)
mpix-check:   datatype was never committed: built by MPI_Type_vector from main at type_args.c:26, it needs MPI_Type_commit before it describes data
mpix-check:   rank 0 called MPI_Send from main at type_args.c:27
mpix-check:   the MPI's own error follows
EOF2
    scenario freed-recv "$n" fail -- freed-recv <<EOF2
mpix-check: MPI_Recv on MPI_COMM_WORLD: $arg_summary (reported by rank $l of $n)
mpix-check:   datatype is a freed datatype: MPI_Type_free was called on it from main at type_args.c:38 (built by MPI_Type_contiguous from main at type_args.c:35)
mpix-check:   rank $l called MPI_Recv from main at type_args.c:39
EOF2
    fi
    scenario null-bcast "$n" fail -- null-bcast <<EOF2
mpix-check: MPI_Bcast on MPI_COMM_WORLD: $arg_summary (reported by rank $l of $n)
mpix-check:   datatype is MPI_DATATYPE_NULL
mpix-check:   rank $l called MPI_Bcast from main at type_args.c:43
EOF2
    # In both verification modes: in the batched one MPI's error (the
    # root's own argument) is handed on without verifying the batch the
    # other ranks, gone on, cannot join (exactly one report: no timeout).
    for verify in immediate batched; do
    scenario "uncommitted-gather-$verify" "$n" fail MPIX_CHECK_VERIFY=$verify -- uncommitted-gather <<EOF2
mpix-check: MPI_Gather on MPI_COMM_WORLD: $arg_summary (reported by rank $l of $n)
mpix-check:   recvtype was never committed: built by MPI_Type_contiguous from main at type_args.c:48
EOF2
    done
    if [ "$n" = 2 ]; then # one rank's own call: -n 4 would repeat it
    scenario negative-count "$n" fail -- negative-count <<EOF2
mpix-check: MPI_Type_vector on MPI_COMM_WORLD: a type constructor is given an argument it must refuse (reported by rank $l of $n)
mpix-check:   count = -2: it may not be negative
mpix-check:   rank $l called MPI_Type_vector from main at type_args.c:52
EOF2
    scenario freed-old "$n" fail -- freed-old <<EOF2
mpix-check: MPI_Type_create_resized on MPI_COMM_WORLD: a type constructor is given an argument it must refuse (reported by rank $l of $n)
mpix-check:   oldtype is a freed datatype: MPI_Type_free was called on it from main at type_args.c:57 (built by MPI_Type_contiguous from main at type_args.c:55)
EOF2
    scenario struct-args "$n" fail -- struct-args <<EOF2
mpix-check: MPI_Type_create_struct on MPI_COMM_WORLD: a type constructor is given an argument it must refuse (reported by rank $l of $n)
mpix-check:   array_of_blocklengths[1] = -1: it may not be negative
mpix-check:   array_of_types[2] is MPI_DATATYPE_NULL
EOF2
    scenario double-free "$n" fail -- double-free <<EOF2
mpix-check: MPI_Type_free on MPI_COMM_WORLD: the datatype is not a live derived datatype (reported by rank $l of $n)
mpix-check:   datatype is a freed datatype: MPI_Type_free was called on it from main at type_args.c:71 (built by MPI_Type_vector from main at type_args.c:69)
mpix-check:   rank $l called MPI_Type_free from main at type_args.c:72
EOF2
    fi
done

# Types never freed: listed at MPI_Finalize (rank 0 leaks), not with
# MPIX_CHECK_LEAKS=0.
json_kind='"kind":"datatype-leak"'
for n in 2 4; do
    scenario leak "$n" ok -- leak <<EOF2
mpix-check: MPI_Finalize on MPI_COMM_WORLD: 4 derived datatypes made on this rank were never freed (2 constructions; MPIX_CHECK_LEAKS=0 turns this list off) (reported by rank 0 of $n)
mpix-check:   3 like this, the first built by MPI_Type_vector from main at type_args.c:81:
mpix-check:     root: MPI_COMBINER_VECTOR
mpix-check:       count 2, blocklength 1, stride 3
mpix-check:       old: MPI_INT
mpix-check:   1 like this, the first built by MPI_Type_create_struct from main at type_args.c:87:
mpix-check:     root: MPI_COMBINER_STRUCT
mpix-check:       types[1]: MPI_COMBINER_VECTOR
EOF2
    log="$out/leak-off-$n.log"
    timeout "$limit" "$MPIEXEC" "${mpiexec_args[@]}" -n "$n" env LD_PRELOAD="$lib" "${checker_env[@]}" \
        MPIX_CHECK_LEAKS=0 "$out/type_args" leak >"$log" 2>&1 </dev/null
    if [ $? -eq 0 ] && ! grep -q mpix-check "$log"; then
        passed=$((passed + 1)); echo "ok   leak -n $n, MPIX_CHECK_LEAKS=0 (no report)"
    else
        fail "leak -n $n, MPIX_CHECK_LEAKS=0: a report or a failure" "$log"
    fi
done
# One-sided and file calls: the window's handler aborts; the file's
# returns, and the program exits 1. (A window's name in a report is the
# MPI's own where it names windows: Open MPI's "rdma window 8".)
# The erroneous calls at -n 2 only (rank 0 against the last rank: -n 4
# adds nothing but time), the correct program at -n 2 and 4.
errors=rma_io_errors
rma_summary="the one-sided operation's datatypes are erroneous"
for n in 2; do
    l=$((n - 1))
    json_kind='"kind":"rma"'
    scenario put-mismatch "$n" fail -- put-mismatch <<EOF2
$rma_summary (reported by rank 0 of $n)
mpix-check:   rank 0 targets rank $l at displacement 0
mpix-check:   the origin (2 x MPI_INT) and the target (1 x a derived datatype (MPI_COMBINER_CONTIGUOUS)): the type signatures do not match
mpix-check:       the target has MPI_DOUBLE at MPI_COMBINER_CONTIGUOUS copy 0 > MPI_DOUBLE
mpix-check:   rank 0 called MPI_Put from main at rma_io_errors.c:62
EOF2
    scenario get-range "$n" fail -- get-range <<EOF2
$rma_summary (reported by rank 0 of $n)
mpix-check:   the target buffer, bytes 56 to 72 of rank $l's window (target_disp 14 x disp_unit 4, 4 x MPI_INT), lies outside the window's 64 bytes
EOF2
    scenario acc-mixed "$n" fail -- acc-mixed <<EOF2
$rma_summary (reported by rank 0 of $n)
mpix-check:   origin_datatype mixes basic types (MPI_DOUBLE, MPI_INT): an accumulate's types are each built from one predefined type
EOF2
    scenario acc-types "$n" fail -- acc-types <<EOF2
mpix-check:   the types are built from different predefined types (origin_datatype of MPI_INT, target_datatype of MPI_FLOAT): an accumulate needs the same one on both sides
EOF2
    scenario fetch-derived "$n" fail -- fetch-derived <<EOF2
$rma_summary (reported by rank 0 of $n)
mpix-check:   datatype must be a predefined datatype (one element moves)
EOF2
    json_kind='"kind":"datatype-overlap"'
    scenario get-overlap "$n" fail -- get-overlap <<EOF2
the origin buffer's datatype has overlapping entries (a write through it is erroneous) (reported by rank 0 of $n)
mpix-check:   rank 0's origin buffer is (count, datatype) = 1 x a derived datatype (MPI_COMBINER_VECTOR)
EOF2
    scenario io-read-overlap "$n" fail -- io-read-overlap <<EOF2
mpix-check:   rank 0's read buffer is (count, datatype) = 1 x a derived datatype (MPI_COMBINER_VECTOR)
mpix-check:   rank 0 called MPI_File_read_at from file_scenario at rma_io_errors.c:34
EOF2
    json_kind='"kind":"io"'
    scenario io-data "$n" fail -- io-data <<EOF2
mpix-check:   the data, 3 x MPI_SHORT (3 basic elements), is not whole copies of the view's etype, 1 x MPI_INT (1 each)
mpix-check:   rank 0 called MPI_File_write from file_scenario at rma_io_errors.c:24
EOF2
    scenario io-filetype "$n" fail -- io-filetype <<EOF2
mpix-check:   the filetype, 1 x a derived datatype (MPI_COMBINER_CONTIGUOUS) (3 basic elements), is not whole copies of the view's etype, 1 x MPI_DOUBLE (1 each)
EOF2
done
for n in 2 4; do
    correct rma-io-correct "$n" rma_io_correct
done
echo "mpix-check datatype tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
