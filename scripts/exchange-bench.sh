#!/usr/bin/env bash
# Measures the type exchange (benches/exchange.c) under mpiexec -n 2: the
# first and the cached MPIX_Type_send/recv beside the floor (plain
# MPI_Send/Recv of as many bytes) and beside marshal + send + unmarshal
# every time, all in one run.
# Usage: scripts/exchange-bench.sh [TARGET_DIR] [ITERATIONS]
#   (the cargo target dir of a release build for $MPICC; default target)
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:-target}
iters=${2:-2000}
MPICC=${MPICC:-mpicc}
MPIEXEC=${MPIEXEC:-mpiexec}
lib="$target/release"
[ -f "$lib/libmpix_marshal.so" ] || { echo "build first: cargo build --release (in $target)" >&2; exit 1; }
out="$target/exchange-bench"
mkdir -p "$out"
"$MPICC" -std=c99 -O2 -Wall -Wextra -Werror -Iinclude -o "$out/exchange" benches/exchange.c \
    -L"$lib" -lmpix_marshal -Wl,-rpath,"$(cd "$lib" && pwd)"
"$MPIEXEC" ${MPIEXEC_ARGS:-} -n 2 "$out/exchange" "$iters"
