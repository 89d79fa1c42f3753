#!/usr/bin/env bash
# Runs every test on each MPI of the matrix, after installing what is
# missing (scripts/setup.sh --test): Debian's MPICH 4.0 (the default) and Open MPI
# 4.1, and MPICH 5.0 and Open MPI 5.0 from their PyPI wheels. On each (one
# pass, its environment from scripts/mpi-env.sh, its own target dir): the
# Rust tests (unit, integration, golden vectors, header, the mpix-marshal
# command's), the C tests (API, hostile inputs with leak counting, header
# as C99 and C++), the multi-process tests under mpiexec -n 2 and -n 4, the
# archive demo, the Fortran bindings' tests (scripts/fortran-tests.sh: MPICH 4
# and Open MPI 4, the MPIs with a Fortran wrapper), the C tests again under
# AddressSanitizer/UBSan/LeakSanitizer (not on the MPI 5 wheels) and
# valgrind, the installation test (install into a temporary prefix, build
# the demo with pkg-config, CMake and -I/-L, run it; the Fortran and Python
# bindings from the prefix) and the
# collective checker's tests (scripts/check-tests.sh, run beside the next
# ones: they mostly wait) and its point-to-point
# tests (scripts/check-p2p-tests.sh), its hang tests
# (scripts/check-hang-tests.sh), the checker with the type exchange
# (scripts/check-exchange-tests.sh), its check at MPI_Finalize
# (scripts/check-lost-tests.sh) and its datatype checks
# (scripts/check-type-tests.sh), on the abi pass the checker built on the
# MPI-5 ABI, and the Python package with mpi4py (scripts/python-tests.sh;
# every pass but abi's). Then the cross-reading
# matrix (every MPI reads the streams every other wrote, tests/cross.rs),
# printed, the wrong-MPI tests (scripts/wrong-mpi-tests.sh: each MPI's
# build refuses the other's programs with one line) and a short fuzz run
# of every decoder.
#
#   bash scripts/test.sh            every pass
#   MPIX_TEST_MPIS="mpich4 mpich5" bash scripts/test.sh   some of them
#
# Prints each pass's time and the total at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
# What the tests need and the machine lacks: the packages, and the MPI 5
# wheels (into target/mpi/, installed by this command only).
bash scripts/setup.sh --test

# Five MPIs mean five target dirs: keep each small (no incremental
# artifacts, line tables instead of full debug info in test builds; a pass
# took 3.2 GB with both, 1.1 GB without), so the whole run fits a small disk.
export CARGO_INCREMENTAL=0 CARGO_PROFILE_DEV_DEBUG=line-tables-only

read -ra mpis <<<"${MPIX_TEST_MPIS:-mpich4 openmpi4 mpich5 openmpi5 abi}"
cross=$(mktemp -d) beside=$(mktemp -d)
trap 'rm -rf "$cross" "$beside"' EXIT
suites_passed=0
suites_failed=0
failed_names=()
timings=()
tally() { # name, exit status, start ($SECONDS)
    if [ "$2" -eq 0 ]; then
        suites_passed=$((suites_passed + 1))
    else
        suites_failed=$((suites_failed + 1)); failed_names+=("$1"); echo "=== $1 FAILED"
    fi
    echo "=== $((SECONDS - $3)) s: $1"
}
suite() { # name, command...
    local name=$1 t=$SECONDS rc=0; shift
    echo "=== $name"
    "$@" || rc=$?
    tally "$name" $rc $t
}
# One suite run beside the next ones (its output kept until
# suite_beside_end prints it): the checker's suites mostly wait (for
# mpiexec, timeouts, the job's end; MPICH 4: 128 s of wall time and 30 s
# of CPU for scripts/check-tests.sh), so two of them share the machine.
suite_beside() { # name, command...
    beside_name=$1 beside_start=$SECONDS; shift
    echo "=== $beside_name: started, runs beside the next suites"
    "$@" >"$beside/log" 2>&1 &
    beside_pid=$!
}
suite_beside_end() {
    local rc=0
    wait "$beside_pid" || rc=$?
    echo "=== $beside_name (ran beside the suites above)"
    cat "$beside/log"
    tally "$beside_name" $rc "$beside_start"
}
# Runs a command (a bash script, so that it sees the MPI's variables) in
# the MPI's environment, in a subshell: nothing leaks into the next pass.
in_mpi() { # mpi, bash script
    (eval "$(scripts/mpi-env.sh "$1")" && bash -c "set -euo pipefail; features=\${MPIX_CARGO_FLAGS:-}; $2")
}
label() {
    case $1 in
    mpich4) echo "MPICH 4 (Debian)" ;; openmpi4) echo "Open MPI 4 (Debian)" ;;
    mpich5) echo "MPICH 5" ;; openmpi5) echo "Open MPI 5" ;; abi) echo "MPI-5 ABI (MPICH 5)" ;;
    *) echo "$1" ;;
    esac
}

# One pass: the whole suite on one MPI.
pass() { # mpi
    local mpi=$1 l start=$SECONDS
    l=$(label "$1")
    suite "$l: cargo build" in_mpi "$mpi" 'cargo build --all-targets $features'
    suite "$l: cargo test" in_mpi "$mpi" "MPIX_CROSS_DIR='$cross' cargo test --no-fail-fast \$features"
    suite "$l: C and mpiexec tests" in_mpi "$mpi" 'scripts/c-tests.sh "$CARGO_TARGET_DIR"'
    # Skipped, with a line, where the MPI has no Fortran wrapper (the MPI 5 wheels, abi).
    suite "$l: Fortran bindings (use mpi_f08 and use mpi, mpiexec -n 2, archives across C and Fortran)" \
        in_mpi "$mpi" 'scripts/fortran-tests.sh "$CARGO_TARGET_DIR"'
    # AddressSanitizer needs a build of its own (about a minute a pass):
    # on one MPI of each handle model (MPICH's integers, Open MPI's
    # pointers, the ABI's); the MPI 5 wheels, which share their 4's code
    # paths in the library, get valgrind only.
    case $mpi in
    mpich5 | openmpi5)
        suite "$l: C tests under valgrind" in_mpi "$mpi" 'scripts/sanitize.sh "$CARGO_TARGET_DIR" valgrind' ;;
    *)
        suite "$l: C tests under ASan/UBSan/LSan and valgrind" in_mpi "$mpi" 'scripts/sanitize.sh "$CARGO_TARGET_DIR"' ;;
    esac
    suite "$l: install, build the demo three ways, run it" in_mpi "$mpi" 'scripts/install-test.sh'
    suite "$l: man pages (mandoc -T lint, 80 columns)" in_mpi "$mpi" 'cargo build -q $features && scripts/man-lint.sh "$CARGO_TARGET_DIR"'
    # The release build is install.sh's (the workspace's, as installed):
    # `-p mpix-check` alone would build the library again with other features.
    suite "$l: release build (the checker's suites load it)" in_mpi "$mpi" 'cargo build --release $features'
    suite_beside "$l: mpix-check (erroneous and correct programs under mpiexec -n 2 and -n 4)" \
        in_mpi "$mpi" 'scripts/check-tests.sh "$CARGO_TARGET_DIR"'
    suite "$l: mpix-check point to point (on by default; erroneous and correct programs, threads, -n 2 and -n 4)" \
        in_mpi "$mpi" 'scripts/check-p2p-tests.sh "$CARGO_TARGET_DIR"'
    suite "$l: mpix-check hangs (point-to-point hangs reported, MPIX_CHECK_TIMEOUT=2, -n 2 and -n 4)" \
        in_mpi "$mpi" 'scripts/check-hang-tests.sh "$CARGO_TARGET_DIR"'
    suite "$l: mpix-check with the type exchange (its C tests and examples under every check, -n 2 and -n 4)" \
        in_mpi "$mpi" 'scripts/check-exchange-tests.sh "$CARGO_TARGET_DIR"'
    suite "$l: mpix-check lost messages and pending sends at MPI_Finalize (-n 2 and -n 4)" \
        in_mpi "$mpi" 'scripts/check-lost-tests.sh "$CARGO_TARGET_DIR"'
    suite "$l: mpix-check datatype misuse (overlapping receive buffers, unusable arguments, leaks, one-sided and file calls; -n 2 and -n 4)" \
        in_mpi "$mpi" 'scripts/check-type-tests.sh "$CARGO_TARGET_DIR"'
    suite_beside_end
    # The Python package (python/) with mpi4py's wheel, which loads any of
    # these MPIs at run time (not the MPI-5 ABI build's libmpi_abi: skipped
    # with a line).
    suite "$l: the Python package with mpi4py (pytest under mpiexec -n 2, archives across Python and C)" \
        in_mpi "$mpi" 'cargo build -q $features && scripts/python-tests.sh "$CARGO_TARGET_DIR"'
    timings+=("$(printf '%-22s %4d s' "$l" $((SECONDS - start)))")
}

start=$SECONDS
for mpi in "${mpis[@]}"; do
    pass "$mpi"
done

# The cross-reading matrix: every MPI reads every other's streams (each
# pass's cargo test wrote its own into $cross/MPI/); each reader adds its
# row to $cross/matrix/, printed at the end.
t=$SECONDS
peers="${mpis[*]}"
for mpi in "${mpis[@]}"; do
    suite "$(label "$mpi") reads every MPI's streams" in_mpi "$mpi" \
        "MPIX_CROSS_DIR='$cross' MPIX_CROSS_PEERS='$peers' MPIX_CROSS_READ_ONLY=1 cargo test \$features --test cross -- --nocapture"
done
if [ -d "$cross/matrix" ]; then
    echo "=== the cross-reading matrix (rows: the reader; columns: the writer; streams read / written, both representations)"
    cat "$cross/matrix/header"
    for mpi in "${mpis[@]}"; do cat "$cross/matrix/$mpi" 2>/dev/null || echo "$mpi: no row"; done
fi
timings+=("$(printf '%-22s %4d s' "cross matrix" $((SECONDS - t)))")

# The wrong MPI (MPICH's build under Open MPI and the reverse): the
# library and the checker each refuse it with one line (the installed
# header's check is install-test.sh's, on every pass). Needs the mpich4
# and openmpi4 passes' release builds.
if [[ " ${mpis[*]} " == *" mpich4 "* && " ${mpis[*]} " == *" openmpi4 "* ]]; then
    t=$SECONDS
    suite "the wrong MPI: the library and the checker refuse it (MPICH 4 and Open MPI 4 builds, both ways)" \
        bash scripts/wrong-mpi-tests.sh target target/openmpi
    timings+=("$(printf '%-22s %4d s' "wrong MPI" $((SECONDS - t)))")
else
    echo "=== the wrong-MPI tests: skipped (they need both the mpich4 and the openmpi4 passes)"
fi

# A short fuzz run of every decoder (scripts/fuzz.sh; longer runs: pass more seconds).
t=$SECONDS
suite "fuzz: every decoder, 10 s each" bash scripts/fuzz.sh 10
timings+=("$(printf '%-22s %4d s' "fuzz" $((SECONDS - t)))")

echo "=== time per pass"
printf '%s\n' "${timings[@]}"
printf '%-22s %4d s\n' "total" $((SECONDS - start))
echo "test suites: $suites_passed passed, $suites_failed failed"
[ "$suites_failed" -eq 0 ] || { printf 'failed: %s\n' "${failed_names[@]}"; exit 1; }
