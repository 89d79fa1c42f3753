#!/usr/bin/env bash
# Runs the C tests of scripts/c-tests.sh (the exported-symbol and header
# checks, the API tests, the multi-process tests under mpiexec -n 2 only, the
# archive demo) again, once per pass below, looking for memory and
# undefined-behaviour errors; any report fails the run:
#  1. asan: the C programs built with gcc's -fsanitize=address,undefined
#     (no recovery), linked against the Rust library built with rustc's
#     -Zsanitizer=address (on the stable toolchain, through RUSTC_BOOTSTRAP=1)
#     into TARGET_DIR/asan; LeakSanitizer checks every process at exit.
#  2. valgrind: the plain programs and library (TARGET_DIR/debug) under
#     memcheck, --error-exitcode=1, definite leaks counted as errors.
# Reports that come from inside the MPI stack itself are suppressed by
# tests/c/lsan.supp and tests/c/valgrind.supp, each entry saying why; none
# names a frame of our library or of the tests.
# Usage: scripts/sanitize.sh [TARGET_DIR] [asan|valgrind]...
#   TARGET_DIR: the cargo target dir of the plain build for $MPICC (default
#   target; built here if needed). MPICC, MPIEXEC and MPIEXEC_ARGS as for
#   scripts/c-tests.sh; MPIX_CARGO_FLAGS (scripts/mpi-env.sh) are passed to
#   cargo build. With no pass named, both run.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:-target}
shift || true
passes=("$@")
[ "${#passes[@]}" -gt 0 ] || passes=(asan valgrind)
export MPICC=${MPICC:-mpicc}
export MPIEXEC=${MPIEXEC:-mpiexec}
root=$(pwd)
host=$(rustc -vV | sed -n 's/^host: //p')
failed=()

# Keeps dlopened MPI plugins mapped until exit (see the file for why).
keep_loaded() { # output dir
    mkdir -p "$1"
    "$MPICC" -std=c99 -Wall -Wextra -Werror -c -o "$1/keep_loaded.o" tests/c/keep_loaded.c
    echo "$(cd "$1" && pwd)/keep_loaded.o"
}

asan_pass() {
    echo "--- asan: building the library with -Zsanitizer=address ($target/asan)"
    # RUSTFLAGS reach only the crates built for --target, not build scripts
    # or proc macros; CFLAGS reach the C shims built with cc (ours,
    # src/shim/shim.c, and mpi-sys's), which get UBSan too. The sanitizer
    # runtimes are not linked into the library: they come with the gcc-built
    # test programs.
    RUSTC_BOOTSTRAP=1 RUSTFLAGS="-Zsanitizer=address -Cforce-frame-pointers=yes" \
        CFLAGS="-g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all" \
        CARGO_TARGET_DIR="$target/asan" cargo build --lib --target "$host" ${MPIX_CARGO_FLAGS:-} || return 1
    local dir="$target/asan/$host" san="-fsanitize=address,undefined"
    local keep
    keep=$(keep_loaded "$dir/ctests") || return 1
    echo "--- asan: C tests with AddressSanitizer, UndefinedBehaviorSanitizer, LeakSanitizer"
    # halt_on_error/-fno-sanitize-recover: the first report ends the process
    # with a non-zero status, which mpiexec and c-tests.sh pass on.
    # fast_unwind_on_malloc=0: the MPI libraries are built without frame
    # pointers, and the suppressions need the allocating MPI function's name.
    ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:abort_on_error=0:detect_stack_use_after_return=1:strict_string_checks=1:check_initialization_order=1:strict_init_order=1:fast_unwind_on_malloc=0:malloc_context_size=40" \
        LSAN_OPTIONS="suppressions=$root/tests/c/lsan.supp:print_suppressions=1" \
        UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:report_error_type=1" \
        CTESTS_CFLAGS="-g -fno-omit-frame-pointer $san -fno-sanitize-recover=all" \
        CTESTS_LDFLAGS="$san $keep -rdynamic" CTESTS_NP=2 \
        scripts/c-tests.sh "$dir"
}

valgrind_pass() {
    echo "--- valgrind: building the library ($target)"
    CARGO_TARGET_DIR="$target" cargo build --lib ${MPIX_CARGO_FLAGS:-} || return 1
    local out="$target/valgrind" keep
    keep=$(keep_loaded "$out") || return 1
    echo "--- valgrind: C tests under memcheck"
    # --errors-for-leak-kinds=definite: a block nothing points to is a leak,
    # and fails the run. Not the other kinds: "indirect" blocks hang off a
    # definite one, which already fails; "possible" ones are reached only
    # through a pointer into their middle, which is how some containers hold
    # their blocks (a Rust HashMap points into the middle of its table);
    # "reachable" ones are still held at exit by globals that live as long
    # as the process by design (MPI's, and ours: the keyval registry, the
    # error classes and their rings of codes, the local MPI's constants, the
    # main thread's reused buffers). The per-type cache is not among them:
    # it lives in an attribute on each type and is freed with the type.
    # Definite leaks are shown with a ready-made suppression;
    # --track-origins=yes would say where an uninitialised value came from
    # but doubles the time: add it by hand.
    CTESTS_RUNNER="valgrind --quiet --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite --keep-debuginfo=yes --num-callers=40 --gen-suppressions=all --suppressions=$root/tests/c/valgrind.supp" \
        CTESTS_CFLAGS="-g" CTESTS_LDFLAGS="$keep -rdynamic" CTESTS_NP=2 CTESTS_OUT="$out" \
        scripts/c-tests.sh "$target"
}

for pass in "${passes[@]}"; do
    case $pass in
    asan) asan_pass || failed+=(asan) ;;
    valgrind) valgrind_pass || failed+=(valgrind) ;;
    *) echo "sanitize.sh: unknown pass '$pass' (asan or valgrind)" >&2; exit 2 ;;
    esac
done
echo "sanitize: $((${#passes[@]} - ${#failed[@]})) passed, ${#failed[@]} failed${failed:+ (${failed[*]})}"
[ "${#failed[@]}" -eq 0 ]
