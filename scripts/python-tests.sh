#!/usr/bin/env bash
# The Python package (python/, `mpix_marshal` for mpi4py) on the MPI of the
# environment (eval "$(scripts/mpi-env.sh NAME)" first): installs it with
# mpi4py and pytest from PyPI into a virtual environment of its own,
# target/py-$MPIX_MPI/ (never the system Python), runs its tests under
# mpiexec -n 2, then checks one archive across languages: Python writes
# it and a C program reads it, and the reverse.
#
# Usage: scripts/python-tests.sh TARGET_DIR   (the cargo target dir of the
# pass: the extension's release build goes there, beside the checker's, and
# the C program links TARGET_DIR/debug's library, as scripts/c-tests.sh)
#
# mpi4py's manylinux wheel loads the MPI at run time: MPI4PY_MPIABI names
# the ABI (mpich or openmpi) and the loader must find libmpi.so.12 (MPICH)
# or libmpi.so.40 (Open MPI). Debian's MPICH 4 has only libmpich.so.12:
# a link named libmpi.so.12 to it, in the virtual environment, is put on
# LD_LIBRARY_PATH (the same file, so one copy of MPI in the process).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
target=${1:-target}
target=$(cd "$target" 2>/dev/null && pwd || { mkdir -p "$target" && cd "$target" && pwd; })
mpi=${MPIX_MPI:-mpich4}
MPICC=${MPICC:-mpicc}
MPIEXEC=${MPIEXEC:-mpiexec}
venv=$repo/target/py-$mpi
mpi4py_version=4.1.2
t0=$SECONDS

case $mpi in
mpich4 | mpich5) abi=mpich ;;
openmpi4 | openmpi5) abi=openmpi ;;
*) echo "python-tests: no mpi4py wheel for $mpi (the MPI-5 ABI): skipped"; exit 0 ;;
esac

if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c "import maturin, pytest, mpi4py; assert mpi4py.__version__ == '$mpi4py_version'" 2>/dev/null; then
    echo "python-tests: installing maturin, pytest and mpi4py==$mpi4py_version into $venv"
    "$venv/bin/pip" install -q --disable-pip-version-check "maturin>=1.5,<2" pytest "mpi4py==$mpi4py_version"
fi
export MPI4PY_MPIABI=$abi
if [ "$mpi" = mpich4 ]; then
    real=$(ldconfig -p | awk '/libmpich\.so\.12 / {print $NF; exit}')
    [ -n "$real" ] || { echo "python-tests: libmpich.so.12 not found" >&2; exit 1; }
    mkdir -p "$venv/libmpi"
    ln -sf "$real" "$venv/libmpi/libmpi.so.12"
    export LD_LIBRARY_PATH=$venv/libmpi${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi

# The package, built by maturin against this MPI (mpi-sys asks $MPICC), in
# the pass's target dir (release: shares the library's build with the
# checker's). Reinstalled when a source changed since the last install
# (python/, the library's src/, the manifests; a wheel build takes about
# 20 s even when cargo has nothing to do).
stamp=$venv/.mpix-installed
if [ ! -f "$stamp" ] || [ -n "$(find python src Cargo.toml Cargo.lock build.rs -newer "$stamp" -type f \
    -not -path 'python/tests/*' -not -name '*.pyc' -not -name bench.py | head -1)" ]; then
    echo "python-tests: building and installing python/ into $venv"
    CARGO_TARGET_DIR=$target PATH=$venv/bin:$PATH \
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
    # Run alone, without the pass's build: the release library (its crate
    # is compiled already, for the extension).
    CARGO_TARGET_DIR=$target cargo build -q --release -p mpix-marshal --lib
fi
run "build the C interop program" "$MPICC" -std=c99 -Wall -Wextra -Werror -Iinclude -o "$out/interop" \
    python/tests/interop.c -L"$libdir" -lmpix_marshal -Wl,-rpath,"$libdir"
rm -f "$out/from-python.mpix" "$out/from-c.mpix"
run "Python writes an archive" np 1 "$venv/bin/python" python/tests/interop.py write "$out/from-python.mpix"
run "C reads Python's archive" np 1 "$out/interop" read "$out/from-python.mpix"
run "C writes an archive" np 1 "$out/interop" write "$out/from-c.mpix"
run "Python reads C's archive" np 1 "$venv/bin/python" python/tests/interop.py read "$out/from-c.mpix"
echo "python-tests ($mpi): $((SECONDS - t0)) s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
