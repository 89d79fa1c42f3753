#!/usr/bin/env bash
# Builds the C tests against the library built for $MPICC (default mpicc)
# and runs them, the multi-process ones under mpiexec -n 2 and -n 4.
# Usage: scripts/c-tests.sh TARGET_DIR   (the cargo target dir of that build)
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:-target}
MPICC=${MPICC:-mpicc}
MPIEXEC=${MPIEXEC:-mpiexec}
lib="$target/debug"
out="$target/ctests"
mkdir -p "$out"
cflags=(-std=c99 -Wall -Wextra -Werror -Iinclude -Itests/c)
ldflags=(-L"$lib" -lmpix_marshal -Wl,-rpath,"$(cd "$lib" && pwd)")
passed=0
failed=0
run() { # name, command...
    local name=$1; shift
    if "$@" >"$out/$name.log" 2>&1; then
        passed=$((passed + 1)); echo "ok   $name"; grep -h "checks passed" "$out/$name.log" | sed 's/^/     /' || true
    else
        failed=$((failed + 1)); echo "FAIL $name (log: $out/$name.log)"; tail -n 30 "$out/$name.log"
    fi
}

# The header compiles cleanly as C99 and as C++.
run header-c99 "$MPICC" "${cflags[@]}" -pedantic -x c -c -o "$out/h.o" - <<<'#include <mpix_marshal.h>
int f(void) { return MPIX_MARSHAL_ERR_CORRUPT; }'
# (The MPIs' own C++ bindings are skipped: they do not build with -Werror.)
run header-cxx "$MPICC" -DOMPI_SKIP_MPICXX=1 -DMPICH_SKIP_MPICXX=1 -std=c++11 -Wall -Wextra -Werror -Iinclude -x c++ -c -o "$out/hpp.o" - <<<'#include <mpix_marshal.h>
int f() { MPI_Aint n; return MPIX_Type_marshal_size("external", MPI_INT, &n); }'

for prog in c_api mp_send rma attrs demo_archive; do
    src=tests/c/$prog.c
    [ "$prog" = demo_archive ] && src=examples/demo_archive.c
    run "build-$prog" "$MPICC" "${cflags[@]}" -o "$out/$prog" "$src" "${ldflags[@]}"
done
np() { "$MPIEXEC" ${MPIEXEC_ARGS:-} -n "$@"; }
run c_api np 1 "$out/c_api"
run mp_send-2 np 2 "$out/mp_send"
run mp_send-4 np 4 "$out/mp_send"
run rma-2 np 2 "$out/rma"
run rma-4 np 4 "$out/rma"
run attrs-2 np 2 "$out/attrs"
run attrs-4 np 4 "$out/attrs"
run demo-archive bash -c "cd '$out' && rm -f demo.mxdt && $MPIEXEC ${MPIEXEC_ARGS:-} -n 1 ./demo_archive write demo.mxdt && $MPIEXEC ${MPIEXEC_ARGS:-} -n 2 ./demo_archive read demo.mxdt"
echo "C tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
