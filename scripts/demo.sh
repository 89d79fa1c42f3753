#!/usr/bin/env bash
# The main job, end to end, after installing what is missing: builds the
# library, then one MPI run archives a datatype to a file and a second,
# separate MPI run of two processes rebuilds it from the file and uses it to
# send real data between them.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo build --release --quiet
out=target/demo
mkdir -p "$out"
mpicc -std=c99 -Wall -Wextra -Werror -Iinclude -o "$out/demo_archive" examples/demo_archive.c \
    -Ltarget/release -lmpix_marshal -Wl,-rpath,"$PWD/target/release"
cd "$out"
rm -f particles.mxdt
echo "--- run 1: archive the datatype"
mpiexec -n 1 ./demo_archive write particles.mxdt
echo "--- the archive ($(stat -c %s particles.mxdt) bytes):"
od -A d -t x1 particles.mxdt | head -5
echo "--- run 2: two processes rebuild it from the file and communicate with it"
mpiexec -n 2 ./demo_archive read particles.mxdt
