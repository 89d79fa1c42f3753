# Sourced by scripts/python-tests.sh and scripts/install-test.sh: the
# Python environment in which mpi4py's wheel runs on the MPI of
# $MPIX_MPI (eval "$(scripts/mpi-env.sh NAME)" first).
#
#   python_env   makes (or reuses) the virtual environment
#                target/py-$MPIX_MPI/ with maturin, pytest and mpi4py from
#                PyPI (never the system Python), sets $venv to it, exports
#                MPI4PY_MPIABI and, for Debian's MPICH 4, LD_LIBRARY_PATH;
#                returns 2, with a line, where mpi4py has no wheel for the MPI.
#
# mpi4py's manylinux wheel loads the MPI at run time: MPI4PY_MPIABI names
# the ABI (mpich or openmpi) and the loader must find libmpi.so.12 (MPICH)
# or libmpi.so.40 (Open MPI). Debian's MPICH 4 has only libmpich.so.12:
# a link named libmpi.so.12 to it, in the virtual environment, is put on
# LD_LIBRARY_PATH (the same file, so one copy of MPI in the process).
mpi4py_version=4.1.2

python_env() {
    local mpi=${MPIX_MPI:-mpich4} abi real
    case $mpi in
    mpich4 | mpich5) abi=mpich ;;
    openmpi4 | openmpi5) abi=openmpi ;;
    *) echo "python-env: no mpi4py wheel for $mpi (mpi4py 4.1 does not load the MPI-5 ABI's libmpi_abi)"; return 2 ;;
    esac
    venv=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/target/py-$mpi
    [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
    if ! "$venv/bin/python" -c "import maturin, pytest, mpi4py; assert mpi4py.__version__ == '$mpi4py_version'" 2>/dev/null; then
        echo "python-env: installing maturin, pytest and mpi4py==$mpi4py_version into $venv"
        "$venv/bin/pip" install -q --disable-pip-version-check "maturin>=1.5,<2" pytest "mpi4py==$mpi4py_version" || return 1
    fi
    export MPI4PY_MPIABI=$abi
    if [ "$mpi" = mpich4 ]; then
        real=$(ldconfig -p | awk '/libmpich\.so\.12 / {print $NF; exit}')
        [ -n "$real" ] || { echo "python-env: libmpich.so.12 not found" >&2; return 1; }
        mkdir -p "$venv/libmpi"
        ln -sf "$real" "$venv/libmpi/libmpi.so.12"
        export LD_LIBRARY_PATH=$venv/libmpi${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    fi
}
