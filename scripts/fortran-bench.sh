#!/usr/bin/env bash
# Marshal and unmarshal through the Fortran module (mpix_marshal_f08)
# beside the C API called from C, in one run (fortran/bench/bench.f90):
# prints a Markdown table of ns per call and the ratios (goal: the module
# within 1.2 x the C call).
#
# Usage: scripts/fortran-bench.sh TARGET_DIR [SECONDS [SWEEPS]]   (a release build for $MPICC)
# Each figure: the best of SWEEPS (11) loops of about SECONDS (0.005) of CPU time.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:-target}
export MPICC=${MPICC:-mpicc}
MPIEXEC=${MPIEXEC:-mpiexec}
lib=$(cd "$target/release" && pwd)
out=$target/fortran-bench
mkdir -p "$out"
out=$(cd "$out" && pwd)
fortran/build.sh "$out/build" "$lib" >"$out/build.log" 2>&1 || { tail -n 1 "$out/build.log"; exit 1; }
MPIFC=$(cat "$out/build/mpifc")
read -ra mpildirs <"$out/build/mpi-libdirs" || true
"$MPICC" -O2 -std=c99 -Wall -Iinclude -c fortran/bench/bench_c.c -o "$out/bench_c.o"
"$MPIFC" -O2 "${mpildirs[@]}" -I"$out/build" -o "$out/bench" fortran/bench/bench.f90 "$out/bench_c.o" \
    -L"$out/build" -lmpix_marshal_f -L"$lib" -lmpix_marshal -Wl,-rpath,"$out/build" -Wl,-rpath,"$lib"
echo "fortran-bench: $MPIFC, library $lib"
"$MPIEXEC" ${MPIEXEC_ARGS:-} -n 1 "$out/bench" "${2:-0.005}" "${3:-11}"
