#!/usr/bin/env bash
# Builds mpix-marshal (the library and the mpix-marshal command) in release
# mode and installs it under a prefix:
#
#   PREFIX/lib/libmpix_marshal.so.0.1.0, .so.0 (the soname), .so, and .a
#   PREFIX/include/mpix_marshal.h
#   PREFIX/bin/mpix-marshal
#   PREFIX/lib/libmpix_check.so                  the collective checker (LD_PRELOAD it)
#   PREFIX/bin/mpix-check                        its launcher: mpix-check mpiexec -n 4 ./app
#   PREFIX/lib/pkgconfig/mpix-marshal.pc        pkg-config --cflags --libs mpix-marshal
#   PREFIX/lib/cmake/MpixMarshal/               find_package(MpixMarshal): MpixMarshal::mpix_marshal
#   PREFIX/share/man/man1, man3, man7            man pages: mpix-marshal(7), mpix-marshal(1), MPIX_Type_marshal(3)...
#
# The library is built against one MPI, the one $MPICC wraps (default
# mpicc.mpich when it exists, else mpicc). For Open MPI:
#   MPICC=mpicc.openmpi CARGO_TARGET_DIR=target/openmpi scripts/install.sh --prefix /opt/mpix-marshal/openmpi
# Keep one prefix per MPI: the file names are the same for both.
#
# Usage: scripts/install.sh [--prefix DIR] [--no-build]   (default prefix /usr/local)
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=/usr/local
build=1
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) prefix=$2; shift 2 ;;
        --prefix=*) prefix=${1#--prefix=}; shift ;;
        --no-build) build=0; shift ;;
        -h|--help) sed -n '2,/^set -euo/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "install.sh: unknown argument $1 (try --help)" >&2; exit 2 ;;
    esac
done
if [ -z "${MPICC:-}" ]; then
    if command -v mpicc.mpich >/dev/null; then MPICC=mpicc.mpich; else MPICC=mpicc; fi
fi
export MPICC
target=${CARGO_TARGET_DIR:-target}
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
major=${version%%.*}
if [ "$build" -eq 1 ]; then
    # MPIX_CARGO_FLAGS: the abi build's (scripts/mpi-env.sh abi).
    cargo build --release --quiet ${MPIX_CARGO_FLAGS:-}
fi
rel=$target/release
for f in "$rel/libmpix_marshal.so" "$rel/libmpix_marshal.a" "$rel/mpix-marshal"; do
    [ -f "$f" ] || { echo "install.sh: $f is missing: build failed?" >&2; exit 1; }
done
# Which MPI the build is for, as the installed files record it.
if "$MPICC" -show 2>/dev/null | grep -q -- -lmpi_abi; then
    mpi=abi   # the MPI-5 standard ABI (scripts/mpi-env.sh abi)
elif "$MPICC" -show 2>/dev/null | grep -q -i openmpi || "$MPICC" --showme >/dev/null 2>&1; then
    mpi=openmpi
else
    mpi=mpich
fi
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)
lib=$prefix/lib
install -d "$lib" "$prefix/include" "$prefix/bin" "$lib/pkgconfig" "$lib/cmake/MpixMarshal"
install -m 755 "$rel/libmpix_marshal.so" "$lib/libmpix_marshal.so.$version"
ln -sf "libmpix_marshal.so.$version" "$lib/libmpix_marshal.so.$major"
ln -sf "libmpix_marshal.so.$major" "$lib/libmpix_marshal.so"
install -m 644 "$rel/libmpix_marshal.a" "$lib/libmpix_marshal.a"
install -m 644 include/*.h "$prefix/include/"
install -m 755 "$rel/mpix-marshal" "$prefix/bin/mpix-marshal"
# The collective checker (check/), a profiling-interface library that is
# preloaded or linked before MPI, never linked against by name.
if [ -f "$rel/libmpix_check.so" ]; then
    install -m 755 "$rel/libmpix_check.so" "$lib/libmpix_check.so"
    sed -e "s|@LIBDIR@|$lib|g" -e "s|@MPI@|$mpi|g" scripts/install/mpix-check.in > "$prefix/bin/mpix-check"
    chmod 755 "$prefix/bin/mpix-check"
fi

sed -e "s|@PREFIX@|$prefix|g" -e "s|@VERSION@|$version|g" -e "s|@MPI@|$mpi|g" -e "s|@MPICC@|$MPICC|g" \
    scripts/install/mpix-marshal.pc.in > "$lib/pkgconfig/mpix-marshal.pc"
sed -e "s|@VERSION@|$version|g" -e "s|@MAJOR@|$major|g" -e "s|@MPI@|$mpi|g" \
    -e "s|@MPICC@|$(command -v "$MPICC")|g" \
    scripts/install/MpixMarshalConfig.cmake.in > "$lib/cmake/MpixMarshal/MpixMarshalConfig.cmake"
sed -e "s|@VERSION@|$version|g" \
    scripts/install/MpixMarshalConfigVersion.cmake.in > "$lib/cmake/MpixMarshal/MpixMarshalConfigVersion.cmake"

# Man pages, each made from its one source (inspect/src/bin/mpix-marshal-man).
"$rel/mpix-marshal-man" --header include/mpix_marshal.h --pages man --out "$prefix/share/man" >/dev/null
[ -f "$rel/libmpix_check.so" ] || rm -f "$prefix/share/man/man1/mpix-check.1" # no checker, no page

echo "installed mpix-marshal $version for $mpi under $prefix"
