#!/usr/bin/env bash
# `mpix-marshal dump --data` on files every process of an MPI job wrote
# through MPI-IO (inspect/tests/c/data_write.c), in both datareps: the
# values printed are the values written, line by line.
# Usage: inspect/tests/data-io.sh PROGRAM MPIX_MARSHAL NP (MPIEXEC, MPIEXEC_ARGS from the environment)
set -euo pipefail
prog=$1 cmd=$2 np=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
${MPIEXEC:-mpiexec} ${MPIEXEC_ARGS:-} -n "$np" "$prog" "$dir"
checked=0
for t in vector subarray indexed; do
    for rep in native external32; do
        "$cmd" dump "$dir/$t.mxdt" --data "$dir/$t.$rep" --datarep "$rep" >"$dir/$t.$rep.out"
        sed 's/.* //' "$dir/$t.$rep.out" | diff - "$dir/$t.values"
        checked=$((checked + $(wc -l <"$dir/$t.values")))
    done
done
echo "$checked checks passed (3 types, native and external32, $np processes)"
