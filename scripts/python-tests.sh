#!/usr/bin/env bash
# The Python package (python/, `mpix_marshal` for mpi4py) on the MPI of the
# environment (eval "$(scripts/mpi-env.sh NAME)" first): installs it with
# mpi4py and pytest from PyPI into a virtual environment of its own,
# target/py-$MPIX_MPI/ (never the system Python), runs its tests under
# mpiexec -n 2, then checks one archive across languages: Python writes
# it and a C program reads it, and the reverse.
#
# Usage: scripts/python-tests.sh TARGET_DIR   (the cargo target dir of the
# pass: the extension's release build goes to TARGET_DIR/python, and the C
# program links TARGET_DIR/debug's library, as scripts/c-tests.sh)
#
# The virtual environment and mpi4py's MPI: scripts/python-env.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
target=${1:-target}
target=$(cd "$target" 2>/dev/null && pwd || { mkdir -p "$target" && cd "$target" && pwd; })
mpi=${MPIX_MPI:-mpich4}
MPICC=${MPICC:-mpicc}
MPIEXEC=${MPIEXEC:-mpiexec}
t0=$SECONDS
. scripts/python-env.sh
rc=0
python_env || rc=$?
[ "$rc" -ne 2 ] || { echo "python-tests: skipped"; exit 0; }
[ "$rc" -eq 0 ] || exit 1

# The package, built by maturin against this MPI (mpi-sys asks $MPICC), in
# TARGET_DIR/python (as scripts/install.sh: pyo3 turns on features of
# dependencies the library shares, so in the pass's own dir each build
# would recompile the library for the other). Reinstalled when a source changed since the last install
# (python/, the library's src/, the manifests; a wheel build takes about
# 20 s even when cargo has nothing to do).
stamp=$venv/.mpix-installed
if [ ! -f "$stamp" ] || [ -n "$(find python src Cargo.toml Cargo.lock build.rs -newer "$stamp" -type f \
    -not -path 'python/tests/*' -not -name '*.pyc' -not -name bench.py | head -1)" ]; then
    echo "python-tests: building and installing python/ into $venv"
    CARGO_TARGET_DIR=$target/python PATH=$venv/bin:$PATH \
        "$venv/bin/pip" install -q --disable-pip-version-check --no-build-isolation --no-deps --force-reinstall ./python
    touch "$stamp"
    echo "python-tests: installed ($((SECONDS - t0)) s)"
fi

passed=0
failed=0
run() { # name, command...
    local name=$1; shift
    if "$@"; then
        passed=$((passed + 1)); echo "ok   $name"
    else
        failed=$((failed + 1)); echo "FAIL $name"
    fi
}
np() { timeout 180 "$MPIEXEC" ${MPIEXEC_ARGS:-} -n "$1" "${@:2}"; }
t1=$SECONDS
run "pytest under mpiexec -n 2" np 2 "$venv/bin/python" -m pytest -q -p no:cacheprovider --color=no python/tests
echo "python-tests: pytest took $((SECONDS - t1)) s"

out=$target/python-tests
mkdir -p "$out"
# The guide's example (docs/python.md, the block marked `python run`).
awk '/^```python run$/ {on = 1; next} /^```$/ {on = 0} on' docs/python.md >"$out/example.py"
run "docs/python.md's example under mpiexec -n 2" np 2 "$venv/bin/python" "$out/example.py"

# One archive read by the other language (the C library of TARGET_DIR/debug).
libdir=$target/debug
[ -f "$libdir/libmpix_marshal.so" ] || libdir=$target/release
if [ ! -f "$libdir/libmpix_marshal.so" ]; then
    # Run alone, without the pass's build: a release build of the library.
    CARGO_TARGET_DIR=$target cargo build -q --release -p mpix-marshal --lib
fi
run "build the C interop program" "$MPICC" -std=c99 -Wall -Wextra -Werror -Iinclude -o "$out/interop" \
    python/tests/interop.c -L"$libdir" -lmpix_marshal -Wl,-rpath,"$libdir"
rm -f "$out/from-python.mpix" "$out/from-c.mpix"
run "Python writes an archive" np 1 "$venv/bin/python" python/tests/interop.py write "$out/from-python.mpix"
run "C reads Python's archive" np 1 "$out/interop" read "$out/from-python.mpix"
run "C writes an archive" np 1 "$out/interop" write "$out/from-c.mpix"
run "Python reads C's archive" np 1 "$venv/bin/python" python/tests/interop.py read "$out/from-c.mpix"
# The Fortran tests' record type across Python and Fortran, where the
# pass's Fortran suite (scripts/fortran-tests.sh, run before this one) built
# its programs and wrote its archive: Python reads Fortran's, Fortran reads
# Python's. (Not on the MPI 5 wheels, which have no Fortran wrapper.)
fdir=$target/fortran-tests
if [ -x "$fdir/records_f08" ] && [ -f "$fdir/f08.mxdt" ]; then
    run "Python reads Fortran's archive" np 1 "$venv/bin/python" python/tests/interop.py read-fortran "$fdir/f08.mxdt"
    run "Python writes the Fortran record's archive" np 1 "$venv/bin/python" python/tests/interop.py \
        write-fortran "$out/from-python-record.mxdt"
    # mpi4py builds with the large-count constructors where the MPI has
    # them, Fortran with the classic ones: the same type up to the typemap.
    run "Fortran reads Python's archive (mpiexec -n 2)" np 2 "$fdir/records_f08" read \
        "$out/from-python-record.mxdt" typemap
else
    echo "python-tests: no Fortran tests' programs in $fdir (no Fortran wrapper, or run alone): Python–Fortran skipped"
fi
echo "python-tests ($mpi): $((SECONDS - t0)) s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
