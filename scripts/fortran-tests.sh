#!/usr/bin/env bash
# The Fortran bindings' tests: builds fortran/ (fortran/build.sh) with the
# Fortran wrapper of $MPICC against the library of TARGET_DIR/PROFILE, then
#   - fortran/tests/records_f08.f90 (use mpi_f08) and records_mpi.f90 (use
#     mpi): a SEQUENCE record with array members archived by one run, read
#     back by another under mpiexec -n 2 (compared with the type built
#     again, data sent with the original type and received with the
#     unmarshalled one, the type exchange, signatures, and a corrupt
#     archive's error code and kind in ierror);
#   - the archives across languages: Fortran's read by C
#     (fortran/tests/records_c.c), C's read by Fortran, and each module's
#     read by the other;
#   - the example of docs/fortran.md (its ```fortran program block), built
#     and run.
# Skips everything, exit 0, with one line, when the MPI has no Fortran
# wrapper (the MPICH 5 and Open MPI 5 wheels).
#
# Usage: scripts/fortran-tests.sh TARGET_DIR [PROFILE]   (PROFILE: debug, the default, or release)
# Uses $MPICC, $MPIEXEC, $MPIEXEC_ARGS, as scripts/c-tests.sh does; $MPIFC
# to name the Fortran wrapper.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:-target}
profile=${2:-debug}
export MPICC=${MPICC:-mpicc}
MPIEXEC=${MPIEXEC:-mpiexec}
lib=$(cd "$target/$profile" && pwd)
[ -f "$lib/libmpix_marshal.so" ] || { echo "fortran-tests: $lib/libmpix_marshal.so is missing: cargo build first" >&2; exit 1; }
out=$target/fortran-tests
rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)
mods=$out/build
rc=0
fortran/build.sh "$mods" "$lib" >"$out/build.log" 2>&1 || rc=$?
if [ "$rc" -eq 3 ]; then
    echo "fortran-tests: skipped: $(tail -n 1 "$out/build.log" | sed 's/^fortran\/build.sh: //')"
    exit 0
elif [ "$rc" -ne 0 ]; then
    cat "$out/build.log"; echo "fortran-tests: FAILED: building the bindings"; exit 1
fi
MPIFC=$(cat "$mods/mpifc")
read -ra mpildirs <"$mods/mpi-libdirs" || true
echo "fortran-tests: bindings built with $MPIFC ($($MPIFC --version | head -n 1))"
passed=0
failed=0
run() { # name, command...
    local name=$1; shift
    if "$@" >"$out/$name.log" 2>&1; then
        passed=$((passed + 1)); echo "ok   $name"; grep -h "^ok: \|^records_c: " "$out/$name.log" | sort -u | sed 's/^/     /' || true
    else
        failed=$((failed + 1)); echo "FAIL $name (log: $out/$name.log)"; tail -n 30 "$out/$name.log"
    fi
}
# -J: the tests' own modules (their callbacks) go to the output dir.
fflags=(-Wall -I"$mods" -J"$out")
flibs=("${mpildirs[@]}" -L"$mods" -lmpix_marshal_f -L"$lib" -lmpix_marshal -Wl,-rpath,"$mods" -Wl,-rpath,"$lib")
for prog in records_f08 records_mpi; do
    run "build-$prog" "$MPIFC" "${fflags[@]}" -o "$out/$prog" "fortran/tests/$prog.f90" "${flibs[@]}"
done
run build-records_c "$MPICC" -std=c99 -Wall -Wextra -Werror -Iinclude -o "$out/records_c" fortran/tests/records_c.c \
    -L"$lib" -lmpix_marshal -Wl,-rpath,"$lib"
# The guide's example (docs/fortran.md), as a user builds it.
awk '/^```fortran program$/ {on = 1; next} /^```$/ {on = 0} on' docs/fortran.md >"$out/example.f90"
[ -s "$out/example.f90" ] || { echo "fortran-tests: docs/fortran.md has no \`\`\`fortran program block"; exit 1; }
run build-docs-example "$MPIFC" "${fflags[@]}" -o "$out/example" "$out/example.f90" "${flibs[@]}"

np() { "$MPIEXEC" ${MPIEXEC_ARGS:-} -n "$@"; }
cd "$out"
run f08-write np 1 ./records_f08 write f08.mxdt
run f08-read-n2 np 2 ./records_f08 read f08.mxdt
run mpi-write np 1 ./records_mpi write mpi.mxdt
run mpi-read-n2 np 2 ./records_mpi read mpi.mxdt
run c-write np 1 ./records_c write c.mxdt
run c-reads-f08-archive np 1 ./records_c read f08.mxdt
run c-reads-mpi-archive np 1 ./records_c read mpi.mxdt
run f08-reads-c-archive np 2 ./records_f08 read c.mxdt
run mpi-reads-c-archive np 1 ./records_mpi read c.mxdt
run f08-reads-mpi-archive np 1 ./records_f08 read mpi.mxdt
run docs-example np 2 ./example
echo "Fortran tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
