#!/usr/bin/env bash
# Installs what a fresh Debian machine lacks to build and test mpix-marshal:
# MPICH (kept the default MPI), Open MPI (for the second test pass),
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
echo "setup: $(mpicc -show | cut -d' ' -f1) via mpicc (MPICH $(mpichversion 2>/dev/null | sed -n 's/MPICH Version:\s*//p')), Open MPI $(mpirun.openmpi --version 2>/dev/null | head -1 | awk '{print $NF}')"
