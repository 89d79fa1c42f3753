#!/usr/bin/env bash
# Installs mpix-marshal into a temporary prefix (scripts/install.sh), then,
# from a fresh directory holding only a copy of examples/demo_archive.c,
# builds the demo four ways (mpicc + pkg-config; CMake with
# find_package(MpixMarshal); plain -I/-L; the static library) and runs each
# (archive with one process, rebuild and communicate with two), and checks
# the installed files: the soname, the .so symlinks, the command and the
# man pages (opened with man -M); and, where installed, the Fortran
# bindings: the example of docs/fortran.md built with pkg-config and CMake. Uses $MPICC (default mpicc.mpich),
# $MPIEXEC (default mpiexec.mpich), $MPIEXEC_ARGS and $CARGO_TARGET_DIR, as
# scripts/c-tests.sh does.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
MPICC=${MPICC:-mpicc.mpich}
MPIEXEC=${MPIEXEC:-mpiexec.mpich}
read -r -a mpiexec_args <<< "${MPIEXEC_ARGS:-}"
export MPICC
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
fail() { echo "install-test: FAILED: $*" >&2; exit 1; }

# The Python package's test needs mpi4py: the virtual environment of
# scripts/python-tests.sh, whose maturin install.sh then uses (none where
# mpi4py has no wheel for the MPI: the abi build).
. scripts/python-env.sh
venv=
python_env >/dev/null || venv=
PATH=${venv:+$venv/bin:}$PATH bash scripts/install.sh --prefix "$prefix" >/dev/null
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)

# The installed files.
lib=$prefix/lib
[ -f "$lib/libmpix_marshal.so.$version" ] || fail "no libmpix_marshal.so.$version"
[ "$(readlink "$lib/libmpix_marshal.so.0")" = "libmpix_marshal.so.$version" ] || fail "libmpix_marshal.so.0 link"
[ "$(readlink "$lib/libmpix_marshal.so")" = "libmpix_marshal.so.0" ] || fail "libmpix_marshal.so link"
soname=$(readelf -d "$lib/libmpix_marshal.so.$version" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[ "$soname" = "libmpix_marshal.so.0" ] || fail "soname is '$soname'"
checker="lib/libmpix_check.so bin/mpix-check share/man/man1/mpix-check.1"
for f in lib/libmpix_marshal.a include/mpix_marshal.h bin/mpix-marshal lib/pkgconfig/mpix-marshal.pc \
    lib/cmake/MpixMarshal/MpixMarshalConfig.cmake share/man/man1/mpix-marshal.1 share/man/man3/MPIX_Type_marshal.3 \
    share/man/man7/mpix-marshal.7 $checker; do
    [ -f "$prefix/$f" ] || fail "$f is not installed"
done
# The man pages open by name from the prefix (man-db: Debian package man-db).
command -v man >/dev/null || fail "no man command: install the Debian package man-db"
open_page() { # section, name, text of its NAME line
    local page
    page=$(MANWIDTH=80 man -M "$prefix/share/man" -P cat "$1" "$2" 2>&1) || fail "man $1 $2: $page"
    page=$(tr -s ' ' <<<"$page") # justified lines have runs of spaces
    grep -q -- "$3" <<<"$page" || fail "man $1 $2 lacks '$3': $page"
}
open_page 3 MPIX_Type_marshal "MPIX_Type_marshal - Marshals type into outbuf"
open_page 1 mpix-marshal "mpix-marshal - inspect, check, compare, convert and draw"
open_page 1 mpix-marshal-draw "EXAMPLES"
[ -z "$checker" ] || open_page 1 mpix-check "mpix-check - run an MPI job with the collective checker preloaded"
open_page 7 mpix-marshal "mpix-marshal - marshal and unmarshal MPI datatypes"
echo "install-test: installed files, soname $soname: ok"

# Stripped: no debug info in any installed binary, and sizes far below the
# unstripped build's (MPICH 4: the static library 38 MB, the shared one
# 11 MB, the command 18 MB, the checker 14 MB; stripped 16.5, 1.3, 1.8
# and 1.9 MB).
sizes=()
for f in lib/libmpix_marshal.so.$version:4 lib/libmpix_marshal.a:25 bin/mpix-marshal:6 ${checker:+lib/libmpix_check.so:6}; do
    file=$prefix/${f%:*} bound=${f##*:}
    # (readelf's output taken whole, as ldd's below: grep -q closes the pipe early)
    sections=$(readelf -S "$file")
    ! grep -q '\.debug_info' <<<"$sections" || fail "${f%:*} has debug info: not stripped"
    size=$(stat -c %s "$file")
    [ "$size" -lt $((bound * 1000000)) ] || fail "${f%:*} is $size bytes, more than $bound MB"
    sizes+=("$(basename "${f%:*}") $(awk "BEGIN { printf \"%.1f\", $size / 1e6 }") MB")
done
echo "install-test: stripped binaries, no debug info: $(IFS=,; echo "${sizes[*]}" | sed 's/,/, /g'): ok"
# --debug keeps the shared library's debug info beside it, linked from it
# (the Python package, built once above, is not built again for it).
bash scripts/install.sh --no-build --debug --no-python --prefix "$work/debug" >/dev/null
dbg=$work/debug/lib/.debug/libmpix_marshal.so.$version.debug
grep -q '\.debug_info' <<<"$(readelf -S "$dbg")" || fail "--debug: no debug info in $dbg"
grep -q "libmpix_marshal.so.$version.debug" <<<"$(readelf -p .gnu_debuglink "$work/debug/lib/libmpix_marshal.so.$version")" \
    || fail "--debug: the library does not link its debug info"
grep -q '\.debug_info' <<<"$(readelf -S "$work/debug/lib/libmpix_marshal.a")" || fail "--debug: the static library lost its debug info"
echo "install-test: --debug keeps the debug info (lib/.debug/, linked): ok"

# The installed header knows its MPI, and stops a compilation against
# another MPI's mpi.h with one line naming both (Debian's other MPI).
built=$(sed -n 's/^#define MPIX_MARSHAL_BUILT_FOR_\([A-Z]*\) 1$/\1/p' "$prefix/include/mpix_marshal.h")
case $built in
MPICH) name=MPICH other=mpicc.openmpi want="installed for MPICH but this mpi.h is Open MPI's" ;;
OPENMPI) name="Open MPI" other=mpicc.mpich want="installed for Open MPI but this mpi.h is MPICH's" ;;
ABI) name="the MPI standard ABI" other=mpicc.mpich want="installed for the MPI standard ABI but this mpi.h is MPICH's" ;;
*) fail "the installed header names no MPI (MPIX_MARSHAL_BUILT_FOR_*: '$built')" ;;
esac
if command -v "$other" >/dev/null; then
    printf '#include <mpix_marshal.h>\nint main(void) { return 0; }\n' > "$work/other.c"
    if "$other" -std=c99 -I"$prefix/include" -c -o "$work/other.o" "$work/other.c" >"$work/other.log" 2>&1; then
        fail "$other compiled against the header installed for $name"
    fi
    grep -q "#error \"mpix_marshal.h was $want" "$work/other.log" || { cat "$work/other.log"; fail "$other: not the expected #error"; }
    echo "install-test: the header installed for $name stops $other: 'mpix_marshal.h was $want': ok"
else
    echo "install-test: the installed header under another MPI: skipped (no $other)"
fi

# A fresh directory: the demo's source and nothing of the repository.
app=$work/app
mkdir -p "$app"
cp examples/demo_archive.c "$app/"
cd "$app"
export PKG_CONFIG_PATH=$lib/pkgconfig
run_demo() { # way, binary
    rm -f particles.mxdt
    "$MPIEXEC" "${mpiexec_args[@]}" -n 1 "$2" write particles.mxdt >/dev/null
    out=$("$MPIEXEC" "${mpiexec_args[@]}" -n 2 "$2" read particles.mxdt)
    echo "$out" | grep -q "received particles 100 101 105 109 110 111: correct" || fail "$1: the demo printed: $out"
    # Linked against the installed library, not the build tree.
    if [ "$1" != static ]; then
        # (ldd's output taken whole: grep -q would close the pipe early, and
        # pipefail would count ldd's SIGPIPE as a failure)
        local libs
        libs=$(ldd "$2")
        grep -q "$lib/libmpix_marshal.so.0" <<<"$libs" || fail "$1: not linked to the installed library: $(grep mpix <<<"$libs")"
    fi
    echo "install-test: $1: built and ran"
}

# 1. mpicc + pkg-config
"$MPICC" -std=c99 -Wall -Wextra -Werror -o demo_pkgconfig demo_archive.c $(pkg-config --cflags --libs mpix-marshal)
run_demo pkg-config ./demo_pkgconfig

# 2. CMake
cat > CMakeLists.txt <<'CMAKE'
cmake_minimum_required(VERSION 3.13)
project(demo_archive C)
find_package(MpixMarshal 0.1 REQUIRED)
add_executable(demo_cmake demo_archive.c)
target_link_libraries(demo_cmake PRIVATE MpixMarshal::mpix_marshal)
message(STATUS "mpix-marshal built for ${MpixMarshal_MPI}")
CMAKE
cmake -S . -B build -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >cmake.log 2>&1 \
    || { cat cmake.log; fail "cmake configure"; }
cmake --build build >>cmake.log 2>&1 || { cat cmake.log; fail "cmake build"; }
run_demo cmake ./build/demo_cmake

# 3. plain -I/-L
"$MPICC" -std=c99 -Wall -Wextra -Werror -I"$prefix/include" -o demo_plain demo_archive.c \
    -L"$lib" -lmpix_marshal -Wl,-rpath,"$lib"
run_demo plain ./demo_plain

# 4. the static library
"$MPICC" -std=c99 -Wall -Wextra -Werror -I"$prefix/include" -o demo_static demo_archive.c \
    "$lib/libmpix_marshal.a" -lpthread -ldl -lm
run_demo static ./demo_static

# The installed command reads the archive the demo wrote. Without
# LD_LIBRARY_PATH (which mpi-env.sh sets for cargo's test binaries): an
# installed program finds its MPI as the MPI's wrapper has C programs find
# it (the wheels' lib/ by RUNPATH), as it must on a user's machine.
installed() { env -u LD_LIBRARY_PATH "$@"; }
grep -q "valid external stream" <<<"$(installed "$prefix/bin/mpix-marshal" check particles.mxdt)" \
    || fail "mpix-marshal check"
grep -q 'root: MPI_COMBINER_INDEXED "selected particles"' \
    <<<"$(installed "$prefix/bin/mpix-marshal" dump particles.mxdt)" || fail "mpix-marshal dump"
echo "install-test: the installed mpix-marshal reads the demo's archive: ok"

# The installed launcher.
if [ -n "$checker" ]; then
    # The installed launcher preloads the installed checker: the demo is a
    # correct program (no report), and a root mismatch is reported.
    out=$(installed "$prefix/bin/mpix-check" --timeout 20 "$MPIEXEC" "${mpiexec_args[@]}" -n 2 \
        ./demo_plain read particles.mxdt 2>&1 </dev/null) || fail "the demo under mpix-check: $out"
    ! grep -q "mpix-check:" <<<"$out" || fail "a report on the demo under mpix-check: $out"
    "$MPICC" -std=c99 -o errors "$repo/check/tests/c/errors.c"
    out=$("$prefix/bin/mpix-check" --warn --timeout 20 "$MPIEXEC" "${mpiexec_args[@]}" -n 2 ./errors root \
        2>&1 </dev/null) || true
    grep -q "mpix-check: MPI_Bcast on MPI_COMM_WORLD, call #1 there: the ranks passed different roots" <<<"$out" \
        || fail "no report from mpix-check --warn on a root mismatch: $out"
    # The point-to-point checks are on by default: an MPI_INT received as
    # MPI_FLOAT is reported; --no-p2p turns them off (no report).
    "$MPICC" -std=c99 -o p2p_errors "$repo/check/tests/c/p2p_errors.c"
    out=$("$prefix/bin/mpix-check" --warn --timeout 20 "$MPIEXEC" "${mpiexec_args[@]}" -n 2 ./p2p_errors \
        int_float 2>&1 </dev/null) || true
    grep -q "mpix-check: MPI_Recv on MPI_COMM_WORLD, call #1 there: the type signatures do not match" <<<"$out" \
        || fail "no report from mpix-check on MPI_INT received as MPI_FLOAT: $out"
    out=$("$prefix/bin/mpix-check" --no-p2p --warn --timeout 20 "$MPIEXEC" "${mpiexec_args[@]}" -n 2 ./p2p_errors \
        int_float 2>&1 </dev/null) || true
    ! grep -q "the type signatures do not match" <<<"$out" \
        || fail "a point-to-point report from mpix-check --no-p2p: $out"
    # The batched mode, the default, finds two communicators used in
    # opposite orders by the places of the calls; --immediate only by the
    # hang its check causes, at the timeout.
    out=$("$prefix/bin/mpix-check" --timeout 20 "$MPIEXEC" "${mpiexec_args[@]}" -n 2 ./errors \
        two_comms 2>&1 </dev/null) || true
    grep -q "the ranks made this call at different points among their blocking collective calls" <<<"$out" \
        || fail "no order report from mpix-check (batched by default): $out"
    out=$("$prefix/bin/mpix-check" --immediate --timeout 3 "$MPIEXEC" "${mpiexec_args[@]}" -n 2 ./errors \
        two_comms 2>&1 </dev/null) || true
    grep -q "no matching check from the other ranks after 3 s" <<<"$out" \
        || fail "no timeout report from mpix-check --immediate: $out"
    grep -q "mpix-check mpiexec -n 4 ./app" <<<"$("$prefix/bin/mpix-check" --help)" || fail "mpix-check --help"
    echo "install-test: the installed mpix-check launcher: ok"
fi
# The Fortran bindings (docs/fortran.md): installed where the MPI has a
# Fortran wrapper (Debian's MPICH 4 and Open MPI 4; not the MPI 5 wheels),
# and the guide's example built with pkg-config and with CMake, and run.
if [ -f "$lib/libmpix_marshal_f.so" ]; then
    for f in lib/libmpix_marshal_f.a include/mpix_marshal_f08.mod include/mpix_marshal.mod \
        include/mpix_marshal_constants.mod lib/pkgconfig/mpix-marshal-fortran.pc; do
        [ -f "$prefix/$f" ] || fail "$f is not installed (the Fortran bindings are)"
    done
    grep -q "pkg-config --cflags --libs mpix-marshal-fortran" "$lib/pkgconfig/mpix-marshal.pc" \
        || fail "mpix-marshal.pc does not mention the Fortran bindings"
    mpifc=$(pkg-config --variable=mpifc mpix-marshal-fortran)
    awk '/^```fortran program$/ {on = 1; next} /^```$/ {on = 0} on' "$repo/docs/fortran.md" > particles.f90
    run_fortran() { # way, binary
        local out libs
        out=$("$MPIEXEC" "${mpiexec_args[@]}" -n 2 "$2") || fail "$1: the Fortran example failed: $out"
        grep -q "rank 1 received particle 7 with the received type" <<<"$out" || fail "$1: the Fortran example printed: $out"
        libs=$(ldd "$2")
        grep -q "$lib/libmpix_marshal_f.so" <<<"$libs" || fail "$1: not linked to the installed bindings: $(grep mpix <<<"$libs")"
        echo "install-test: Fortran, $1: built and ran"
    }
    # shellcheck disable=SC2046
    "$mpifc" -o particles_pkgconfig particles.f90 $(pkg-config --cflags --libs mpix-marshal-fortran)
    run_fortran pkg-config ./particles_pkgconfig
    mkdir -p fortran && cp particles.f90 fortran/
    cat > fortran/CMakeLists.txt <<'CMAKE'
cmake_minimum_required(VERSION 3.13)
project(particles C Fortran)
find_package(MpixMarshal 0.1 REQUIRED)
add_executable(particles_cmake particles.f90)
target_link_libraries(particles_cmake PRIVATE MpixMarshal::mpix_marshal_fortran)
CMAKE
    cmake -S fortran -B fortran/build -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >fortran/cmake.log 2>&1 \
        || { cat fortran/cmake.log; fail "cmake configure (Fortran)"; }
    cmake --build fortran/build >>fortran/cmake.log 2>&1 || { cat fortran/cmake.log; fail "cmake build (Fortran)"; }
    run_fortran cmake ./fortran/build/particles_cmake
elif [ "${MPIX_MPI:-}" = mpich4 ] || [ "${MPIX_MPI:-}" = openmpi4 ]; then
    fail "no Fortran bindings installed for $MPIX_MPI, which has a Fortran wrapper"
else
    echo "install-test: Fortran bindings: not installed ($MPICC has no Fortran wrapper): skipped"
fi
# The Python package (docs/python.md), installed under the prefix and as a
# wheel, run from the prefix by a program of its own with mpi4py.
if [ -n "$venv" ]; then
    site=$(echo "$lib"/python3*/site-packages)
    [ -f "$site/mpix_marshal/__init__.py" ] || fail "the Python package is not installed in lib/python3*/site-packages"
    ls "$prefix"/share/mpix-marshal/python/mpix_marshal-*.whl >/dev/null || fail "no wheel in share/mpix-marshal/python"
    cat > vector.py <<'PY'
from mpi4py import MPI
import mpix_marshal as mm
import sys
assert mm.__file__.startswith(sys.argv[1]), mm.__file__
comm = MPI.COMM_WORLD
if comm.rank == 0:
    v = MPI.DOUBLE.Create_vector(3, 2, 5)
    comm.send(mm.marshal(v), dest=1)
    v.Free()
else:
    t = mm.unmarshal(comm.recv(source=0))
    assert (t.Get_size(), t.Get_extent()) == (48, (0, 96)), (t.Get_size(), t.Get_extent())
    print("python: rank 1 rebuilt the vector:", t.Get_envelope())
    t.Free()
PY
    out=$(PYTHONPATH=$site "$MPIEXEC" "${mpiexec_args[@]}" -n 2 "$venv/bin/python" vector.py "$site" 2>&1) ||
        fail "the Python program on the installed package: $out"
    grep -q "rank 1 rebuilt the vector" <<<"$out" || fail "the Python program printed: $out"
    echo "install-test: Python, the installed package: ok"
elif [ "${MPIX_MPI:-}" != abi ]; then
    fail "no Python environment for $MPIX_MPI"
fi
cd "$repo"
echo "install-test: all passed ($MPICC)"
