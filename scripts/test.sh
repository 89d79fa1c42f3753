#!/usr/bin/env bash
# Runs every test, on MPICH and then on Open MPI, after installing what is
# missing: the Rust tests (unit, integration, golden vectors, header), the
# C tests (API, hostile inputs with leak counting, header as C99 and C++),
# the multi-process tests under mpiexec -n 2 and -n 4, the archive demo, the
# collective checker's tests (scripts/check-tests.sh), the
# C tests again under AddressSanitizer/UBSan/LeakSanitizer and valgrind, the
# cross-implementation test (each MPI reads the other's streams), the
# mpix-marshal command's tests and the installation test (install into a
# temporary prefix, build the demo with pkg-config, CMake and -I/-L, run it)
# on each MPI, and a short fuzz run of every decoder.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

# Open MPI refuses root without these, and needs leave to put 4 ranks on 2 cores.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
cross=$(mktemp -d)
trap 'rm -rf "$cross"' EXIT
suites_passed=0
suites_failed=0
suite() { # name, command...
    local name=$1; shift
    echo "=== $name"
    if "$@"; then suites_passed=$((suites_passed + 1)); else suites_failed=$((suites_failed + 1)); echo "=== $name FAILED"; fi
}

# MPICH (the default): target/
suite "MPICH: cargo build" env MPICC=mpicc.mpich cargo build --all-targets
suite "MPICH: cargo test" env MPICC=mpicc.mpich MPIX_CROSS_DIR="$cross" cargo test
suite "MPICH: C and mpiexec tests" env MPICC=mpicc.mpich MPIEXEC=mpiexec.mpich scripts/c-tests.sh target
suite "MPICH: C tests under ASan/UBSan/LSan and valgrind" env MPICC=mpicc.mpich MPIEXEC=mpiexec.mpich \
    scripts/sanitize.sh target
suite "MPICH: install, build the demo three ways, run it" env MPICC=mpicc.mpich MPIEXEC=mpiexec.mpich \
    scripts/install-test.sh
suite "MPICH: mpix-check (release build, erroneous and correct programs under mpiexec -n 2 and -n 4)" \
    env MPICC=mpicc.mpich MPIEXEC=mpiexec.mpich bash -c 'cargo build --release -p mpix-check && scripts/check-tests.sh target'

# Open MPI: target/openmpi/, reading MPICH's streams
suite "Open MPI: cargo build" env MPICC=mpicc.openmpi CARGO_TARGET_DIR=target/openmpi cargo build --all-targets
suite "Open MPI: cargo test" env MPICC=mpicc.openmpi CARGO_TARGET_DIR=target/openmpi \
    MPIX_CROSS_DIR="$cross" MPIX_CROSS_PEER=mpich cargo test
suite "Open MPI: C and mpiexec tests" env MPICC=mpicc.openmpi MPIEXEC=mpiexec.openmpi \
    MPIEXEC_ARGS=--oversubscribe scripts/c-tests.sh target/openmpi
suite "Open MPI: C tests under ASan/UBSan/LSan and valgrind" env MPICC=mpicc.openmpi MPIEXEC=mpiexec.openmpi \
    MPIEXEC_ARGS=--oversubscribe scripts/sanitize.sh target/openmpi
suite "Open MPI: install, build the demo three ways, run it" env MPICC=mpicc.openmpi MPIEXEC=mpiexec.openmpi \
    MPIEXEC_ARGS=--oversubscribe CARGO_TARGET_DIR=target/openmpi scripts/install-test.sh
suite "Open MPI: mpix-check (release build, erroneous and correct programs under mpiexec -n 2 and -n 4)" \
    env MPICC=mpicc.openmpi CARGO_TARGET_DIR=target/openmpi MPIEXEC=mpiexec.openmpi MPIEXEC_ARGS=--oversubscribe \
    bash -c 'cargo build --release -p mpix-check && scripts/check-tests.sh target/openmpi'

# MPICH reads Open MPI's streams.
suite "MPICH reads Open MPI streams" env MPICC=mpicc.mpich MPIX_CROSS_DIR="$cross" MPIX_CROSS_PEER=openmpi \
    cargo test --test cross

# A short fuzz run of every decoder (scripts/fuzz.sh; longer runs: pass more seconds).
suite "fuzz: every decoder, 20 s each" bash scripts/fuzz.sh 20

echo "test suites: $suites_passed passed, $suites_failed failed"
[ "$suites_failed" -eq 0 ]
