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
#   PREFIX/lib/libmpix_marshal_f.so, .a          the Fortran bindings (docs/fortran.md), when the MPI
#   PREFIX/include/mpix_marshal*.mod             has a Fortran wrapper: modules mpix_marshal_f08 (use
#                                                mpi_f08) and mpix_marshal (use mpi), .mod files of
#                                                that compiler; lib/pkgconfig/mpix-marshal-fortran.pc,
#                                                CMake MpixMarshal::mpix_marshal_fortran
#   PREFIX/lib/pythonX.Y/site-packages/mpix_marshal/  the Python package for mpi4py (docs/python.md),
#   PREFIX/share/mpix-marshal/python/*.whl       and its wheel (pip install it into a virtual
#                                                environment), built with maturin for python3
#                                                (or $PYTHON); not for the abi build
#   PREFIX/share/man/man1, man3, man7            man pages: mpix-marshal(7), mpix-marshal(1), MPIX_Type_marshal(3)...
#
# The library is built against one MPI, the one $MPICC wraps (default
# mpicc.mpich when it exists, else mpicc). For Open MPI:
#   MPICC=mpicc.openmpi CARGO_TARGET_DIR=target/openmpi scripts/install.sh --prefix /opt/mpix-marshal/openmpi
# For the MPI-5 standard ABI (one build for every MPI that implements it),
# name the ABI's wrapper; the abi features are then selected:
#   MPICC=mpicc_abi CARGO_TARGET_DIR=target/abi scripts/install.sh --prefix /opt/mpix-marshal/abi
# Keep one prefix per MPI: the file names are the same for both.
#
# The installed header stops the compilation of a program against another
# MPI's mpi.h with one line naming both (scripts/install/built-for.h).
# The installed binaries are stripped (the static library of its debug
# info, the shared libraries and commands of every symbol they do not
# export); --debug keeps the debug info: the static library is installed as
# built, and the others' debug info goes to a .debug/ directory beside each
# (lib/.debug/libmpix_marshal.so.0.1.0.debug, ...), which gdb finds through
# the link each stripped file carries.
#
# The Python package is built with the `maturin` on PATH, else with one
# installed from PyPI into a virtual environment in the build directory
# (CARGO_TARGET_DIR/py-build); --no-python skips it.
#
# Usage: scripts/install.sh [--prefix DIR] [--no-build] [--debug] [--no-python]   (default prefix /usr/local)
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=/usr/local
build=1
debug=0
python=1
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) prefix=$2; shift 2 ;;
        --prefix=*) prefix=${1#--prefix=}; shift ;;
        --no-build) build=0; shift ;;
        --debug) debug=1; shift ;;
        --no-python) python=0; shift ;;
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
echo "install.sh: will install mpix-marshal $version for $mpi ($MPICC) under $prefix:"
echo "install.sh:   lib/libmpix_marshal.{so*,a}, include/mpix_marshal.h, bin/mpix-marshal, lib/pkgconfig/,"
echo "install.sh:   lib/cmake/MpixMarshal/, share/man/ (man pages), and lib/libmpix_check.so and bin/mpix-check when built,"
echo "install.sh:   the Fortran bindings (lib/libmpix_marshal_f.{so,a}, include/*.mod) when $MPICC has a Fortran wrapper,"
echo "install.sh:   and the Python package (lib/python*/site-packages/mpix_marshal, share/mpix-marshal/python/*.whl)"
if [ "$build" -eq 1 ]; then
    echo "install.sh: building the library, the mpix-marshal command and the checker (cargo build --release, into $target)..."
    # The abi build selects its bindings by feature (scripts/mpi-env.sh abi
    # sets the same flags as MPIX_CARGO_FLAGS).
    flags=${MPIX_CARGO_FLAGS:-}
    if [ "$mpi" = abi ] && [ -z "$flags" ]; then
        flags="-p mpix-marshal -p mpix-marshal-cli -p mpix-check --no-default-features --features abi"
    fi
    # shellcheck disable=SC2086 # flags are words
    cargo build --release $flags
fi
rel=$target/release
for f in "$rel/libmpix_marshal.so" "$rel/libmpix_marshal.a" "$rel/mpix-marshal"; do
    [ -f "$f" ] || { echo "install.sh: $f is missing: build failed?" >&2; exit 1; }
done
echo "install.sh: installing$([ "$debug" -eq 1 ] && echo ", with debug info" || echo ", stripped")..."

# Installs a built binary (static, shared or executable) and strips it:
# the static library of its debug info, the others of every symbol they
# do not export. With --debug the static library keeps its debug info and
# the others' goes to DIR/.debug/NAME.debug, linked from the file.
install_binary() { # kind (static|shared|command), source, destination
    local kind=$1 src=$2 dest=$3 mode=755
    [ "$kind" = static ] && mode=644
    install -m "$mode" "$src" "$dest"
    if [ "$kind" = static ]; then
        [ "$debug" -eq 1 ] || strip --strip-debug "$dest"
        return
    fi
    if [ "$debug" -eq 1 ]; then
        local dir
        dir=$(dirname "$dest")/.debug
        install -d "$dir"
        objcopy --only-keep-debug "$dest" "$dir/$(basename "$dest").debug"
        chmod 644 "$dir/$(basename "$dest").debug"
    fi
    strip --strip-unneeded "$dest"
    if [ "$debug" -eq 1 ]; then
        (cd "$(dirname "$dest")" && objcopy --add-gnu-debuglink=".debug/$(basename "$dest").debug" "$(basename "$dest")")
    fi
}
lib=$prefix/lib
install -d "$lib" "$prefix/include" "$prefix/bin" "$lib/pkgconfig" "$lib/cmake/MpixMarshal"
install_binary shared "$rel/libmpix_marshal.so" "$lib/libmpix_marshal.so.$version"
ln -sf "libmpix_marshal.so.$version" "$lib/libmpix_marshal.so.$major"
ln -sf "libmpix_marshal.so.$major" "$lib/libmpix_marshal.so"
install_binary static "$rel/libmpix_marshal.a" "$lib/libmpix_marshal.a"
install -m 644 include/*.h "$prefix/include/"
# The installed header knows its MPI: after its #include <mpi.h>, the
# macro naming it and the check that stops another MPI's mpi.h.
grep -qx '#include <mpi.h>' include/mpix_marshal.h || { echo "install.sh: include/mpix_marshal.h has no #include <mpi.h>" >&2; exit 1; }
{
    printf '\n/* Inserted by scripts/install.sh: this installation is built for %s. */\n' "$mpi"
    printf '#define MPIX_MARSHAL_BUILT_FOR_%s 1\n' "$(tr '[:lower:]' '[:upper:]' <<<"$mpi")"
    cat scripts/install/built-for.h
} | sed '/^#include <mpi.h>$/r /dev/stdin' include/mpix_marshal.h > "$prefix/include/mpix_marshal.h"
chmod 644 "$prefix/include/mpix_marshal.h"
install_binary command "$rel/mpix-marshal" "$prefix/bin/mpix-marshal"
# The collective checker (check/), a profiling-interface library that is
# preloaded or linked before MPI, never linked against by name.
if [ -f "$rel/libmpix_check.so" ]; then
    install_binary shared "$rel/libmpix_check.so" "$lib/libmpix_check.so"
    sed -e "s|@LIBDIR@|$lib|g" -e "s|@MPI@|$mpi|g" scripts/install/mpix-check.in > "$prefix/bin/mpix-check"
    chmod 755 "$prefix/bin/mpix-check"
fi

# The Fortran bindings (fortran/, docs/fortran.md), built with the Fortran
# wrapper of $MPICC (or $MPIFC): the modules' .mod files are those of that
# compiler, installed beside the C header. Skipped, with a line saying why,
# when the MPI has none (the MPICH 5 and Open MPI 5 wheels, the abi build).
mpifc=
rm -f "$lib"/libmpix_marshal_f.* "$prefix"/include/mpix_marshal*.mod "$lib/pkgconfig/mpix-marshal-fortran.pc"
fbuild=$target/fortran
frc=0
MPIX_FORTRAN_RPATH='$ORIGIN' fortran/build.sh "$fbuild" "$rel" > "$target/fortran-build.log" 2>&1 || frc=$?
if [ "$frc" -eq 0 ]; then
    mpifc=$(cat "$fbuild/mpifc")
    install_binary shared "$fbuild/libmpix_marshal_f.so" "$lib/libmpix_marshal_f.so"
    install_binary static "$fbuild/libmpix_marshal_f.a" "$lib/libmpix_marshal_f.a"
    install -m 644 "$fbuild"/*.mod "$prefix/include/"
    sed -e "s|@PREFIX@|$prefix|g" -e "s|@VERSION@|$version|g" -e "s|@MPI@|$mpi|g" -e "s|@MPIFC@|$mpifc|g" \
        -e "s|@MPILIBDIRS@|$(cat "$fbuild/mpi-libdirs")|g" -e "s|@FC@|$("$mpifc" --version | head -n 1)|g" \
        scripts/install/mpix-marshal-fortran.pc.in > "$lib/pkgconfig/mpix-marshal-fortran.pc"
    echo "install.sh: Fortran bindings built with $mpifc: lib/libmpix_marshal_f.{so,a}, include/*.mod"
elif [ "$frc" -eq 3 ]; then
    echo "install.sh: no Fortran bindings: $(tail -n 1 "$target/fortran-build.log" | sed 's/^fortran\/build.sh: //')"
else
    cat "$target/fortran-build.log" >&2
    echo "install.sh: building the Fortran bindings failed (log above)" >&2
    exit 1
fi

# The Python package (python/, docs/python.md): a wheel built by maturin
# against this MPI (tagged linux, not manylinux: it links the system MPI,
# which the wheel does not carry), installed under the prefix (PYTHONPATH=PREFIX/lib/
# pythonX.Y/site-packages) and kept in share/ for virtual environments.
rm -rf "$prefix"/lib/python3*/site-packages/mpix_marshal* "$prefix/share/mpix-marshal/python"
if [ "$python" -eq 1 ]; then
    py=${PYTHON:-python3}
    if [ "$mpi" = abi ]; then
        echo "install.sh: no Python package: mpi4py 4.1 does not load the MPI-5 ABI's libmpi_abi"
    elif ! command -v "$py" >/dev/null || ! "$py" -c 'import venv' 2>/dev/null; then
        echo "install.sh: no Python package: no $py with the venv module (--no-python to say so)"
    else
        maturin=$(command -v maturin || true)
        if [ -z "$maturin" ]; then
            bvenv=$target/py-build
            [ -x "$bvenv/bin/maturin" ] || { "$py" -m venv "$bvenv" && "$bvenv/bin/pip" install -q --disable-pip-version-check "maturin>=1.5,<2"; } ||
                { echo "install.sh: maturin could not be installed from PyPI into $bvenv (--no-python skips the Python package)" >&2; exit 1; }
            maturin=$bvenv/bin/maturin
        fi
        wheels=$target/wheels
        rm -rf "$wheels"
        echo "install.sh: building the Python package with $maturin for $py..."
        # A target dir of its own: pyo3 turns on features of dependencies
        # the library shares (libc's std, ...), and in one dir each build
        # would recompile the library for the other.
        CARGO_TARGET_DIR=$target/python "$maturin" build --release --compatibility linux --auditwheel skip -m python/Cargo.toml -i "$(command -v "$py")" --out "$wheels" >"$target/python-build.log" 2>&1 ||
            { cat "$target/python-build.log" >&2; echo "install.sh: building the Python package failed (log above)" >&2; exit 1; }
        wheel=$(ls "$wheels"/*.whl)
        site=$prefix/lib/python$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')/site-packages
        install -d "$site" "$prefix/share/mpix-marshal/python"
        install -m 644 "$wheel" "$prefix/share/mpix-marshal/python/"
        # A wheel is a zip of the files as they lie in site-packages.
        "$py" -m zipfile -e "$wheel" "$site"
        [ "$debug" -eq 1 ] || strip --strip-unneeded "$site"/mpix_marshal/_native*.so
        echo "install.sh: Python package: $site/mpix_marshal (PYTHONPATH), wheel share/mpix-marshal/python/$(basename "$wheel")"
    fi
fi

sed -e "s|@PREFIX@|$prefix|g" -e "s|@VERSION@|$version|g" -e "s|@MPI@|$mpi|g" -e "s|@MPICC@|$MPICC|g" \
    scripts/install/mpix-marshal.pc.in > "$lib/pkgconfig/mpix-marshal.pc"
if [ -n "$mpifc" ]; then
    printf '# Fortran bindings (mpix_marshal_f08, mpix_marshal), built with %s:\n# pkg-config --cflags --libs mpix-marshal-fortran\n' \
        "$mpifc" >> "$lib/pkgconfig/mpix-marshal.pc"
fi
sed -e "s|@VERSION@|$version|g" -e "s|@MAJOR@|$major|g" -e "s|@MPI@|$mpi|g" \
    -e "s|@MPICC@|$(command -v "$MPICC")|g" -e "s|@MPIFC@|${mpifc:+$(command -v "$mpifc")}|g" \
    scripts/install/MpixMarshalConfig.cmake.in > "$lib/cmake/MpixMarshal/MpixMarshalConfig.cmake"
sed -e "s|@VERSION@|$version|g" \
    scripts/install/MpixMarshalConfigVersion.cmake.in > "$lib/cmake/MpixMarshal/MpixMarshalConfigVersion.cmake"

# Man pages, each made from its one source (inspect/src/bin/mpix-marshal-man).
"$rel/mpix-marshal-man" --header include/mpix_marshal.h --pages man --out "$prefix/share/man" >/dev/null
[ -f "$rel/libmpix_check.so" ] || rm -f "$prefix/share/man/man1/mpix-check.1" # no checker, no page

echo "installed mpix-marshal $version for $mpi under $prefix"
