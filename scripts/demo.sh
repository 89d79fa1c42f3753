#!/usr/bin/env bash
# The main job, end to end: builds the library, then one MPI run archives a
# datatype to a file and a second, separate MPI run of two processes
# rebuilds it from the file and uses it to send real data between them.
#
# It installs only what the demo uses and is missing (scripts/setup.sh
# --demo: MPICH, libclang, gcc), and changes no system setting: MPICH is
# called by its own names (mpicc.mpich, mpiexec.mpich), whatever the
# system's default MPI. Everything it builds stays in target/ (the library
# in target/release, the demo in target/demo).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --demo
export MPICC=mpicc.mpich
echo "demo: building the library (cargo build --release, MPICC=$MPICC, into target/release)..."
cargo build --release -p mpix-marshal
out=target/demo
mkdir -p "$out"
echo "demo: compiling examples/demo_archive.c with $MPICC into $out/demo_archive"
"$MPICC" -std=c99 -Wall -Wextra -Werror -Iinclude -o "$out/demo_archive" examples/demo_archive.c \
    -Ltarget/release -lmpix_marshal -Wl,-rpath,"$PWD/target/release"
cd "$out"
rm -f particles.mxdt
echo "--- run 1: archive the datatype"
mpiexec.mpich -n 1 ./demo_archive write particles.mxdt
echo "--- the archive ($(stat -c %s particles.mxdt) bytes):"
od -A d -t x1 particles.mxdt | head -5
echo "--- run 2: two processes rebuild it from the file and communicate with it"
mpiexec.mpich -n 2 ./demo_archive read particles.mxdt
