#!/usr/bin/env bash
# The wrong MPI gets one clear line, in both directions (MPICH's build
# under Open MPI, and Open MPI's under MPICH), never a crash:
#
#  * a program compiled with one MPI's mpicc and linked to the library
#    built for the other: the library's first call returns an error of the
#    MPIX_MARSHAL_ERR_UNSUPPORTED kind whose string names both MPIs
#    (tests/c/wrong_mpi.c);
#  * the checker built for one MPI preloaded into a program of the other:
#    MPI_Init and MPI_Init_thread end the process with one line
#    "mpix-check: built for X but this process runs Y: ..." and a non-zero
#    exit status, and no segfault.
#
# (The installed header's check, which stops the compilation against the
# other MPI's mpi.h, is tested on every pass by scripts/install-test.sh.)
#
# Needs both Debian builds in release mode, as the test command's passes
# leave them: MPICH's in MPICH_TARGET (default target/) and Open MPI's in
# OPENMPI_TARGET (default target/openmpi/), each with libmpix_marshal.so and
# libmpix_check.so in release/. Skips, saying why, when either is missing.
#
# Usage: scripts/wrong-mpi-tests.sh [MPICH_TARGET OPENMPI_TARGET]
set -euo pipefail
cd "$(dirname "$0")/.."
mpich_target=${1:-target}
openmpi_target=${2:-target/openmpi}
for f in "$mpich_target/release/libmpix_marshal.so" "$mpich_target/release/libmpix_check.so" \
    "$openmpi_target/release/libmpix_marshal.so" "$openmpi_target/release/libmpix_check.so"; do
    if [ ! -f "$f" ]; then
        echo "wrong-mpi-tests: skipped: no $f (needs the MPICH and the Open MPI release builds:"
        echo "wrong-mpi-tests: MPIX_TEST_MPIS=\"mpich4 openmpi4\" scripts/test.sh makes both)"
        exit 0
    fi
done
for w in mpicc.mpich mpiexec.mpich mpicc.openmpi mpiexec.openmpi; do
    command -v "$w" >/dev/null || { echo "wrong-mpi-tests: skipped: no $w"; exit 0; }
done
# Open MPI as root, and more ranks than cores (as scripts/mpi-env.sh sets).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok   $1"; }
fail() { failed=$((failed + 1)); echo "FAIL $1"; [ -f "${2:-}" ] && tail -n 20 "$2"; }
crashed() { grep -qiE "segmentation|signal 11|SIGSEGV|core dumped" "$1"; }

# Each direction: the MPI of the program, and the other (the build's).
#   name  program's mpicc/mpiexec     build's target and name
directions=(
    "mpich:mpicc.mpich:mpiexec.mpich:$openmpi_target:Open MPI:MPICH"
    "openmpi:mpicc.openmpi:mpiexec.openmpi:$mpich_target:MPICH:Open MPI"
)

# A program that only initializes MPI (the checker's MPI_Init wrapper).
cat >"$work/init.c" <<'C'
#include <mpi.h>
int main(int argc, char **argv) { MPI_Init(&argc, &argv); MPI_Finalize(); return 0; }
C

for d in "${directions[@]}"; do
    IFS=: read -r prog_mpi cc exec build built_name running_name <<<"$d"
    rel=$(cd "$build/release" && pwd)
    other=${prog_mpi}-program

    # 1. The library built for the other MPI, called by a program of this one.
    log=$work/library-$other.log
    "$cc" -std=c99 -Wall -Wextra -Werror -Iinclude -o "$work/wrong_mpi-$prog_mpi" tests/c/wrong_mpi.c \
        -L"$rel" -lmpix_marshal -Wl,-rpath,"$rel"
    if timeout 60 "$exec" -n 1 "$work/wrong_mpi-$prog_mpi" >"$log" 2>&1 </dev/null \
        && grep -q "mpix-marshal was built for $built_name [0-9.]* but this process runs $running_name [0-9.]*:" "$log"; then
        ok "the library built for $built_name refuses a program of $running_name: $(grep -o "mpix-marshal was built for [^:]*" "$log")"
    else
        fail "the library built for $built_name under $running_name (exit or message)" "$log"
    fi

    # 2. The checker built for the other MPI, preloaded: MPI_Init and MPI_Init_thread.
    "$cc" -std=c99 -o "$work/init-$prog_mpi" "$work/init.c"
    "$cc" -std=c99 -o "$work/correct-$prog_mpi" check/tests/c/correct.c
    for p in init correct; do
        log=$work/checker-$p-$other.log
        rc=0
        timeout 60 "$exec" -n 2 env LD_PRELOAD="$rel/libmpix_check.so" "$work/$p-$prog_mpi" \
            >"$log" 2>&1 </dev/null || rc=$?
        if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ]; then
            fail "the checker built for $built_name under $running_name ($p): exit $rc, expected a refusal" "$log"
        elif crashed "$log"; then
            fail "the checker built for $built_name under $running_name ($p) crashed" "$log"
        elif grep -q "^mpix-check: built for $built_name [0-9.]* but this process runs $running_name [0-9.]*: use the mpix-check installed for that MPI$" "$log"; then
            ok "the checker built for $built_name refuses $running_name's $([ $p = init ] && echo MPI_Init || echo MPI_Init_thread) (exit $rc)"
        else
            fail "the checker built for $built_name under $running_name ($p): not the expected line" "$log"
        fi
    done
done
echo "wrong-mpi-tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
